//! Pipeline parallelism across ranks (docs/pipeline.md): the transfers between ranks
//! (`p2p`), the stage order they imply (`stage_order`), each stage's microbatch work
//! (`microbatch`), the schedule (`schedule`), bubbles per stage and step (`bubbles`), the
//! bottleneck stage (`bottleneck`) and send/receive pairs split into transfer and wait
//! (`transfer`).
//!
//! Everything here is read in each rank's own clock: the per-stage figures are durations
//! inside that rank's steps, and the pairs compare flight durations, never times across
//! ranks; no alignment can move them.

pub mod bottleneck;
pub mod bubbles;
pub mod microbatch;
pub mod p2p;
pub mod peer_matching;
pub mod peers;
pub mod replicas;
pub mod schedule;
pub mod stage_order;
pub mod text;
pub mod transfer;

#[cfg(test)]
mod tests;

use crate::ranks::RankTrace;
use bubbles::StageStep;
use microbatch::{Microbatch, MicrobatchRule, MicrobatchSource};
use p2p::P2pOp;
use schedule::Schedule;
use serde::Serialize;
use std::collections::BTreeMap;
use transfer::{P2pLink, P2pPair};

/// One step of the pipeline: every stage's row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PipelineStep {
    pub name: String,
    pub stages: Vec<StageStep>,
}

/// The `"pipeline"` object of `strobe report --json` over several ranks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PipelineReport {
    /// Ranks by stage (then rank).
    pub stage_order: Vec<i64>,
    /// Number of stages, p.
    pub stages: usize,
    pub schedule: Schedule,
    /// Model chunks per stage, v (1 unless interleaved).
    pub virtual_stages: usize,
    /// Microbatches per step, m: the median over stages and steps of the forward count, ÷ v.
    pub microbatches: usize,
    pub microbatch_source: MicrobatchSource,
    pub theoretical_bubble_pct: Option<f64>,
    /// The formula and its numbers, e.g. `(p−1)/(m+p−1) = 3/11, p = 4, m = 8`.
    pub theoretical_bubble_formula: Option<String>,
    pub bottleneck_stage: Option<usize>,
    pub bottleneck_rank: Option<i64>,
    pub bottleneck_evidence: Option<String>,
    pub steps: Vec<PipelineStep>,
    /// Each direction of each link: its pairs' transfer and wait.
    pub p2p: Vec<P2pLink>,
    /// Each pipeline (connected by its transfers) with its stage order and, per stage, the
    /// ranks of the same stage in the other pipelines (its data-parallel peers).
    pub pipelines: Vec<replicas::PipelineLine>,
    /// How each rank's point-to-point peers were turned into global ranks.
    pub peers: Vec<peers::PeerResolution>,
    pub peer_notes: Vec<String>,
}

/// What the timeline draws per rank: its stage, microbatch ranges (labels `F3`) and waits.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PipelineRank {
    pub rank: i64,
    pub stage: usize,
    pub microbatches: Vec<Microbatch>,
    pub transfers: Vec<P2pOp>,
    /// Intervals blocked on a receive (the P2P wait), in the rank's clock.
    pub waits: Vec<(i64, i64)>,
    /// Per step of the report (`PipelineReport::steps`, same order): its work and where its
    /// bubble went, as intervals to shade.
    pub bubbles: Vec<bubbles::BubbleIntervals>,
}

/// The whole analysis: the report, and per rank (in stage order) what the GUI draws, and the
/// matched pairs (`P2pPair::send`/`recv` index `PipelineRank::transfers`) to draw as flows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pipeline {
    pub report: PipelineReport,
    pub ranks: Vec<PipelineRank>,
    pub pairs: Vec<P2pPair>,
}

/// The pipeline of `ranks`, or None when no rank sends to another in one direction first
/// (no pipeline: data parallel, one rank, no transfers).
pub fn analyze(ranks: &[RankTrace], rule: &MicrobatchRule) -> Option<Pipeline> {
    use rayon::prelude::*;
    let mut ops: Vec<Vec<P2pOp>> = ranks.par_iter().map(|r| p2p::p2p_ops(r.store)).collect();
    let groups: Vec<Vec<crate::ranks::groups::ProcessGroup>> =
        ranks.iter().map(|r| crate::ranks::groups::declared_groups(r.store).0).collect();
    let declared: Vec<(i64, &[crate::ranks::groups::ProcessGroup])> =
        ranks.iter().zip(&groups).map(|(r, g)| (r.rank, g.as_slice())).collect();
    let (peer_rows, peer_notes) = peers::resolve(&declared, &mut ops);
    let ops = ops;
    let by_rank: Vec<(i64, &[P2pOp])> = ranks.iter().zip(&ops).map(|(r, o)| (r.rank, o.as_slice())).collect();
    let stage_of = stage_order::stages(&by_rank)?;
    let order = stage_order::order(&stage_of);
    let p = stage_of.values().max().map(|s| s + 1)?;
    let idx = |rank: i64| ranks.iter().position(|r| r.rank == rank);
    // neighbours: the ranks one stage up / down this rank exchanges with
    let neighbour = |rank: i64, want: usize| -> Option<i64> {
        let mine = by_rank.iter().find(|x| x.0 == rank)?.1;
        mine.iter().filter_map(|o| o.peer).find(|q| stage_of.get(q) == Some(&want))
    };
    let annotated: Vec<Vec<Microbatch>> = order
        .par_iter()
        .map(|&r| idx(r).map(|i| microbatch::annotated(ranks[i].store, rule)).unwrap_or_default())
        .collect();
    let source = if annotated.iter().all(|a| !a.is_empty()) {
        MicrobatchSource::Annotation
    } else {
        MicrobatchSource::Transfers
    };
    let mut prank: Vec<PipelineRank> = Vec::with_capacity(order.len());
    let mut ups: Vec<Option<i64>> = Vec::with_capacity(order.len());
    for (k, &r) in order.iter().enumerate() {
        let i = idx(r)?;
        let st = stage_of[&r];
        ups.push(st.checked_sub(1).and_then(|u| neighbour(r, u)));
        let mbs = match source {
            MicrobatchSource::Annotation => annotated[k].clone(),
            MicrobatchSource::Transfers => {
                let refs: Vec<&P2pOp> = ops[i].iter().collect();
                let up = st.checked_sub(1).and_then(|u| neighbour(r, u));
                let down = neighbour(r, st + 1);
                ranks[i]
                    .steps
                    .iter()
                    .flat_map(|s| microbatch::from_transfers(&refs, up, down, s.start_ns, s.end_ns()))
                    .collect()
            }
        };
        prank.push(PipelineRank {
            rank: r,
            stage: st,
            microbatches: mbs,
            waits: bubbles::wait_intervals(ranks[i].store, &ops[i]),
            transfers: ops[i].clone(),
            bubbles: Vec::new(),
        });
    }
    // steps every pipeline rank has, in the first stage's order
    let first = &ranks[idx(order[0])?];
    let mut steps = Vec::new();
    let mut per_step_mbs: Vec<Vec<Vec<&Microbatch>>> = Vec::new();
    let mut per_step_ivs: Vec<Vec<bubbles::BubbleIntervals>> = Vec::new();
    for s in first.steps {
        let mut rows = Vec::new();
        let mut ivs = Vec::new();
        let mut mbs = Vec::new();
        for (pr, up) in prank.iter().zip(&ups) {
            let Some(rs) = ranks[idx(pr.rank)?].steps.iter().find(|x| x.name == s.name) else { break };
            let (t0, t1) = (rs.start_ns, rs.end_ns());
            let first_input = pr
                .transfers
                .iter()
                .filter(|o| o.dir == p2p::Dir::Recv && o.peer.is_some() && o.peer == *up)
                .find(|o| o.start_ns >= t0 && o.start_ns < t1)
                .map(|o| o.flight_end_ns);
            let mut iv = bubbles::bubble_intervals(&pr.microbatches, &pr.waits, first_input, (t0, t1));
            iv.step = s.name.clone();
            rows.push(bubbles::stage_step(pr.stage, pr.rank, &pr.microbatches, &iv));
            ivs.push(iv);
            mbs.push(
                pr.microbatches.iter().filter(|m| m.start_ns >= rs.start_ns && m.start_ns < rs.end_ns()).collect(),
            );
        }
        if rows.len() == prank.len() {
            steps.push(PipelineStep { name: s.name.clone(), stages: rows });
            per_step_ivs.push(ivs);
            per_step_mbs.push(mbs);
        }
    }
    // the schedule: the one every step with work agrees on, by stage (several ranks of one
    // stage, pipeline × data parallel: the first)
    let firsts: Vec<usize> = (0..p).filter_map(|s| prank.iter().position(|r| r.stage == s)).collect();
    fn by_stage<'a>(mbs: &[Vec<&'a Microbatch>], firsts: &[usize]) -> Vec<Vec<&'a Microbatch>> {
        firsts.iter().map(|&k| mbs[k].clone()).collect()
    }
    let scheds: Vec<Schedule> = per_step_mbs.iter().map(|m| schedule::recognise(&by_stage(m, &firsts))).collect();
    let schedule = match scheds.first() {
        Some(&s0) if scheds.iter().all(|&s| s == s0) => s0,
        _ => Schedule::Unknown,
    };
    let v = per_step_mbs.iter().map(|m| schedule::virtual_stages(&by_stage(m, &firsts))).max().unwrap_or(1);
    let fwd: Vec<i64> = steps.iter().flat_map(|s| s.stages.iter().map(|x| x.forward as i64)).collect();
    let m = crate::stats::median(&fwd).unwrap_or(0) as usize / v.max(1);
    let theo = schedule::theoretical_bubble(schedule, p, m, v);
    let rows: Vec<Vec<StageStep>> = steps.iter().map(|s| s.stages.clone()).collect();
    let bn = bottleneck::bottleneck(&rows);
    let pairs = transfer::pairs(&by_rank);
    drop(per_step_mbs);
    for ivs in per_step_ivs {
        for (pr, iv) in prank.iter_mut().zip(ivs) {
            pr.bubbles.push(iv);
        }
    }
    let links = transfer::links(&pairs, &stage_of);
    // pairs index the transfers of each rank as `prank` holds them (the same lists)
    Some(Pipeline {
        report: PipelineReport {
            stage_order: order,
            stages: p,
            schedule,
            virtual_stages: v,
            microbatches: m,
            microbatch_source: source,
            theoretical_bubble_pct: theo.as_ref().map(|t| 100.0 * t.0),
            theoretical_bubble_formula: theo.map(|t| t.1),
            bottleneck_stage: bn.as_ref().map(|b| b.0),
            bottleneck_rank: bn.as_ref().map(|b| b.1),
            bottleneck_evidence: bn.map(|b| b.2),
            steps,
            p2p: links,
            pipelines: replicas::pipelines(&by_rank, &stage_of, &groups.concat()),
            peers: peer_rows,
            peer_notes,
        },
        ranks: prank,
        pairs,
    })
}

/// The stage of each rank that takes part (for the rank headers: `stage 2`).
pub fn stage_of(p: &Pipeline) -> BTreeMap<i64, usize> {
    p.ranks.iter().map(|r| (r.rank, r.stage)).collect()
}
