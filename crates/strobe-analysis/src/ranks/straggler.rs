//! Which rank holds the others back, step by step, and the evidence for it.
//!
//! A rank is the **straggler of a step** when it arrives last at more than half of the step's
//! collectives **and** the others' wait on it is material: the median over the other ranks of
//! their `wait_ns` in the step, less the rank's own `wait_ns`, is at least `min_wait_fraction`
//! (10 %) of the median step time (over every step of every rank). The second test keeps
//! noise from flagging anyone in a healthy step: some rank always arrives last, and in a
//! healthy step the ranks take turns — each waits about as long for the others as they wait
//! for it (DDP pair, ProfilerStep#4: 9.4 ms one way, 8.9 ms the other), which the plain median
//! of the others' wait (the first definition asked for) would flag. A straggler makes the
//! others wait and does not wait for them.
//!
//! The evidence says what the straggler was doing before its first late collective: its
//! longest compute kernels between its previous comm kernel (or the step start) and that
//! arrival, and how long its GPU sat idle there (a gap the CPU left).

use super::collectives::Collective;
use super::step_table::StepRow;
use super::unions::{clipped, rank_unions};
use super::RankTrace;
use crate::report::fmt_ns;
use crate::stats::median;
use serde::Serialize;
use strobe_model::{is_comm_kernel, LaneKind, SpanKind};
use strobe_store::Store;

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct StragglerParams {
    /// The others' median wait must reach this fraction of the median step time.
    pub min_wait_fraction: f64,
    /// How many kernel names the evidence lists.
    pub top_kernels: usize,
}

impl Default for StragglerParams {
    fn default() -> Self {
        StragglerParams { min_wait_fraction: 0.10, top_kernels: 3 }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RankWait {
    pub rank: i64,
    pub wait_ns: i64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CollectiveEvidence {
    pub name: String,
    pub occurrence: usize,
    pub skew_ns: i64,
    /// The straggler's arrival after the earliest rank.
    pub straggler_arrival_ns: i64,
    pub straggler_last: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KernelInWindow {
    pub name: String,
    pub count: u64,
    /// Time inside the window (a kernel crossing its edge counts only its inside part).
    pub total_ns: i64,
    pub max_ns: i64,
}

/// What the straggler ran before its first late collective, in its own clock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BeforeLateCollective {
    pub collective: String,
    pub occurrence: usize,
    pub window_start_ns: i64,
    pub window_end_ns: i64,
    pub compute_ns: i64,
    pub gpu_idle_ns: i64,
    pub top_kernels: Vec<KernelInWindow>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepStraggler {
    pub step: String,
    pub rank: i64,
    /// Collectives of the step where it arrived last, and how many the step has.
    pub last_at: usize,
    pub collectives: usize,
    pub others_wait_ns: Vec<RankWait>,
    pub median_others_wait_ns: i64,
    /// The straggler's own wait in the step (for the others, at the collectives it was not last).
    pub own_wait_ns: i64,
    /// The bar the median wait had to reach: `min_wait_fraction` × median step time.
    pub threshold_ns: i64,
    pub per_collective: Vec<CollectiveEvidence>,
    pub before: Option<BeforeLateCollective>,
    pub evidence: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Straggler {
    pub rank: i64,
    pub steps: Vec<String>,
    pub evidence: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StragglerReport {
    pub median_step_ns: i64,
    pub threshold_ns: i64,
    pub by_step: Vec<StepStraggler>,
    /// One entry per straggling rank, in rank order.
    pub stragglers: Vec<Straggler>,
}

/// Flags the straggler of each step of `table` (setting `StepRow::straggler`) and gathers the
/// evidence. `ranks` sorted by rank, `collectives` from `match_collectives` on the same ranks.
pub fn find_stragglers(
    ranks: &[RankTrace],
    collectives: &[Collective],
    table: &mut [StepRow],
    params: &StragglerParams,
) -> StragglerReport {
    let durs: Vec<i64> = table.iter().flat_map(|s| s.per_rank.iter().map(|r| r.dur_ns)).collect();
    let median_step_ns = median(&durs).unwrap_or(0);
    let threshold = params.min_wait_fraction * median_step_ns as f64;
    let mut by_step = Vec::new();
    for row in table.iter_mut() {
        let mine: Vec<&Collective> = collectives.iter().filter(|c| c.step.as_deref() == Some(&row.name)).collect();
        if mine.is_empty() || ranks.len() < 2 {
            continue;
        }
        // the rank last at the most collectives (ties: the lower rank)
        let Some((idx, last_at)) = ranks
            .iter()
            .enumerate()
            .map(|(i, r)| (i, mine.iter().filter(|c| c.last_ranks.contains(&r.rank)).count()))
            .max_by_key(|&(i, n)| (n, std::cmp::Reverse(i)))
        else {
            continue;
        };
        if last_at * 2 <= mine.len() {
            continue;
        }
        let rank = ranks[idx].rank;
        let others: Vec<RankWait> = row
            .per_rank
            .iter()
            .filter(|r| r.rank != rank)
            .map(|r| RankWait { rank: r.rank, wait_ns: r.wait_ns })
            .collect();
        let Some(med_wait) = median(&others.iter().map(|w| w.wait_ns).collect::<Vec<_>>()) else { continue };
        let own_wait = row.per_rank.iter().find(|r| r.rank == rank).map(|r| r.wait_ns).unwrap_or(0);
        if ((med_wait - own_wait) as f64) < threshold {
            continue;
        }
        row.straggler = Some(rank);
        let per_collective: Vec<CollectiveEvidence> = mine
            .iter()
            .map(|c| CollectiveEvidence {
                name: c.name.clone(),
                occurrence: c.occurrence,
                skew_ns: c.skew_ns,
                straggler_arrival_ns: c.arrival_ns[idx],
                straggler_last: c.last_ranks.contains(&rank),
            })
            .collect();
        let step_start = row.per_rank.iter().find(|r| r.rank == rank).map(|r| r.start_ns);
        let before = mine
            .iter()
            .find(|c| c.last_ranks.contains(&rank))
            .map(|c| before_collective(ranks[idx].store, c, idx, step_start, params.top_kernels));
        let mut s = StepStraggler {
            step: row.name.clone(),
            rank,
            last_at,
            collectives: mine.len(),
            others_wait_ns: others,
            median_others_wait_ns: med_wait,
            own_wait_ns: own_wait,
            threshold_ns: threshold.round() as i64,
            per_collective,
            before,
            evidence: String::new(),
        };
        s.evidence = evidence_text(&s, median_step_ns, params.min_wait_fraction);
        by_step.push(s);
    }
    let mut stragglers: Vec<Straggler> = Vec::new();
    for r in ranks {
        let mine: Vec<&StepStraggler> = by_step.iter().filter(|s| s.rank == r.rank).collect();
        if !mine.is_empty() {
            stragglers.push(Straggler {
                rank: r.rank,
                steps: mine.iter().map(|s| s.step.clone()).collect(),
                evidence: mine.iter().map(|s| s.evidence.as_str()).collect::<Vec<_>>().join("; "),
            });
        }
    }
    StragglerReport { median_step_ns, threshold_ns: threshold.round() as i64, by_step, stragglers }
}

fn before_collective(
    store: &Store,
    c: &Collective,
    idx: usize,
    step_start: Option<i64>,
    top: usize,
) -> BeforeLateCollective {
    let span = c.spans[idx];
    let arrival = store.span_start(span);
    // the straggler's previous comm kernel's end, else the step start
    let prev_comm_end = super::collectives::comm_kernels(store)
        .iter()
        .filter(|k| k.span != span && k.end <= arrival)
        .map(|k| k.end)
        .max();
    let start = match (prev_comm_end, step_start) {
        (Some(p), Some(s)) => p.max(s),
        (Some(p), None) => p,
        (None, Some(s)) => s,
        (None, None) => arrival,
    }
    .min(arrival);
    let u = rank_unions(store);
    let mut by_name: std::collections::HashMap<u32, (u64, i64, i64)> = Default::default();
    for (lane, desc) in store.lanes.iter().enumerate() {
        if !matches!(desc.kind, LaneKind::GpuStream { .. }) {
            continue;
        }
        store.query_window(lane as u32, start, arrival, |m| {
            let v = store.lane_view(lane as u32);
            let sid = v.span[m];
            let meta = store.span_meta(sid);
            if SpanKind::from_u8(meta.kind) != SpanKind::Kernel || is_comm_kernel(store.string(meta.name)) {
                return;
            }
            let d = v.ends[m].min(arrival) - v.starts[m].max(start);
            if d > 0 {
                let e = by_name.entry(meta.name).or_default();
                e.0 += 1;
                e.1 += d;
                e.2 = e.2.max(d);
            }
        });
    }
    let mut top_kernels: Vec<KernelInWindow> = by_name
        .into_iter()
        .map(|(n, (count, total_ns, max_ns))| KernelInWindow {
            name: store.string(n).to_string(),
            count,
            total_ns,
            max_ns,
        })
        .collect();
    top_kernels.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then_with(|| a.name.cmp(&b.name)));
    top_kernels.truncate(top);
    BeforeLateCollective {
        collective: c.name.clone(),
        occurrence: c.occurrence,
        window_start_ns: start,
        window_end_ns: arrival,
        compute_ns: clipped(&u.compute, start, arrival),
        gpu_idle_ns: (arrival - start) - clipped(&u.busy, start, arrival),
        top_kernels,
    }
}

/// Kernel names run to hundreds of characters of template arguments; the evidence line keeps
/// the first 60 (the structured evidence keeps them whole).
fn short(name: &str) -> String {
    if name.chars().count() > 60 {
        name.chars().take(59).chain(['…']).collect()
    } else {
        name.to_string()
    }
}

fn evidence_text(s: &StepStraggler, median_step_ns: i64, fraction: f64) -> String {
    let max_skew = s.per_collective.iter().map(|c| c.skew_ns).max().unwrap_or(0);
    let waits: Vec<String> =
        s.others_wait_ns.iter().map(|w| format!("rank {} {}", w.rank, fmt_ns(w.wait_ns))).collect();
    let mut t = format!(
        "{}: rank {} arrived last at {} of {} collectives (max skew {}); the others waited {} for it, it waited {} (median difference {} ≥ {} = {}% of the median step {})",
        s.step,
        s.rank,
        s.last_at,
        s.collectives,
        fmt_ns(max_skew),
        waits.join(", "),
        fmt_ns(s.own_wait_ns),
        fmt_ns(s.median_others_wait_ns - s.own_wait_ns),
        fmt_ns(s.threshold_ns),
        fraction * 100.0,
        fmt_ns(median_step_ns)
    );
    if let Some(b) = &s.before {
        let ks: Vec<String> =
            b.top_kernels.iter().map(|k| format!("{}× {} ({})", k.count, short(&k.name), fmt_ns(k.total_ns))).collect();
        t.push_str(&format!(
            "; in the {} before its first late collective ({} #{}) its GPU computed {} ({}) and sat idle {}",
            fmt_ns(b.window_end_ns - b.window_start_ns),
            short(&b.collective),
            b.occurrence,
            fmt_ns(b.compute_ns),
            if ks.is_empty() { "no kernels".to_string() } else { ks.join(", ") },
            fmt_ns(b.gpu_idle_ns)
        ));
    }
    t
}
