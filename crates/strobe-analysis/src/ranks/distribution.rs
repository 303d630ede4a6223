//! Distributions, not means: at scale the slow rank hides in the tail.

use serde::Serialize;

/// Median of integers; for an even count the floor of the mean of the two middle values
/// (integer ns stay integer). None when empty.
pub fn median(v: &[i64]) -> Option<i64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_unstable();
    let n = s.len();
    Some(if n % 2 == 1 { s[n / 2] } else { (s[n / 2 - 1] + s[n / 2]).div_euclid(2) })
}

/// Nearest-rank percentile: the smallest value with at least p % of the values at or below it.
pub fn percentile(v: &[i64], p: f64) -> Option<i64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_unstable();
    let rank = ((p / 100.0) * s.len() as f64).ceil() as usize;
    Some(s[rank.clamp(1, s.len()) - 1])
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Distribution {
    pub count: usize,
    pub median_ns: i64,
    pub p90_ns: i64,
    pub max_ns: i64,
}

impl Distribution {
    pub fn of(v: &[i64]) -> Distribution {
        Distribution {
            count: v.len(),
            median_ns: median(v).unwrap_or(0),
            p90_ns: percentile(v, 90.0).unwrap_or(0),
            max_ns: v.iter().copied().max().unwrap_or(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn medians_and_percentiles() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[3, 1, 2]), Some(2));
        assert_eq!(median(&[4, 1, 2, 3]), Some(2));
        assert_eq!(median(&[-3, -2]), Some(-3));
        assert_eq!(percentile(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90.0), Some(9));
        assert_eq!(percentile(&[5], 90.0), Some(5));
        assert_eq!(Distribution::of(&[10, 30, 20]), Distribution { count: 3, median_ns: 20, p90_ns: 30, max_ns: 30 });
    }
}
