//! Skipping a JSON object or array 64 bytes at a time, the way simdjson's first stage finds
//! structure: a bit per byte for quotes, backslashes and brackets, strings found by a prefix
//! XOR over the unescaped quotes, and brackets counted outside them. Kineto's `args` objects
//! are what an ingest skips most (200–2000 bytes of short keys, numbers and shape lists per
//! event), and this does it without a branch per string.
//!
//! Meaning, shared with the word-at-a-time scan in `scan` and its bytewise reference: a
//! backslash escapes the byte after it wherever it stands (outside a string it is invalid
//! JSON either way; treating it alike everywhere lets the bits be found without knowing
//! where strings are first); `{`/`[` open and `}`/`]` close, not checked against each other.

/// Bits of one 64-byte block: bit `k` is byte `k`.
pub(super) struct Masks {
    pub(super) quote: u64,
    pub(super) backslash: u64,
    pub(super) open: u64,
    pub(super) close: u64,
}

/// Where the container opened at `p` closes (the position after it), or `None` when the
/// text ends first. `b[p]` must be `{` or `[`.
pub fn container_end(b: &[u8], p: usize) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above)
            return unsafe { avx2::container_end(b, p) };
        }
    }
    container_end_with(b, p, masks_portable)
}

/// The scan over blocks, with `masks` classifying each (inlined into the caller's target).
#[inline(always)]
fn container_end_with(b: &[u8], p: usize, masks: impl Fn(&[u8; 64]) -> Masks) -> Option<usize> {
    let mut depth: u64 = 0;
    // all ones when the previous block ended inside a string
    let mut in_string: u64 = 0;
    // the first byte of this block is escaped by a backslash that ended the previous one
    let mut escape_carry = false;
    let mut i = p;
    let mut pad = [b' '; 64];
    while i < b.len() {
        let block: &[u8; 64] = match b.get(i..i + 64) {
            Some(s) => s.try_into().ok()?,
            None => {
                // the tail, padded with spaces (nothing structural)
                let rest = &b[i..];
                pad[..rest.len()].copy_from_slice(rest);
                pad[rest.len()..].fill(b' ');
                &pad
            }
        };
        let m = masks(block);
        let escaped = if m.backslash == 0 && !escape_carry { 0 } else { escaped_bits(m.backslash, &mut escape_carry) };
        let inside = prefix_xor(m.quote & !escaped) ^ in_string;
        in_string = ((inside as i64) >> 63) as u64;
        let opens = m.open & !inside & !escaped;
        let closes = m.close & !inside & !escaped;
        if let Some(k) = depth_zero_at(opens, closes, &mut depth) {
            return Some(i + k as usize + 1);
        }
        i += 64;
    }
    None
}

/// Counts one block's brackets (bits of `opens` and `closes`, outside strings) into `depth`:
/// the bit where it comes down to zero, if it does (the rest of the block then uncounted).
#[inline(always)]
pub(super) fn depth_zero_at(opens: u64, closes: u64, depth: &mut u64) -> Option<u32> {
    if (closes.count_ones() as u64) < *depth {
        // the depth cannot reach zero in this block
        *depth = *depth + opens.count_ones() as u64 - closes.count_ones() as u64;
        return None;
    }
    let mut both = opens | closes;
    while both != 0 {
        let k = both.trailing_zeros();
        if opens >> k & 1 == 1 {
            *depth += 1;
        } else {
            *depth -= 1;
            if *depth == 0 {
                return Some(k);
            }
        }
        both &= both - 1;
    }
    None
}

/// The bytes escaped by a backslash: each backslash not itself escaped escapes the next
/// byte. `carry` comes in as "byte 0 is escaped" and goes out as "byte 0 of the next block
/// is". Backslashes are rare in traces, so walking them one by one is cheapest.
#[inline(always)]
fn escaped_bits(backslash: u64, carry: &mut bool) -> u64 {
    let mut escaped = *carry as u64;
    let mut bs = backslash & !escaped;
    *carry = false;
    while bs != 0 {
        let k = bs.trailing_zeros();
        if k == 63 {
            *carry = true;
            break;
        }
        escaped |= 1 << (k + 1);
        // the escaped byte, if a backslash, escapes nothing
        bs &= !(1u64 << k) & !(1u64 << (k + 1));
    }
    escaped
}

/// Bit k = XOR of bits 0..=k: set from an opening quote up to, not including, its closing one.
#[inline(always)]
pub(super) fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

pub(super) fn masks_portable(blk: &[u8; 64]) -> Masks {
    let mut m = Masks { quote: 0, backslash: 0, open: 0, close: 0 };
    for (k, &c) in blk.iter().enumerate() {
        let bit = 1u64 << k;
        match c {
            b'"' => m.quote |= bit,
            b'\\' => m.backslash |= bit,
            b'{' | b'[' => m.open |= bit,
            b'}' | b']' => m.close |= bit,
            _ => {}
        }
    }
    m
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Masks;
    use std::arch::x86_64::*;

    /// [`super::container_end`] compiled for AVX2 (the block loop inlined around `masks`).
    #[target_feature(enable = "avx2")]
    pub fn container_end(b: &[u8], p: usize) -> Option<usize> {
        super::container_end_with(b, p, |blk| masks(blk))
    }

    #[inline]
    #[target_feature(enable = "avx2")]
    fn masks(blk: &[u8; 64]) -> Masks {
        // SAFETY: two unaligned 32-byte loads inside the 64-byte block
        let (lo, hi) = unsafe {
            (
                _mm256_loadu_si256(blk.as_ptr() as *const __m256i),
                _mm256_loadu_si256(blk.as_ptr().add(32) as *const __m256i),
            )
        };
        let eq = |c: u8| -> u64 {
            let v = _mm256_set1_epi8(c as i8);
            let a = _mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, v)) as u32 as u64;
            let b = _mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, v)) as u32 as u64;
            a | b << 32
        };
        // `| 0x20` folds '[' (0x5B) onto '{' (0x7B) and ']' (0x5D) onto '}' (0x7D); no other
        // byte lands on either ('{' | 0x20 is itself, and 0x5B/0x5D are the only others)
        let folded = |c: u8| -> u64 {
            let v = _mm256_set1_epi8(c as i8);
            let bit = _mm256_set1_epi8(0x20);
            let a = _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_or_si256(lo, bit), v)) as u32 as u64;
            let b = _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_or_si256(hi, bit), v)) as u32 as u64;
            a | b << 32
        };
        Masks { quote: eq(b'"'), backslash: eq(b'\\'), open: folded(b'{'), close: folded(b'}') }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain reading of the meaning in the module comment.
    fn bytewise(b: &[u8], p: usize) -> Option<usize> {
        let (mut depth, mut i, mut in_string) = (0u64, p, false);
        while i < b.len() {
            match b[i] {
                b'\\' => {
                    i += 2;
                    continue;
                }
                b'"' => in_string = !in_string,
                b'{' | b'[' if !in_string => depth += 1,
                b'}' | b']' if !in_string => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        None
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
        #[test]
        fn blocks_agree_with_bytes(
            body in proptest::collection::vec(proptest::sample::select(
                b"{}[]\"\\\\\\:, a1{}\"\"".to_vec()), 0..300),
            open in proptest::sample::select(b"{[".to_vec()),
        ) {
            let mut b = vec![open];
            b.extend_from_slice(&body);
            let want = bytewise(&b, 0);
            proptest::prop_assert_eq!(container_end(&b, 0), want);
            proptest::prop_assert_eq!(container_end_with(&b, 0, masks_portable), want);
        }
    }

    #[test]
    fn across_blocks() {
        // a string with escapes that straddles the 64-byte edges, a backslash run ending a block
        let mut t = String::from("{\"k\": \"");
        t.push_str(&"x".repeat(50));
        t.push_str("\\\\\\\"}]{[");
        t.push_str(&"y".repeat(70));
        t.push_str("\", \"v\": [1, {\"a\": \"}\"}]}");
        t.push_str(" tail");
        assert_eq!(container_end(t.as_bytes(), 0), Some(t.len() - 5));
        assert_eq!(bytewise(t.as_bytes(), 0), Some(t.len() - 5));
        for k in 0..130 {
            let s = format!("[{}\"\\\\\"]x", " ".repeat(k));
            assert_eq!(container_end(s.as_bytes(), 0), Some(s.len() - 1), "{k}");
            let s = format!("[{}\"\\\"]\" ]x", " ".repeat(k));
            assert_eq!(container_end(s.as_bytes(), 0), Some(s.len() - 1), "{k}");
        }
        assert_eq!(container_end(b"{\"a\": [1, 2]", 0), None);
    }
}
