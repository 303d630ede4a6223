//! `scan::scan_object` 64 bytes at a time, for the events nearly every trace is made of.
//!
//! Each block is classified once (quotes, brackets, colons, commas, whitespace: a bit per
//! byte, see `blocks`), and the object's members are then read from the bits that matter:
//! each key's quotes, its colon, where its value starts and ends, the comma after it. A
//! pretty-printed Kineto event is ~300 bytes of which ~60 are structure, so this skips the
//! byte-wise whitespace, string and number walks that the word-at-a-time scan still does.
//!
//! Only the common case is taken: any backslash in a block read, any byte out of place, or
//! the text ending first, and the scan declines (`None`). The caller then runs the exact
//! scan from the start, so every result and every error is `scan::scan_object`'s.

/// Bits of one 64-byte block: bit `k` is byte `k`.
pub struct ObjectMasks {
    pub quote: u64,
    /// Bit k: the XOR of `quote`'s bits 0..=k (set from an opening quote up to its closing one).
    pub quote_prefix: u64,
    pub backslash: u64,
    /// `{` and `[`.
    pub open: u64,
    /// `}` and `]`.
    pub close: u64,
    /// `:` and `,` (told apart by reading the byte).
    pub sep: u64,
    /// Space, `\n`, `\r`, `\t`: exactly what `scan::skip_ws` skips.
    pub ws: u64,
}

/// The object at `p` as `scan::scan_object` reads it: `f(key, value)` for each member and the
/// position after the object; `None` where this fast path declines (see the module comment).
/// `f` may have been called for some members before it declines.
#[inline]
pub fn scan_object<'a>(text: &'a str, p: usize, f: &mut impl FnMut(&'a str, &'a str)) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        if avx2::detected() {
            // SAFETY: the CPU has what it is compiled for (checked just above)
            return unsafe { avx2::scan_object(text, p, f) };
        }
    }
    // without AVX2 the word-at-a-time scan is the faster one
    let _ = (text, p, f);
    None
}

/// The cursor over a text's blocks: the structural bits of the block at `base` not yet read.
struct Walk<'b, M> {
    b: &'b [u8],
    masks: M,
    base: usize,
    /// All ones when the previous block ended inside a string.
    in_string: u64,
    /// 1 when the previous block's last byte was part of a bare value (number, literal).
    scalar_carry: u64,
    /// Tokens not yet read: quotes, and outside strings brackets, colons, commas and the first
    /// byte of each bare value.
    tokens: u64,
    /// Bytes of bare values: outside strings, neither whitespace nor structure.
    scalar: u64,
    open: u64,
    close: u64,
}

impl<'b, M: Fn(&[u8; 64]) -> ObjectMasks> Walk<'b, M> {
    #[inline(always)]
    fn new(b: &'b [u8], p: usize, masks: M) -> Option<Self> {
        let mut w = Walk { b, masks, base: p, in_string: 0, scalar_carry: 0, tokens: 0, scalar: 0, open: 0, close: 0 };
        w.load()?;
        Some(w)
    }

    /// Classifies the block at `base`; `None` at the end of the text or on a backslash.
    #[inline(always)]
    fn load(&mut self) -> Option<()> {
        let b = self.b;
        let mut pad = [b' '; 64];
        let blk: &[u8; 64] = match b.get(self.base..self.base + 64) {
            Some(s) => s.try_into().ok()?,
            None => {
                let rest = b.get(self.base..).filter(|r| !r.is_empty())?;
                // the tail, padded with spaces (nothing structural)
                pad[..rest.len()].copy_from_slice(rest);
                &pad
            }
        };
        let m = (self.masks)(blk);
        if m.backslash != 0 {
            return None;
        }
        // set from an opening quote up to, not including, its closing one
        let inside = m.quote_prefix ^ self.in_string;
        self.in_string = ((inside as i64) >> 63) as u64;
        let outside = !inside & !m.quote;
        let structure = (m.open | m.close | m.sep) & outside;
        let scalar = !m.ws & outside & !structure;
        let scalar_starts = scalar & !((scalar << 1) | self.scalar_carry);
        self.scalar_carry = scalar >> 63;
        self.tokens = m.quote | structure | scalar_starts;
        self.scalar = scalar;
        self.open = m.open & outside;
        self.close = m.close & outside;
        Some(())
    }

    #[inline(always)]
    fn next_block(&mut self) -> Option<()> {
        self.base += 64;
        self.load()
    }

    /// The next token's position.
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        while self.tokens == 0 {
            self.next_block()?;
        }
        let k = self.tokens.trailing_zeros() as usize;
        self.tokens &= self.tokens - 1;
        Some(self.base + k)
    }

    /// The end of the bare value that starts at `s` (its token read): the first byte after it
    /// that is not part of it.
    #[inline(always)]
    fn scalar_end(&mut self, s: usize) -> Option<usize> {
        let mut rest = !self.scalar & (!0u64 << (s - self.base));
        while rest == 0 {
            self.next_block()?;
            rest = !self.scalar;
        }
        Some(self.base + rest.trailing_zeros() as usize)
    }

    /// The position after the container opened at `s` (its token read); the tokens inside it
    /// are dropped. Brackets are counted as `blocks::container_end` counts them.
    #[inline(always)]
    fn container_end(&mut self, s: usize) -> Option<usize> {
        let k = s - self.base;
        let mut above = if k == 63 { 0 } else { !0u64 << (k + 1) };
        let mut depth = 1u64;
        loop {
            if let Some(j) = super::blocks::depth_zero_at(self.open & above, self.close & above, &mut depth) {
                self.tokens &= if j == 63 { 0 } else { !0u64 << (j + 1) };
                return Some(self.base + j as usize + 1);
            }
            self.next_block()?;
            above = !0;
        }
    }
}

/// The fast path with `masks` classifying each block (inlined into the caller's target).
#[inline(always)]
fn scan_object_with<'a>(
    text: &'a str,
    p: usize,
    f: &mut impl FnMut(&'a str, &'a str),
    masks: impl Fn(&[u8; 64]) -> ObjectMasks,
) -> Option<usize> {
    let b = text.as_bytes();
    if b.get(p) != Some(&b'{') {
        return None;
    }
    let mut w = Walk::new(b, p, masks)?;
    // the object's own `{`
    w.next()?;
    let mut t = w.next()?;
    if b[t] == b'}' {
        return Some(t + 1);
    }
    loop {
        if b[t] != b'"' {
            return None;
        }
        let key_end = w.next()?;
        let colon = w.next()?;
        if b[colon] != b':' {
            return None;
        }
        let v = w.next()?;
        let value_end = match b[v] {
            b'"' => w.next()? + 1,
            b'{' | b'[' => w.container_end(v)?,
            c if c.is_ascii_digit() || matches!(c, b'-' | b't' | b'f' | b'n' | b'N' | b'I') => {
                let e = w.scalar_end(v)?;
                // the word-at-a-time scan ends a bare value only at these
                if !matches!(b.get(e), Some(b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')) {
                    return None;
                }
                e
            }
            _ => return None,
        };
        f(&text[t + 1..key_end], &text[v..value_end]);
        let s = w.next()?;
        match b[s] {
            b',' => {}
            b'}' => return Some(s + 1),
            _ => return None,
        }
        t = w.next()?;
    }
}

/// The plain classification, for tests (and the reference the AVX2 one must match): the
/// container skip's, and the separators and whitespace.
#[cfg(test)]
fn masks_portable(blk: &[u8; 64]) -> ObjectMasks {
    let c = super::blocks::masks_portable(blk);
    let quote_prefix = super::blocks::prefix_xor(c.quote);
    let mut m = ObjectMasks {
        quote: c.quote,
        quote_prefix,
        backslash: c.backslash,
        open: c.open,
        close: c.close,
        sep: 0,
        ws: 0,
    };
    for (k, &b) in blk.iter().enumerate() {
        match b {
            b':' | b',' => m.sep |= 1 << k,
            b' ' | b'\n' | b'\r' | b'\t' => m.ws |= 1 << k,
            _ => {}
        }
    }
    m
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::ObjectMasks;
    use std::arch::x86_64::*;

    /// Whether the CPU has what `scan_object` is compiled for (every x86 CPU with AVX2 has
    /// the others).
    #[inline]
    pub fn detected() -> bool {
        std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("pclmulqdq")
            && std::is_x86_feature_detected!("popcnt")
            && std::is_x86_feature_detected!("bmi1")
    }

    /// [`super::scan_object`] compiled for AVX2, carry-less multiply (the quotes' prefix
    /// XOR), POPCNT (bracket counts) and BMI1 (lowest bits).
    #[target_feature(enable = "avx2,pclmulqdq,popcnt,bmi1")]
    pub fn scan_object<'a>(text: &'a str, p: usize, f: &mut impl FnMut(&'a str, &'a str)) -> Option<usize> {
        super::scan_object_with(text, p, f, |blk| masks(blk))
    }

    // Each byte's class is `LOW[byte & 15] & HIGH[byte >> 4]` (simdjson's lookup): a bit per
    // group of bytes whose nibbles no other byte combines to.
    const WS_SPACE: i8 = 1; // 0x20
    const WS_CONTROL: i8 = 2; // 0x09 0x0a 0x0d
    const OPEN: i8 = 4; // 0x7b 0x5b
    const CLOSE: i8 = 8; // 0x7d 0x5d
    const COLON: i8 = 16; // 0x3a
    const COMMA: i8 = 32; // 0x2c
    const QUOTE: i8 = 64; // 0x22
    const BACKSLASH: i8 = -128; // 0x5c

    #[inline]
    #[target_feature(enable = "avx2,pclmulqdq,popcnt,bmi1")]
    pub(super) fn masks(blk: &[u8; 64]) -> ObjectMasks {
        // SAFETY: two unaligned 32-byte loads inside the 64-byte block
        let (lo, hi) = unsafe {
            (
                _mm256_loadu_si256(blk.as_ptr() as *const __m256i),
                _mm256_loadu_si256(blk.as_ptr().add(32) as *const __m256i),
            )
        };
        #[rustfmt::skip]
        let low = _mm256_setr_epi8(
            WS_SPACE, 0, QUOTE, 0, 0, 0, 0, 0, 0, WS_CONTROL, WS_CONTROL | COLON, OPEN, COMMA | BACKSLASH, WS_CONTROL | CLOSE, 0, 0,
            WS_SPACE, 0, QUOTE, 0, 0, 0, 0, 0, 0, WS_CONTROL, WS_CONTROL | COLON, OPEN, COMMA | BACKSLASH, WS_CONTROL | CLOSE, 0, 0,
        );
        #[rustfmt::skip]
        let high = _mm256_setr_epi8(
            WS_CONTROL, 0, WS_SPACE | COMMA | QUOTE, COLON, 0, OPEN | CLOSE | BACKSLASH, 0, OPEN | CLOSE, 0, 0, 0, 0, 0, 0, 0, 0,
            WS_CONTROL, 0, WS_SPACE | COMMA | QUOTE, COLON, 0, OPEN | CLOSE | BACKSLASH, 0, OPEN | CLOSE, 0, 0, 0, 0, 0, 0, 0, 0,
        );
        let nibble = _mm256_set1_epi8(0x0f);
        // a byte >= 0x80 shuffles to 0 in `low` (its index's top bit is set): class 0
        let class = |v: __m256i| {
            let h = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
            _mm256_and_si256(_mm256_shuffle_epi8(low, v), _mm256_shuffle_epi8(high, h))
        };
        let (a, b) = (class(lo), class(hi));
        let join = |x: i32, y: i32| x as u32 as u64 | (y as u32 as u64) << 32;
        // a class bit moved to each byte's top bit (16-bit shifts: bits of the low byte that
        // cross into the high byte land below its top bit, the classes using bits 0..=7 only)
        let top = |shift: i32| -> u64 {
            let (x, y) = match shift {
                1 => (_mm256_slli_epi16(a, 1), _mm256_slli_epi16(b, 1)),
                4 => (_mm256_slli_epi16(a, 4), _mm256_slli_epi16(b, 4)),
                5 => (_mm256_slli_epi16(a, 5), _mm256_slli_epi16(b, 5)),
                _ => (a, b),
            };
            join(_mm256_movemask_epi8(x), _mm256_movemask_epi8(y))
        };
        let any = |bits: i8| -> u64 {
            let (z, m) = (_mm256_setzero_si256(), _mm256_set1_epi8(bits));
            !join(
                _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(a, m), z)),
                _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(b, m), z)),
            )
        };
        let quote = top(1);
        // the prefix XOR as one carry-less multiply by all ones
        let quote_prefix =
            _mm_cvtsi128_si64(_mm_clmulepi64_si128(_mm_set_epi64x(0, quote as i64), _mm_set1_epi8(-1), 0)) as u64;
        ObjectMasks {
            quote,
            quote_prefix,
            backslash: top(0),
            open: top(5),
            close: top(4),
            sep: any(COLON | COMMA),
            ws: any(WS_SPACE | WS_CONTROL),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(text: &str, fast: bool) -> Option<(Vec<(&str, &str)>, usize)> {
        let mut got = Vec::new();
        let end = if fast {
            scan_object_with(text, 0, &mut |k, v| got.push((k, v)), masks_portable)?
        } else {
            super::super::scan::scan_object(text, 0, |k, v| got.push((k, v))).ok()?
        };
        Some((got, end))
    }

    /// Taken, the fast path reads exactly what the exact scan reads.
    fn agrees(text: &str) -> Result<bool, proptest::test_runner::TestCaseError> {
        let fast = members(text, true);
        if let Some(f) = &fast {
            let exact = members(text, false);
            proptest::prop_assert_eq!(Some(f), exact.as_ref(), "{:?}", text);
        }
        #[cfg(target_arch = "x86_64")]
        if avx2::detected() {
            let mut got = Vec::new();
            let end = scan_object(text, 0, &mut |k, v| got.push((k, v)));
            proptest::prop_assert_eq!(end.map(|e| (got, e)), fast.clone(), "{:?}", text);
        }
        Ok(fast.is_some())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(6000))]
        #[test]
        fn fast_path_agrees_with_the_exact_scan(
            body in proptest::collection::vec(proptest::sample::select(vec![
                "{", "}", "[", "]", "\"", "\"k\"", "\"ph\"", ":", ": ", ",", ", ", " ", "\n    ", "\t", "\r",
                "1", "-2.5", "true", "null", "x", "\\", "\u{e9}", "\u{b}", "\"a b\"", "{}", "[1, [2]]",
            ]), 0..60),
        ) {
            let text = format!("{{{}", body.concat());
            agrees(&text)?;
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// Well-formed objects of every size, so the fast path is taken across block edges.
        #[test]
        fn well_formed_objects_are_taken(
            members in proptest::collection::vec((
                "[a-z ]{0,12}",
                proptest::sample::select(vec![
                    "1", "-12.25e3", "true", "null", "\"v\"", "\"}{,:]\"", "{\"a\": [1, {}], \"b\": \"]\"}",
                    "[[], [3, 4], \"x\"]", "\"long string of some length to cross blocks ...\"",
                ]),
                proptest::sample::select(vec!["", " ", "\n    ", "\t"]),
            ), 0..12),
            tail in proptest::sample::select(vec![" tail", ",\n{", "", "]"]),
        ) {
            let body: Vec<String> = members.iter().map(|(k, v, ws)| format!("{ws}\"{k}\"{ws}:{ws}{v}{ws}")).collect();
            let text = format!("{{{}}}{tail}", body.join(","));
            proptest::prop_assert!(agrees(&text)?, "declined {:?}", text);
        }
    }

    /// The AVX2 lookup classifies every byte value as the plain match does.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_masks_are_the_plain_ones() {
        if !avx2::detected() {
            return;
        }
        let all: Vec<u8> = (0..=255u8).collect();
        for start in 0..256 {
            let blk: [u8; 64] = std::array::from_fn(|k| all[(start + k * 7) % 256]);
            // SAFETY: the CPU has what it is compiled for (checked above)
            let (a, p) = (unsafe { avx2::masks(&blk) }, masks_portable(&blk));
            assert_eq!(
                (a.quote, a.quote_prefix, a.backslash, a.open, a.close, a.sep, a.ws),
                (p.quote, p.quote_prefix, p.backslash, p.open, p.close, p.sep, p.ws),
                "{blk:?}"
            );
        }
    }

    #[test]
    fn a_kineto_event_is_taken() {
        let t = r#"{
    "ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 632, "tid": 745,
    "ts": 5132746568326.598, "dur": 29.295,
    "args": {
      "External id": 7026,"Record function id": 0, "Concrete Inputs": ["", ""], "Input type": ["c10::BFloat16", "c10::BFloat16"], "Input Strides": [[1, 1024], [1024, 1]], "Input Dims": [[1024, 8192], [8192, 1024]], "Ev Idx": 3953
    }
  },
{"#;
        assert!(agrees(t).unwrap());
        let (m, end) = members(t, true).unwrap();
        assert_eq!(&t[end..], ",\n{");
        assert_eq!(m.len(), 8);
        assert_eq!(m[5], ("ts", "5132746568326.598"));
    }

    #[test]
    fn declines_what_it_does_not_read() {
        for t in [
            r#"{"name": "a\"b", "ts": 1}"#, // a backslash
            r#"{"ts": 1"#,                  // the text ends
            r#"{"ts": 1:2}"#,               // a bare value the exact scan ends elsewhere
            r#"{"ts" 1}"#,                  // no colon
            r#"{"ts": 1]"#,                 // not an object's end
            r#"{"ts": 1 2}"#,
            r#"{,}"#,
        ] {
            assert!(members(t, true).is_none(), "{t}");
            assert!(!agrees(t).unwrap());
        }
    }
}
