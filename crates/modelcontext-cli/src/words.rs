//! Shell-style words, without a shell: how `--stdio "cmd args"` and each line of `mcp shell`
//! are split, and how Tab completion reads the line it completes, so the two never disagree.
//!
//! Whitespace separates words; single quotes keep everything up to the next single quote;
//! double quotes keep everything but `\"` and `\\`, which stand for `"` and `\`; a backslash
//! outside quotes takes the next character as it is. There are no variables, globs or pipes.

/// A line split so far: the finished words and the one being typed when the line ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partial {
    /// The words before the last, unquoted.
    pub done: Vec<String>,
    /// The byte where the last word starts (the line's length after trailing whitespace).
    pub start: usize,
    /// The last word's text so far, unquoted (empty after trailing whitespace).
    pub word: String,
    /// The quote the line leaves open, if any.
    pub open: Option<char>,
}

/// Splits `line` into words; an unclosed quote is an error saying which.
pub fn split(line: &str) -> Result<Vec<String>, String> {
    let Partial { mut done, start, word, open } = partial(line);
    if let Some(quote) = open {
        return Err(format!("unclosed {quote} quote"));
    }
    // A word was begun when the line does not end where a new word would start: `''` is an
    // empty word, trailing spaces are none.
    if start < line.len() {
        done.push(word);
    }
    Ok(done)
}

/// A command line to run (`--stdio`, `--sampling-cmd`) split into its program and arguments;
/// `flag` names the option in the messages.
pub fn command(line: &str, flag: &str) -> Result<Vec<String>, String> {
    let words = split(line).map_err(|problem| format!("{flag}: {problem}"))?;
    if words.is_empty() {
        return Err(format!("{flag} needs a command to run"));
    }
    Ok(words)
}

/// Reads `line` as far as it goes, for completion: nothing in it is an error.
pub fn partial(line: &str) -> Partial {
    let mut done = Vec::new();
    let mut current: Option<(usize, String)> = None;
    let mut open = None;
    let mut chars = line.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match open {
            None if c.is_whitespace() => done.extend(current.take().map(|(_, word)| word)),
            None => {
                let (_, word) = current.get_or_insert_with(|| (at, String::new()));
                match c {
                    '\'' | '"' => open = Some(c),
                    '\\' => word.extend(chars.next().map(|(_, next)| next)),
                    c => word.push(c),
                }
            }
            Some(quote) => {
                let (_, word) = current.get_or_insert_with(|| (at, String::new()));
                match c {
                    c if c == quote => open = None,
                    '\\' if quote == '"' => match chars.peek() {
                        Some(&(_, next @ ('"' | '\\'))) => {
                            chars.next();
                            word.push(next);
                        }
                        _ => word.push('\\'),
                    },
                    c => word.push(c),
                }
            }
        }
    }
    let (start, word) = current.unwrap_or((line.len(), String::new()));
    Partial { done, start, word, open }
}

/// `word` written so that [`split`] reads it back as one word: as it is when nothing in it
/// is special, else in single quotes (a `'` inside written `'\''`).
pub fn quote(word: &str) -> String {
    let special = |c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '\\');
    if !word.is_empty() && !word.contains(special) {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        split(line).expect("splits")
    }

    #[test]
    fn words_split_like_a_shell_without_one() {
        assert_eq!(words("bookshop --http 127.0.0.1:0"), ["bookshop", "--http", "127.0.0.1:0"]);
        assert_eq!(words(r#"sh -c 'echo "hi"; exit 3'"#), ["sh", "-c", r#"echo "hi"; exit 3"#]);
        assert_eq!(words(r#"a "b \"c\" d" e\ f"#), ["a", r#"b "c" d"#, "e f"]);
        assert_eq!(words(r#""a\nb" 'c\d'"#), [r"a\nb", r"c\d"]);
        assert_eq!(
            words("call t title=\"The Left Hand\" n=1"),
            ["call", "t", "title=The Left Hand", "n=1"]
        );
        assert_eq!(words("''"), [""]);
        assert_eq!(words("  a  ''  "), ["a", ""]);
        assert!(words("   ").is_empty());
    }

    #[test]
    fn a_command_needs_a_word_and_closed_quotes() {
        assert_eq!(command("a 'b c'", "--stdio"), Ok(vec!["a".into(), "b c".into()]));
        assert_eq!(command("  ", "--stdio"), Err("--stdio needs a command to run".into()));
        assert_eq!(
            command("'open", "--sampling-cmd"),
            Err("--sampling-cmd: unclosed ' quote".into())
        );
    }

    #[test]
    fn an_unclosed_quote_is_an_error() {
        assert_eq!(split("'open"), Err("unclosed ' quote".into()));
        assert_eq!(split(r#"a "b \""#), Err("unclosed \" quote".into()));
        assert_eq!(split(r#""ends in \"#), Err("unclosed \" quote".into()));
    }

    #[test]
    fn the_word_being_typed_is_read_unquoted() {
        let p = partial("call 'get author' title=\"Du");
        assert_eq!(p.done, ["call", "get author"]);
        assert_eq!((p.start, p.word.as_str(), p.open), (18, "title=Du", Some('"')));
        let p = partial("read books://My\\ B");
        assert_eq!((p.start, p.word.as_str(), p.open), (5, "books://My B", None));
        let p = partial("call ");
        assert_eq!((p.done.len(), p.start, p.word.as_str()), (1, 5, ""));
        let p = partial("call '");
        assert_eq!((p.start, p.word.as_str(), p.open), (5, "", Some('\'')));
    }

    #[test]
    fn quoted_words_read_back_as_themselves() {
        for word in ["plain", "books://Dune", "two words", "it's", r#"say "hi""#, r"a\b", ""] {
            assert_eq!(split(&quote(word)), Ok(vec![word.to_owned()]), "{word:?}");
        }
        assert_eq!(quote("books://Dune"), "books://Dune");
        assert_eq!(quote("two words"), "'two words'");
    }
}
