//! Which rank holds the others back, step by step, and the evidence for it (docs/ranks.md,
//! "Stragglers").
//!
//! A collective's wait counts against the rank waited for (the last to arrive) only where it
//! **blocked** the waiting rank: its exposed wait (`exposed`), the part not hidden under its
//! own compute. Per step, `blamed(r)` = the median over the other ranks of the exposed wait they
//! spent on r at the step's collectives; r's **net** = blamed(r) − r's own exposed wait (a
//! straggler makes the others wait and does not wait for them: in a healthy step the ranks take
//! turns and the two cancel). The step's straggler is the rank of the largest net, when that is
//! material: ≥ `min_wait_fraction` (10 %) of the median step time (every step of every rank).
//!
//! Kinds: a rank flagged in more than half of the steps that have collectives (and in at least
//! two) is **persistent** (a slow GPU, host or link); otherwise each flag is **one-off**. Across
//! the job the stragglers are **fixed** (always the same rank) or **rotating**. A rank that merely
//! arrives last at collectives hidden under compute in every step is never flagged.
//!
//! The old figures stay beside: how many collectives the rank arrived last at, the others'
//! total wait and its own (`wait_ns`, not only the exposed part).
//!
//! The evidence says what the straggler was doing before its first late collective: its
//! longest compute kernels between its previous comm kernel (or the step start) and that
//! arrival, and how long its GPU sat idle there (a gap the CPU left).

use super::collectives::Collective;
use super::digest::RankDigest;
use super::exposed::{exposed_wait, waited_for};
use super::step_table::StepRow;
use super::unions::RankUnions;
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

#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StragglerKind {
    OneOff,
    Persistent,
}

impl StragglerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StragglerKind::OneOff => "one_off",
            StragglerKind::Persistent => "persistent",
        }
    }
}

/// Across the job: no straggler, always the same rank, or several ranks by turns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StragglerPattern {
    None,
    Fixed,
    Rotating,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepStraggler {
    pub step: String,
    pub rank: i64,
    pub kind: StragglerKind,
    /// Median over the other ranks of the exposed wait they spent on this rank in the step.
    pub blamed_exposed_wait_ns: i64,
    /// This rank's own exposed wait in the step.
    pub own_exposed_wait_ns: i64,
    /// The rank's median `blamed_exposed_wait_ns` over all the steps with collectives (its
    /// usual): a one-off step's is far above it.
    pub usual_blamed_ns: i64,
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
    pub kind: StragglerKind,
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
    pub pattern: StragglerPattern,
}

/// Flags the straggler of each step of `table` (setting `StepRow::straggler`) and gathers the
/// evidence. `ranks` sorted by rank, `collectives` from `match_collectives` on the same ranks.
pub fn find_stragglers(
    ranks: &[RankTrace],
    collectives: &[Collective],
    table: &mut [StepRow],
    params: &StragglerParams,
) -> StragglerReport {
    find_stragglers_of(&super::digest::digests(ranks), collectives, table, params)
}

/// `find_stragglers` on the ranks' digests (sorted by rank).
pub fn find_stragglers_of(
    ranks: &[RankDigest],
    collectives: &[Collective],
    table: &mut [StepRow],
    params: &StragglerParams,
) -> StragglerReport {
    let durs: Vec<i64> = table.iter().flat_map(|s| s.per_rank.iter().map(|r| r.dur_ns)).collect();
    let median_step_ns = median(&durs).unwrap_or(0);
    let threshold = params.min_wait_fraction * median_step_ns as f64;
    struct Found {
        row: usize,
        idx: usize,
        blamed: i64,
        own: i64,
    }
    let mut found: Vec<Found> = Vec::new();
    // every rank's blamed exposed wait per step with collectives: the "usual" of one-offs
    let mut blamed_by_rank: Vec<Vec<i64>> = vec![Vec::new(); ranks.len()];
    let mut steps_with_collectives = 0usize;
    for (ri, row) in table.iter().enumerate() {
        let mine: Vec<&Collective> = collectives.iter().filter(|c| c.step.as_deref() == Some(&row.name)).collect();
        if mine.is_empty() || ranks.len() < 2 {
            continue;
        }
        steps_with_collectives += 1;
        // spent[j][r]: exposed wait of rank j spent on rank r in this step
        let mut spent = vec![vec![0i64; ranks.len()]; ranks.len()];
        for c in &mine {
            let Some(target) = waited_for(c).and_then(|t| ranks.iter().position(|r| r.rank == t)) else { continue };
            for (j, r) in ranks.iter().enumerate() {
                if j != target {
                    spent[j][target] += exposed_wait(c, j, r);
                }
            }
        }
        // per rank index: its own exposed wait in this step, where it has the step (looked up
        // once: a thousand ranks make any per-pair search cubic)
        let at: std::collections::HashMap<i64, usize> = ranks.iter().enumerate().map(|(i, r)| (r.rank, i)).collect();
        let mut own_of: Vec<Option<i64>> = vec![None; ranks.len()];
        for p in &row.per_rank {
            if let Some(&i) = at.get(&p.rank) {
                own_of[i] = Some(p.exposed_wait_ns);
            }
        }
        let present: Vec<usize> = (0..ranks.len()).filter(|&j| own_of[j].is_some()).collect();
        let mut best: Option<(i64, usize, i64, i64)> = None;
        let mut others: Vec<i64> = Vec::with_capacity(present.len());
        for &idx in &present {
            others.clear();
            others.extend(present.iter().filter(|&&j| j != idx).map(|&j| spent[j][idx]));
            let blamed = median(&others).unwrap_or(0);
            blamed_by_rank[idx].push(blamed);
            let own = own_of[idx].unwrap_or(0);
            let net = blamed - own;
            if best.is_none_or(|b| net > b.0) {
                best = Some((net, idx, blamed, own));
            }
        }
        if let Some((net, idx, blamed, own)) = best {
            if net as f64 >= threshold && net > 0 {
                found.push(Found { row: ri, idx, blamed, own });
            }
        }
    }
    let flags_of = |idx: usize| found.iter().filter(|f| f.idx == idx).count();
    let kind_of = |idx: usize| {
        let n = flags_of(idx);
        if n >= 2 && n * 2 > steps_with_collectives {
            StragglerKind::Persistent
        } else {
            StragglerKind::OneOff
        }
    };
    let mut by_step = Vec::new();
    for f in &found {
        let row = &mut table[f.row];
        let idx = f.idx;
        let rank = ranks[idx].rank;
        let kind = kind_of(idx);
        row.straggler = Some(rank);
        row.straggler_kind = Some(kind);
        let mine: Vec<&Collective> = collectives.iter().filter(|c| c.step.as_deref() == Some(&row.name)).collect();
        let last_at = mine.iter().filter(|c| c.last_ranks.contains(&rank)).count();
        let others: Vec<RankWait> = row
            .per_rank
            .iter()
            .filter(|r| r.rank != rank)
            .map(|r| RankWait { rank: r.rank, wait_ns: r.wait_ns })
            .collect();
        let med_wait = median(&others.iter().map(|w| w.wait_ns).collect::<Vec<_>>()).unwrap_or(0);
        let own_wait = row.per_rank.iter().find(|r| r.rank == rank).map(|r| r.wait_ns).unwrap_or(0);
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
        let before = mine.iter().find(|c| c.last_ranks.contains(&rank)).and_then(|c| {
            let w = ranks[idx].comm[c.kernels[idx]].before.as_ref()?;
            let mut top_kernels = w.top_kernels.clone();
            top_kernels.truncate(params.top_kernels);
            Some(BeforeLateCollective {
                collective: c.name.clone(),
                occurrence: c.occurrence,
                window_start_ns: w.window_start_ns,
                window_end_ns: w.window_end_ns,
                compute_ns: w.compute_ns,
                gpu_idle_ns: w.gpu_idle_ns,
                top_kernels,
            })
        });
        let mut s = StepStraggler {
            step: row.name.clone(),
            rank,
            kind,
            blamed_exposed_wait_ns: f.blamed,
            own_exposed_wait_ns: f.own,
            usual_blamed_ns: median(&blamed_by_rank[idx]).unwrap_or(0),
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
        s.evidence = evidence_text(&s, median_step_ns, params.min_wait_fraction, flags_of(idx), steps_with_collectives);
        by_step.push(s);
    }
    let mut stragglers: Vec<Straggler> = Vec::new();
    for (idx, r) in ranks.iter().enumerate() {
        let mine: Vec<&StepStraggler> = by_step.iter().filter(|s| s.rank == r.rank).collect();
        if !mine.is_empty() {
            stragglers.push(Straggler {
                rank: r.rank,
                kind: kind_of(idx),
                steps: mine.iter().map(|s| s.step.clone()).collect(),
                evidence: mine.iter().map(|s| s.evidence.as_str()).collect::<Vec<_>>().join("; "),
            });
        }
    }
    let pattern = match stragglers.len() {
        0 => StragglerPattern::None,
        1 => StragglerPattern::Fixed,
        _ => StragglerPattern::Rotating,
    };
    StragglerReport { median_step_ns, threshold_ns: threshold.round() as i64, by_step, stragglers, pattern }
}

/// The window before one comm kernel of a rank, in its own clock: from its previous comm
/// kernel's end or its step's start, the later, to the kernel's start (its arrival).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct BeforeWindow {
    pub window_start_ns: i64,
    pub window_end_ns: i64,
    pub compute_ns: i64,
    pub gpu_idle_ns: i64,
    /// The non-comm kernels by time inside the window, largest first, at most `top`.
    pub top_kernels: Vec<KernelInWindow>,
}

/// The window before the comm kernel starting at `arrival` of `store` (unions `u`), given the
/// previous comm kernel's end and the start of the step that launched it.
pub fn before_window(
    store: &Store,
    u: &RankUnions,
    arrival: i64,
    prev_comm_end: Option<i64>,
    step_start: Option<i64>,
    top: usize,
) -> BeforeWindow {
    let start = match (prev_comm_end, step_start) {
        (Some(p), Some(s)) => p.max(s),
        (Some(p), None) => p,
        (None, Some(s)) => s,
        (None, None) => arrival,
    }
    .min(arrival);
    let mut by_name: std::collections::HashMap<u32, (u64, i64, i64)> = Default::default();
    for (lane, desc) in store.lanes.iter().enumerate() {
        if !matches!(desc.kind, LaneKind::GpuStream { .. }) || start >= arrival {
            continue;
        }
        store.query_window(lane as u32, start, arrival, |m| {
            let v = store.lane_spans(lane as u32);
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
    BeforeWindow {
        window_start_ns: start,
        window_end_ns: arrival,
        compute_ns: crate::intervals::total_within(&u.compute, start, arrival),
        gpu_idle_ns: (arrival - start) - crate::intervals::total_within(&u.busy, start, arrival),
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

fn evidence_text(s: &StepStraggler, median_step_ns: i64, fraction: f64, flagged: usize, steps: usize) -> String {
    let max_skew = s.per_collective.iter().map(|c| c.skew_ns).max().unwrap_or(0);
    // a few ranks by name; a thousand as their spread (the structured evidence has them all)
    let waits: Vec<String> = if s.others_wait_ns.len() <= 8 {
        s.others_wait_ns.iter().map(|w| format!("rank {} {}", w.rank, fmt_ns(w.wait_ns))).collect()
    } else {
        let v: Vec<i64> = s.others_wait_ns.iter().map(|w| w.wait_ns).collect();
        let (lo, hi) = (v.iter().min().copied().unwrap_or(0), v.iter().max().copied().unwrap_or(0));
        vec![format!(
            "{} ranks, median {} (from {} to {})",
            v.len(),
            fmt_ns(s.median_others_wait_ns),
            fmt_ns(lo),
            fmt_ns(hi)
        )]
    };
    let kind = match s.kind {
        StragglerKind::Persistent => format!("persistent: flagged in {flagged} of {steps} steps"),
        StragglerKind::OneOff => format!(
            "one-off: flagged in {flagged} of {steps} steps; here {} blocked the others against its usual {}",
            fmt_ns(s.blamed_exposed_wait_ns),
            fmt_ns(s.usual_blamed_ns)
        ),
    };
    let mut t = format!(
        "{}: rank {} held the others up ({kind}): their exposed wait on it {} (median over them), its own {} (difference ≥ {} = {}% of the median step {}); it arrived last at {} of {} collectives (max skew {}); total wait: the others {}, it {}",
        s.step,
        s.rank,
        fmt_ns(s.blamed_exposed_wait_ns),
        fmt_ns(s.own_exposed_wait_ns),
        fmt_ns(s.threshold_ns),
        fraction * 100.0,
        fmt_ns(median_step_ns),
        s.last_at,
        s.collectives,
        fmt_ns(max_skew),
        waits.join(", "),
        fmt_ns(s.own_wait_ns),
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
