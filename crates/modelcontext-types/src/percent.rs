//! `%XX` escapes (RFC 3986 section 2.1), decoded strictly: every `%` must start an escape of
//! two hex digits. The bytes are decoded by `percent-encoding`, which keeps a malformed escape
//! as plain text; the check before it refuses one instead, so no value has two spellings
//! (`u8::from_str_radix`, used for this before, also took a sign: `%+1` was the byte 0x01).

use std::fmt;

/// Why [`decode`] refused its input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PercentDecodeError(String);

impl fmt::Display for PercentDecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PercentDecodeError {}

/// `raw` with its `%XX` escapes decoded, as UTF-8. Refuses a `%` not followed by two hex
/// digits (`malformed percent-escape "%+1"`) and escapes that decode to bytes that are not
/// UTF-8. Nothing else is translated: a form's `+` for a space is the caller's business.
pub fn decode(raw: &[u8]) -> Result<String, PercentDecodeError> {
    for (at, _) in raw.iter().enumerate().filter(|(_, byte)| **byte == b'%') {
        let hex = raw.get(at + 1..at + 3);
        if !hex.is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit)) {
            let shown = String::from_utf8_lossy(&raw[at..raw.len().min(at + 3)]);
            return Err(PercentDecodeError(format!("malformed percent-escape \"{shown}\"")));
        }
    }
    let decoded = percent_encoding::percent_decode(raw).decode_utf8();
    decoded
        .map(|text| text.into_owned())
        .map_err(|_| PercentDecodeError("percent-escapes that do not decode to UTF-8".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(raw: &str) -> String {
        decode(raw.as_bytes()).expect_err(raw).to_string()
    }

    #[test]
    fn escapes_decode() {
        assert_eq!(decode(b"a%20b%2Fc%e2%82%AC+").as_deref(), Ok("a b/c\u{20ac}+"));
        assert_eq!(decode(b"").as_deref(), Ok(""));
    }

    #[test]
    fn a_sign_or_a_short_escape_is_refused() {
        assert_eq!(refusal("%+1"), r#"malformed percent-escape "%+1""#);
        assert_eq!(refusal("a%-1"), r#"malformed percent-escape "%-1""#);
        assert_eq!(refusal("ab%4"), r#"malformed percent-escape "%4""#);
        assert_eq!(refusal("%"), r#"malformed percent-escape "%""#);
        assert_eq!(refusal("%zz"), r#"malformed percent-escape "%zz""#);
        assert_eq!(refusal("%%41"), r#"malformed percent-escape "%%4""#);
        assert_eq!(refusal("%FF"), "percent-escapes that do not decode to UTF-8");
    }
}
