//! The YAML front matter of a `SKILL.md`, as JSON.
//!
//! Front matter is the block between a first line `---` and the next line `---`. The Agent
//! Skills format uses a small part of YAML: a mapping of plain, quoted or block (`|`, `>`)
//! scalars, nested mappings (`metadata`) and lists. That part is what this reads, with the
//! YAML 1.2 core schema for plain scalars (`true`, `null`, numbers); anchors, aliases, tags,
//! flow mappings and multi-line quoted scalars are refused with a clear error rather than
//! read wrong. Server and host read front matter with this same code, so the entry a server
//! publishes and the file a host compares it with are read alike. Written here rather than
//! taken from a YAML crate: the subset is small, and the SDK keeps its dependencies few.

use serde_json::{Map, Number, Value};

/// Why a `SKILL.md` has no front matter this could read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontmatterError {
    /// 1-based line of the file where reading stopped (0: the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

impl std::fmt::Display for FrontmatterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            0 => write!(f, "SKILL.md front matter: {}", self.reason),
            line => write!(f, "SKILL.md front matter, line {line}: {}", self.reason),
        }
    }
}

impl std::error::Error for FrontmatterError {}

/// The front matter of `text` (a whole `SKILL.md`) as a JSON object.
pub fn parse_frontmatter(text: &str) -> Result<Map<String, Value>, FrontmatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    if lines.next().map(str::trim_end) != Some("---") {
        return Err(whole("the file does not begin with a `---` line"));
    }
    let mut block = Vec::new();
    let mut closed = false;
    for line in lines {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        block.push(line.to_owned());
    }
    if !closed {
        return Err(whole("no closing `---` line"));
    }
    let mut reader = Reader { lines: block, at: 0 };
    let value = reader.node(0)?;
    if let Some(at) = reader.next_content() {
        return Err(reader.error(at, "unexpected indentation"));
    }
    match value {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        _ => Err(whole("the front matter is not a mapping of fields")),
    }
}

fn whole(reason: &str) -> FrontmatterError {
    FrontmatterError { line: 0, reason: reason.to_owned() }
}

/// Lines of the block, read top-down; `at` is the next line to read.
struct Reader {
    lines: Vec<String>,
    at: usize,
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

fn is_seq_item(content: &str) -> bool {
    content == "-" || content.starts_with("- ")
}

impl Reader {
    fn error(&self, at: usize, reason: impl Into<String>) -> FrontmatterError {
        // +2: 1-based, after the opening `---`.
        FrontmatterError { line: at + 2, reason: reason.into() }
    }

    /// The next line with content, skipping blank and comment lines.
    fn next_content(&mut self) -> Option<usize> {
        while self.at < self.lines.len() && is_blank_or_comment(&self.lines[self.at]) {
            self.at += 1;
        }
        (self.at < self.lines.len()).then_some(self.at)
    }

    /// A mapping or list indented at least `min`; null when there is none.
    fn node(&mut self, min: usize) -> Result<Value, FrontmatterError> {
        let Some(at) = self.next_content() else { return Ok(Value::Null) };
        let line = &self.lines[at];
        if line.starts_with('\t') || line[indent(line)..].starts_with('\t') {
            return Err(self.error(at, "tabs cannot indent YAML"));
        }
        let ind = indent(line);
        if ind < min {
            return Ok(Value::Null);
        }
        if is_seq_item(&line[ind..]) { self.sequence(ind) } else { self.mapping(ind) }
    }

    fn mapping(&mut self, ind: usize) -> Result<Value, FrontmatterError> {
        let mut map = Map::new();
        while let Some(at) = self.next_content() {
            let line = self.lines[at].clone();
            match indent(&line) {
                i if i < ind => break,
                i if i > ind => return Err(self.error(at, "unexpected indentation")),
                _ => {}
            }
            let content = &line[ind..];
            if is_seq_item(content) {
                break;
            }
            let (key, rest) = split_key(content).ok_or_else(|| {
                self.error(at, format!("expected `key: value`, found `{}`", content.trim()))
            })?;
            let key = self.key(at, key)?;
            self.at += 1;
            let value = self.value(at, rest, ind, true)?;
            if map.insert(key.clone(), value).is_some() {
                return Err(self.error(at, format!("duplicate key `{key}`")));
            }
        }
        Ok(Value::Object(map))
    }

    fn key(&self, at: usize, key: &str) -> Result<String, FrontmatterError> {
        match key.chars().next() {
            Some('"') | Some('\'') => match quoted(key) {
                Some((Value::String(s), "")) => Ok(s),
                _ => Err(self.error(at, format!("unreadable key `{key}`"))),
            },
            _ => Ok(key.to_owned()),
        }
    }

    fn sequence(&mut self, ind: usize) -> Result<Value, FrontmatterError> {
        let mut items = Vec::new();
        while let Some(at) = self.next_content() {
            let line = self.lines[at].clone();
            if indent(&line) != ind || !is_seq_item(&line[ind..]) {
                if indent(&line) > ind {
                    return Err(self.error(at, "unexpected indentation"));
                }
                break;
            }
            let item = line[ind + 1..].trim_start();
            let offset = line.len() - item.len();
            if !item.is_empty() && split_key(item).is_some() && !starts_scalar(item) {
                // `- key: value`: a mapping indented where its first key starts.
                self.lines[at] = format!("{}{item}", " ".repeat(offset));
                items.push(self.mapping(offset)?);
                continue;
            }
            self.at += 1;
            items.push(self.value(at, item, ind, false)?);
        }
        Ok(Value::Array(items))
    }

    /// The value after a key (`in_map`) or a `-`, on line `at` indented `ind`.
    fn value(
        &mut self,
        at: usize,
        rest: &str,
        ind: usize,
        in_map: bool,
    ) -> Result<Value, FrontmatterError> {
        let rest = strip_comment(rest).trim();
        let Some(first) = rest.chars().next() else {
            // A list under a key may sit at the key's own indentation.
            if in_map {
                if let Some(next) = self.next_content() {
                    let line = &self.lines[next];
                    if indent(line) == ind && is_seq_item(&line[ind..]) {
                        return self.sequence(ind);
                    }
                }
            }
            return self.node(ind + 1);
        };
        match first {
            '|' | '>' => self.block_scalar(at, rest, ind),
            '"' | '\'' => match quoted(rest) {
                Some((value, tail)) if strip_comment(tail).trim().is_empty() => Ok(value),
                Some(_) => Err(self.error(at, "text after a quoted scalar")),
                None => Err(self.error(at, "quoted scalars must end on their line")),
            },
            '[' => flow_sequence(rest).ok_or_else(|| self.error(at, "unreadable `[...]` list")),
            '{' | '&' | '*' | '!' | '%' | '@' | '`' => Err(self.error(
                at,
                format!("`{first}` (flow mappings, anchors, aliases, tags) is not supported"),
            )),
            _ => Ok(self.plain(rest, ind)),
        }
    }

    /// A plain scalar, with its continuation lines (indented deeper than `ind`) folded in.
    fn plain(&mut self, first: &str, ind: usize) -> Value {
        let mut text = first.to_owned();
        let mut folded = false;
        while self.at < self.lines.len() {
            let line = &self.lines[self.at];
            if line.trim().is_empty() || indent(line) <= ind {
                break;
            }
            text.push(' ');
            text.push_str(strip_comment(line.trim()).trim());
            folded = true;
            self.at += 1;
        }
        if folded { Value::String(text) } else { resolve(&text) }
    }

    /// `|` (lines kept) or `>` (lines folded), with `-` (strip) or `+` (keep) chomping.
    fn block_scalar(
        &mut self,
        at: usize,
        header: &str,
        ind: usize,
    ) -> Result<Value, FrontmatterError> {
        let literal = header.starts_with('|');
        let chomp = match &header[1..] {
            "" => Chomp::Clip,
            "-" => Chomp::Strip,
            "+" => Chomp::Keep,
            other => {
                return Err(self.error(at, format!("block scalar indicator `{other}` unsupported")));
            }
        };
        let mut body: Vec<String> = Vec::new();
        let mut block_indent = None;
        while self.at < self.lines.len() {
            let line = &self.lines[self.at];
            if line.trim().is_empty() {
                body.push(String::new());
                self.at += 1;
                continue;
            }
            let i = indent(line);
            let want = *block_indent.get_or_insert(i);
            if i <= ind || i < want {
                break;
            }
            body.push(line[want..].to_owned());
            self.at += 1;
        }
        let trailing = body.iter().rev().take_while(|l| l.is_empty()).count();
        body.truncate(body.len() - trailing);
        let mut text = if literal { body.join("\n") } else { fold(&body) };
        match chomp {
            Chomp::Strip => {}
            Chomp::Clip if !body.is_empty() => text.push('\n'),
            Chomp::Clip => {}
            Chomp::Keep => text.push_str(&"\n".repeat(trailing + usize::from(!body.is_empty()))),
        }
        Ok(Value::String(text))
    }
}

enum Chomp {
    Clip,
    Strip,
    Keep,
}

/// `>` folding: lines of one paragraph joined by spaces, each empty line a newline.
fn fold(lines: &[String]) -> String {
    let mut text = String::new();
    let mut previous_had_text = false;
    for line in lines {
        if line.is_empty() {
            text.push('\n');
            previous_had_text = false;
        } else {
            if previous_had_text {
                text.push(' ');
            }
            text.push_str(line);
            previous_had_text = true;
        }
    }
    text
}

/// `key: rest` or `key:` (the colon followed by a space or the end), outside quotes.
fn split_key(content: &str) -> Option<(&str, &str)> {
    let end = match content.chars().next()? {
        q @ ('"' | '\'') => content[1..].find(q).map(|i| i + 2)?,
        _ => 0,
    };
    let colon = content[end..].find(':').map(|i| i + end)?;
    let after = &content[colon + 1..];
    if !(after.is_empty() || after.starts_with(' ')) {
        // `a:b` is one plain scalar; look further.
        let (key, rest) = split_key(&content[colon + 1..])?;
        let key_end = colon + 1 + key.len();
        return Some((content[..key_end].trim_end(), rest));
    }
    let key = content[..colon].trim_end();
    (!key.is_empty() && !key.starts_with('#')).then_some((key, after))
}

/// Whether `item` starts a scalar (quoted or flow) rather than a `key: value`.
fn starts_scalar(item: &str) -> bool {
    matches!(item.chars().next(), Some('[' | '{' | '|' | '>'))
}

/// `text` up to a ` #` comment (outside quotes, which plain scalars have none of).
fn strip_comment(text: &str) -> &str {
    match text.find(" #") {
        Some(i) => &text[..i],
        None if text.starts_with('#') => "",
        None => text,
    }
}

/// A quoted scalar at the start of `text`, and what follows it.
fn quoted(text: &str) -> Option<(Value, &str)> {
    let mut chars = text.char_indices();
    let (_, quote) = chars.next()?;
    let mut out = String::new();
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            ('\'', '\'') if text[i + 1..].starts_with('\'') => {
                out.push('\'');
                chars.next();
            }
            (q, c) if c == q => return Some((Value::String(out), &text[i + 1..])),
            ('"', '\\') => {
                let (_, escaped) = chars.next()?;
                match escaped {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    '0' => out.push('\0'),
                    '"' | '\\' | '/' | ' ' => out.push(escaped),
                    'u' => {
                        let hex: String =
                            (0..4).filter_map(|_| chars.next().map(|(_, c)| c)).collect();
                        let code = digits_in_radix(&hex, 16)?;
                        out.push(char::from_u32(u32::try_from(code).ok()?)?);
                    }
                    _ => return None,
                }
            }
            _ => out.push(c),
        }
    }
    None
}

/// `[a, "b", 3]`: a one-line flow list of scalars.
fn flow_sequence(text: &str) -> Option<Value> {
    let inner = strip_comment(text).trim().strip_prefix('[')?.strip_suffix(']')?;
    let mut items = Vec::new();
    let mut rest = inner.trim();
    while !rest.is_empty() {
        let (item, tail) = if rest.starts_with('"') || rest.starts_with('\'') {
            let (value, tail) = quoted(rest)?;
            (value, tail.trim_start())
        } else {
            let end = rest.find(',').unwrap_or(rest.len());
            if rest[..end].contains(['[', '{', ']', '}']) {
                return None;
            }
            (resolve(rest[..end].trim()), &rest[end..])
        };
        items.push(item);
        rest = match tail.strip_prefix(',') {
            Some(after) => after.trim_start(),
            None if tail.is_empty() => "",
            None => return None,
        };
    }
    Some(Value::Array(items))
}

/// A plain scalar under the YAML 1.2 core schema: null, booleans, numbers, else a string.
fn resolve(text: &str) -> Value {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = text.parse::<i64>() {
            return Value::Number(n.into());
        }
    }
    for (prefix, radix) in [("0x", 16), ("0o", 8)] {
        if let Some(n) = text.strip_prefix(prefix).and_then(|rest| digits_in_radix(rest, radix)) {
            return Value::Number(n.into());
        }
    }
    if is_core_float(digits) {
        if let Some(n) = text.parse::<f64>().ok().and_then(Number::from_f64) {
            return Value::Number(n);
        }
    }
    Value::String(text.to_owned())
}

/// `[0-9]+(.[0-9]*)?([eE][-+]?[0-9]+)?` or `.[0-9]+...`: the core schema's floats (not
/// `2.1.0`, not `1e`, not `inf` spelled as Rust reads it).
/// `text` as a number in `radix`, digits only: `from_str_radix` also takes a sign, so
/// `0x+1f` or `\u+041` would read as numbers.
fn digits_in_radix(text: &str, radix: u32) -> Option<i64> {
    let digits_only = !text.is_empty() && text.chars().all(|c| c.is_digit(radix));
    digits_only.then(|| i64::from_str_radix(text, radix).ok()).flatten()
}

fn is_core_float(text: &str) -> bool {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (mantissa, None),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = all_digits(whole)
        && fraction.is_none_or(all_digits)
        && (!whole.is_empty() || fraction.is_some_and(|f| !f.is_empty()));
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && all_digits(e)
    });
    mantissa_ok && exponent_ok && (fraction.is_some() || exponent.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Value {
        Value::Object(parse_frontmatter(text).expect("front matter"))
    }

    #[test]
    fn reads_the_agent_skills_fields() {
        let text = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nlicense: Apache-2.0\nallowed-tools: Bash(git:*) Read\nmetadata:\n  version: \"2.1.0\"\n  author: acme\n  io.example/x: 'it''s'\n---\n# Body\n";
        assert_eq!(
            parse(text),
            json!({
                "name": "pdf-processing",
                "description": "Extract, fill, and assemble PDF documents",
                "license": "Apache-2.0",
                "allowed-tools": "Bash(git:*) Read",
                "metadata": {"version": "2.1.0", "author": "acme", "io.example/x": "it's"}
            })
        );
    }

    #[test]
    fn a_sign_is_no_digit_of_a_hex_or_octal_number_or_escape() {
        let text = "---\na: 0x1f\nb: 0x+1f\nc: 0o-7\nd: \"\\u0041\"\n---\n";
        assert_eq!(parse(text), json!({"a": 31, "b": "0x+1f", "c": "0o-7", "d": "A"}));
        assert!(parse_frontmatter("---\na: \"\\u+041\"\n---\n").is_err());
    }

    #[test]
    fn reads_scalars_by_the_core_schema() {
        let text = "---\na: true\nb: ~\nc: 12\nd: 1.5\ne: 2.1.0\nf: \"12\"\ng: 1e3\nh: no\n---\n";
        assert_eq!(
            parse(text),
            json!({"a": true, "b": null, "c": 12, "d": 1.5, "e": "2.1.0", "f": "12", "g": 1000.0, "h": "no"})
        );
    }

    #[test]
    fn reads_block_scalars_lists_and_folded_lines() {
        let text = "---\r\nname: x\r\ndescription: one\r\n  two # note\r\nlit: |\n  a\n   b\n\nfold: >-\n  a\n  b\n\n  c\ntags:\n- one\n- \"two\"\nflow: [a, 'b c', 3]\nitems:\n  - k: v\n    j: w\n  - plain\n---\n";
        assert_eq!(
            parse(text),
            json!({
                "name": "x",
                "description": "one two",
                "lit": "a\n b\n",
                "fold": "a b\nc",
                "tags": ["one", "two"],
                "flow": ["a", "b c", 3],
                "items": [{"k": "v", "j": "w"}, "plain"]
            })
        );
    }

    #[test]
    fn refuses_what_it_cannot_read_faithfully() {
        let cases = [
            (
                "no front matter",
                "# Title\n",
                "SKILL.md front matter: the file does not begin with a `---` line",
            ),
            ("unclosed", "---\nname: x\n", "SKILL.md front matter: no closing `---` line"),
            (
                "alias",
                "---\na: &x 1\n---\n",
                "SKILL.md front matter, line 2: `&` (flow mappings, anchors, aliases, tags) is not supported",
            ),
            (
                "duplicate",
                "---\na: 1\na: 2\n---\n",
                "SKILL.md front matter, line 3: duplicate key `a`",
            ),
            (
                "not a mapping",
                "---\n- a\n---\n",
                "SKILL.md front matter: the front matter is not a mapping of fields",
            ),
            (
                "open quote",
                "---\na: \"x\n  y\"\n---\n",
                "SKILL.md front matter, line 2: quoted scalars must end on their line",
            ),
            (
                "tab",
                "---\na:\n\tb: 2\n---\n",
                "SKILL.md front matter, line 3: tabs cannot indent YAML",
            ),
        ];
        for (case, text, expected) in cases {
            let error = parse_frontmatter(text).expect_err(case);
            assert_eq!(error.to_string(), expected, "{case}");
        }
    }
}
