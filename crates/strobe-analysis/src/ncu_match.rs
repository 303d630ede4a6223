//! All linking between Nsight Compute launches and timeline kernels: which timeline kernel
//! span each ncu launch is (by demangled name and launch order, `match_stores`), which
//! timeline kernel a launch's name stands for (`kernel_for_launch`), which launch a timeline
//! name stands for (`launch_for_name`), and the SOL figures shown beside a timeline kernel
//! name (`SolByName`). Names are compared by `kernel_match_key` where they differ.
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
//! Names are compared by `kernel_match_key` (ncu and the CUDA/Kineto demanglers spell
//! namespaces and template arguments differently).

use crate::kernels::KernelStat;
use crate::roofline::{weighted, KernelSol, RooflineReport, Verdict};
use std::collections::HashMap;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

/// A kernel's name reduced to what ncu's and the CUDA/Kineto demanglers agree on: the
/// function's own identifier, without return type, namespaces, template arguments or
/// parameters (`void at::<unnamed>::cunn_SoftMaxForward<4, …>(T4 *, …)` and
/// `void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, …>(float*, …)` both give
/// `cunn_SoftMaxForward`). Coarse: several kernels of a template share a key.
pub fn kernel_match_key(name: &str) -> &str {
    // Cut at the first template or parameter bracket that is not part of a namespace
    // spelling (`<unnamed>`, `(anonymous namespace)`).
    let mut depth_end = name.len();
    let b = name.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let rest = &name[i..];
        if rest.starts_with("<unnamed>") {
            i += "<unnamed>".len();
            continue;
        }
        if rest.starts_with("(anonymous namespace)") {
            i += "(anonymous namespace)".len();
            continue;
        }
        if b[i] == b'<' || b[i] == b'(' {
            depth_end = i;
            break;
        }
        i += 1;
    }
    let head = name[..depth_end].trim_end();
    let head = head.rsplit("::").next().unwrap_or(head);
    // Drop a return type (`void `, `enable_if<...>::type ` is cut above).
    head.rsplit(' ').next().unwrap_or(head).trim()
}

/// Whether two spellings name the same kernel: equal, or the same `kernel_match_key`.
pub fn same_kernel(a: &str, b: &str) -> bool {
    a == b || kernel_match_key(a) == kernel_match_key(b)
}

/// The first ncu launch (index into `report.kernels`) of a timeline kernel name: the exact
/// (demangled) name, else the first with the same `kernel_match_key`.
pub fn launch_for_name(report: &RooflineReport, name: &str) -> Option<usize> {
    let key = kernel_match_key(name);
    let k = &report.kernels;
    k.iter().position(|k| k.name == name).or_else(|| k.iter().position(|k| kernel_match_key(&k.name) == key))
}

/// The timeline kernel an ncu launch's name stands for, over the kernel lists of the open
/// traces (`kernels::kernel_stats`, one list per trace): `(trace index, timeline name)` of
/// the same name in any trace, else of the first kernel with the same `kernel_match_key`.
pub fn kernel_for_launch(kernel_lists: &[&[KernelStat]], ncu_name: &str) -> Option<(usize, String)> {
    if let Some(t) = kernel_lists.iter().position(|ks| ks.iter().any(|k| k.name == ncu_name)) {
        return Some((t, ncu_name.to_string()));
    }
    let key = kernel_match_key(ncu_name);
    kernel_lists
        .iter()
        .enumerate()
        .find_map(|(t, ks)| ks.iter().find(|k| kernel_match_key(&k.name) == key).map(|k| (t, k.name.clone())))
}

/// The SOL figures shown beside one timeline kernel name.
#[derive(Clone, Debug, PartialEq)]
pub struct SolFigures {
    pub sm_pct: Option<f64>,
    pub memory_pct: Option<f64>,
    pub verdict: Option<Verdict>,
    /// Measured FLOP/s, tensor work included (what the trace's shape-based figure is set beside).
    pub flops_per_s: Option<f64>,
}

/// Per timeline kernel name, the ncu SOL figures: those of the launches linked to its spans
/// (by name and launch order, `match_stores`), else those of the ncu kernel of the same
/// name, else of the first with the same `kernel_match_key` (`RooflineReport::by_name`,
/// duration-weighted over its launches).
#[derive(Clone, Debug, Default)]
pub struct SolByName {
    exact: HashMap<String, SolFigures>,
    by_key: HashMap<String, SolFigures>,
    linked: HashMap<String, SolFigures>,
}

impl SolByName {
    /// By name only (no timeline linked yet).
    pub fn from_report(r: &RooflineReport) -> Self {
        let mut c = SolByName::default();
        for a in &r.by_name {
            let f = SolFigures {
                sm_pct: a.sm_pct,
                memory_pct: a.memory_pct,
                verdict: a.verdict,
                flops_per_s: a.flops_per_s,
            };
            c.exact.insert(a.name.clone(), f.clone());
            c.by_key.entry(kernel_match_key(&a.name).to_string()).or_insert(f);
        }
        c
    }

    /// As `from_report`, and per timeline name the figures of the launches linked to its
    /// spans, which win over the name match. `timeline_names`: per launch of `r.kernels`,
    /// the kernel name of its linked span.
    pub fn from_report_linked(r: &RooflineReport, timeline_names: &[Option<String>]) -> Self {
        let mut c = Self::from_report(r);
        let mut groups: HashMap<&str, Vec<&KernelSol>> = HashMap::new();
        for (k, n) in r.kernels.iter().zip(timeline_names) {
            if let Some(n) = n {
                groups.entry(n.as_str()).or_default().push(k);
            }
        }
        for (name, ks) in groups {
            // launches of one timeline name (several ncu spellings, several launches):
            // duration-weighted together, the verdict from the weighted figures
            let sm = weighted(&ks, |k| k.sm_pct);
            let mem = weighted(&ks, |k| k.memory_pct);
            let tensor = weighted(&ks, |k| k.tensor_pipe_pct);
            // the rule every ncu verdict uses: the tensor pipe counts as compute
            let v = sm.zip(mem).map(|(s, m)| crate::roofline::verdict_with(s, m, tensor, None));
            let flops_per_s = weighted(&ks, |k| k.flops_per_s);
            c.linked.insert(name.to_string(), SolFigures { sm_pct: sm, memory_pct: mem, verdict: v, flops_per_s });
        }
        c
    }

    /// The linked launches' figures, else the exact name's, else the same key's.
    pub fn get(&self, name: &str) -> Option<&SolFigures> {
        self.linked.get(name).or_else(|| self.exact.get(name)).or_else(|| self.by_key.get(kernel_match_key(name)))
    }
}

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
        for &sid in store.lane_spans(lane as u32).span {
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
    fn match_keys() {
        let ncu = "void at::<unnamed>::cunn_SoftMaxForward<4, float, float, float, at::<unnamed>::LogSoftMaxForwardEpilogue>(T4 *, const T2 *, int)";
        let kineto = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)";
        assert_eq!(kernel_match_key(ncu), "cunn_SoftMaxForward");
        assert_eq!(kernel_match_key(kineto), "cunn_SoftMaxForward");
        assert_eq!(
            kernel_match_key("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"),
            "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"
        );
        assert_eq!(kernel_match_key("cuda_compute_flux(int,int*,float*,float*,float*)"), "cuda_compute_flux");
        assert_eq!(
            kernel_match_key("void <unnamed>::elementwise_kernel_with_index<int, at::arange_cuda_out(x)>(T1)"),
            "elementwise_kernel_with_index"
        );
    }

    fn launch(id: u64, name: &str, dur: i64, sm: f64, mem: f64) -> KernelSol {
        KernelSol {
            id,
            name: name.into(),
            stream: None,
            grid: None,
            block: None,
            duration_ns: Some(dur),
            sm_pct: Some(sm),
            memory_pct: Some(mem),
            dram_pct: None,
            l1_pct: None,
            l2_pct: None,
            tensor_pipe_pct: None,
            flops_per_s: None,
            fp_flops_per_s: None,
            tensor_flops: None,
            tensor_flops_per_s: None,
            flops: None,
            dram_bytes: None,
            dram_bytes_per_s: None,
            arithmetic_intensity: None,
            verdict: Some(crate::roofline::verdict(sm, mem)),
            ..KernelSol::default()
        }
    }

    /// ncu's spellings: two softmax launches (ncu's `<unnamed>`), a gemm.
    fn report() -> RooflineReport {
        let kernels = vec![
            launch(0, "void at::<unnamed>::softmax<4>(T1 *)", 100, 10.0, 90.0),
            launch(1, "gemm", 300, 85.0, 20.0),
            launch(2, "void at::<unnamed>::softmax<4>(T1 *)", 300, 30.0, 50.0),
        ];
        RooflineReport {
            format: "ncu",
            layout: strobe_model::ncu::NcuLayout::Raw,
            device: Default::default(),
            by_name: crate::roofline::aggregate(&kernels),
            kernels,
            notes: Vec::new(),
        }
    }

    const KINETO_SOFTMAX: &str = "void at::native::(anonymous namespace)::softmax<4>(float*)";

    #[test]
    fn names_link_exactly_else_by_key() {
        let r = report();
        assert!(same_kernel(KINETO_SOFTMAX, &r.kernels[0].name));
        assert!(!same_kernel("gemm", &r.kernels[0].name));
        assert_eq!(launch_for_name(&r, "gemm"), Some(1));
        assert_eq!(launch_for_name(&r, KINETO_SOFTMAX), Some(0));
        assert_eq!(launch_for_name(&r, "relu"), None);
        let stat = |name: &str| KernelStat {
            name: name.into(),
            count: 1,
            total_ns: 1,
            mean_ns: 1,
            min_ns: 1,
            max_ns: 1,
            pct_kernel_time: 0.0,
            name_id: 0,
            longest_span: 0,
        };
        let (a, b) = (vec![stat("relu"), stat(KINETO_SOFTMAX)], vec![stat("gemm")]);
        let lists: [&[KernelStat]; 2] = [&a, &b];
        // the exact name in a later trace wins over a key match in an earlier one
        assert_eq!(kernel_for_launch(&lists, "gemm"), Some((1, "gemm".into())));
        assert_eq!(kernel_for_launch(&lists, &r.kernels[0].name), Some((0, KINETO_SOFTMAX.into())));
        assert_eq!(kernel_for_launch(&lists, "absent"), None);
    }

    #[test]
    fn sol_figures_prefer_linked_launches_then_name_then_key() {
        let r = report();
        let by_name = SolByName::from_report(&r);
        // the two softmax launches duration-weighted: (10·100 + 30·300) / 400 = 25, (90·100 + 50·300) / 400 = 60
        let f = by_name.get(KINETO_SOFTMAX).unwrap();
        assert_eq!(
            (f.sm_pct, f.memory_pct, f.verdict),
            (Some(25.0), Some(60.0), Some(crate::roofline::verdict(25.0, 60.0)))
        );
        assert_eq!(by_name.get("gemm").unwrap().sm_pct, Some(85.0));
        assert!(by_name.get("relu").is_none());
        // linked by launch order: only launch 2 is on the timeline's softmax span; launch 0
        // went to a timeline kernel named `softmax_warmup`
        let linked =
            SolByName::from_report_linked(&r, &[Some("softmax_warmup".into()), None, Some(KINETO_SOFTMAX.into())]);
        let f = linked.get(KINETO_SOFTMAX).unwrap();
        assert_eq!((f.sm_pct, f.memory_pct), (Some(30.0), Some(50.0)));
        assert_eq!(linked.get("softmax_warmup").unwrap().sm_pct, Some(10.0));
        assert_eq!(linked.get("gemm").unwrap().sm_pct, Some(85.0));
    }

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
