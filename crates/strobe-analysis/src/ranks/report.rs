//! `strobe report` over several ranks: every single-trace report, plus the rank–step table,
//! the collectives, the stragglers with their evidence and the HTA-parity tables, as data
//! (JSON) and as text.

use super::align::{align, Alignment, RankAlignment};
use super::breakdown::{
    comm_overlap, kernel_breakdown, temporal_breakdown, CommOverlap, KernelBreakdown, TemporalBreakdown,
};
use super::collectives::{match_collectives, Collective};
use super::identity::{identify_ranks, RankFrom};
use super::launch::{launch_stats, LaunchParams, LaunchStats};
use super::memcpy_bandwidth::{memcpy_bandwidth, BandwidthSeries};
use super::queue::{queue_length, QueueSeries};
use super::step_table::{rank_summaries, step_table, RankStepSummary, StepRow};
use super::straggler::{find_stragglers, StepStraggler, Straggler, StragglerParams, StragglerPattern};
use super::RankTrace;
use crate::gpu_time::GpuTime;
use crate::report::{fmt_ns, Report};
use crate::steps::StepRule;
use rayon::prelude::*;
use serde::Serialize;
use std::fmt::Write;
use strobe_store::Store;

#[derive(Clone, Debug, Serialize)]
pub struct RankEntry {
    pub rank: i64,
    pub source: String,
    pub rank_from: RankFrom,
    /// The process whose work this rank is (`identity::rank_process`), where the trace says.
    pub pid: Option<i64>,
    /// The GPU devices its GPU work ran on.
    pub devices: Vec<i64>,
    /// ns added to this rank's times by the alignment.
    pub offset_ns: i64,
    pub gpus: Vec<GpuTime>,
    /// The single-trace report of this rank, as `strobe report FILE` gives it.
    pub report: Report,
}

#[derive(Clone, Debug, Serialize)]
pub struct RankQueues {
    pub rank: i64,
    pub streams: Vec<QueueSeries>,
}

#[derive(Clone, Debug, Serialize)]
pub struct RankBandwidth {
    pub rank: i64,
    pub copies: Vec<BandwidthSeries>,
}

#[derive(Clone, Debug, Serialize)]
pub struct MultiRankReport {
    pub ranks: Vec<RankEntry>,
    pub alignment: RankAlignment,
    pub steps: Vec<StepRow>,
    pub stragglers: Vec<Straggler>,
    pub straggler_steps: Vec<StepStraggler>,
    /// Across the job: none, fixed (one rank) or rotating (several).
    pub straggler_pattern: StragglerPattern,
    pub median_step_ns: i64,
    pub straggler_threshold_ns: i64,
    pub rank_summary: Vec<RankStepSummary>,
    /// Every rank's odd steps (`anomalies`), rank by rank.
    pub step_anomalies: Vec<crate::anomalies::StepAnomaly>,
    pub collectives: Vec<Collective>,
    pub temporal_breakdown: Vec<TemporalBreakdown>,
    pub kernel_breakdown: Vec<KernelBreakdown>,
    pub comm_overlap: Vec<CommOverlap>,
    pub launch_stats: Vec<LaunchStats>,
    pub queue_length: Vec<RankQueues>,
    pub memcpy_bandwidth: Vec<RankBandwidth>,
    /// Stages, schedule, bubbles and P2P of a pipeline-parallel job; null without one.
    pub pipeline: Option<crate::pipeline::PipelineReport>,
}

/// What the several-rank report is asked for beyond the alignment.
#[derive(Clone, Debug, Default)]
pub struct RankOptions {
    /// How each rank's steps are found (`--steps REGEX`).
    pub steps: StepRule,
    pub straggler: StragglerParams,
    /// How microbatch ranges are named (`--microbatches REGEX`).
    pub microbatches: crate::pipeline::microbatch::MicrobatchRule,
}

/// The report over `traces` (source path, store), in any order: ranks are identified
/// (`identity`), sorted, aligned by `how`, and analysed.
pub fn multi_rank_report(traces: &[(&str, &Store)], how: Alignment, top: usize) -> MultiRankReport {
    multi_rank_report_with(traces, how, top, &RankOptions::default())
}

/// `multi_rank_report` with the steps found by `opts.steps`.
pub fn multi_rank_report_with(
    traces: &[(&str, &Store)],
    how: Alignment,
    top: usize,
    opts: &RankOptions,
) -> MultiRankReport {
    let stores: Vec<&Store> = traces.iter().map(|t| t.1).collect();
    let sources: Vec<&str> = traces.iter().map(|t| t.0).collect();
    let ids = identify_ranks(&stores, &sources);
    let mut order: Vec<usize> = (0..traces.len()).collect();
    order.sort_by_key(|&i| ids[i].rank);
    let rank_steps: Vec<Vec<crate::steps::Step>> =
        order.par_iter().map(|&i| super::rank_steps(traces[i].1, &opts.steps)).collect();
    let ranks: Vec<RankTrace> = order
        .iter()
        .zip(&rank_steps)
        .map(|(&i, steps)| RankTrace { rank: ids[i].rank, source: traces[i].0, store: traces[i].1, steps })
        .collect();
    let mut alignment = align(&ranks, how);
    let pipeline = crate::pipeline::analyze(&ranks, &opts.microbatches).map(|p| p.report);
    let collectives = match_collectives(&ranks, &alignment.offsets_ns);
    let mut steps = step_table(&ranks, &collectives);
    let max_skew = collectives.iter().map(|c| c.skew_ns).max();
    if let (Some(res), Some(skew)) = (alignment.residual_ns, max_skew) {
        if res > skew {
            alignment.refused = Some(format!(
                "the clocks are not aligned well enough to compare the ranks: after {} alignment the matched \
                 collectives still end {} apart (median), more than the largest skew it would report ({}); \
                 skews, waits and stragglers are withheld (try --align collective)",
                alignment.used.as_str(),
                fmt_ns(res),
                fmt_ns(skew)
            ));
        }
    }
    let st = if alignment.refused.is_some() {
        super::straggler::StragglerReport {
            median_step_ns: 0,
            threshold_ns: 0,
            by_step: Vec::new(),
            stragglers: Vec::new(),
            pattern: StragglerPattern::None,
        }
    } else {
        find_stragglers(&ranks, &collectives, &mut steps, &opts.straggler)
    };
    // the per-rank tables are independent: one rank per core (64 ranks must stay quick)
    let per_rank: Vec<PerRank> = ranks
        .par_iter()
        .map(|r| {
            let report = crate::report::report_with(r.store, top, &opts.steps, Default::default());
            PerRank {
                temporal: temporal_breakdown(r.rank, &report.gpus),
                overlap: comm_overlap(r.rank, &report.gpus),
                report,
                kernels: kernel_breakdown(r.rank, r.store, 0.8),
                launch: launch_stats(r.rank, r.store, &LaunchParams::default()),
                queues: RankQueues { rank: r.rank, streams: queue_length(r.store) },
                bandwidth: RankBandwidth { rank: r.rank, copies: memcpy_bandwidth(r.store) },
            }
        })
        .collect();
    let mut out = MultiRankReport {
        ranks: Vec::with_capacity(ranks.len()),
        rank_summary: rank_summaries(&ranks, &steps),
        step_anomalies: ranks
            .iter()
            .flat_map(|r| crate::anomalies::step_anomalies(r.store, r.steps, Some(r.rank), crate::anomalies::DEFAULT_K))
            .collect(),
        steps,
        stragglers: st.stragglers,
        straggler_steps: st.by_step,
        straggler_pattern: st.pattern,
        median_step_ns: st.median_step_ns,
        straggler_threshold_ns: st.threshold_ns,
        collectives,
        temporal_breakdown: Vec::new(),
        kernel_breakdown: Vec::new(),
        comm_overlap: Vec::new(),
        launch_stats: Vec::new(),
        queue_length: Vec::new(),
        memcpy_bandwidth: Vec::new(),
        alignment: alignment.clone(),
        pipeline,
    };
    for (((&i, r), &offset_ns), p) in order.iter().zip(&ranks).zip(&alignment.offsets_ns).zip(per_rank) {
        out.ranks.push(RankEntry {
            rank: r.rank,
            source: r.source.to_string(),
            rank_from: ids[i].from,
            pid: super::identity::rank_process(r.store),
            devices: super::identity::rank_devices(r.store),
            offset_ns,
            gpus: p.report.gpus.clone(),
            report: p.report,
        });
        out.temporal_breakdown.push(p.temporal);
        out.kernel_breakdown.push(p.kernels);
        out.comm_overlap.push(p.overlap);
        out.launch_stats.push(p.launch);
        out.queue_length.push(p.queues);
        out.memcpy_bandwidth.push(p.bandwidth);
    }
    out
}

struct PerRank {
    report: Report,
    temporal: TemporalBreakdown,
    kernels: KernelBreakdown,
    overlap: CommOverlap,
    launch: LaunchStats,
    queues: RankQueues,
    bandwidth: RankBandwidth,
}

fn ms(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

pub fn to_text(r: &MultiRankReport) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{} ranks", r.ranks.len());
    for e in &r.ranks {
        let busy: i64 = e.gpus.iter().map(|g| g.busy_ns).sum();
        let idle: i64 = e.gpus.iter().map(|g| g.idle_ns).sum();
        let _ = writeln!(
            o,
            "  rank {:<4} {} (rank from {}) offset {}  GPU busy {} idle {}",
            e.rank,
            e.source,
            e.rank_from.as_str(),
            fmt_ns(e.offset_ns),
            fmt_ns(busy),
            fmt_ns(idle)
        );
    }
    let a = &r.alignment;
    let _ = writeln!(o, "\nAlignment: {} ({})", a.used.as_str(), a.basis);
    if let Some(why) = &a.fallback_reason {
        let _ = writeln!(o, "  {} not applicable: {why}", a.requested.as_str());
    }
    if let Some(res) = a.residual_ns {
        let _ = writeln!(o, "  residual {} (median spread of matched collective ends after alignment)", fmt_ns(res));
    }
    if let Some(why) = &a.refused {
        let _ = writeln!(o, "  REFUSED: {why}");
    }
    if !r.steps.is_empty() {
        let src = r.ranks.first().and_then(|e| e.report.steps.first()).map(|s| s.source.as_str()).unwrap_or("-");
        let _ = writeln!(
            o,
            "\nSteps ({src}; ms): step, rank, dur, compute, comm, exposed comm, idle, wait, exposed wait, score"
        );
        for s in &r.steps {
            for (k, p) in s.per_rank.iter().enumerate() {
                let mark = match (s.straggler == Some(p.rank), s.straggler_kind) {
                    (true, Some(k)) => format!("  ← straggler ({})", k.as_str()),
                    _ => String::new(),
                };
                let _ = writeln!(
                    o,
                    "  {:<18} {:>4} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>5.2}{mark}",
                    if k == 0 { s.name.as_str() } else { "" },
                    p.rank,
                    ms(p.dur_ns),
                    ms(p.compute_ns),
                    ms(p.comm_ns),
                    ms(p.exposed_comm_ns),
                    ms(p.idle_ns),
                    ms(p.wait_ns),
                    ms(p.exposed_wait_ns),
                    p.score
                );
            }
            if let Some(max) = s.collective_skew_ns.iter().max() {
                let _ =
                    writeln!(o, "  {:<18} {} collectives, max skew {}", "", s.collective_skew_ns.len(), fmt_ns(*max));
            }
        }
    }
    let pattern = match r.straggler_pattern {
        StragglerPattern::None => "",
        StragglerPattern::Fixed => " fixed (always the same rank)",
        StragglerPattern::Rotating => " rotating (several ranks)",
    };
    let _ = writeln!(o, "\nStragglers:{pattern}");
    if r.alignment.refused.is_some() {
        let _ = writeln!(o, "  not computed: the alignment was refused (above)");
    } else if r.stragglers.is_empty() {
        let _ = writeln!(
            o,
            "  none (threshold: others' exposed wait on a rank, less its own, ≥ {})",
            fmt_ns(r.straggler_threshold_ns)
        );
    }
    for s in &r.straggler_steps {
        let _ = writeln!(o, "  {}", s.evidence);
    }
    if !r.step_anomalies.is_empty() {
        let _ = writeln!(o, "\nStep anomalies (median + MAD, per rank):");
        for a in &r.step_anomalies {
            let _ = writeln!(o, "  {}", a.evidence);
        }
    }
    if !r.rank_summary.is_empty() {
        let _ = writeln!(o, "\nPer rank across steps (median / p90 / max):");
        for s in &r.rank_summary {
            let _ = writeln!(
                o,
                "  rank {:<4} step {} / {} / {}   wait {} / {} / {}",
                s.rank,
                fmt_ns(s.step_time.median_ns),
                fmt_ns(s.step_time.p90_ns),
                fmt_ns(s.step_time.max_ns),
                fmt_ns(s.wait.median_ns),
                fmt_ns(s.wait.p90_ns),
                fmt_ns(s.wait.max_ns)
            );
        }
    }
    if let Some(p) = &r.pipeline {
        o.push_str(&crate::pipeline::text::to_text(p));
    }
    let _ = writeln!(o, "\nTemporal breakdown (HTA): compute / non-compute / idle of the GPU window");
    for (t, c) in r.temporal_breakdown.iter().zip(&r.comm_overlap) {
        let _ = writeln!(
            o,
            "  rank {:<4} {:.1}% / {:.1}% / {:.1}%   comm under compute {:.1}%",
            t.rank, t.compute_pct, t.non_compute_pct, t.idle_pct, c.overlap_pct
        );
    }
    let _ = writeln!(o, "\nKernel time by type:");
    for k in &r.kernel_breakdown {
        let parts: Vec<String> =
            k.types.iter().map(|t| format!("{} {} ({:.1}%)", t.kind, fmt_ns(t.total_ns), t.pct)).collect();
        let _ = writeln!(o, "  rank {:<4} {}", k.rank, parts.join(", "));
    }
    let _ = writeln!(o, "\nLaunches: paired, delay median / p90 / max, short kernels, delay outliers");
    for l in &r.launch_stats {
        let _ = writeln!(
            o,
            "  rank {:<4} {} launches, delay {} / {} / {}, {} under {}, {} delays over {}",
            l.rank,
            l.paired,
            fmt_ns(l.launch_delay.median_ns),
            fmt_ns(l.launch_delay.p90_ns),
            fmt_ns(l.launch_delay.max_ns),
            l.short_kernels,
            fmt_ns(l.params.short_kernel_ns),
            l.launch_delay_outliers,
            fmt_ns(l.params.launch_delay_cutoff_ns)
        );
    }
    o
}
