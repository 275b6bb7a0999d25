//! The digest a skill entry carries for each file: `sha256:` and 64 lowercase hex digits of
//! the file's raw bytes.

use sha2::{Digest, Sha256};

/// `sha256:{hex}` of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut text = String::with_capacity(7 + 64);
    text.push_str("sha256:");
    for byte in hash {
        text.push(char::from(HEX[usize::from(byte >> 4)]));
        text.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    text
}

const HEX: &[u8; 16] = b"0123456789abcdef";

#[cfg(test)]
mod tests {
    #[test]
    fn is_the_sha256_of_the_raw_bytes_in_lowercase_hex() {
        assert_eq!(
            super::digest(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
