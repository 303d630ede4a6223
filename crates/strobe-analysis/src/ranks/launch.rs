//! CUDA launch statistics (HTA `get_cuda_kernel_launch_stats`): each GPU op paired with the
//! CPU call that launched it (the correlation flow the importer binds), its CPU duration, its
//! GPU duration and its **launch delay** = GPU start − launch-call end.
//!
//! Differences from HTA, deliberately: HTA pairs only `cudaLaunchKernel`, `cudaMemcpyAsync`
//! and `cudaMemsetAsync`; Strobe pairs any CUDA runtime or driver call the trace links to GPU
//! work (`cuLaunchKernel`, `cudaLaunchKernelExC`, …), so the counts can be higher. HTA calls a
//! kernel short when it ran shorter than its launch call (`shorter_than_launch` here); Strobe
//! also counts kernels under a fixed `short_kernel_ns` (10 µs), which does not depend on how
//! slow the CPU was. The outlier cutoffs are HTA's: launch calls over 50 µs, delays over 100 µs.

use super::distribution::Distribution;
use crate::gpu_time::Classifier;
use serde::Serialize;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct LaunchParams {
    pub short_kernel_ns: i64,
    pub runtime_cutoff_ns: i64,
    pub launch_delay_cutoff_ns: i64,
}

impl Default for LaunchParams {
    fn default() -> Self {
        LaunchParams { short_kernel_ns: 10_000, runtime_cutoff_ns: 50_000, launch_delay_cutoff_ns: 100_000 }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LaunchPair {
    pub gpu_span: u32,
    pub launch_span: u32,
    pub device: i64,
    pub stream: i64,
    pub gpu_start_ns: i64,
    pub gpu_dur_ns: i64,
    pub launch_start_ns: i64,
    pub launch_dur_ns: i64,
    pub launch_delay_ns: i64,
}

/// Every GPU op (kernel, memcpy, memset) of `store` whose launch call the trace links, in
/// GPU start order.
pub fn launch_pairs(store: &Store) -> Vec<LaunchPair> {
    // room for every GPU op at once: grown by doubling, a million pairs were copied into
    // fresh pages again and again
    let mut out = Vec::with_capacity(gpu_op_count(store));
    for_each_launch_pair(store, |p| out.push(p));
    out.sort_by_key(|p| (p.gpu_start_ns, p.gpu_span));
    out
}

/// The members of every GPU stream lane: at least the GPU ops that can pair.
fn gpu_op_count(store: &Store) -> usize {
    store
        .lanes
        .iter()
        .enumerate()
        .filter(|(_, d)| matches!(d.kind, LaneKind::GpuStream { .. }))
        .map(|(l, _)| store.lane_spans(l as u32).span.len())
        .sum()
}

/// Calls `f` with every pair `launch_pairs` holds, lane by lane: for figures that do not
/// depend on the order (sorting a million pairs was a tenth of a several-rank nsys report).
fn for_each_launch_pair(store: &Store, mut f: impl FnMut(LaunchPair)) {
    let launches = store.launch_table();
    let mut classes = Classifier::new(store);
    for (lane, desc) in store.lanes.iter().enumerate() {
        let LaneKind::GpuStream { device, stream } = desc.kind else { continue };
        let v = store.lane_spans(lane as u32);
        for (k, &sid) in v.span.iter().enumerate() {
            let m = store.span_meta(sid);
            if classes.class(SpanKind::from_u8(m.kind), m.name).is_none() {
                continue;
            }
            let Some(l) = launches.get(sid) else { continue };
            if !matches!(store.span_kind(l), SpanKind::CudaRuntime | SpanKind::CudaDriver) {
                continue;
            }
            let (ls, le) = (store.span_start(l), store.span_end(l));
            f(LaunchPair {
                gpu_span: sid,
                launch_span: l,
                device,
                stream,
                gpu_start_ns: v.starts[k],
                gpu_dur_ns: v.ends[k] - v.starts[k],
                launch_start_ns: ls,
                launch_dur_ns: le - ls,
                launch_delay_ns: v.starts[k] - le,
            });
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct LaunchOutlier {
    pub name: String,
    pub gpu_start_ns: i64,
    pub value_ns: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct LaunchStats {
    pub rank: i64,
    pub params: LaunchParams,
    pub paired: usize,
    pub cpu_duration: Distribution,
    pub gpu_duration: Distribution,
    pub launch_delay: Distribution,
    pub mean_launch_delay_ns: i64,
    /// Kernels shorter than `short_kernel_ns`.
    pub short_kernels: usize,
    /// HTA's "short": the GPU op ran shorter than its launch call took.
    pub shorter_than_launch: usize,
    pub runtime_outliers: usize,
    pub launch_delay_outliers: usize,
    /// The longest launch delays (up to 10).
    pub worst_delays: Vec<LaunchOutlier>,
}

pub fn launch_stats(rank: i64, store: &Store, params: &LaunchParams) -> LaunchStats {
    // one pass over the pairs, keeping only the three durations each, in 4 bytes where they
    // fit (a million 56-byte pairs held at once were mostly fresh pages to zero)
    let n = gpu_op_count(store);
    let new = || super::distribution::Durations::with_capacity(n);
    let (mut delays, mut cpu, mut gpu) = (new(), new(), new());
    let (mut short_kernels, mut shorter_than_launch, mut runtime_outliers, mut launch_delay_outliers) = (0, 0, 0, 0);
    // the ten longest delays, ties in GPU start order (the key is unique: one pair a GPU op)
    let key = |p: &LaunchPair| (std::cmp::Reverse(p.launch_delay_ns), p.gpu_start_ns, p.gpu_span);
    let mut worst: Vec<LaunchPair> = Vec::with_capacity(11);
    for_each_launch_pair(store, |p| {
        delays.push(p.launch_delay_ns);
        cpu.push(p.launch_dur_ns);
        gpu.push(p.gpu_dur_ns);
        short_kernels +=
            (store.span_kind(p.gpu_span) == SpanKind::Kernel && p.gpu_dur_ns < params.short_kernel_ns) as usize;
        shorter_than_launch += (p.launch_dur_ns <= params.runtime_cutoff_ns && p.gpu_dur_ns < p.launch_dur_ns) as usize;
        runtime_outliers += (p.launch_dur_ns > params.runtime_cutoff_ns) as usize;
        launch_delay_outliers += (p.launch_delay_ns > params.launch_delay_cutoff_ns) as usize;
        if worst.len() < 10 || worst.last().is_some_and(|w| key(&p) < key(w)) {
            let at = worst.partition_point(|w| key(w) < key(&p));
            worst.insert(at, p);
            worst.truncate(10);
        }
    });
    let paired = delays.len();
    let mean_launch_delay_ns = if paired == 0 { 0 } else { delays.sum() / paired as i64 };
    LaunchStats {
        rank,
        params: *params,
        paired,
        cpu_duration: Distribution::of_durations(cpu),
        gpu_duration: Distribution::of_durations(gpu),
        launch_delay: Distribution::of_durations(delays),
        mean_launch_delay_ns,
        short_kernels,
        shorter_than_launch,
        runtime_outliers,
        launch_delay_outliers,
        worst_delays: worst
            .into_iter()
            .map(|p| LaunchOutlier {
                name: store.span_name(p.gpu_span).to_string(),
                gpu_start_ns: p.gpu_start_ns,
                value_ns: p.launch_delay_ns,
            })
            .collect(),
    }
}
