//! HTA's per-rank breakdowns, from Strobe's single-trace figures (`gpu_time`, `kernels`).
//!
//! - **Temporal breakdown** (HTA `get_temporal_breakdown`): over the GPU window (first GPU
//!   activity start to last end), `idle` = window − busy, `compute` = the compute-kernel union,
//!   `non_compute` = busy − compute (comm and memory not under compute). HTA computes the same
//!   three from the same unions per rank; Strobe works per device and sums a rank's devices
//!   (HTA merges them into one timeline), which only differs for a rank with several GPUs.
//! - **Kernel breakdown** (HTA `get_gpu_kernel_breakdown`): per kernel type — compute, comm,
//!   memory (memcpy and memset) — the plain sum of durations, and per type the kernels that
//!   together cover `coverage` (80 %) of that type's time, the rest folded into "others".
//! - **Comm–compute overlap** (HTA `get_comm_comp_overlap`): comm time under compute / comm
//!   time, the `overlap_pct` of `strobe report`, over the rank's devices together.

use crate::gpu_time::{GpuClass, GpuTime};
use serde::Serialize;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TemporalBreakdown {
    pub rank: i64,
    pub window_ns: i64,
    pub compute_ns: i64,
    pub non_compute_ns: i64,
    pub idle_ns: i64,
    pub compute_pct: f64,
    pub non_compute_pct: f64,
    pub idle_pct: f64,
}

/// From the rank's per-device figures (`gpu_time`, as its report already holds them).
pub fn temporal_breakdown(rank: i64, g: &[GpuTime]) -> TemporalBreakdown {
    let window: i64 = g.iter().map(|d| d.window_ns).sum();
    let compute: i64 = g.iter().map(|d| d.compute_ns).sum();
    let busy: i64 = g.iter().map(|d| d.busy_ns).sum();
    let pct = |x: i64| if window > 0 { x as f64 * 100.0 / window as f64 } else { 0.0 };
    TemporalBreakdown {
        rank,
        window_ns: window,
        compute_ns: compute,
        non_compute_ns: busy - compute,
        idle_ns: window - busy,
        compute_pct: pct(compute),
        non_compute_pct: pct(busy - compute),
        idle_pct: pct(window - busy),
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelShare {
    pub name: String,
    pub count: u64,
    pub total_ns: i64,
    /// Of the type's total.
    pub pct: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelTypeShare {
    /// "compute", "comm" or "memory".
    pub kind: String,
    pub count: u64,
    pub total_ns: i64,
    /// Of all GPU activity time (plain sums).
    pub pct: f64,
    /// The largest kernels covering `coverage` of this type's time, then "others" if any left.
    pub top: Vec<KernelShare>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelBreakdown {
    pub rank: i64,
    pub coverage: f64,
    pub types: Vec<KernelTypeShare>,
}

/// One GPU activity name of one class on a rank: how often it ran and for how long (plain
/// durations, not unions). The per-rank `kernels` table of a summary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct KernelTotal {
    /// "compute", "comm" or "memory" (`gpu_time::classify`).
    pub kind: String,
    pub name: String,
    pub count: u64,
    pub total_ns: i64,
    pub min_ns: i64,
    pub max_ns: i64,
}

const CLASSES: [(GpuClass, &str); 3] =
    [(GpuClass::Compute, "compute"), (GpuClass::Comm, "comm"), (GpuClass::Memory, "memory")];

/// Every GPU activity name of `store` by class, ordered by class then name.
pub fn kernel_totals(store: &Store) -> Vec<KernelTotal> {
    // (class, name) → (count, total, min, max)
    let mut by: std::collections::HashMap<(usize, u32), (u64, i64, i64, i64)> = Default::default();
    let (starts, ends) = store.span_times();
    let mut classes = crate::gpu_time::Classifier::new(store);
    for (lane, desc) in store.lanes.iter().enumerate() {
        if !matches!(desc.kind, LaneKind::GpuStream { .. }) {
            continue;
        }
        for &sid in store.lane_spans(lane as u32).span {
            let m = store.span_meta(sid);
            let Some(c) = classes.class(SpanKind::from_u8(m.kind), m.name) else { continue };
            let d = ends[sid as usize] - starts[sid as usize];
            let e = by.entry((c as usize, m.name)).or_insert((0, 0, i64::MAX, i64::MIN));
            e.0 += 1;
            e.1 += d;
            e.2 = e.2.min(d);
            e.3 = e.3.max(d);
        }
    }
    let mut out: Vec<(usize, KernelTotal)> = by
        .into_iter()
        .map(|((c, n), (count, total_ns, min_ns, max_ns))| {
            let kind = CLASSES.iter().find(|x| x.0 as usize == c).map(|x| x.1).unwrap_or("compute");
            let name = store.string(n).to_string();
            (c, KernelTotal { kind: kind.to_string(), name, count, total_ns, min_ns, max_ns })
        })
        .collect();
    out.sort_by(|a, b| (a.0, &a.1.name).cmp(&(b.0, &b.1.name)));
    out.into_iter().map(|x| x.1).collect()
}

pub fn kernel_breakdown(rank: i64, store: &Store, coverage: f64) -> KernelBreakdown {
    kernel_breakdown_of(rank, &kernel_totals(store), coverage)
}

/// HTA's kernel breakdown from the rank's `kernel_totals`.
pub fn kernel_breakdown_of(rank: i64, totals: &[KernelTotal], coverage: f64) -> KernelBreakdown {
    let all: i64 = totals.iter().map(|k| k.total_ns).sum();
    let types = CLASSES
        .into_iter()
        .map(|(_, label)| {
            let mut ks: Vec<KernelShare> = totals
                .iter()
                .filter(|k| k.kind == label)
                .map(|k| KernelShare { name: k.name.clone(), count: k.count, total_ns: k.total_ns, pct: 0.0 })
                .collect();
            ks.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then_with(|| a.name.cmp(&b.name)));
            let total: i64 = ks.iter().map(|k| k.total_ns).sum();
            let count: u64 = ks.iter().map(|k| k.count).sum();
            let pct_of = |x: i64| if total > 0 { x as f64 * 100.0 / total as f64 } else { 0.0 };
            let mut top = Vec::new();
            let mut covered = 0i64;
            let mut rest = ks.into_iter();
            for k in rest.by_ref() {
                covered += k.total_ns;
                top.push(KernelShare { pct: pct_of(k.total_ns), ..k });
                if covered as f64 >= coverage * total as f64 {
                    break;
                }
            }
            let (oc, ot) = rest.fold((0u64, 0i64), |a, k| (a.0 + k.count, a.1 + k.total_ns));
            if oc > 0 {
                top.push(KernelShare { name: "others".into(), count: oc, total_ns: ot, pct: pct_of(ot) });
            }
            KernelTypeShare {
                kind: label.to_string(),
                count,
                total_ns: total,
                pct: if all > 0 { total as f64 * 100.0 / all as f64 } else { 0.0 },
                top,
            }
        })
        .collect();
    KernelBreakdown { rank, coverage, types }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CommOverlap {
    pub rank: i64,
    pub comm_ns: i64,
    pub comm_overlapped_ns: i64,
    pub overlap_pct: f64,
}

/// From the rank's per-device figures (`gpu_time`, as its report already holds them).
pub fn comm_overlap(rank: i64, g: &[GpuTime]) -> CommOverlap {
    let comm: i64 = g.iter().map(|d| d.comm_ns).sum();
    let ov: i64 = g.iter().map(|d| d.comm_overlapped_ns).sum();
    CommOverlap {
        rank,
        comm_ns: comm,
        comm_overlapped_ns: ov,
        overlap_pct: if comm > 0 { ov as f64 * 100.0 / comm as f64 } else { 0.0 },
    }
}
