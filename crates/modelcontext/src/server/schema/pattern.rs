//! `pattern` and `patternProperties`: ECMA-262 regular expressions, as JSON Schema defines
//! them, run on the `regex` crate, which matches in time linear in the input. Syntax that
//! needs backtracking (backreferences, look-around) does not compile, so a hostile pattern or
//! argument cannot make a check slow.

use regex::Regex;

/// The most memory one compiled pattern may take (the `regex` crate's default is 10 MiB).
/// Schemas are bounded by `max_schema_bytes`, but a short pattern such as `(?:a{1000}){1000}`
/// expands far beyond its text; past this it is refused like any invalid pattern.
const MAX_COMPILED_BYTES: usize = 10 * (1 << 20);

/// Compiles an ECMA-262 pattern; `None` when it is not one the linear-time engine can run.
pub(super) fn compile(pattern: &str) -> Option<Regex> {
    regex::RegexBuilder::new(&translate(pattern)?).size_limit(MAX_COMPILED_BYTES).build().ok()
}

/// Every character, spelled as a range: the engine is built without the Perl classes (`\s`,
/// `\w`, `\d`) and their Unicode tables, which ECMA-262's own classes never need.
const ANY: &str = r"[\x{0}-\x{10FFFF}]";
/// No character.
const NONE: &str = r"[^\x{0}-\x{10FFFF}]";
/// ECMA-262's line terminators, which its `.` does not match (Rust's `.` only skips `\n`).
const NOT_LINE_TERMINATOR: &str = r"[^\n\r\x{2028}\x{2029}]";
/// ECMA-262's `\s`: WhiteSpace (tab, VT, FF, space, NBSP, BOM, the `Zs` category) and the
/// line terminators. Rust's Unicode `\s` also takes U+0085 and leaves out the BOM.
const WHITESPACE: &str = r"\t\n\x0B\x0C\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// Rewrites what ECMA-262 and the `regex` crate read differently: the class escapes `\d`,
/// `\w`, `\s` are ASCII (or ECMA whitespace) in ECMA-262 but Unicode in Rust; `.` stops at
/// every line terminator; `\cX` is a control character; and inside a class `[`, `&&`, `--`
/// and `~~` are literal in ECMA-262 but nesting and set operations in Rust. Everything else is
/// the same syntax, or fails to compile (look-around, backreferences), which refuses the
/// pattern. `None` for the inline flags Rust has and ECMA-262 has not (`(?i)`, `(?s:...)`):
/// refused here, so that whether they compile never depends on the engine's features.
fn translate(pattern: &str) -> Option<String> {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut in_class = false;
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('c') if chars.peek().is_some_and(char::is_ascii_alphabetic) => {
                    // `\cJ`: the control character of a letter (its code modulo 32).
                    let letter = chars.next().map_or(0, |letter| u32::from(letter) % 32);
                    out.push_str(&format!(r"\x{{{letter:02X}}}"));
                }
                Some(escape) => push_escape(&mut out, escape, in_class),
                None => out.push('\\'), // a trailing backslash: let the engine refuse it
            },
            '[' if in_class => out.push_str(r"\["),
            '[' => {
                in_class = true;
                out.push('[');
                // `[]` matches nothing and `[^]` anything in ECMA-262; Rust would read the
                // `]` as a literal member, so spell both out.
                let negated = chars.next_if_eq(&'^').is_some();
                if chars.next_if_eq(&']').is_some() {
                    out.pop();
                    out.push_str(if negated { ANY } else { NONE });
                    in_class = false;
                } else if negated {
                    out.push('^');
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '&' | '~' if in_class && chars.peek() == Some(&c) => {
                out.push('\\');
                out.push(c);
            }
            '-' if in_class && chars.peek() == Some(&'-') => out.push_str(r"\-"),
            '.' if !in_class => out.push_str(NOT_LINE_TERMINATOR),
            '(' if !in_class && chars.peek() == Some(&'?') => {
                // ECMA-262's groups: `(?:`, look-around `(?=` `(?!` `(?<=` `(?<!` (which the
                // engine refuses) and named `(?<name>`; anything else after `(?` is a flag.
                let mut ahead = chars.clone();
                ahead.next();
                if !matches!(ahead.next(), Some(':' | '=' | '!' | '<')) {
                    return None;
                }
                out.push('(');
            }
            _ => out.push(c),
        }
    }
    Some(out)
}

/// One escape (the character after a backslash), translated where ECMA-262 differs.
fn push_escape(out: &mut String, escape: char, in_class: bool) {
    match escape {
        'd' => out.push_str("[0-9]"),
        'D' => out.push_str("[^0-9]"),
        'w' => out.push_str("[A-Za-z0-9_]"),
        'W' => out.push_str("[^A-Za-z0-9_]"),
        // A boundary between `\w` and `\W` as ECMA-262 defines them: ASCII word characters.
        // Inside a class, `\b` is a backspace.
        'b' if in_class => out.push_str(r"\x08"),
        'b' => out.push_str(r"(?-u:\b)"),
        'B' if !in_class => out.push_str(r"(?-u:\B)"),
        's' => {
            out.push('[');
            out.push_str(WHITESPACE);
            out.push(']');
        }
        'S' => {
            out.push_str("[^");
            out.push_str(WHITESPACE);
            out.push(']');
        }
        other => {
            out.push('\\');
            out.push(other);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        compile(pattern).unwrap_or_else(|| panic!("{pattern} compiles")).is_match(text)
    }

    #[test]
    fn a_pattern_matches_anywhere_unless_anchored() {
        assert!(matches("b", "abc"));
        assert!(!matches("^b", "abc"));
        assert!(matches("^a.c$", "abc"));
        assert!(matches(r"^\p{L}+$", "été"));
    }

    /// The escapes whose Unicode tables the engine is built without (`unicode-perl`): a
    /// translated pattern must never need them, or it would compile here (where the test
    /// build's dev-dependencies turn every `regex` feature on) and be refused in a user's build.
    #[track_caller]
    fn needs_no_perl_classes(pattern: &str) {
        let translated = translate(pattern).unwrap_or_default();
        let ascii_boundaries = translated.replace(r"(?-u:\b)", "").replace(r"(?-u:\B)", "");
        let mut chars = ascii_boundaries.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                let escape = chars.next();
                assert!(
                    !matches!(escape, Some('s' | 'S' | 'w' | 'W' | 'd' | 'D' | 'b' | 'B')),
                    "{pattern} became {translated}"
                );
            }
        }
    }

    #[test]
    fn translated_patterns_need_no_perl_class_tables() {
        for pattern in [
            r"\s",
            r"\S",
            r"\w",
            r"\W",
            r"\d",
            r"\D",
            r"\b",
            r"\B",
            r"[\s\d]",
            r"[^\w]",
            "[]",
            "[^]",
            r"a[]b",
            r"\bx\B",
            r"[\b]",
            r"^\p{L}\s*$",
            r"\\s",
        ] {
            needs_no_perl_classes(pattern);
        }
    }

    #[test]
    fn inline_flags_are_not_ecma_262_and_are_refused() {
        for pattern in ["(?i)abc", "(?s:a.b)", "a(?x) b", "(?-u:a)", "(?P<n>a)"] {
            assert!(compile(pattern).is_none(), "{pattern}");
        }
        assert!(matches("^(?:ab)+$", "abab"));
        assert!(matches(r"^(?<year>\d{4})$", "2026"));
        assert!(compile("(?=a)").is_none() && compile("(?<!a)b").is_none()); // look-around
        assert!(matches(r"^[(?i)]+$", "(?i)")); // in a class, plain characters
    }

    #[test]
    fn word_boundaries_are_between_ascii_word_characters_as_in_ecma_262() {
        assert!(matches(r"\bcat\b", "a cat sat"));
        assert!(!matches(r"\bcat\b", "concatenate"));
        // `é` is not a word character in ECMA-262: a boundary lies between it and `a`.
        assert!(matches(r"a\b", "aé"));
        assert!(!matches(r"\bé", "é"));
        assert!(matches(r"^é\B$", "é"));
        assert!(matches(r"^[\b]$", "\u{8}")); // in a class, `\b` is a backspace
    }

    #[test]
    fn class_escapes_are_ascii_as_in_ecma_262() {
        assert!(matches(r"^\d+$", "0123456789"));
        assert!(!matches(r"^\d$", "٣")); // ARABIC-INDIC DIGIT THREE
        assert!(matches(r"^\D$", "٣"));
        assert!(matches(r"^\w+$", "a_Z9"));
        assert!(!matches(r"^\w$", "é"));
        assert!(matches(r"^\W$", "é"));
        assert!(matches(r"^[\d\w-]+$", "a-1"));
        assert!(!matches(r"^[^\d]$", "5"));
    }

    #[test]
    fn whitespace_is_ecma_262_whitespace() {
        for c in ['\t', '\u{0B}', '\u{0C}', ' ', '\u{A0}', '\u{FEFF}', '\u{2003}', '\u{2028}'] {
            assert!(matches(r"^\s$", &c.to_string()), "{c:?}");
            assert!(!matches(r"^\S$", &c.to_string()), "{c:?}");
        }
        assert!(!matches(r"^\s$", "\u{85}"));
        assert!(matches(r"^\S$", "\u{85}"));
    }

    #[test]
    fn dot_stops_at_every_line_terminator() {
        for terminator in ["\n", "\r", "\u{2028}", "\u{2029}"] {
            assert!(!matches("^.$", terminator), "{terminator:?}");
        }
        assert!(matches("^.$", "\u{85}"));
        assert!(matches("^[.]$", "."));
        assert!(!matches("^[.]$", "a"));
    }

    #[test]
    fn ecma_literals_inside_classes_stay_literal() {
        assert!(matches("^[[]$", "["));
        assert!(matches("^[a&&b]+$", "a&b"));
        assert!(matches("^[a~~b]+$", "~"));
        assert!(matches("^[a--]+$", "-"));
        assert!(!matches("^[]$", "a"));
        assert!(matches("^[^]$", "\n"));
        assert!(matches(r"^[\]]$", "]"));
    }

    #[test]
    fn escapes_the_engines_share_pass_through() {
        assert!(matches(r"^\u0041\x42\.\/$", "AB./"));
        assert!(matches(r"^\p{Lu}$", "É"));
        assert!(matches(r"^\cJ\ca$", "\n\u{1}"));
    }

    #[test]
    fn backtracking_only_syntax_is_refused() {
        for pattern in [r"^(a+)\1$", "^(?=a)a+$", "(?<=a)b", "(?!a)", "[", r"\", r"\c1"] {
            assert!(compile(pattern).is_none(), "{pattern}");
        }
    }

    #[test]
    fn a_pattern_that_expands_past_the_memory_bound_is_refused() {
        assert!(compile("(?:a{1000}){1000}").is_none());
    }

    #[test]
    fn catastrophic_patterns_run_in_linear_time() {
        let text = format!("{}!", "a".repeat(100_000));
        let started = Instant::now();
        for pattern in ["^(a+)+$", "^(a|a)*$", "^(a|aa)+$", "^(.*a){20}$", "^(a?){30}a{30}$"] {
            assert!(!matches(pattern, &text), "{pattern}");
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    }
}
