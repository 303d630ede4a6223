//! Kernel efficiency from the trace alone: each CPU op's FLOPs and bytes from its recorded
//! shapes (`formulas`, `attention`), the GPU work it launched (`ops`), the device's ceilings
//! (`peaks`), and per op name and kernel name the achieved rates, the bound, theoretical time
//! = max(FLOPs / peak, bytes / bandwidth), efficiency = theoretical / measured and time lost
//! (`figures`); MFU per step (`mfu`). Definitions: docs/efficiency.md.
//!
//! For the GUI: [`efficiency`] gives everything; [`op_runs`] the per-instance rows (a span id
//! each, for linking to the timeline), [`OpEfficiency`] / [`KernelEfficiency`] the table
//! columns (`tflops_per_s`, `pct_of_peak`, `efficiency`, `lost_ns`), and each row's
//! `arithmetic_intensity`, `tflops_per_s` and `gpu_ns` place it on a roofline against
//! `device.peaks` (`hbm_bytes_per_s` and the unit's FLOP/s, the ridge from [`ridge`]).

pub mod attention;
pub mod dtype_guess;
pub mod figures;
pub mod formulas;
pub mod mfu;
pub mod ops;
pub mod peaks;
mod raw_args;
pub mod shapes;
pub mod text;
pub mod xla_ops;

pub use figures::{figures, ridge, theoretical_ns, Bound, Figures};
pub use formulas::{OpClass, Unit, Work};
pub use mfu::{step_mfu, StepMfu};
pub use ops::{op_runs, OpRun, Source};
pub use peaks::{DevicePeaks, PeakOverride};

use crate::steps::Step;
use serde::Serialize;
use std::collections::HashMap;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

/// One op name over the whole trace (its instances that have a formula).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpEfficiency {
    pub name: String,
    pub count: u64,
    pub flops: f64,
    pub bytes: f64,
    /// Σ over instances of the union of each one's GPU spans.
    pub gpu_ns: i64,
    /// The unit whose peak the FLOPs are measured against (of the instances with most FLOPs).
    pub unit: Unit,
    pub class: OpClass,
    /// `shapes`, `kineto`, `xla`, or `mixed`.
    pub source: String,
    #[serde(flatten)]
    pub figures: Figures,
}

/// One kernel name: the work of the ops that launched its kernels, each op's split among its
/// GPU spans in proportion to their durations.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelEfficiency {
    pub name: String,
    pub count: u64,
    pub flops: f64,
    pub bytes: f64,
    /// Σ of the kernels' durations.
    pub gpu_ns: i64,
    pub unit: Unit,
    /// The op names that launched them, most GPU time first (up to 3).
    pub ops: Vec<String>,
    pub source: String,
    #[serde(flatten)]
    pub figures: Figures,
}

/// GPU time of ops without a formula (or without recorded shapes), by name.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Unmodeled {
    pub name: String,
    pub count: u64,
    pub gpu_ns: i64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Efficiency {
    pub device: DevicePeaks,
    /// By time lost, descending.
    pub ops: Vec<OpEfficiency>,
    pub kernels: Vec<KernelEfficiency>,
    pub steps: Vec<StepMfu>,
    /// By GPU time, descending.
    pub unmodeled: Vec<Unmodeled>,
    /// GPU time of ops with a formula ÷ GPU time of all ops that launched work.
    pub modeled_gpu_ns: i64,
    pub op_gpu_ns: i64,
    pub notes: Vec<String>,
}

/// The device the GPU work ran on (the first GPU stream's), as the trace describes it.
pub fn trace_device(store: &Store) -> Option<&strobe_model::DeviceInfo> {
    let dev = store.lanes.iter().find_map(|l| match l.kind {
        LaneKind::GpuStream { device, .. } => Some(device),
        _ => None,
    });
    let devs = &store.meta.devices;
    dev.and_then(|d| devs.iter().find(|x| x.id == d)).or(devs.first())
}

fn source_of(sources: impl Iterator<Item = Source>) -> String {
    let mut s: Vec<&str> = sources.map(|s| s.as_str()).collect();
    s.sort_unstable();
    s.dedup();
    match s.as_slice() {
        [one] => one.to_string(),
        [] => "none".to_string(),
        _ => "mixed".to_string(),
    }
}

/// The unit with the most FLOPs among `(unit, flops)` (ties: the first).
fn main_unit(it: impl Iterator<Item = (Unit, f64)>) -> Unit {
    let mut by: Vec<(Unit, f64)> = Vec::new();
    for (u, f) in it {
        match by.iter_mut().find(|x| x.0 == u) {
            Some(x) => x.1 += f,
            None => by.push((u, f)),
        }
    }
    by.iter()
        .fold(None::<(Unit, f64)>, |best, &x| match best {
            Some(b) if b.1 >= x.1 => Some(b),
            _ => Some(x),
        })
        .map(|x| x.0)
        .unwrap_or(Unit::Fp32)
}

/// Per op name, over its instances with a formula.
pub fn by_op_name(runs: &[OpRun], d: &DevicePeaks) -> Vec<OpEfficiency> {
    let mut groups: HashMap<&str, Vec<&OpRun>> = HashMap::new();
    for r in runs.iter().filter(|r| r.work.is_some()) {
        groups.entry(r.name.as_str()).or_default().push(r);
    }
    let mut out: Vec<OpEfficiency> = groups
        .into_iter()
        .map(|(name, rs)| {
            let w = |r: &&OpRun| r.work.clone().unwrap_or_else(unreachable_work);
            let flops: f64 = rs.iter().map(|r| w(r).flops).sum();
            let bytes: f64 = rs.iter().map(|r| w(r).bytes).sum();
            let gpu_ns: i64 = rs.iter().map(|r| r.gpu_ns).sum();
            let unit = main_unit(rs.iter().map(|r| (w(r).unit, w(r).flops)));
            let theo: Option<f64> = rs
                .iter()
                .map(|r| {
                    let x = w(r);
                    theoretical_ns(d, x.unit, x.flops, x.bytes)
                })
                .sum();
            OpEfficiency {
                name: name.to_string(),
                count: rs.len() as u64,
                flops,
                bytes,
                gpu_ns,
                unit,
                class: w(&rs[0]).class,
                source: source_of(rs.iter().filter_map(|r| r.source)),
                figures: figures(d, unit, flops, bytes, gpu_ns, theo),
            }
        })
        .collect();
    rank(&mut out, |o| (o.figures.lost_ns, o.gpu_ns, &o.name));
    out
}

fn unreachable_work() -> Work {
    Work { flops: 0.0, bytes: 0.0, unit: Unit::Fp32, class: OpClass::Elementwise }
}

/// By time lost (descending; rows without a figure last, by GPU time), then name.
fn rank<T>(v: &mut [T], key: impl Fn(&T) -> (Option<f64>, i64, &String)) {
    v.sort_by(|a, b| {
        let (la, ga, na) = key(a);
        let (lb, gb, nb) = key(b);
        match (la, lb) {
            (Some(x), Some(y)) => y.total_cmp(&x),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => gb.cmp(&ga),
        }
        .then_with(|| na.cmp(nb))
    });
}

/// Per kernel name: each op's work split among its GPU spans by duration.
pub fn by_kernel_name(store: &Store, runs: &[OpRun], d: &DevicePeaks) -> Vec<KernelEfficiency> {
    struct Acc {
        count: u64,
        flops: f64,
        bytes: f64,
        gpu_ns: i64,
        theo: f64,
        units: Vec<(Unit, f64)>,
        ops: HashMap<String, i64>,
        sources: Vec<Source>,
    }
    let (starts, ends) = store.span_times();
    let mut acc: HashMap<u32, Acc> = HashMap::new();
    for r in runs {
        let Some(w) = &r.work else { continue };
        let durs: Vec<i64> = r.gpu_spans.iter().map(|&s| ends[s as usize] - starts[s as usize]).collect();
        let total: i64 = durs.iter().sum();
        for (&s, &dur) in r.gpu_spans.iter().zip(&durs) {
            let share = if total > 0 { dur as f64 / total as f64 } else { 1.0 / durs.len() as f64 };
            let a = acc.entry(store.span_meta(s).name).or_insert_with(|| Acc {
                count: 0,
                flops: 0.0,
                bytes: 0.0,
                gpu_ns: 0,
                theo: 0.0,
                units: Vec::new(),
                ops: HashMap::new(),
                sources: Vec::new(),
            });
            a.count += 1;
            a.flops += w.flops * share;
            a.bytes += w.bytes * share;
            a.gpu_ns += dur;
            a.theo += theoretical_ns(d, w.unit, w.flops * share, w.bytes * share).unwrap_or(f64::NAN);
            a.units.push((w.unit, w.flops * share));
            *a.ops.entry(r.name.clone()).or_default() += dur;
            if let Some(src) = r.source {
                if !a.sources.contains(&src) {
                    a.sources.push(src);
                }
            }
        }
    }
    let mut out: Vec<KernelEfficiency> = acc
        .into_iter()
        .map(|(name, a)| {
            let unit = main_unit(a.units.iter().copied());
            let mut ops: Vec<(String, i64)> = a.ops.into_iter().collect();
            ops.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
            let theo = a.theo.is_finite().then_some(a.theo);
            KernelEfficiency {
                name: store.string(name).to_string(),
                count: a.count,
                flops: a.flops,
                bytes: a.bytes,
                gpu_ns: a.gpu_ns,
                unit,
                ops: ops.into_iter().take(3).map(|o| o.0).collect(),
                source: source_of(a.sources.into_iter()),
                figures: figures(d, unit, a.flops, a.bytes, a.gpu_ns, theo),
            }
        })
        .collect();
    rank(&mut out, |k| (k.figures.lost_ns, k.gpu_ns, &k.name));
    out
}

/// Why no CPU op owns GPU work, as it is: the trace records no framework op at all (an
/// Nsight Systems export has runtime calls and NVTX ranges; its correlation flows link the
/// calls to the kernels, but no op holds the calls), or it has ops and no flow from a launch
/// to GPU work, or both exist and no launch sits inside an op.
fn no_op_runs_note(store: &Store) -> String {
    let ops = store.span_metas().iter().any(|m| SpanKind::from_u8(m.kind) == SpanKind::CpuOp);
    let flows = store.flows().len();
    if !ops && flows > 0 {
        format!(
            "no framework (PyTorch) CPU ops in this trace to own GPU work — its {flows} correlation flows link runtime calls to GPU work, but per-op figures need the ops a torch.profiler (Kineto) trace records, or, in an Nsight Systems capture, the NVTX op ranges of torch.autograd.profiler.emit_nvtx(record_shapes=True): no per-op figures"
        )
    } else if !ops {
        "no framework (PyTorch) CPU ops and no correlation flows in this trace: no per-op figures".into()
    } else if flows == 0 {
        "no correlation flows from launch calls to GPU work, so no CPU op is linked to its kernels: no per-op figures"
            .into()
    } else {
        "no GPU work was launched from inside a CPU op: no per-op figures".into()
    }
}

/// What the figures of ops read from `emit_nvtx` NVTX ranges (an nsys capture) rest on:
/// their shapes carry no dtypes (read from their kernels' names) and no scalar arguments
/// (attention's causal flag among them).
fn emit_nvtx_notes(store: &Store, runs: &[OpRun]) -> Vec<String> {
    let mark = memchr::memmem::Finder::new(dtype_guess::EMIT_NVTX_MARK);
    let nvtx: Vec<&OpRun> =
        runs.iter().filter(|r| r.work.is_some() && mark.find(store.span_args_raw(r.span)).is_some()).collect();
    if nvtx.is_empty() {
        return Vec::new();
    }
    let mut names: Vec<u32> = runs.iter().flat_map(|r| &r.gpu_spans).map(|&s| store.span_meta(s).name).collect();
    names.sort_unstable();
    names.dedup();
    let default = dtype_guess::trace_default(names.iter().map(|&n| store.string(n)));
    let told = nvtx
        .iter()
        .filter(|r| dtype_guess::op_dtype(r.gpu_spans.iter().map(|&s| store.span_name(s)), || default).1)
        .count();
    let mut out = vec![format!(
        "{} ops with a formula come from PyTorch's NVTX op ranges (emit_nvtx), whose shapes carry no dtypes: {told} took theirs from their kernels' names, {} the trace's usual one ({default})",
        nvtx.len(),
        nvtx.len() - told
    )];
    let attention = nvtx.iter().filter(|r| r.work.as_ref().is_some_and(|w| w.class == OpClass::Attention)).count();
    if attention > 0 {
        out.push(format!(
            "emit_nvtx records no scalar arguments: the {attention} attention ops are counted without causal masking (every query–key pair), up to twice a causal model's FLOPs"
        ));
    }
    out
}

/// Everything, with the device's ceilings overridden by `ov`, MFU per step of the built-in
/// step rules (`steps::steps`).
pub fn efficiency(store: &Store, ov: PeakOverride) -> Efficiency {
    efficiency_in_steps(store, &crate::steps::steps(store), ov)
}

/// `efficiency` with MFU for `steps` (a report's steps, found by its rule).
pub fn efficiency_in_steps(store: &Store, steps: &[Step], ov: PeakOverride) -> Efficiency {
    let t = strobe_store::timing::Phase::start("efficiency: op runs");
    let runs = op_runs(store);
    drop(t);
    efficiency_of_in_steps(store, &runs, steps, ov)
}

/// `efficiency_in_steps` over op instances already found (`op_runs`: the viewer keeps them
/// to link the figures with the timeline's spans).
pub fn efficiency_of_in_steps(store: &Store, runs: &[OpRun], steps: &[Step], ov: PeakOverride) -> Efficiency {
    let device = DevicePeaks::of(trace_device(store), ov);
    let t = strobe_store::timing::Phase::start("efficiency: by op name");
    let ops = by_op_name(runs, &device);
    drop(t);
    let t = strobe_store::timing::Phase::start("efficiency: by kernel name");
    let kernels = by_kernel_name(store, runs, &device);
    drop(t);
    let t = strobe_store::timing::Phase::start("efficiency: step mfu");
    let steps = step_mfu(store, runs, steps, &device);
    drop(t);
    let mut un: HashMap<&str, (u64, i64)> = HashMap::new();
    for r in runs.iter().filter(|r| r.work.is_none()) {
        let e = un.entry(r.name.as_str()).or_default();
        e.0 += 1;
        e.1 += r.gpu_ns;
    }
    let mut unmodeled: Vec<Unmodeled> =
        un.into_iter().map(|(n, (c, g))| Unmodeled { name: n.to_string(), count: c, gpu_ns: g }).collect();
    unmodeled.sort_by(|a, b| b.gpu_ns.cmp(&a.gpu_ns).then_with(|| a.name.cmp(&b.name)));
    let mut notes = Vec::new();
    if runs.is_empty() {
        notes.push(no_op_runs_note(store));
    } else if runs.iter().all(|r| r.work.is_none()) {
        notes.push(
            "no op that launched GPU work has recorded shapes with a formula: profile with record_shapes=True".into(),
        );
    }
    notes.extend(emit_nvtx_notes(store, runs));
    if device.source == "none" {
        notes.push(format!(
            "no published peaks for device {:?}: pass --peak-tflops and --peak-gbps for efficiency figures",
            device.name
        ));
    }
    Efficiency {
        modeled_gpu_ns: runs.iter().filter(|r| r.work.is_some()).map(|r| r.gpu_ns).sum(),
        op_gpu_ns: runs.iter().map(|r| r.gpu_ns).sum(),
        device,
        ops,
        kernels,
        steps,
        unmodeled,
        notes,
    }
}
