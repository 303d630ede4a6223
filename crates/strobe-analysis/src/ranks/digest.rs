//! One rank reduced to what the several-rank report needs from it: the per-rank half of
//! `report::multi_rank_report_with`. Everything here is in the rank's own clock and depends on
//! that rank alone; everything that compares ranks (identity, alignment, matching, waits,
//! stragglers) is done on digests afterwards (`report::merge_digests`). The report on raw
//! traces digests each store and merges, and so does `strobe report SUMMARY_DIR` on digests
//! read back from Parquet summaries (crate strobe-cluster): one definition for both.
//!
//! Two figures of the merge need the rank's timeline beyond its own counts, and the digest
//! keeps that much of it:
//! - the exposed wait at a collective (`exposed`) is the wait less the rank's compute during
//!   `[arrival, arrival + wait)`, where the wait depends on the other ranks (and, with clock
//!   error, can outlast the kernel): the digest keeps the rank's compute union (`compute`);
//! - the straggler's evidence (`straggler`) describes the window before a late collective:
//!   from its previous comm kernel's end (or its step's start, the later) to its arrival. The
//!   digest keeps that window's figures for every comm kernel (`CommKernel::before`).

use super::breakdown::KernelTotal;
use super::collectives::CommKernel;
use super::launch::{launch_stats, LaunchParams, LaunchStats};
use super::unions::rank_unions_of;
use super::RankTrace;
use crate::anomalies::StepAnomaly;
use crate::gpu_time::GpuTime;
use crate::steps::Step;
use serde::{Deserialize, Serialize};

/// The figures of one step on one rank that need no other rank (`step_table`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepFigures {
    pub compute_ns: i64,
    pub comm_ns: i64,
    pub exposed_comm_ns: i64,
    pub idle_ns: i64,
}

/// What a rank says about its own rank number (`identity::identify`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankClaim {
    /// `distributedInfo.rank` or the importer's equivalent.
    pub meta_rank: Option<i64>,
    /// `meta.extra["rank_from"]`: how an importer that split one report into ranks numbered them.
    pub split: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankDigest {
    /// The rank number (set by the merge's identification; the trace's own claim is `claim`).
    pub rank: i64,
    pub source: String,
    pub claim: RankClaim,
    pub pid: Option<i64>,
    pub devices: Vec<i64>,
    /// The wall-clock of the trace's zero (`meta.base_time_ns`): the recorded alignment's input.
    pub base_time_ns: Option<i64>,
    /// Per device, as the rank's `strobe report` gives them.
    pub gpus: Vec<GpuTime>,
    /// The rank's steps (`rank_steps`) and, for each, its own figures.
    pub steps: Vec<Step>,
    pub step_figures: Vec<StepFigures>,
    /// Its comm kernels, by start (`collectives::comm_kernels`).
    pub comm: Vec<CommKernel>,
    /// Its compute-kernel union over all its devices (`unions::rank_unions_of`).
    pub compute: Vec<(i64, i64)>,
    /// Every GPU activity name by class, with count and durations (`breakdown`).
    pub kernels: Vec<KernelTotal>,
    /// Its odd steps (`anomalies::step_anomalies`).
    pub step_anomalies: Vec<StepAnomaly>,
    pub launch: LaunchStats,
    /// Each of `steps` split into the attribution's parts as this rank alone gives them, and
    /// the step's stretches without GPU work (`attribution::stretches`): the merge moves their
    /// time to comm wait and pipeline bubble where other ranks say so.
    #[serde(default)]
    pub step_breakdown: Vec<crate::attribution::StepBreakdown>,
    #[serde(default)]
    pub step_stretches: Vec<Vec<crate::attribution::stretches::Stretch>>,
    /// Its collective records and declared process groups (`comm_ops`).
    #[serde(default)]
    pub comm_records: super::comm_ops::CommRecords,
}

/// The digest of `r` whose single-trace figures per device are `gpus` (`report.gpus`).
pub fn digest(r: &RankTrace, gpus: &[GpuTime], top_kernels: usize) -> RankDigest {
    digest_with(r, gpus, top_kernels, &crate::gpu_time::device_unions(r.store), None)
}

/// `digest` from the store's device unions already computed and, when the rank's figures found
/// them on the same steps, its step anomalies (named for the rank here).
pub fn digest_with(
    r: &RankTrace,
    gpus: &[GpuTime],
    top_kernels: usize,
    devices: &[crate::gpu_time::DeviceUnions],
    anomalies: Option<&[crate::anomalies::StepAnomaly]>,
) -> RankDigest {
    let store = r.store;
    let u = rank_unions_of(devices);
    let step_figures = r
        .steps
        .iter()
        .map(|s| {
            let (a, b) = (s.start_ns, s.start_ns + s.dur_ns);
            let comm = crate::intervals::total_within(&u.comm, a, b);
            StepFigures {
                compute_ns: crate::intervals::total_within(&u.compute, a, b),
                comm_ns: comm,
                exposed_comm_ns: comm - crate::intervals::total_within(&u.overlapped, a, b),
                idle_ns: s.dur_ns - crate::intervals::total_within(&u.busy, a, b),
            }
        })
        .collect();
    let comm = super::collectives::comm_kernels_with_windows(store, r.steps, &u, top_kernels);
    let step_anomalies = match anomalies {
        Some(a) => a.iter().map(|a| crate::anomalies::with_rank(a.clone(), Some(r.rank))).collect(),
        None => crate::anomalies::step_anomalies_in(store, r.steps, Some(r.rank), crate::anomalies::DEFAULT_K, &u.busy),
    };
    // the compute union is kept; the rest is freed before the launch pairs are gathered
    // `{ u }` moves the unions into a temporary: the fields not kept drop with this statement
    let compute = { u }.compute.into_owned();
    RankDigest {
        rank: r.rank,
        source: r.source.to_string(),
        claim: super::identity::claim_of(store),
        pid: super::identity::rank_process(store),
        devices: super::identity::rank_devices(store),
        base_time_ns: store.meta.base_time_ns,
        gpus: gpus.to_vec(),
        steps: r.steps.to_vec(),
        step_figures,
        comm,
        compute,
        kernels: super::breakdown::kernel_totals(store),
        step_anomalies,
        launch: launch_stats(r.rank, store, &LaunchParams::default()),
        step_breakdown: Vec::new(),
        step_stretches: Vec::new(),
        comm_records: super::comm_ops::comm_records(store),
    }
}

/// Digests of `ranks` without their single-trace report figures (`gpus` left empty): what the
/// cross-rank functions (alignment, matching, the step table, stragglers) read.
pub fn digests(ranks: &[RankTrace]) -> Vec<RankDigest> {
    use rayon::prelude::*;
    ranks.par_iter().map(|r| digest(r, &[], super::straggler::StragglerParams::default().top_kernels)).collect()
}
