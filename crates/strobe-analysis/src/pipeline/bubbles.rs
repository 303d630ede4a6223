//! One stage's time in one step: its microbatch work, its bubble and where the bubble went.
//!
//! - **work**: the union of its microbatch ranges inside the step, less the time it waited
//!   on a peer inside them (a `Forward 3` holds the receive of its input).
//! - **P2P wait**: time on the transfer path: in the calls that post transfers (`c10d::send`,
//!   `c10d::recv_`) and blocked on a receive, i.e. its flight (post to completion) less the
//!   CPU ops the thread ran meanwhile (an `irecv` posted early is no wait while compute runs).
//! - **bubble** = step − work, and bubble % = bubble / step. It splits into
//!   **warm-up** (the non-work time from the step start until the stage can start: its first
//!   work, or the completion of its first receive from the stage upstream, the later), **cool-down** (the last work's end to the
//!   step's end: the drain, the send waits, the optimizer), **P2P wait** between the warm-up's
//!   end and the last work, and **other idle** (the rest: launch gaps, Python between ranges).

use super::microbatch::{Microbatch, Phase};
use super::p2p::{is_p2p_name, Dir, P2pOp};
use crate::intervals::{intersect, subtract, total, union};
use serde::Serialize;
use strobe_model::SpanKind;
use strobe_store::Store;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StageStep {
    pub stage: usize,
    pub rank: i64,
    pub step_ns: i64,
    pub work_ns: i64,
    pub bubble_ns: i64,
    pub bubble_pct: f64,
    /// Waiting for a peer between the first and the last work of the step.
    pub p2p_wait_ns: i64,
    pub warmup_ns: i64,
    pub cooldown_ns: i64,
    pub other_idle_ns: i64,
    /// Waiting for a peer anywhere in the step (warm-up and cool-down included).
    pub p2p_wait_total_ns: i64,
    /// Microbatch counts (ranges starting in the step).
    pub forward: usize,
    pub backward: usize,
    pub weight: usize,
}

/// The intervals `store`'s threads spent on transfers: the posting calls, and each receive's
/// flight less the non-transfer CPU ops that started during it on the same thread.
pub fn wait_intervals(store: &Store, ops: &[P2pOp]) -> Vec<(i64, i64)> {
    // a work record without its call is in flight asynchronously: only calls count as spent
    let mut out: Vec<(i64, i64)> =
        ops.iter().filter(|o| store.span_kind(o.span) == SpanKind::CpuOp).map(|o| (o.start_ns, o.end_ns)).collect();
    for o in ops.iter().filter(|o| o.dir == Dir::Recv && o.flight_end_ns > o.flight_start_ns) {
        let (s, e) = (o.flight_start_ns, o.flight_end_ns);
        let v = store.lane_spans(o.lane);
        let mut busy = Vec::new();
        store.query_window(o.lane, s, e, |i| {
            let sid = v.span[i];
            if v.starts[i] >= s && store.span_kind(sid) == SpanKind::CpuOp && !is_p2p_name(store.span_name(sid)) {
                busy.push((v.starts[i], v.ends[i].min(e)));
            }
        });
        out.extend(subtract(&[(s, e)], &union(busy)));
    }
    union(out)
}

/// Where one stage's bubble went in one step, as intervals in the rank's clock (what the
/// timeline shades): each kind sorted and disjoint, the four together with the work exactly
/// the step.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct BubbleIntervals {
    /// The step's name (`ProfilerStep#3`).
    pub step: String,
    pub t0: i64,
    pub t1: i64,
    pub work: Vec<(i64, i64)>,
    pub warmup: Vec<(i64, i64)>,
    pub p2p_wait: Vec<(i64, i64)>,
    pub other_idle: Vec<(i64, i64)>,
    pub cooldown: Vec<(i64, i64)>,
    /// Waiting for a peer anywhere in the step (warm-up and cool-down included).
    pub p2p_wait_total_ns: i64,
}

/// The work and the bubble's parts of one stage in the step `[t0, t1)`; `first_input`: when
/// its first receive from upstream in the step completed (None for the first stage).
pub fn bubble_intervals(
    mbs: &[Microbatch],
    waits: &[(i64, i64)],
    first_input: Option<i64>,
    (t0, t1): (i64, i64),
) -> BubbleIntervals {
    let step = [(t0, t1)];
    let in_step: Vec<(i64, i64)> =
        mbs.iter().filter(|m| m.start_ns >= t0 && m.start_ns < t1).map(|m| (m.start_ns, m.end_ns)).collect();
    let ranges = intersect(&union(in_step), &step);
    let waits = intersect(waits, &step);
    let work = subtract(&ranges, &waits);
    let mut out = BubbleIntervals { t0, t1, p2p_wait_total_ns: total(&waits), ..Default::default() };
    match (work.first().map(|w| w.0), work.last().map(|w| w.1)) {
        (Some(f), Some(l)) => {
            let ready = first_input.map_or(f, |i| f.max(i.min(t1)));
            out.warmup = subtract(&[(t0, ready)], &work);
            // the last work ends before the input arrived only in a broken step: the
            // cool-down starts after the warm-up then, so no time counts twice
            let cool_from = l.max(ready);
            out.cooldown = if cool_from < t1 { vec![(cool_from, t1)] } else { Vec::new() };
            let between = [(ready, l)];
            out.p2p_wait = intersect(&waits, &between);
            out.other_idle = subtract(&subtract(&between, &work), &out.p2p_wait);
        }
        _ => out.warmup = step.to_vec(),
    }
    out.work = work;
    out
}

/// The figures of one stage in the step `[t0, t1)` (`bubble_intervals`, summed).
pub fn stage_step(stage: usize, rank: i64, mbs: &[Microbatch], iv: &BubbleIntervals) -> StageStep {
    let (t0, t1) = (iv.t0, iv.t1);
    let in_step: Vec<&Microbatch> = mbs.iter().filter(|m| m.start_ns >= t0 && m.start_ns < t1).collect();
    let work_ns = total(&iv.work);
    let step_ns = t1 - t0;
    let bubble_ns = step_ns - work_ns;
    let (warmup_ns, cooldown_ns, p2p_wait_ns) = (total(&iv.warmup), total(&iv.cooldown), total(&iv.p2p_wait));
    let count = |p: Phase| in_step.iter().filter(|m| m.phase == p).count();
    StageStep {
        stage,
        rank,
        step_ns,
        work_ns,
        bubble_ns,
        bubble_pct: if step_ns > 0 { 100.0 * bubble_ns as f64 / step_ns as f64 } else { 0.0 },
        p2p_wait_ns,
        warmup_ns,
        cooldown_ns,
        other_idle_ns: bubble_ns - warmup_ns - cooldown_ns - p2p_wait_ns,
        p2p_wait_total_ns: iv.p2p_wait_total_ns,
        forward: count(Phase::Forward),
        backward: count(Phase::Backward),
        weight: count(Phase::Weight),
    }
}
