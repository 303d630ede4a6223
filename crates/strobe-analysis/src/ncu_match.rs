//! Which timeline kernel span each Nsight Compute launch is: matched by (demangled) name
//! and launch order.
//!
//! ncu profiles a window of launches (`-c 20` after `cudaProfilerStart`, `--launch-skip`,
//! …), in launch order; a timeline (Kineto, nsys) has every launch. So the ncu sequence is
//! slid over the timeline's kernel sequence of each device (all its streams, by start time),
//! and the alignment kept is the one where the most ncu launches agree by name, in order:
//! for each candidate start (a timeline kernel with the name of the first ncu launch that
//! the timeline has), the longest common subsequence of names between the ncu launches and
//! the following timeline kernels (ties: the tightest, then the earliest). Within it, the k-th ncu launch of a kernel name is the
//! k-th occurrence of that kernel after the start, in the same order; launches the
//! timeline lacks (another build, another run of the program) stay unmatched rather than
//! pushing every later launch off by one.
//!
//! Names are compared by `roofline::kernel_match_key` (ncu and the CUDA/Kineto demanglers
//! spell namespaces and template arguments differently).

use crate::roofline::kernel_match_key;
use std::collections::HashMap;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

/// The result of `match_sequence`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SeqMatch {
    /// Per ncu launch (in the order given): the index of its timeline kernel, if matched.
    pub timeline: Vec<Option<usize>>,
    /// Index of the timeline kernel where the alignment starts.
    pub offset: usize,
    /// How many launches matched.
    pub matched: usize,
}

/// How many timeline kernels past the start one alignment may span: the ncu window plus
/// slack for kernels the ncu run did not have (another build, a model with fewer layers
/// profiled against a deeper one: the forward's head is several times further on), capped
/// so that long captures stay quick.
fn span_len(n: usize) -> usize {
    (8 * n + 32).min(n + 4096)
}

/// At most this many DP cells over all candidate starts (the earliest starts are tried).
const MAX_CELLS: usize = 200_000_000;

/// The alignment score of `a` (ncu) against `b` (timeline from the start), from the suffix
/// DP `f[i][j] = max(w + f[i+1][j+1] if a[i] = b[j], f[i+1][j], f[i][j+1] - 1)`,
/// `f[n][·] = f[·][m] = 0`: each match is worth `w`, each timeline kernel skipped before the
/// last match costs 1, an ncu launch left unmatched costs nothing. With `w` > `b.len()`
/// that is: the most matches, then the fewest timeline kernels skipped. Two rows.
fn align_score(a: &[u32], b: &[u32], w: i64, row: &mut Vec<i64>, next: &mut Vec<i64>) -> i64 {
    let m = b.len();
    next.clear();
    next.resize(m + 1, 0);
    row.clear();
    row.resize(m + 1, 0);
    for &x in a.iter().rev() {
        row[m] = 0;
        for j in (0..m).rev() {
            let mut v = next[j].max(row[j + 1] - 1);
            if x == b[j] {
                v = v.max(w + next[j + 1]);
            }
            row[j] = v;
        }
        std::mem::swap(row, next);
    }
    next[0]
}

/// The pairs of `align_score`'s best alignment: for each element of `a`, its index in `b`.
/// Ties prefer a match, then leaving the ncu launch unmatched.
fn align_pairs(a: &[u32], b: &[u32], w: i64) -> Vec<Option<usize>> {
    let (n, m) = (a.len(), b.len());
    let mut f = vec![0i64; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let mut v = f[at(i + 1, j)].max(f[at(i, j + 1)] - 1);
            if a[i] == b[j] {
                v = v.max(w + f[at(i + 1, j + 1)]);
            }
            f[at(i, j)] = v;
        }
    }
    let mut out = vec![None; n];
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if a[i] == b[j] && f[at(i, j)] == w + f[at(i + 1, j + 1)] {
            out[i] = Some(j);
            i += 1;
            j += 1;
        } else if f[at(i, j)] == f[at(i + 1, j)] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// Matches ncu launch names (in launch order) to a timeline's kernel names (in start
/// order): see the module doc.
pub fn match_sequence<S: AsRef<str>, T: AsRef<str>>(ncu: &[S], timeline: &[T]) -> SeqMatch {
    let mut ids: HashMap<String, u32> = HashMap::new();
    let mut intern = |s: &str| -> u32 {
        let k = kernel_match_key(s);
        let n = ids.len() as u32;
        *ids.entry(k.to_string()).or_insert(n)
    };
    let a: Vec<u32> = ncu.iter().map(|s| intern(s.as_ref())).collect();
    let b: Vec<u32> = timeline.iter().map(|s| intern(s.as_ref())).collect();
    let mut out = SeqMatch { timeline: vec![None; a.len()], offset: 0, matched: 0 };
    // The first ncu launch the timeline has anchors the start.
    let Some(first) = a.iter().position(|k| b.contains(k)) else { return out };
    let a = &a[first..];
    let len = span_len(a.len());
    let w = len as i64 + 1;
    let (mut row, mut next) = (Vec::new(), Vec::new());
    let mut best: Option<(i64, usize)> = None;
    let mut cells = 0usize;
    for o in b.iter().enumerate().filter(|(_, &k)| k == a[0]).map(|(o, _)| o) {
        let win = &b[o..(o + len).min(b.len())];
        cells += a.len() * win.len();
        if cells > MAX_CELLS && best.is_some() {
            break;
        }
        let s = align_score(a, win, w, &mut row, &mut next);
        if best.is_none_or(|(bs, _)| s > bs) {
            best = Some((s, o));
        }
    }
    let Some((_, o)) = best else { return out };
    for (i, j) in align_pairs(a, &b[o..(o + len).min(b.len())], w).into_iter().enumerate() {
        out.timeline[first + i] = j.map(|j| o + j);
    }
    out.offset = o;
    out.matched = out.timeline.iter().filter(|m| m.is_some()).count();
    out
}

/// The kernel spans of each device of a trace, by start time (all its streams together):
/// `(device, span ids)`, devices ascending.
pub fn device_kernel_sequences(store: &Store) -> Vec<(i64, Vec<u32>)> {
    let mut by_dev: std::collections::BTreeMap<i64, Vec<u32>> = Default::default();
    for (lane, d) in store.lanes.iter().enumerate() {
        let LaneKind::GpuStream { device, .. } = d.kind else { continue };
        let v = by_dev.entry(device).or_default();
        for &sid in store.lane_view(lane as u32).span {
            if SpanKind::from_u8(store.span_meta(sid).kind) == SpanKind::Kernel {
                v.push(sid);
            }
        }
    }
    by_dev
        .into_iter()
        .map(|(dev, mut v)| {
            v.sort_by_key(|&s| (store.span_start(s), s));
            (dev, v)
        })
        .collect()
}

/// The best match of ncu launch names against every device of the given stores: per
/// launch, `(store index, span id)`. The device where the most launches match wins (the
/// first on ties).
pub fn match_stores(ncu: &[&str], stores: &[&Store]) -> Vec<Option<(usize, u32)>> {
    let mut best: Option<(usize, usize, Vec<u32>, SeqMatch)> = None;
    for (si, st) in stores.iter().enumerate() {
        for (_, seq) in device_kernel_sequences(st) {
            let names: Vec<&str> = seq.iter().map(|&s| st.string(st.span_meta(s).name)).collect();
            let m = match_sequence(ncu, &names);
            if best.as_ref().is_none_or(|b| m.matched > b.3.matched) {
                best = Some((si, 0, seq, m));
            }
        }
    }
    match best {
        Some((si, _, seq, m)) if m.matched > 0 => m.timeline.iter().map(|j| j.map(|j| (si, seq[j]))).collect(),
        _ => vec![None; ncu.len()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slides_to_the_capture_window_and_matches_by_name_and_order() {
        // The timeline: a warm-up step, then two steps of the same kernels; the ncu run
        // captured 6 launches starting at the second step's `embed` (`--launch-skip`), with
        // ncu's spelling of the names; its build lacks the `cast` kernel.
        let step = [
            "void at::native::embed<float>(float*)",
            "cast",
            "gemm_a",
            "void at::native::(anonymous namespace)::softmax<4>(float*)",
            "gemm_a",
            "add",
        ];
        let mut tl: Vec<&str> = vec!["memset", "warmup"];
        tl.extend(step);
        tl.push("optimizer");
        tl.extend(step);
        tl.push("optimizer");
        let ncu = [
            "void at::embed<float>(T1 *)",
            "gemm_a",
            "void at::<unnamed>::softmax<4>(T1 *)",
            "gemm_a",
            "add",
            "optimizer",
        ];
        let m = match_sequence(&ncu, &tl);
        // The first step already agrees on all six: the earliest alignment wins.
        assert_eq!(m.offset, 2);
        assert_eq!(m.timeline, vec![Some(2), Some(4), Some(5), Some(6), Some(7), Some(8)]);
        assert_eq!(m.matched, 6);
        // The 2nd ncu `gemm_a` is the 2nd `gemm_a` after the start, not the 1st.
        assert_eq!(tl[m.timeline[3].unwrap()], "gemm_a");
        assert_ne!(m.timeline[1], m.timeline[3]);

        // A capture that starts mid-step (`-c` after a `cudaProfilerStart` there): the
        // alignment lands on the one place the whole window agrees.
        let ncu = ["gemm_a", "add", "optimizer", "embed", "gemm_a"];
        let m = match_sequence(&ncu, &tl);
        assert_eq!(m.timeline, vec![Some(6), Some(7), Some(8), Some(9), Some(11)]);

        // A launch the timeline never ran stays unmatched; the rest still match in order.
        let ncu = ["embed", "only_in_ncu", "gemm_a", "softmax"];
        let m = match_sequence(&ncu, &tl);
        assert_eq!(m.timeline, vec![Some(2), None, Some(4), Some(5)]);

        // Nothing in common.
        let m = match_sequence(&["x", "y"], &tl);
        assert_eq!(m.timeline, vec![None, None]);
        assert_eq!(m.matched, 0);
    }

    #[test]
    fn alignment_prefers_most_matches_then_fewest_skipped() {
        let (mut r, mut n) = (Vec::new(), Vec::new());
        // 3 matches (skipping the timeline's 2nd) beat 2 without a skip.
        assert_eq!(align_score(&[1, 3, 2], &[1, 2, 3, 2], 10, &mut r, &mut n), 29);
        assert_eq!(align_pairs(&[1, 3, 2], &[1, 2, 3, 2], 10), vec![Some(0), Some(2), Some(3)]);
        // Equal matches: the tighter one (1 2 adjacent, not 1 _ _ 2).
        assert_eq!(align_pairs(&[1, 9, 2], &[1, 5, 5, 1, 2], 10), vec![Some(0), None, Some(4)]);
        // Within one window the start is anchored (a leading skip costs like an inner one);
        // `match_sequence` tries the later start too, which skips nothing.
        assert_eq!(align_pairs(&[1, 2], &[1, 1, 2, 2], 10), vec![Some(0), Some(2)]);
        assert_eq!(match_sequence(&["a", "b"], &["a", "a", "b", "b"]).timeline, vec![Some(1), Some(2)]);
        // Trailing timeline kernels are free.
        assert_eq!(align_score(&[1], &[1, 7, 7], 10, &mut r, &mut n), 10);
    }
}
