//! `strobe report` over several ranks: every single-trace report, plus the rank–step table,
//! the collectives, the stragglers with their evidence and the HTA-parity tables, as data
//! (JSON) and as text.

use super::align::{align_digests, Alignment, RankAlignment};
use super::breakdown::{
    comm_overlap, kernel_breakdown_of, temporal_breakdown, CommOverlap, KernelBreakdown, TemporalBreakdown,
};
use super::collectives::{match_digests, Collective};
use super::digest::{digest_with, RankDigest};
use super::identity::{identify, identify_ranks, RankFrom};
use super::launch::LaunchStats;
use super::memcpy_bandwidth::BandwidthSeries;
use super::queue::QueueSeries;
use super::step_table::{rank_summaries_of, step_table_of, RankStepSummary, StepRow};
use super::straggler::{find_stragglers_of, StepStraggler, Straggler, StragglerParams, StragglerPattern};
use super::RankTrace;
use crate::efficiency::PeakOverride;
use crate::figures::TraceFigures;
use crate::gpu_time::GpuTime;
use crate::pipeline::Pipeline;
use crate::report::{fmt_ns, Report};
use crate::steps::StepRule;
use rayon::prelude::*;
use serde::Serialize;
use std::fmt::Write;
use strobe_store::timing::Phase;
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
    /// Where its steps came from (`profiler_step`, `nvtx`, …), if it has steps.
    #[serde(skip)]
    pub steps_from: Option<String>,
    /// The single-trace report of this rank, as `strobe report FILE` gives it but for its
    /// `step_breakdown` (the several-rank report's own lists every rank's); absent in a report
    /// merged from summaries (open the rank's trace for it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<Report>,
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
    /// Every rank's steps split into the attribution's parts, rank by rank.
    pub step_breakdown: Vec<crate::attribution::StepBreakdown>,
    /// The job's process groups, merged from every rank's `distributedInfo.pg_config`.
    pub process_groups: Vec<super::groups::ProcessGroup>,
    /// Every group's collectives matched within the group, with bytes and bandwidth.
    pub group_collectives: Vec<super::group_match::GroupCollective>,
    /// Bus bandwidth per group, collective kind and size class.
    pub comm_groups: Vec<super::comm_groups::CommGroupRow>,
    /// Groups moving bytes well under their peers with nobody late.
    pub slow_links: Vec<super::comm_groups::SlowLink>,
    /// What could not be read or matched about groups and collectives.
    pub comm_notes: Vec<String>,
}

/// What the several-rank report is asked for beyond the alignment.
#[derive(Clone, Debug, Default)]
pub struct RankOptions {
    /// How each rank's steps are found (`--steps REGEX`).
    pub steps: StepRule,
    pub straggler: StragglerParams,
    /// How microbatch ranges are named (`--microbatches REGEX`).
    pub microbatches: crate::pipeline::microbatch::MicrobatchRule,
    /// The links' one-way speed in GB/s, where the device name does not tell (`--link-gbps`).
    pub link_gbps: Option<f64>,
}

/// The report over `traces` (source path, store), in any order: ranks are identified
/// (`identity`), sorted, aligned by `how`, and analysed.
pub fn multi_rank_report(traces: &[(&str, &Store)], how: Alignment, top: usize) -> MultiRankReport {
    multi_rank_report_with(traces, how, top, &RankOptions::default())
}

/// `multi_rank_report` with the steps found by `opts.steps`: each rank's single-trace report
/// and digest (`digest`), in parallel, then `merge_digests` on the digests.
pub fn multi_rank_report_with(
    traces: &[(&str, &Store)],
    how: Alignment,
    top: usize,
    opts: &RankOptions,
) -> MultiRankReport {
    let ids = ranks_of(traces);
    // the per-rank work is independent: one rank per core (64 ranks must stay quick)
    let parts: Vec<RankParts> = (0..traces.len())
        .into_par_iter()
        .map(|i| rank_parts(ids[i].rank, traces[i].0, traces[i].1, top, opts))
        .collect();
    multi_rank_report_from_parts(traces, parts, how, top, opts)
}

/// The several-rank report over traces whose figures are already kept (the viewer's), with
/// the pipeline they form: each rank's parts read its figures, and no rank's single-trace
/// report is made (the viewer shows each trace's own figures).
pub fn multi_rank_analysis(
    traces: &[(&str, &Store, &TraceFigures)],
    how: Alignment,
    opts: &RankOptions,
) -> (MultiRankReport, Option<Pipeline>) {
    let pairs: Vec<(&str, &Store)> = traces.iter().map(|t| (t.0, t.1)).collect();
    let ids = ranks_of(&pairs);
    // a clone shares the viewer's figures: the steps' attributions are copied from them, not moved
    let parts_of =
        |i: usize, rank: i64| rank_parts_of(rank, traces[i].0, traces[i].1, &mut traces[i].2.clone(), None, opts);
    let parts: Vec<RankParts> = (0..traces.len()).into_par_iter().map(|i| parts_of(i, ids[i].rank)).collect();
    merge_parts(&pairs, parts, how, opts, &parts_of)
}

/// What one rank contributes to the several-rank report, found from its store alone: its
/// digest, single-trace report, queue lengths, copy bandwidth and the steps the digest was
/// made from. A caller that loads the ranks one by one can make each rank's parts as soon as
/// its store is ready (`rank_parts`), while the others still load.
pub struct RankParts {
    rank: i64,
    digest: RankDigest,
    report: Option<Report>,
    queues: RankQueues,
    bandwidth: RankBandwidth,
    steps: Vec<crate::steps::Step>,
}

/// Rank `rank`'s parts (`rank` as `identify_ranks` will name it; parts made under another
/// number are made again by `multi_rank_report_from_parts`). Its figures are found for the
/// parts alone and let go with them.
pub fn rank_parts(rank: i64, source: &str, store: &Store, top: usize, opts: &RankOptions) -> RankParts {
    let mut figs = TraceFigures::new(opts.steps.clone(), PeakOverride::default());
    rank_parts_of(rank, source, store, &mut figs, Some(top), opts)
}

/// Rank `rank`'s parts from its figures (found by `opts.steps`), with its single-trace report
/// of `top` kernels, or none.
fn rank_parts_of(
    rank: i64,
    source: &str,
    store: &Store,
    figs: &mut TraceFigures,
    top: Option<usize>,
    opts: &RankOptions,
) -> RankParts {
    // the queues and copies are scans of their own: beside the report, not after it
    let ((mut digest, report, steps, kept), (streams, copies)) = rayon::join(
        || digest_and_report(rank, source, store, figs, top, opts),
        || {
            let _t = Phase::start("ranks: queues, copy bandwidth");
            rayon::join(|| figs.queue_summary(store).to_vec(), || figs.copy_bandwidth(store).to_vec())
        },
    );
    add_attribution(&mut digest, store, figs, &kept, &steps);
    let (queues, bandwidth) = (RankQueues { rank, streams }, RankBandwidth { rank, copies });
    RankParts { rank, digest, report, queues, bandwidth, steps }
}

/// Each trace's rank, from what the traces claim together (`identify_ranks`).
fn ranks_of(traces: &[(&str, &Store)]) -> Vec<super::identity::RankIdentity> {
    let stores: Vec<&Store> = traces.iter().map(|t| t.1).collect();
    let sources: Vec<&str> = traces.iter().map(|t| t.0).collect();
    identify_ranks(&stores, &sources)
}

/// `multi_rank_report_with` from each trace's parts already made (in the order of `traces`).
pub fn multi_rank_report_from_parts(
    traces: &[(&str, &Store)],
    parts: Vec<RankParts>,
    how: Alignment,
    top: usize,
    opts: &RankOptions,
) -> MultiRankReport {
    let remake = |i: usize, rank: i64| rank_parts(rank, traces[i].0, traces[i].1, top, opts);
    merge_parts(traces, parts, how, opts, &remake).0
}

/// The report from each trace's parts (in the order of `traces`), and the pipeline the
/// ranks form; `remake(i, rank)` makes trace `i`'s parts again under another rank number.
fn merge_parts(
    traces: &[(&str, &Store)],
    parts: Vec<RankParts>,
    how: Alignment,
    opts: &RankOptions,
    remake: &(dyn Fn(usize, i64) -> RankParts + Sync),
) -> (MultiRankReport, Option<Pipeline>) {
    let ids = ranks_of(traces);
    // a part made under another rank number than the traces together give (two traces
    // claiming one rank fall back to their order) is made again under the right one
    let per_rank: Vec<RankParts> = parts
        .into_par_iter()
        .enumerate()
        .map(|(i, p)| if p.rank == ids[i].rank { p } else { remake(i, ids[i].rank) })
        .collect();
    let mut extras: Vec<Option<(Option<Report>, RankQueues, RankBandwidth)>> = Vec::with_capacity(per_rank.len());
    let mut digests = Vec::with_capacity(per_rank.len());
    let mut steps: Vec<Vec<crate::steps::Step>> = Vec::with_capacity(per_rank.len());
    for p in per_rank {
        digests.push(p.digest);
        extras.push(Some((p.report, p.queues, p.bandwidth)));
        steps.push(p.steps);
    }
    let t = Phase::start("ranks: merge");
    let (mut out, order, attribution) = merge(digests, how, opts);
    drop(t);
    // what only a whole store gives: the single-trace report, queues, copy bandwidth, and
    // the pipeline (its microbatches are read from the ranks' spans)
    for (e, &i) in out.ranks.iter_mut().zip(&order) {
        if let Some((report, q, b)) = extras[i].take() {
            e.report = report;
            out.queue_length.push(q);
            out.memcpy_bandwidth.push(b);
        }
    }
    // the steps each rank's digest was made from (not found again), in the merged order
    let ranks: Vec<RankTrace> = order
        .iter()
        .zip(&out.ranks)
        .map(|(&i, e)| RankTrace { rank: e.rank, source: traces[i].0, store: traces[i].1, steps: &steps[i] })
        .collect();
    let _t = Phase::start("ranks: pipeline");
    let pipeline = crate::pipeline::analyze(&ranks, &opts.microbatches);
    out.pipeline = pipeline.as_ref().map(|p| p.report.clone());
    out.step_breakdown = crate::attribution::ranks::step_breakdowns(attribution, &|rank, step| match &pipeline {
        Some(p) => crate::attribution::ranks::bubble_of(p, rank, step),
        None => Vec::new(),
    });
    (out, pipeline)
}

/// Each trace's digest (in the order given) and identity: the per-rank half of the report,
/// what `strobe summarize` writes. The per-device figures are those of the rank's
/// single-trace report, as in `multi_rank_report_with`.
pub fn rank_digests(traces: &[(&str, &Store)], opts: &RankOptions) -> Vec<(RankDigest, super::identity::RankIdentity)> {
    let ids = ranks_of(traces);
    (0..traces.len())
        .into_par_iter()
        .map(|i| {
            let (source, store) = traces[i];
            let mut figs = TraceFigures::new(opts.steps.clone(), PeakOverride::default());
            let (mut d, _, steps, kept) = digest_and_report(ids[i].rank, source, store, &figs, None, opts);
            add_attribution(&mut d, store, &mut figs, &kept, &steps);
            (d, ids[i].clone())
        })
        .collect()
}

/// One rank's digest, its single-trace report of `top` kernels (None: no report), the steps
/// the digest was made from and which of the figures' steps they are, all from the rank's
/// figures: the steps, the GPU unions and, on the same steps, the step anomalies are found
/// once for both. The steps' attribution is made here but added by `add_attribution`, once
/// nothing else reads the figures.
fn digest_and_report(
    rank: i64,
    source: &str,
    store: &Store,
    figs: &TraceFigures,
    top: Option<usize>,
    opts: &RankOptions,
) -> (RankDigest, Option<Report>, Vec<crate::steps::Step>, Vec<usize>) {
    let report = top.map(|top| crate::report::rank_report_from(store, figs, top));
    let found = figs.steps(store);
    let kept = super::distinct_step_indices(found);
    let steps: Vec<crate::steps::Step> = kept.iter().map(|&i| found[i].clone()).collect();
    let gpus = figs.gpus(store);
    let anomalies = (steps == found).then(|| figs.step_anomalies(store));
    let r = RankTrace { rank, source, store, steps: &steps };
    let _t = Phase::start("ranks: digest");
    let d = digest_with(&r, &gpus, opts.straggler.top_kernels, &figs.activity(store).unions, anomalies);
    drop(_t);
    if kept.len() == found.len() {
        // every step is kept: the figures' own attribution, made here beside the other scans
        rayon::join(|| figs.step_attributions(store), || figs.critical_paths(store));
    }
    (d, report, steps, kept)
}

/// The attribution and critical path of `steps` (the figures' steps `kept`) into the digest.
fn add_attribution(
    d: &mut RankDigest,
    store: &Store,
    figs: &mut TraceFigures,
    kept: &[usize],
    steps: &[crate::steps::Step],
) {
    let (attributed, paths) = rank_attribution_of(store, figs, kept, steps);
    (d.step_breakdown, d.step_stretches) = attributed.into_iter().map(|a| (a.breakdown, a.stretches)).unzip();
    for (b, path) in d.step_breakdown.iter_mut().zip(paths) {
        b.critical_path = path;
    }
}

/// The attribution and critical path of `steps`, the figures' steps `kept`: the figures' own
/// where they have made them (moved out where every step is kept and nothing shares them, else
/// copied), so a rank's are found once for its report and its digest; else found for the kept
/// steps alone.
fn rank_attribution_of(
    store: &Store,
    figs: &mut TraceFigures,
    kept: &[usize],
    steps: &[crate::steps::Step],
) -> (Vec<crate::attribution::breakdown::StepAttribution>, Vec<Option<crate::attribution::CriticalPath>>) {
    use crate::attribution::{breakdown, critical_path};
    let every = kept.len() == figs.steps(store).len();
    if every {
        if let Some((mut attributed, paths)) = figs.take_attribution() {
            breakdown::add_overlap_notes(steps, &mut attributed);
            return (attributed, paths);
        }
    }
    let mut attributed = match figs.step_attributions_ready() {
        Some(all) => kept.iter().map(|&i| all[i].clone()).collect(),
        None if every => figs.step_attributions(store).to_vec(),
        None => breakdown::attribute(store, figs, steps),
    };
    // the notes on overlapping steps are of the kept steps among themselves
    breakdown::add_overlap_notes(steps, &mut attributed);
    let paths = match figs.critical_paths_ready() {
        Some(all) => kept.iter().map(|&i| all[i].clone()).collect(),
        None if every => figs.critical_paths(store).to_vec(),
        None => critical_path::of_steps(store, steps).into_iter().map(Result::ok).collect(),
    };
    (attributed, paths)
}

/// The several-rank report from the ranks' digests alone (in any order; from `digest`, or read
/// back from summaries): identity, alignment, collectives, the rank–step table, stragglers and
/// the HTA tables, figure for figure as `multi_rank_report_with` gives them on the traces. What
/// a digest does not hold is left out: each rank's single-trace `report`, the queue lengths and
/// the copy bandwidth series.
pub fn merge_digests(digests: Vec<RankDigest>, how: Alignment, opts: &RankOptions) -> MultiRankReport {
    let (mut out, _, attribution) = merge(digests, how, opts);
    out.step_breakdown = crate::attribution::ranks::step_breakdowns(attribution, &|_, _| Vec::new());
    out
}

/// `merge_digests` but for its `step_breakdown`, with the index given of each rank of the
/// report, in its order, and each rank's attribution, for the caller to make the step
/// breakdown from (`merge_parts` with a pipeline's bubbles).
fn merge(
    digests: Vec<RankDigest>,
    how: Alignment,
    opts: &RankOptions,
) -> (MultiRankReport, Vec<usize>, Vec<crate::attribution::ranks::RankAttribution>) {
    let claims: Vec<super::digest::RankClaim> = digests.iter().map(|d| d.claim.clone()).collect();
    let sources: Vec<&str> = digests.iter().map(|d| d.source.as_str()).collect();
    let ids = identify(&claims, &sources);
    let mut order: Vec<usize> = (0..digests.len()).collect();
    order.sort_by_key(|&i| ids[i].rank);
    let mut slots: Vec<Option<RankDigest>> = digests.into_iter().map(Some).collect();
    let mut ranks: Vec<RankDigest> = order
        .iter()
        .filter_map(|&i| {
            let mut d = slots[i].take()?;
            d.rank = ids[i].rank;
            Some(d)
        })
        .collect();
    let mut alignment = align_digests(&ranks, how);
    let collectives = match_digests(&ranks, &alignment.offsets_ns);
    let mut steps = step_table_of(&ranks, &collectives);
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
        find_stragglers_of(&ranks, &collectives, &mut steps, &opts.straggler)
    };
    let numbers: Vec<i64> = ranks.iter().map(|r| r.rank).collect();
    let attribution = rank_attribution(&mut ranks, &collectives, alignment.refused.is_some());
    let comm = group_figures(&ranks, &alignment.offsets_ns, opts.link_gbps);
    let mut out = MultiRankReport {
        ranks: Vec::with_capacity(ranks.len()),
        rank_summary: rank_summaries_of(&numbers, &steps),
        step_anomalies: ranks
            .iter()
            .flat_map(|r| r.step_anomalies.iter().map(|a| crate::anomalies::with_rank(a.clone(), Some(r.rank))))
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
        // from the ranks' spans, not their digests: `multi_rank_report_with` fills it in
        pipeline: None,
        // made by the callers from `attribution`, with a pipeline's bubbles where there is one
        step_breakdown: Vec::new(),
        process_groups: comm.groups,
        group_collectives: comm.instances,
        comm_groups: comm.rows,
        slow_links: comm.slow,
        comm_notes: comm.notes,
    };
    for ((&i, r), &offset_ns) in order.iter().zip(ranks).zip(&alignment.offsets_ns) {
        out.temporal_breakdown.push(temporal_breakdown(r.rank, &r.gpus));
        out.comm_overlap.push(comm_overlap(r.rank, &r.gpus));
        out.kernel_breakdown.push(kernel_breakdown_of(r.rank, &r.kernels, 0.8));
        out.launch_stats.push(LaunchStats { rank: r.rank, ..r.launch });
        out.ranks.push(RankEntry {
            rank: r.rank,
            source: r.source,
            rank_from: ids[i].from,
            pid: r.pid,
            devices: r.devices,
            offset_ns,
            gpus: r.gpus,
            steps_from: r.steps.first().map(|s| s.source.as_str().to_string()),
            report: None,
        });
    }
    (out, order, attribution)
}

/// Each rank's breakdowns taken from its digest, with its waits for late peers (none where the
/// clocks could not be aligned: then no wait is known and exposed comm stays transfer).
fn rank_attribution(
    ranks: &mut [RankDigest],
    collectives: &[super::collectives::Collective],
    refused: bool,
) -> Vec<crate::attribution::ranks::RankAttribution> {
    let waits = match refused {
        false => crate::attribution::ranks::peer_waits(ranks, collectives),
        true => vec![Vec::new(); ranks.len()],
    };
    ranks
        .iter_mut()
        .zip(waits)
        .map(|(r, waits)| crate::attribution::ranks::RankAttribution {
            rank: r.rank,
            steps: std::mem::take(&mut r.step_breakdown)
                .into_iter()
                .map(|mut b| {
                    if refused && b.parts.comm_transfer_ns > 0 {
                        b.notes.push(
                            "the ranks' clocks could not be aligned: no wait for a peer is known, exposed comm counts as transfer"
                                .into(),
                        );
                    }
                    b
                })
                .collect(),
            stretches: std::mem::take(&mut r.step_stretches),
            waits,
        })
        .collect()
}

/// What the report says about process groups and bandwidth.
struct GroupFigures {
    groups: Vec<super::groups::ProcessGroup>,
    instances: Vec<super::group_match::GroupCollective>,
    rows: Vec<super::comm_groups::CommGroupRow>,
    slow: Vec<super::comm_groups::SlowLink>,
    notes: Vec<String>,
}

/// The groups the ranks declare, their collectives matched within each group, the bandwidth
/// table and the slow links, over `ranks` in rank order with their alignment offsets.
fn group_figures(ranks: &[RankDigest], offsets_ns: &[i64], link_gbps: Option<f64>) -> GroupFigures {
    let declared: Vec<Vec<super::groups::ProcessGroup>> = ranks.iter().map(|r| r.comm_records.groups.clone()).collect();
    let open: Vec<i64> = ranks.iter().map(|r| r.rank).collect();
    let (groups, mut notes) = super::groups::job_groups(&declared, &open);
    for r in ranks {
        notes.extend(r.comm_records.notes.iter().map(|n| format!("rank {}: {n}", r.rank)));
    }
    let (instances, match_notes) = super::group_match::match_groups(ranks, offsets_ns, &groups);
    notes.extend(match_notes);
    let bare: Vec<i64> =
        ranks.iter().filter(|r| r.comm_records.ops.is_empty() && !r.comm.is_empty()).map(|r| r.rank).collect();
    if !bare.is_empty() {
        notes.push(format!(
            "ranks {bare:?}: NCCL kernels with no record of their group or size (no record_param_comms, no kernel \
             args: e.g. an Nsight Systems export): their bytes and bandwidth are unknown"
        ));
    }
    let (rows, slow) = super::comm_groups::comm_groups(&instances, ranks, &groups, link_gbps);
    GroupFigures { groups, instances, rows, slow, notes }
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
            // the rank's identity line: its whole trace (the per-step table below covers the steps)
            "  rank {:<4} {} (rank from {}) offset {}  whole trace: GPU busy {} idle {}",
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
        let src = r.ranks.first().and_then(|e| e.steps_from.as_deref()).unwrap_or("-");
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
    crate::attribution::text::write(&mut o, &r.step_breakdown);
    o.push_str(&super::comm_text::to_text(r));
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
