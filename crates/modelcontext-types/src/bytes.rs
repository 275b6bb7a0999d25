//! Byte searches in SIMD that never ask the CPU what it has.
//!
//! `memchr`'s top-level functions pick AVX2 at run time, and the first call asks the CPU
//! (`cpuid`, through the standard library's feature cache). In a virtual machine every
//! `cpuid` traps to the hypervisor: measured at about 30 µs of a stdio server's cold start,
//! spent on its first message. SSE2 is part of x86_64 itself, so its searchers need no
//! question, and on the short lines of JSON-RPC they are as fast. Elsewhere `memchr` picks
//! as it likes (aarch64 has NEON without asking).

/// The position of the first `a` or `b` in `haystack`.
pub(crate) fn find_either(a: u8, b: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if let Some(searcher) = memchr::arch::x86_64::sse2::memchr::Two::new(a, b) {
        return searcher.find(haystack);
    }
    memchr::memchr2(a, b, haystack)
}

/// Whether `a` and `b` occur more than `limit` times in `haystack`, together.
pub(crate) fn either_occurs_more_than(a: u8, b: u8, haystack: &[u8], limit: usize) -> bool {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    if let Some(searcher) = memchr::arch::x86_64::sse2::memchr::Two::new(a, b) {
        return searcher.iter(haystack).nth(limit).is_some();
    }
    memchr::memchr2_iter(a, b, haystack).nth(limit).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_of_two_bytes_at_every_length_and_offset() {
        // Lengths around the 16- and 64-byte blocks of the vector loops.
        for len in [0, 1, 15, 16, 17, 63, 64, 65, 200] {
            let mut bytes = vec![b'x'; len];
            assert_eq!(find_either(b'\n', b'\r', &bytes), None);
            for at in (0..len).rev() {
                bytes[at] = if at % 2 == 0 { b'\n' } else { b'\r' };
                assert_eq!(find_either(b'\n', b'\r', &bytes), Some(at), "len {len}");
            }
        }
    }

    #[test]
    fn counts_two_bytes_against_a_limit() {
        let bytes = b"[{\"a\":[1,{\"b\":2}]}]".repeat(5);
        // Four opening brackets per repetition: 20 in all.
        assert!(either_occurs_more_than(b'[', b'{', &bytes, 19));
        assert!(!either_occurs_more_than(b'[', b'{', &bytes, 20));
        assert!(!either_occurs_more_than(b'[', b'{', b"", 0));
        assert!(either_occurs_more_than(b'[', b'{', b"{", 0));
    }
}
