//! An implicit augmented interval tree laid flat over a start-sorted array, in the manner of
//! cgranges: node `i` sits at level = number of trailing one bits of `i`; its subtree covers
//! `[i - 2^k + 1, i + 2^k - 1]` and `max_end[i]` is the largest end in that subtree. No
//! pointers, so the array maps straight from disk, and a window query is O(log n + k).

/// Fills `max_end` (same length as `starts`/`ends`) for spans sorted by start.
pub fn build_max_end(ends: &[i64], max_end: &mut [i64]) {
    let n = ends.len();
    assert_eq!(max_end.len(), n);
    if n == 0 {
        return;
    }
    max_end.copy_from_slice(ends);
    let levels = max_level(n);
    for k in 1..=levels {
        let step = 1usize << k;
        let half = 1usize << (k - 1);
        let mut i = step - 1;
        while i < n {
            let mut m = max_end[i];
            m = m.max(max_end[i - half]);
            m = m.max(subtree_max(max_end, n, i + half, k - 1));
            max_end[i] = m;
            i += step << 1;
        }
    }
}

/// The level of the root of a tree over `n` items.
fn max_level(n: usize) -> u32 {
    let mut k = 0u32;
    while (1usize << (k + 1)) <= n {
        k += 1;
    }
    // the root covers [0, 2^(k+1) - 1), which includes every index below n
    k
}

/// Max end of the subtree rooted at `i` (level `k`), where `i` may lie past `n` (then only
/// its left part exists). Levels below `k` are already final.
fn subtree_max(max_end: &[i64], n: usize, mut i: usize, mut k: u32) -> i64 {
    loop {
        if i < n {
            return max_end[i];
        }
        if k == 0 {
            return i64::MIN;
        }
        // node missing: descend to its left child, which may exist
        i -= 1usize << (k - 1);
        k -= 1;
    }
}

/// Calls `f(index)` for every span overlapping the half-open window `[t0, t1)`, in
/// increasing index (= start) order. A zero-length span at `t` overlaps when `t0 <= t < t1`.
pub fn query(starts: &[i64], ends: &[i64], max_end: &[i64], t0: i64, t1: i64, mut f: impl FnMut(usize)) {
    let n = starts.len();
    if n == 0 || t1 <= t0 {
        return;
    }
    // Stack of (node, level, visited-left). `>= t0` in the pruning test keeps zero-length
    // spans that sit exactly at t0.
    let mut stack: [(usize, u32, bool); 64] = [(0, 0, false); 64];
    let mut top = 0usize;
    let root_k = max_level(n);
    stack[top] = ((1usize << root_k) - 1, root_k, false);
    top += 1;
    while top > 0 {
        top -= 1;
        let (x, k, visited) = stack[top];
        if k <= 3 {
            // small subtree: scan it linearly
            let i0 = (x >> k) << k;
            let i1 = (i0 + (1usize << (k + 1)) - 1).min(n);
            let mut i = i0;
            while i < i1 && starts[i] < t1 {
                if overlaps(starts[i], ends[i], t0) {
                    f(i);
                }
                i += 1;
            }
        } else if !visited {
            stack[top] = (x, k, true);
            top += 1;
            let y = x - (1usize << (k - 1));
            if y >= n || max_end[y] >= t0 {
                stack[top] = (y, k - 1, false);
                top += 1;
            }
        } else if x < n && starts[x] < t1 {
            if overlaps(starts[x], ends[x], t0) {
                f(x);
            }
            stack[top] = (x + (1usize << (k - 1)), k - 1, false);
            top += 1;
        }
    }
}

#[inline]
pub(crate) fn overlaps(start: i64, end: i64, t0: i64) -> bool {
    end > t0 || (start == end && start >= t0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn brute(s: &[i64], e: &[i64], t0: i64, t1: i64) -> Vec<usize> {
        if t1 <= t0 {
            return Vec::new();
        }
        (0..s.len()).filter(|&i| s[i] < t1 && overlaps(s[i], e[i], t0)).collect()
    }

    proptest! {
        #[test]
        fn matches_brute_force(mut spans in prop::collection::vec((0i64..1000, 0i64..200), 0..300),
                               t0 in -10i64..1200, w in 0i64..400) {
            spans.sort();
            let s: Vec<i64> = spans.iter().map(|x| x.0).collect();
            let e: Vec<i64> = spans.iter().map(|x| x.0 + x.1).collect();
            let mut m = vec![0; s.len()];
            build_max_end(&e, &mut m);
            let mut got = Vec::new();
            query(&s, &e, &m, t0, t0 + w, |i| got.push(i));
            prop_assert_eq!(got, brute(&s, &e, t0, t0 + w));
        }
    }

    #[test]
    fn long_span_found_from_far_right() {
        let s = vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17];
        let mut e: Vec<i64> = s.iter().map(|x| x + 1).collect();
        e[0] = 1000;
        let mut m = vec![0; s.len()];
        build_max_end(&e, &mut m);
        let mut got = Vec::new();
        query(&s, &e, &m, 500, 600, |i| got.push(i));
        assert_eq!(got, vec![0]);
    }
}
