//! Order statistics over samples, one definition for the analyses, the panes and the
//! benchmarks: the median (mean of the middle two for an even count), the nearest-rank
//! percentile and the median absolute deviation. NaN sorts last (`f64::total_cmp`), so a
//! NaN sample never panics and only moves the upper tail.

/// A value these statistics can be taken of.
pub trait Sample: Copy {
    fn order(&self, other: &Self) -> std::cmp::Ordering;
    /// The midpoint of two values (integers round towards −∞, so integer ns stay integer).
    fn midpoint(a: Self, b: Self) -> Self;
    /// |a − b|.
    fn distance(a: Self, b: Self) -> Self;
}

impl Sample for f64 {
    fn order(&self, other: &Self) -> std::cmp::Ordering {
        self.total_cmp(other)
    }
    fn midpoint(a: Self, b: Self) -> Self {
        (a + b) / 2.0
    }
    fn distance(a: Self, b: Self) -> Self {
        (a - b).abs()
    }
}

/// A signed integer sample; `wide` holds the sum of two (the midpoint's sum of two large
/// values overflows its own type), `unsigned` their distance.
macro_rules! signed_sample {
    ($t:ty, $wide:ty, $unsigned:ty) => {
        impl Sample for $t {
            fn order(&self, other: &Self) -> std::cmp::Ordering {
                self.cmp(other)
            }
            fn midpoint(a: Self, b: Self) -> Self {
                ((a as $wide + b as $wide).div_euclid(2)) as $t
            }
            fn distance(a: Self, b: Self) -> Self {
                a.abs_diff(b).min(<$t>::MAX as $unsigned) as $t
            }
        }
    };
}
signed_sample!(i64, i128, u64);
signed_sample!(i32, i64, u32);

impl Sample for u64 {
    fn order(&self, other: &Self) -> std::cmp::Ordering {
        self.cmp(other)
    }
    fn midpoint(a: Self, b: Self) -> Self {
        ((a as u128 + b as u128) / 2) as u64
    }
    fn distance(a: Self, b: Self) -> Self {
        a.abs_diff(b)
    }
}

/// Sorts `v` in place (ascending, NaN last).
pub fn sort<T: Sample>(v: &mut [T]) {
    v.sort_unstable_by(|a, b| a.order(b));
}

/// The median of already sorted values; None when empty.
pub fn median_sorted<T: Sample>(s: &[T]) -> Option<T> {
    let n = s.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(s[n / 2]),
        _ => Some(T::midpoint(s[n / 2 - 1], s[n / 2])),
    }
}

/// Nearest-rank percentile of already sorted values: the smallest value with at least p % of
/// the values at or below it (p = 0 gives the minimum). None when empty.
pub fn percentile_sorted<T: Sample>(s: &[T], p: f64) -> Option<T> {
    if s.is_empty() {
        return None;
    }
    Some(s[nearest_rank_index(s.len(), p)])
}

/// Where the nearest-rank `p` percentile of `len` (> 0) sorted values sits.
fn nearest_rank_index(len: usize, p: f64) -> usize {
    let p = if p.is_nan() { 100.0 } else { p.clamp(0.0, 100.0) };
    let rank = ((p / 100.0) * len as f64).ceil() as usize;
    rank.clamp(1, len) - 1
}

/// The median of `v` (mean of the middle two for an even count); None when empty.
pub fn median<T: Sample>(v: &[T]) -> Option<T> {
    let mut s = v.to_vec();
    sort(&mut s);
    median_sorted(&s)
}

/// Nearest-rank percentile of `v` (see `percentile_sorted`); None when empty.
pub fn percentile<T: Sample>(v: &[T], p: f64) -> Option<T> {
    let mut s = v.to_vec();
    sort(&mut s);
    percentile_sorted(&s, p)
}

/// The median absolute deviation: median of |x − median|. A spread that one outlier cannot
/// move (×1.4826 estimates σ for normal data). None when empty.
pub fn mad<T: Sample>(v: &[T]) -> Option<T> {
    let m = median(v)?;
    let d: Vec<T> = v.iter().map(|&x| T::distance(x, m)).collect();
    median(&d)
}

/// Median, 90th percentile and maximum of `v` (zeros when empty), as `median`, `percentile`
/// and the sorted last give them.
pub fn median_p90_max<T: Sample + Default>(v: &[T]) -> (T, T, T) {
    median_p90_max_in(&mut v.to_vec())
}

/// `median_p90_max` of `s`, reordering it. By selection, not a sort: linear, where sorting a
/// million launch delays three times was a tenth of a several-rank report.
pub fn median_p90_max_in<T: Sample + Default>(s: &mut [T]) -> (T, T, T) {
    let n = s.len();
    if n == 0 {
        return Default::default();
    }
    let order = |a: &T, b: &T| a.order(b);
    let k90 = nearest_rank_index(n, 90.0);
    // s[..k90] ≤ s[k90] ≤ s[k90 + 1..]; the middle (n / 2 ≤ k90) is then found among the first
    let (_, &mut p90, above) = s.select_nth_unstable_by(k90, order);
    let max = above.iter().copied().max_by(order).unwrap_or(p90);
    let m = n / 2;
    if m < k90 {
        s[..k90].select_nth_unstable_by(m, order);
    }
    let upper = s[m];
    let median = match n % 2 {
        1 => upper,
        // the lower middle is the largest of those before the upper one
        _ => T::midpoint(s[..m].iter().copied().max_by(order).unwrap_or(upper), upper),
    };
    (median, p90, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_p90_max_selects_what_the_sort_gives() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for n in 0..300usize {
            for spread in [3u64, 1000, u64::MAX] {
                let v: Vec<i64> = (0..n)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        ((x % spread) as i64).wrapping_sub((spread / 2) as i64)
                    })
                    .collect();
                let mut s = v.clone();
                sort(&mut s);
                let want = (
                    median_sorted(&s).unwrap_or_default(),
                    percentile_sorted(&s, 90.0).unwrap_or_default(),
                    s.last().copied().unwrap_or_default(),
                );
                assert_eq!(median_p90_max(&v), want, "{v:?}");
            }
        }
        // NaN sorts last: with 6 values the 90th percentile is the last, NaN
        let (m, p, mx) = median_p90_max(&[2.0, f64::NAN, 1.0, 5.0, 3.0, 4.0]);
        assert_eq!(m, 3.5);
        assert!(p.is_nan() && mx.is_nan());
        let (m, p, mx) = median_p90_max(&[2.0, f64::NAN, 1.0, 5.0, 3.0, 4.0, 6.0, 7.0, 8.0, 9.0, 10.0]);
        assert_eq!((m, p), (6.0, 10.0));
        assert!(mx.is_nan());
    }

    #[test]
    fn medians() {
        assert_eq!(median::<i64>(&[]), None);
        assert_eq!(median(&[3i64, 1, 2]), Some(2));
        assert_eq!(median(&[4i64, 1, 2, 3]), Some(2));
        // floor of the mean for integers, as the multi-rank tables have always used
        assert_eq!(median(&[-3i64, -2]), Some(-3));
        assert_eq!(median(&[i64::MAX, i64::MAX - 2]), Some(i64::MAX - 1));
        assert_eq!(median(&[1.0, 4.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[7u64, 1, 100]), Some(7));
        // NaN sorts last: the median of [1, 2, NaN] is 2, no panic
        assert_eq!(median(&[f64::NAN, 1.0, 2.0]), Some(2.0));
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<i64> = (1..=10).collect();
        assert_eq!(percentile(&v, 90.0), Some(9));
        assert_eq!(percentile(&v, 91.0), Some(10));
        assert_eq!(percentile(&v, 50.0), Some(5));
        assert_eq!(percentile(&v, 0.0), Some(1));
        assert_eq!(percentile(&v, 100.0), Some(10));
        assert_eq!(percentile(&[5i64], 90.0), Some(5));
        assert_eq!(percentile::<f64>(&[], 90.0), None);
        assert_eq!(median_p90_max(&[10i64, 30, 20]), (20, 30, 30));
        assert_eq!(median_p90_max::<f64>(&[]), (0.0, 0.0, 0.0));
    }

    #[test]
    fn mad_ignores_one_outlier() {
        // |x − 3| = 2 1 0 1 97 → median 1
        assert_eq!(mad(&[1i64, 2, 3, 4, 100]), Some(1));
        assert_eq!(mad(&[2.0, 2.0, 2.0]), Some(0.0));
        assert_eq!(mad::<u64>(&[]), None);
    }
}
