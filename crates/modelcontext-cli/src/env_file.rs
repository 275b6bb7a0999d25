//! A stdio server's `envFile` (VS Code's `mcp.json`): `NAME=value` lines read as VS Code
//! reads them, in dotenv's format.
//!
//! Read here rather than with a dotenv crate: the maintained one (dotenvy) expands `$NAME`
//! inside values, which VS Code does not, so a secret holding a `$` would reach the server
//! changed.
//!
//! - Blank lines and lines starting with `#` are skipped; `export ` before a name is allowed.
//! - A value in `'`, `"` or `` ` `` quotes is taken as written and may span lines; in `"`
//!   quotes, `\n` and `\r` are a line feed and a carriage return.
//! - An unquoted value ends at a `#` and is trimmed.

/// The variables of the file's `text`, in its order; an error names the line.
pub fn parse(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut variables = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((index, line)) = lines.next() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let number = index + 1;
        let line = line.strip_prefix("export ").map_or(line, str::trim_start);
        let Some((name, value)) = line.split_once('=') else {
            return Err(format!("line {number}: no '=' after the name"));
        };
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
        {
            return Err(format!("line {number}: {name:?} is not a variable name"));
        }
        let value = value.trim_start();
        let value = match value.chars().next() {
            Some(quote @ ('\'' | '"' | '`')) => quoted(quote, &value[1..], &mut lines)
                .ok_or_else(|| format!("line {number}: the {quote} quote is never closed"))?,
            _ => value.split('#').next().unwrap_or_default().trim_end().to_owned(),
        };
        variables.push((name.to_owned(), value));
    }
    Ok(variables)
}

/// The value after an opening `quote`, up to the closing one, on this line (`rest`) or the
/// next ones; what follows the closing quote is ignored.
fn quoted<'a>(
    quote: char,
    rest: &'a str,
    lines: &mut impl Iterator<Item = (usize, &'a str)>,
) -> Option<String> {
    let mut value = String::new();
    let mut line = rest;
    loop {
        if let Some(end) = line.find(quote) {
            value.push_str(&line[..end]);
            break;
        }
        value.push_str(line);
        value.push('\n');
        line = lines.next()?.1;
    }
    Some(match quote {
        '"' => value.replace("\\n", "\n").replace("\\r", "\r"),
        _ => value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect()
    }

    #[test]
    fn names_and_values_as_vscode_reads_them() {
        let text = "# the shop's keys\n\
                    \n\
                    API_KEY=abc$def\n\
                    export REGION = eu-west-1 # where\n\
                    GREETING=\"hello\\nworld\" trailing\n\
                    LITERAL='a \\n # b'\n\
                    PEM=\"-----BEGIN-----\n\
                    body\n\
                    -----END-----\"\n\
                    EMPTY=\n\
                    app.level-2=debug\n";
        let expected = pairs(&[
            ("API_KEY", "abc$def"),
            ("REGION", "eu-west-1"),
            ("GREETING", "hello\nworld"),
            ("LITERAL", "a \\n # b"),
            ("PEM", "-----BEGIN-----\nbody\n-----END-----"),
            ("EMPTY", ""),
            ("app.level-2", "debug"),
        ]);
        assert_eq!(parse(text), Ok(expected));
    }

    #[test]
    fn a_line_that_is_no_variable_is_an_error_naming_it() {
        assert_eq!(parse("A=1\nJUST A LINE\n"), Err("line 2: no '=' after the name".into()));
        assert_eq!(parse("BAD NAME=1"), Err("line 1: \"BAD NAME\" is not a variable name".into()));
        assert_eq!(parse("=1"), Err("line 1: \"\" is not a variable name".into()));
        assert_eq!(parse("A=\"open\nB=2\n"), Err("line 1: the \" quote is never closed".into()));
    }
}
