//! Exact time conversion: trace timestamps are decimal text (Kineto writes microseconds with
//! three decimals on an epoch-sized base), which an f64 cannot hold to the nanosecond. So the
//! text itself is scaled, digit by digit.

/// Parses a JSON number given in `unit_ns` nanoseconds per unit (1000 for µs, 1 for ns) into
/// integer nanoseconds, rounding half away from zero beyond the nanosecond. Accepts an
/// exponent. Returns None for non-numbers, NaN/Infinity and overflow.
pub fn decimal_to_ns(text: &[u8], unit_ns: i64) -> Option<i64> {
    if let Some(v) = fast_decimal(text, unit_ns) {
        return Some(v);
    }
    let (neg, mut s) = match text.first()? {
        b'-' => (true, &text[1..]),
        _ => (false, text),
    };
    if s.is_empty() {
        return None;
    }
    let mut int: i128 = 0;
    let mut frac: i128 = 0;
    let mut frac_digits: i32 = 0;
    let mut any = false;
    while let Some(&c) = s.first() {
        if c.is_ascii_digit() {
            int = int.checked_mul(10)?.checked_add((c - b'0') as i128)?;
            any = true;
            s = &s[1..];
        } else {
            break;
        }
    }
    if s.first() == Some(&b'.') {
        s = &s[1..];
        while let Some(&c) = s.first() {
            if c.is_ascii_digit() {
                if frac_digits < 18 {
                    frac = frac * 10 + (c - b'0') as i128;
                    frac_digits += 1;
                }
                any = true;
                s = &s[1..];
            } else {
                break;
            }
        }
    }
    if !any {
        return None;
    }
    let mut exp: i32 = 0;
    if matches!(s.first(), Some(b'e') | Some(b'E')) {
        s = &s[1..];
        let eneg = match s.first() {
            Some(b'-') => {
                s = &s[1..];
                true
            }
            Some(b'+') => {
                s = &s[1..];
                false
            }
            _ => false,
        };
        let mut e: i32 = 0;
        if s.is_empty() {
            return None;
        }
        while let Some(&c) = s.first() {
            if !c.is_ascii_digit() {
                return None;
            }
            e = e.checked_mul(10)?.checked_add((c - b'0') as i32)?;
            if e > 400 {
                return None;
            }
            s = &s[1..];
        }
        exp = if eneg { -e } else { e };
    }
    if !s.is_empty() {
        return None;
    }
    // value = (int * 10^fd + frac) * 10^(exp - fd) * unit_ns
    let mant = int.checked_mul(10i128.checked_pow(frac_digits as u32)?)?.checked_add(frac)?;
    let mut v = mant.checked_mul(unit_ns as i128)?;
    let shift = exp - frac_digits;
    if shift >= 0 {
        v = v.checked_mul(10i128.checked_pow(shift as u32)?)?;
    } else {
        let d = 10i128.checked_pow((-shift) as u32).unwrap_or(i128::MAX);
        let q = v / d;
        let r = v % d;
        v = if r * 2 >= d { q + 1 } else { q };
    }
    let v = if neg { -v } else { v };
    i64::try_from(v).ok()
}

/// The common case on the hot path: unsigned `digits[.digits]`, at most 3 decimals
/// (Kineto's µs with ns precision) and no exponent, in plain u64 arithmetic.
#[inline]
fn fast_decimal(t: &[u8], unit_ns: i64) -> Option<i64> {
    if t.is_empty() || t.len() > 19 || unit_ns != 1000 && unit_ns != 1 {
        return None;
    }
    let mut v: u64 = 0;
    let mut i = 0;
    while i < t.len() && t[i].is_ascii_digit() {
        v = v * 10 + (t[i] - b'0') as u64;
        i += 1;
    }
    if i == 0 {
        return None;
    }
    let mut frac_digits = 0u32;
    if i < t.len() {
        if t[i] != b'.' {
            return None;
        }
        i += 1;
        let fs = i;
        while i < t.len() && t[i].is_ascii_digit() {
            v = v * 10 + (t[i] - b'0') as u64;
            i += 1;
        }
        frac_digits = (i - fs) as u32;
        if i != t.len() || frac_digits == 0 {
            return None;
        }
    }
    let scale_digits = if unit_ns == 1000 { 3 } else { 0 };
    if frac_digits > scale_digits {
        return None;
    }
    let v = v.checked_mul(10u64.pow(scale_digits - frac_digits))?;
    i64::try_from(v).ok()
}

#[cfg(test)]
mod tests {
    use super::decimal_to_ns;
    #[test]
    fn exact() {
        assert_eq!(decimal_to_ns(b"5132768220117.759", 1000), Some(5132768220117759));
        assert_eq!(decimal_to_ns(b"0.736", 1000), Some(736));
        assert_eq!(decimal_to_ns(b"12", 1000), Some(12000));
        assert_eq!(decimal_to_ns(b"1.5e3", 1000), Some(1_500_000));
        assert_eq!(decimal_to_ns(b"-2.0005", 1000), Some(-2001));
        assert_eq!(decimal_to_ns(b"1790857026000000000", 1), Some(1790857026000000000));
        assert_eq!(decimal_to_ns(b"0.0004", 1000), Some(0));
        assert_eq!(decimal_to_ns(b"NaN", 1000), None);
        assert_eq!(decimal_to_ns(b"1e999", 1000), None);
        assert_eq!(decimal_to_ns(b"\"12\"", 1000), None);
        assert_eq!(decimal_to_ns(b"99999999999999999999", 1000), None);
        assert_eq!(decimal_to_ns(b"1.", 1000), Some(1000)); // lenient: not JSON, but unambiguous
        assert_eq!(decimal_to_ns(b".5", 1000), Some(500));
        assert_eq!(decimal_to_ns(b"0.5", 1), Some(1));
        assert_eq!(decimal_to_ns(b"7", 1), Some(7));
        assert_eq!(decimal_to_ns(b"123.4567", 1000), Some(123457));
    }
}
