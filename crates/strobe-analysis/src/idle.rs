//! Why each GPU sits idle: the gaps between its busy intervals, classified the way HTA's
//! idle-time breakdown does.
//!
//! - **kernel wait**: a gap shorter than the threshold (default 10 µs) — back-to-back work
//!   separated only by launch/scheduling overhead;
//! - **host wait**: a longer gap where the next kernel's launch call (the CUDA runtime span the
//!   correlation flow leads from) started after the previous kernel ended — the GPU waited
//!   for the CPU;
//! - **other**: a longer gap where the launch was issued in time (waits on events, syncs,
//!   other streams, the host being blocked elsewhere…).
//!
//! The gaps are those of the device's busy union (`gpu_time::device_unions`) inside its
//! window (first start to last end), so host + kernel + other = `idle_ns` of `strobe report`.
//!
//! `idle_totals_within` counts the same gaps clipped to a window (the headline's steps or
//! capture range, `headline`): a gap keeps the cause of the whole gap (its length against the
//! threshold is the whole gap's), and only its part inside the window counts. Where the window
//! reaches past the device's first or last busy interval, that stretch is no gap between two
//! GPU operations and has no launch to judge; it counts as other.

use serde::Serialize;

use crate::gpu_time::DeviceUnions;
use strobe_store::Store;

pub const DEFAULT_THRESHOLD_NS: i64 = 10_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IdleCause {
    HostWait,
    KernelWait,
    Other,
}

impl IdleCause {
    pub fn label(self) -> &'static str {
        match self {
            IdleCause::HostWait => "host wait",
            IdleCause::KernelWait => "kernel wait",
            IdleCause::Other => "other",
        }
    }

    pub fn explain(self) -> &'static str {
        match self {
            IdleCause::HostWait => {
                "the next kernel's launch call started after the previous kernel ended: the GPU waited for the CPU"
            }
            IdleCause::KernelWait => {
                "a gap shorter than the threshold: launch and scheduling overhead between back-to-back kernels"
            }
            IdleCause::Other => "the next kernel was launched in time but started late (syncs, events, other streams)",
        }
    }
}

/// One idle gap of a device: [start, end) between two busy intervals.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct IdleGap {
    pub start: i64,
    pub end: i64,
    pub cause: IdleCause,
    /// The GPU span whose end opens the gap.
    pub prev_span: u32,
    /// The GPU span whose start closes it.
    pub next_span: u32,
    /// The CPU launch call of `next_span`, where the trace links it.
    pub next_launch: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeviceIdle {
    pub device: i64,
    pub threshold_ns: i64,
    /// Every gap, in time order (kernel-wait ones included).
    pub gaps: Vec<IdleGap>,
    pub idle_ns: i64,
    pub host_wait_ns: i64,
    pub kernel_wait_ns: i64,
    pub other_ns: i64,
    /// Gaps at least `threshold_ns` long (the ones a timeline marks).
    pub long_gaps: u64,
}

impl DeviceIdle {
    pub fn pct_of_idle(&self, ns: i64) -> f64 {
        if self.idle_ns > 0 {
            ns as f64 * 100.0 / self.idle_ns as f64
        } else {
            0.0
        }
    }
}

/// The idle breakdown of every GPU in the store, sorted by device.
pub fn idle_breakdown(store: &Store, threshold_ns: i64) -> Vec<DeviceIdle> {
    idle_breakdown_of(store, &crate::gpu_time::device_unions(store), threshold_ns)
}

/// `idle_breakdown` from the device unions already computed (`gpu_time::device_unions`):
/// the gaps are those between consecutive busy intervals, so a new threshold costs no scan
/// of the GPU lanes.
pub fn idle_breakdown_of(store: &Store, unions: &[DeviceUnions], threshold_ns: i64) -> Vec<DeviceIdle> {
    breakdown(store, unions, threshold_ns, true, None)
}

/// `idle_breakdown_of` with `gaps` left empty: the totals `strobe report` prints, without a
/// record per gap (a million-kernel rank has hundreds of thousands of gaps).
pub fn idle_totals_of(store: &Store, unions: &[DeviceUnions], threshold_ns: i64) -> Vec<DeviceIdle> {
    breakdown(store, unions, threshold_ns, false, None)
}

/// `idle_totals_of` over [a, b) only: each gap clipped to it (the module's note), so
/// `idle_ns` is b − a less the busy time inside.
pub fn idle_totals_within(
    store: &Store,
    unions: &[DeviceUnions],
    threshold_ns: i64,
    (a, b): (i64, i64),
) -> Vec<DeviceIdle> {
    breakdown(store, unions, threshold_ns, false, Some((a, b)))
}

fn breakdown(
    store: &Store,
    unions: &[DeviceUnions],
    threshold_ns: i64,
    keep_gaps: bool,
    within: Option<(i64, i64)>,
) -> Vec<DeviceIdle> {
    // every gap's next span asks for its launch: the table, not a search of the flows each
    let launches = store.launch_table();
    unions
        .iter()
        .map(|u| {
            let mut d = DeviceIdle {
                device: u.device,
                threshold_ns,
                gaps: Vec::with_capacity(if keep_gaps { u.busy.len().saturating_sub(1) } else { 0 }),
                idle_ns: 0,
                host_wait_ns: 0,
                kernel_wait_ns: 0,
                other_ns: 0,
                long_gaps: 0,
            };
            let (wa, wb) = within.unwrap_or((i64::MIN, i64::MAX));
            // only the gaps that reach into the window
            let first = u.busy.partition_point(|iv| iv.1 <= wa).saturating_sub(1);
            // (the gap after the last interval starting before the window's end reaches in too)
            let last = (u.busy.partition_point(|iv| iv.0 < wb) + 1).min(u.busy.len());
            for (w, e) in u.busy[first..last].windows(2).zip(u.busy_edges[first..last].windows(2)) {
                let (ce, s) = (w[0].1, w[1].0);
                let (prev, sid) = (e[0].1, e[1].0);
                let gap = s - ce;
                // what of the gap the window holds (all of it without a window)
                let inside = s.min(wb) - ce.max(wa);
                if inside <= 0 {
                    continue;
                }
                let launch = launches.get(sid);
                let cause = if gap < threshold_ns {
                    IdleCause::KernelWait
                } else if launch.map(|l| store.span_start(l) > ce).unwrap_or(false) {
                    IdleCause::HostWait
                } else {
                    IdleCause::Other
                };
                match cause {
                    IdleCause::HostWait => d.host_wait_ns += inside,
                    IdleCause::KernelWait => d.kernel_wait_ns += inside,
                    IdleCause::Other => d.other_ns += inside,
                }
                if gap >= threshold_ns {
                    d.long_gaps += 1;
                }
                d.idle_ns += inside;
                if keep_gaps {
                    d.gaps.push(IdleGap {
                        start: ce,
                        end: s,
                        cause,
                        prev_span: prev,
                        next_span: sid,
                        next_launch: launch,
                    });
                }
            }
            if let Some((wa, wb)) = within {
                // the window's stretches before the device's first and after its last busy
                // interval: no gap between two operations (the module's note)
                let (fa, lb) = (u.busy.first().map_or(wb, |f| f.0), u.busy.last().map_or(wa, |l| l.1));
                let outside = (fa.min(wb) - wa).max(0) + (wb - lb.max(wa)).max(0);
                let outside = if u.busy.is_empty() { wb - wa } else { outside };
                d.other_ns += outside;
                d.idle_ns += outside;
            }
            d
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use strobe_model::{IdKey, LaneKind, SourceFormat, SpanKind, TraceMeta};
    use strobe_store::{SpanInput, StoreBuilder};

    #[test]
    fn breakdown_classifies_gaps() {
        let mut b = StoreBuilder::in_memory();
        let gpu = b.lane(LaneKind::GpuStream { device: 0, stream: 7 });
        let cpu = b.lane(LaneKind::CpuThread { pid: IdKey::Num(1), tid: IdKey::Num(1) });
        let k = b.intern("gemm");
        let l = b.intern("cudaLaunchKernel");
        let (ck, cr) = (b.intern("kernel"), b.intern("cuda_runtime"));
        // (kernel start, end, launch start)
        for (i, (s, e, ls)) in
            [(0, 100, -50), (105, 200, -30), (300, 400, 250), (500, 600, 100)].into_iter().enumerate()
        {
            let c = i as i64 + 1;
            b.push_span(SpanInput {
                lane: cpu,
                start: ls,
                end: ls + 5,
                name: l,
                cat: cr,
                kind: SpanKind::CudaRuntime,
                flags: 0,
                args: b"",
                correlation: c,
                copy_dir: None,
            })
            .unwrap();
            b.push_span(SpanInput {
                lane: gpu,
                start: s,
                end: e,
                name: k,
                cat: ck,
                kind: SpanKind::Kernel,
                flags: 0,
                args: b"",
                correlation: c,
                copy_dir: None,
            })
            .unwrap();
        }
        let store = b.finish(&TraceMeta::new(SourceFormat::Kineto, "t")).unwrap().into_store().unwrap();
        let d = &idle_breakdown(&store, 10)[0];
        assert_eq!(d.gaps.len(), 3);
        assert_eq!((d.kernel_wait_ns, d.host_wait_ns, d.other_ns, d.idle_ns, d.long_gaps), (5, 100, 100, 205, 2));
        assert_eq!(d.gaps[1].cause, IdleCause::HostWait);
        assert_eq!(d.gaps[2].cause, IdleCause::Other);
        let t = &idle_totals_of(&store, &crate::gpu_time::device_unions(&store), 10)[0];
        assert!(t.gaps.is_empty());
        assert_eq!((t.kernel_wait_ns, t.host_wait_ns, t.other_ns, t.idle_ns, t.long_gaps), (5, 100, 100, 205, 2));
        let g = &crate::gpu_time::gpu_time(&store)[0];
        assert_eq!(g.idle_ns, d.idle_ns);
        // clipped to a window: gaps count their part inside under the whole gap's cause, and
        // the stretch past the last busy interval (600..700) counts as other
        let unions = crate::gpu_time::device_unions(&store);
        let w = &idle_totals_within(&store, &unions, 10, (50, 700))[0];
        assert_eq!((w.kernel_wait_ns, w.host_wait_ns, w.other_ns, w.idle_ns, w.long_gaps), (5, 100, 200, 305, 2));
        let w = &idle_totals_within(&store, &unions, 10, (250, 450))[0];
        assert_eq!((w.kernel_wait_ns, w.host_wait_ns, w.other_ns, w.idle_ns, w.long_gaps), (0, 50, 50, 100, 2));
        let w = &idle_totals_within(&store, &unions, 10, (-100, 0))[0];
        assert_eq!((w.other_ns, w.idle_ns, w.long_gaps), (100, 100, 0));
    }
}
