//! Interval arithmetic on half-open `[start, end)` intervals: the unions and intersections
//! every "how much time" figure is built from.

/// Sorts and merges; touching intervals merge, empty ones vanish.
pub fn union(mut v: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    v.retain(|&(s, e)| e > s);
    // stable: merges the runs of intervals gathered lane by lane, each already sorted (equal
    // elements are equal pairs, so the order is the same as an unstable sort's)
    v.sort();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

pub fn total(u: &[(i64, i64)]) -> i64 {
    u.iter().map(|&(s, e)| e - s).sum()
}

/// How much of [a, b) the union `u` covers: `total(&intersect(u, &[(a, b)]))` without the
/// copy, the intervals that can overlap it found by binary search (a scan of all of them for
/// each window was quadratic in the trace's length; the copy was a rank's whole busy union
/// for the steps' window).
pub fn total_within(u: &[(i64, i64)], a: i64, b: i64) -> i64 {
    let first = u.partition_point(|&(_, e)| e <= a);
    u[first..].iter().take_while(|&&(s, _)| s < b).map(|&(s, e)| e.min(b) - s.max(a)).filter(|&d| d > 0).sum()
}

/// Intersection of two unions (each sorted, disjoint).
pub fn intersect(a: &[(i64, i64)], b: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        let s = a[i].0.max(b[j].0);
        let e = a[i].1.min(b[j].1);
        if e > s {
            out.push((s, e));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// Parts of `a` not covered by `b` (both sorted, disjoint).
pub fn subtract(a: &[(i64, i64)], b: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut j = 0;
    for &(s, e) in a {
        let mut cur = s;
        while j < b.len() && b[j].1 <= cur {
            j += 1;
        }
        let mut k = j;
        while k < b.len() && b[k].0 < e {
            if b[k].0 > cur {
                out.push((cur, b[k].0));
            }
            cur = cur.max(b[k].1);
            k += 1;
        }
        if cur < e {
            out.push((cur, e));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn arithmetic() {
        let a = union(vec![(5, 10), (0, 3), (3, 4), (8, 12), (20, 20)]);
        assert_eq!(a, vec![(0, 4), (5, 12)]);
        assert_eq!(total(&a), 11);
        let b = union(vec![(2, 6), (11, 30)]);
        assert_eq!(intersect(&a, &b), vec![(2, 4), (5, 6), (11, 12)]);
        assert_eq!(subtract(&a, &b), vec![(0, 2), (6, 11)]);
        assert_eq!(subtract(&b, &a), vec![(4, 5), (12, 30)]);
    }

    /// The binary-search cover equals the merge-based intersection for windows that start
    /// and end before, inside and after the intervals, and on their edges (empty and
    /// reversed windows cover nothing).
    #[test]
    fn total_within_equals_the_intersection() {
        let busy = vec![(10, 20), (30, 35), (40, 60), (100, 101)];
        for a in [0, 10, 15, 20, 25, 30, 34, 35, 50, 60, 99, 101, 200] {
            for b in [a - 7, a, a + 1, a + 5, a + 20, a + 100] {
                let want = if b > a { total(&intersect(&busy, &[(a, b)])) } else { 0 };
                assert_eq!(total_within(&busy, a, b), want, "[{a}, {b})");
            }
        }
        assert_eq!(total_within(&[], 0, 10), 0);
    }
}
