//! Fractional shares made whole ns that add up to an exact total (largest remainder).

/// Integers, none below 0, that sum to `total` and follow `shares` (≥ 0) as closely as whole
/// ns can: each share scaled to the total, floored, and the ns left over given to the largest
/// remainders (ties to the earlier share).
pub fn whole(shares: &[f64], total: i64) -> Vec<i64> {
    let total = total.max(0);
    let sum: f64 = shares.iter().map(|s| s.max(0.0)).sum();
    if shares.is_empty() {
        return Vec::new();
    }
    if sum <= 0.0 {
        // nothing to follow: all of it to the first
        let mut v = vec![0; shares.len()];
        v[0] = total;
        return v;
    }
    let scaled: Vec<f64> = shares.iter().map(|s| s.max(0.0) * total as f64 / sum).collect();
    let mut out: Vec<i64> = scaled.iter().map(|s| s.floor() as i64).collect();
    let mut left = total - out.iter().sum::<i64>();
    let mut order: Vec<usize> = (0..shares.len()).collect();
    order.sort_by(|&a, &b| (scaled[b] - scaled[b].floor()).total_cmp(&(scaled[a] - scaled[a].floor())).then(a.cmp(&b)));
    for &i in order.iter().cycle() {
        if left <= 0 {
            break;
        }
        out[i] += 1;
        left -= 1;
    }
    // floating error can overshoot by a few ns: taken back from the largest
    while left < 0 {
        let i = (0..out.len()).max_by_key(|&i| out[i]).unwrap_or(0);
        out[i] -= 1;
        left += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::whole;

    #[test]
    fn whole_adds_up_and_follows_the_shares() {
        assert_eq!(whole(&[1.0, 1.0, 1.0], 10), vec![4, 3, 3]);
        assert_eq!(whole(&[0.5, 1.5], 4), vec![1, 3]);
        assert_eq!(whole(&[2.0, -1.0], 5), vec![5, 0]);
        assert_eq!(whole(&[0.0, 0.0], 7), vec![7, 0]);
        assert_eq!(whole(&[], 7), Vec::<i64>::new());
        let v = whole(&[1e9 / 3.0, 2e9 / 3.0, 1.0], 1_000_000_001);
        assert_eq!(v.iter().sum::<i64>(), 1_000_000_001);
        assert!(v.iter().all(|&x| x >= 0));
    }
}
