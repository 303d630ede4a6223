//! The attribution of several ranks: each rank's own breakdown (from its digest), with the
//! parts only the other ranks decide moved into place — exposed comm during a wait for a late
//! peer (the matched collectives' arrivals, `ranks::collectives`) becomes comm wait, and idle
//! or exposed comm inside a pipeline stage's warm-up, P2P wait or cool-down (`pipeline::bubbles`)
//! becomes pipeline bubble.

use super::stretches::{reclassify, PeerWait, Stretch};
use super::StepBreakdown;
use crate::ranks::collectives::Collective;
use crate::ranks::digest::RankDigest;

/// One rank's breakdowns as its digest holds them, and its waits for late peers.
#[derive(Clone, Debug, Default)]
pub struct RankAttribution {
    pub rank: i64,
    pub steps: Vec<StepBreakdown>,
    pub stretches: Vec<Vec<Stretch>>,
    /// Sorted by start.
    pub waits: Vec<PeerWait>,
}

/// Each rank's (in `ranks`' order, index i of the collectives' per-rank lists) waits at the
/// matched collectives: from its arrival (its kernel's start, its own clock) until the last
/// rank arrived.
pub fn peer_waits(ranks: &[RankDigest], collectives: &[Collective]) -> Vec<Vec<PeerWait>> {
    let mut out: Vec<Vec<PeerWait>> = vec![Vec::new(); ranks.len()];
    for c in collectives {
        let late = crate::ranks::exposed::waited_for(c);
        for (i, r) in ranks.iter().enumerate() {
            let (Some(&arrival), Some(&k)) = (c.arrival_ns.get(i), c.kernels.get(i)) else { continue };
            let wait = c.skew_ns - arrival;
            let Some(kernel) = r.comm.get(k) else { continue };
            if wait > 0 {
                out[i].push(PeerWait {
                    start: kernel.start,
                    end: kernel.start + wait,
                    collective: c.name.clone(),
                    late_rank: late,
                    span: kernel.span,
                });
            }
        }
    }
    out.iter_mut().for_each(|w| w.sort_by_key(|x| (x.start, x.end)));
    out
}

/// The bubble intervals of a rank's step (sorted, disjoint), by rank and step name.
pub type BubbleOf<'a> = &'a dyn Fn(i64, &str) -> Vec<(i64, i64)>;

/// The ranks' breakdowns, rank by rank, `bubbles(rank, step)` the stage's bubble intervals of
/// the step (sorted, disjoint; empty off a pipeline).
pub fn step_breakdowns(ranks: Vec<RankAttribution>, bubbles: BubbleOf) -> Vec<StepBreakdown> {
    let mut out = Vec::with_capacity(ranks.iter().map(|r| r.steps.len()).sum());
    // the breakdowns are moved, not copied: a rank of thousands of steps holds tens of MB of them
    for RankAttribution { rank, steps, stretches, waits } in ranks {
        for (mut b, st) in steps.into_iter().zip(&stretches) {
            b.rank = Some(rank);
            let (a, e) = (b.start_ns, b.start_ns + b.dur_ns);
            let upto = waits.partition_point(|w| w.start < e);
            let waits: Vec<PeerWait> = waits[..upto].iter().filter(|w| w.end > a).cloned().collect();
            let bubble = bubbles(rank, &b.step);
            reclassify(&mut b, st, &bubble, &waits);
            b.notes.retain(|n| !n.starts_with("comm wait needs the other ranks"));
            out.push(b);
        }
    }
    out
}

/// The bubble of pipeline rank `rank` in step `step`: its warm-up, P2P wait and cool-down
/// (`pipeline::bubbles`; the stage's "other idle" stays idle by its own cause).
pub fn bubble_of(p: &crate::pipeline::Pipeline, rank: i64, step: &str) -> Vec<(i64, i64)> {
    let Some(r) = p.ranks.iter().find(|r| r.rank == rank) else { return Vec::new() };
    let Some(iv) = r.bubbles.iter().find(|b| b.step == step) else { return Vec::new() };
    let all = iv.warmup.iter().chain(&iv.p2p_wait).chain(&iv.cooldown).copied().collect();
    crate::intervals::union(all)
}
