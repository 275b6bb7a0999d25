//! A stdio server's `envFile` (VS Code's `mcp.json`): `NAME=value` lines, read by VS Code's
//! rules, so that a file that works there works here.
//!
//! Read here rather than with a dotenv crate: the maintained one (dotenvy) expands `$NAME`
//! inside values and reads quoted values across lines, which VS Code does not, so a secret
//! holding a `$` would reach the server changed.
//!
//! - Blank lines and lines starting with `#` are skipped; `export ` before a name is allowed.
//! - The name ends at the first `=` or `:` outside quotes; a line without one is skipped.
//! - A `#` outside quotes starts a comment; the value is trimmed.
//! - A value wholly in `'`, `"` or `` ` `` quotes loses them; in `"` quotes, `\n` and `\r`
//!   are a line feed and a carriage return. `$` is never expanded.
//! - A name given twice takes its last value.

/// The variables of the file's `text`, in the order of their first appearance.
pub fn parse(text: &str) -> Vec<(String, String)> {
    let mut variables: Vec<(String, String)> = Vec::new();
    for line in text.split(['\n', '\r']) {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").map_or(line, str::trim);
        let Some(separator) = outside_quotes(line, |c| c == '=' || c == ':') else { continue };
        let name = line[..separator].trim();
        if name.is_empty() {
            continue;
        }
        let mut value = line[separator + 1..].trim();
        if let Some(comment) = outside_quotes(value, |c| c == '#') {
            value = value[..comment].trim();
        }
        let value = unquoted(value);
        match variables.iter_mut().find(|(seen, _)| seen == name) {
            Some((_, earlier)) => *earlier = value,
            None => variables.push((name.to_owned(), value)),
        }
    }
    variables
}

/// Where the first character `wanted` picks is, outside `'`, `"` and `` ` `` quotes (a quote
/// right after a backslash does not close them).
fn outside_quotes(text: &str, wanted: impl Fn(char) -> bool) -> Option<usize> {
    let mut quote = None;
    let mut previous = None;
    for (at, c) in text.char_indices() {
        match quote {
            Some(open) if c == open && previous != Some('\\') => quote = None,
            Some(_) => {}
            None if matches!(c, '"' | '\'' | '`') => quote = Some(c),
            None if wanted(c) => return Some(at),
            None => {}
        }
        previous = Some(c);
    }
    None
}

/// `value` without the quotes around it, if it is wholly quoted.
fn unquoted(value: &str) -> String {
    let quote = value.chars().next().filter(|c| matches!(c, '"' | '\'' | '`'));
    match quote {
        Some(quote) if value.len() >= 2 && value.ends_with(quote) => {
            let inner = &value[1..value.len() - 1];
            match quote {
                '"' => inner.replace("\\n", "\n").replace("\\r", "\r"),
                _ => inner.to_owned(),
            }
        }
        _ => value.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect()
    }

    #[test]
    fn names_and_values_as_vscode_reads_them() {
        let text = "# the shop's keys\r\n\
                    \n\
                    API_KEY=abc$def\n\
                    export REGION = eu-west-1 # where\n\
                    GREETING=\"hello\\nworld\"\n\
                    LITERAL='a \\n # b'\n\
                    TICKS=`x=1`\n\
                    HALF=\"open\n\
                    URL: http://h:1/p#frag\n\
                    EMPTY=\n\
                    app.level-2=debug\n\
                    REGION=eu-north-1\n";
        let expected = pairs(&[
            ("API_KEY", "abc$def"),
            ("REGION", "eu-north-1"),
            ("GREETING", "hello\nworld"),
            ("LITERAL", "a \\n # b"),
            ("TICKS", "x=1"),
            ("HALF", "\"open"),
            ("URL", "http://h:1/p"),
            ("EMPTY", ""),
            ("app.level-2", "debug"),
        ]);
        assert_eq!(parse(text), expected);
    }

    #[test]
    fn lines_that_are_no_variable_are_skipped() {
        let text = "JUST A LINE\n=1\n\"A=1\"\nB=2\n";
        assert_eq!(parse(text), pairs(&[("B", "2")]));
    }
}
