//! Standard base64 (RFC 4648, with padding): binary resource contents, and the
//! `=?base64?...?=` encoding of HTTP header values. A few lines do not justify a dependency.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Encodes `bytes` as padded standard base64.
pub(crate) fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Decodes standard base64 with its padding (length a multiple of 4, at most two `=` at the
/// end); `None` for anything else, so a malformed header value is refused, not guessed at.
pub(crate) fn decode(text: &str) -> Option<Vec<u8>> {
    if text.len() % 4 != 0 {
        return None;
    }
    let text = text.strip_suffix("==").or_else(|| text.strip_suffix('=')).unwrap_or(text);
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for byte in text.bytes() {
        let value = ALPHABET.iter().position(|&c| c == byte)? as u32;
        // Only the newest 14 bits are ever needed; masking keeps the shift from overflowing.
        acc = ((acc << 6) | value) & 0x3FFF;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

/// Encodes `bytes` as base64url without padding (RFC 4648 section 5), as JOSE and PKCE use it.
#[cfg(any(feature = "auth-client", feature = "auth-server"))]
pub(crate) fn encode_url(bytes: &[u8]) -> String {
    encode(bytes).trim_end_matches('=').replace('+', "-").replace('/', "_")
}

/// Decodes unpadded base64url; `None` for anything else (padding or the standard alphabet's
/// `+` and `/` included: JOSE never sends them).
#[cfg(feature = "auth-server")]
pub(crate) fn decode_url(text: &str) -> Option<Vec<u8>> {
    if text.contains(['+', '/', '=']) {
        return None;
    }
    let mut padded = text.replace('-', "+").replace('_', "/");
    while padded.len() % 4 != 0 {
        padded.push('=');
    }
    decode(&padded)
}

#[cfg(test)]
mod tests {
    #[test]
    fn rfc4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(super::encode(plain.as_bytes()), encoded);
            assert_eq!(super::decode(encoded).as_deref(), Some(plain.as_bytes()));
        }
        for malformed in ["Zg", "Zg=", "Zm9vY", "Z===", "Zm9v=", "Zm$v"] {
            assert_eq!(super::decode(malformed), None, "{malformed}");
        }
    }
}
