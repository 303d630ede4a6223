//! Collectives matched across ranks. NCCL runs a collective as one kernel per rank, and every
//! rank issues the same collectives in the same order, so the k-th kernel of a given name on
//! one rank is the k-th of that name on every other. A kernel cannot finish before the last
//! rank joins, so its **start** is the rank's arrival and the spread of starts (the skew) is
//! how long the early ranks waited for the late one.

use super::digest::RankDigest;
use super::unions::RankUnions;
use super::{step_at, RankTrace};
use serde::{Deserialize, Serialize};
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

/// One NCCL/RCCL kernel of one rank, in the rank's own clock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommKernel {
    pub name: String,
    pub start: i64,
    pub end: i64,
    /// Its span id in the rank's store (to open it where the full trace is opened).
    pub span: u32,
    /// The start of the CPU call that launched it where the trace links it, else its own start:
    /// what decides its step.
    pub launch_ns: i64,
    /// The window before it (`straggler::before_window`); filled by `comm_kernels_with_windows`.
    pub before: Option<super::straggler::BeforeWindow>,
}

/// Every comm kernel on the GPU lanes of `store`, by start (then end, then span id).
pub fn comm_kernels(store: &Store) -> Vec<CommKernel> {
    let mut out = Vec::new();
    let mut classes = crate::gpu_time::Classifier::new(store);
    for (lane, desc) in store.lanes.iter().enumerate() {
        if !matches!(desc.kind, LaneKind::GpuStream { .. }) {
            continue;
        }
        let v = store.lane_spans(lane as u32);
        for (k, &sid) in v.span.iter().enumerate() {
            let m = store.span_meta(sid);
            if SpanKind::from_u8(m.kind) != SpanKind::Kernel {
                continue;
            }
            if classes.class(SpanKind::Kernel, m.name) == Some(crate::gpu_time::GpuClass::Comm) {
                let name = store.string(m.name);
                out.push(CommKernel {
                    name: name.to_string(),
                    start: v.starts[k],
                    end: v.ends[k],
                    span: sid,
                    launch_ns: store.launch_of(sid).map(|l| store.span_start(l)).unwrap_or(v.starts[k]),
                    before: None,
                });
            }
        }
    }
    out.sort_by_key(|c| (c.start, c.end, c.span));
    out
}

/// `comm_kernels` with the window before each (`digest`). `steps` are the rank's, `u` its
/// unions, `top` how many kernel names a window keeps.
pub fn comm_kernels_with_windows(
    store: &Store,
    steps: &[crate::steps::Step],
    u: &RankUnions,
    top: usize,
) -> Vec<CommKernel> {
    let mut ks = comm_kernels(store);
    let mut ends: Vec<(i64, u32)> = ks.iter().map(|k| (k.end, k.span)).collect();
    ends.sort_unstable();
    for k in &mut ks {
        // the previous comm kernel: the latest other one that ended by this one's start
        let n = ends.partition_point(|&(e, _)| e <= k.start);
        let prev_end = ends[..n].iter().rev().find(|&&(_, s)| s != k.span).map(|&(e, _)| e);
        let step_start = step_at(steps, k.launch_ns).map(|s| s.start_ns);
        k.before = Some(super::straggler::before_window(store, u, k.start, prev_end, step_start, top));
    }
    ks
}

/// The k-th kernel of each name present on every rank: (name, k, index into each rank's list).
/// Occurrences beyond the rank with the fewest are left unmatched (a rank whose trace stopped
/// earlier). Ordered by the first rank's start.
pub fn match_kernels(per_rank: &[&[CommKernel]]) -> Vec<(String, usize, Vec<usize>)> {
    let Some(first) = per_rank.first() else { return Vec::new() };
    let mut occ: std::collections::HashMap<&str, Vec<Vec<usize>>> = Default::default();
    for (r, ks) in per_rank.iter().enumerate() {
        for (i, k) in ks.iter().enumerate() {
            let e = occ.entry(k.name.as_str()).or_insert_with(|| vec![Vec::new(); per_rank.len()]);
            e[r].push(i);
        }
    }
    let mut out: Vec<(String, usize, Vec<usize>)> = Vec::new();
    for (name, lists) in occ {
        let n = lists.iter().map(|l| l.len()).min().unwrap_or(0);
        for k in 0..n {
            out.push((name.to_string(), k, lists.iter().map(|l| l[k]).collect()));
        }
    }
    out.sort_by_key(|(name, k, idx)| (first[idx[0]].start, name.clone(), *k));
    out
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Collective {
    pub name: String,
    /// k: this is the k-th (from 0) kernel of this name on every rank.
    pub occurrence: usize,
    /// The step it belongs to: the step of the lowest rank whose launch call (else kernel
    /// start) lies in one of its steps. The launch decides because GPU work of a step may run
    /// after the step's CPU range ended.
    pub step: Option<String>,
    /// Per rank (in rank order): kernel start and end with the rank's alignment offset added.
    pub starts_ns: Vec<i64>,
    pub ends_ns: Vec<i64>,
    /// Per rank: aligned start − the earliest aligned start.
    pub arrival_ns: Vec<i64>,
    /// Latest arrival − earliest.
    pub skew_ns: i64,
    /// The ranks that arrived last (several only on an exact tie).
    pub last_ranks: Vec<i64>,
    /// Per rank: the kernel's span id in that rank's store.
    #[serde(skip)]
    pub spans: Vec<u32>,
    /// Per rank: the kernel's index in that rank's `RankDigest::comm`.
    #[serde(skip)]
    pub kernels: Vec<usize>,
}

/// Matches the collectives of `ranks` (sorted by rank) with `offsets_ns[i]` added to rank i's
/// times (`align::align`), ordered by earliest arrival.
pub fn match_collectives(ranks: &[RankTrace], offsets_ns: &[i64]) -> Vec<Collective> {
    match_digests(&super::digest::digests(ranks), offsets_ns)
}

/// `match_collectives` on the ranks' digests (sorted by rank).
pub fn match_digests(ranks: &[RankDigest], offsets_ns: &[i64]) -> Vec<Collective> {
    let per_rank: Vec<&[CommKernel]> = ranks.iter().map(|r| r.comm.as_slice()).collect();
    let steps: Vec<&[crate::steps::Step]> = ranks.iter().map(|r| r.steps.as_slice()).collect();
    let off = |i: usize| offsets_ns.get(i).copied().unwrap_or(0);
    let mut out: Vec<Collective> = match_kernels(&per_rank)
        .into_iter()
        .map(|(name, occurrence, idx)| {
            let ks: Vec<&CommKernel> = idx.iter().enumerate().map(|(r, &i)| &per_rank[r][i]).collect();
            let starts: Vec<i64> = ks.iter().enumerate().map(|(r, k)| k.start + off(r)).collect();
            let ends: Vec<i64> = ks.iter().enumerate().map(|(r, k)| k.end + off(r)).collect();
            let first = starts.iter().copied().min().unwrap_or(0);
            let last = starts.iter().copied().max().unwrap_or(0);
            let step = ks.iter().enumerate().find_map(|(r, k)| step_at(steps[r], k.launch_ns).map(|s| s.name.clone()));
            Collective {
                name,
                occurrence,
                step,
                arrival_ns: starts.iter().map(|s| s - first).collect(),
                skew_ns: last - first,
                last_ranks: starts.iter().zip(ranks).filter(|(s, _)| **s == last).map(|(_, r)| r.rank).collect(),
                starts_ns: starts,
                ends_ns: ends,
                spans: ks.iter().map(|k| k.span).collect(),
                kernels: idx,
            }
        })
        .collect();
    out.sort_by_key(|c| (c.starts_ns.iter().copied().min().unwrap_or(0), c.name.clone(), c.occurrence));
    out
}
