//! Speed-of-Light and roofline figures of Nsight Compute launches, and a verdict per kernel.
//!
//! Inputs are ncu metrics (base units, see `strobe_model::ncu`):
//! - SOL: `sm__throughput.avg.pct_of_peak_sustained_elapsed` (compute),
//!   `gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed` (memory),
//!   `gpu__dram_throughput…` (DRAM), `l1tex__throughput…`, `lts__throughput…` (L1, L2),
//!   `gpu__time_duration.sum`.
//! - Achieved FLOP/s, as ncu's SpeedOfLight_RooflineChart section computes it: per-cycle
//!   predicated-on thread instruction rates (`smsp__sass_thread_inst_executed_op_*_pred_on.sum.per_cycle_elapsed`)
//!   × `smsp__cycles_elapsed.avg.per_second`, with FADD + FMUL + 2·FFMA (single), DADD +
//!   DMUL + 2·DFMA (double) and, for half, ncu's packed-half2 weights 2·HADD + 2·HMUL +
//!   4·HFMA (ncu's `derived__…_hfma_pred_on_x4`). When only instruction counts are exported
//!   (`--metrics …op_ffma_pred_on.sum`), FLOP = the same weighted sum and FLOP/s = FLOP / duration.
//!   Tensor-core work (HMMA/GMMA) is not in these counters; it is counted from the tensor
//!   roofline's `sm__ops_path_tensor_*` counters (`ncu_tensor`) and added: `flops_per_s` =
//!   `fp_flops_per_s` (the instruction sum above) + `tensor_flops_per_s`.
//! - DRAM bytes: `dram__bytes.sum`, else `dram__bytes_read.sum + dram__bytes_write.sum`,
//!   else `dram__bytes.sum.per_second` × duration; DRAM bytes/s: `dram__bytes.sum.per_second`,
//!   else bytes / duration. Arithmetic intensity = FLOP/s ÷ DRAM bytes/s (= FLOP / byte).
//! - Ceilings: from the export's peaks (`sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained`
//!   × 2 × `sm__cycles_elapsed.avg.per_second`; `dram__bytes.sum.peak_sustained` ×
//!   `dram__cycles_elapsed.avg.per_second`), the median over the launches; otherwise the
//!   device's published peaks by compute capability (`known_device`).

use std::collections::BTreeMap;
use strobe_model::ncu::{NcuLaunch, NcuLayout, NcuReport};

pub const SM_PCT: &str = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
pub const MEMORY_PCT: &str = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
pub const DRAM_PCT: [&str; 2] =
    ["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "dram__throughput.avg.pct_of_peak_sustained_elapsed"];
pub const L1_PCT: [&str; 2] =
    ["l1tex__throughput.avg.pct_of_peak_sustained_active", "l1tex__throughput.avg.pct_of_peak_sustained_elapsed"];
pub const L2_PCT: &str = "lts__throughput.avg.pct_of_peak_sustained_elapsed";
pub const TENSOR_PCT: [&str; 2] = [
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_elapsed",
];
pub const DURATION: &str = "gpu__time_duration.sum";
const SMSP_HZ: [&str; 2] = ["smsp__cycles_elapsed.avg.per_second", "sm__cycles_elapsed.avg.per_second"];
const SM_HZ: [&str; 2] = ["sm__cycles_elapsed.avg.per_second", "smsp__cycles_elapsed.avg.per_second"];
const DRAM_HZ: &str = "dram__cycles_elapsed.avg.per_second";

/// The note shown wherever achieved FLOP/s is, when the export has no tensor-op counters.
pub const TENSOR_NOTE: &str =
    "the export has no sm__ops_path_tensor_* counters (the tensor roofline section, --set full): FLOP/s \
counts FADD/FMUL/FFMA (and double/half) instructions only, not tensor-core work (most GEMM and attention \
FLOPs); see tensor_pipe_pct for tensor-pipe utilisation.";

/// The note shown when tensor work is counted.
pub const TENSOR_COUNTED_NOTE: &str =
    "FLOP/s = FADD/FMUL/FFMA (and double/half) instructions + tensor-core operations (sm__ops_path_tensor_*, \
as ncu's tensor roofline counts them); tensor_flops is the tensor part.";

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    UnderSaturated,
    MemoryBound,
    ComputeBound,
    Balanced,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::UnderSaturated => "under_saturated",
            Verdict::MemoryBound => "memory_bound",
            Verdict::ComputeBound => "compute_bound",
            Verdict::Balanced => "balanced",
        }
    }
    /// What to try, for the pane and the text report.
    pub fn advice(self) -> &'static str {
        match self {
            Verdict::UnderSaturated => "launch overhead or too little parallelism: fuse or enlarge",
            Verdict::MemoryBound => "fuse, quantise, avoid layout conversions",
            Verdict::ComputeBound => "lower precision",
            Verdict::Balanced => "no single limiter",
        }
    }
}

/// The SOL reading rules on SM and memory throughput alone (`verdict_with` without tensor
/// pipe or roofline position).
pub fn verdict(sm_pct: f64, memory_pct: f64) -> Verdict {
    verdict_with(sm_pct, memory_pct, None, None)
}

/// The SOL reading rules: compute = the larger of SM throughput and tensor-pipe utilisation
/// (a GEMM's limiter is its tensor pipe); both < 40 % → under-saturated; one > 80 % → bound
/// by it. Both > 80 %: memory throughput there is mostly on-chip (L1/shared memory feeding the
/// tensor cores), so the roofline decides where known (`compute_side`: arithmetic intensity at
/// or past the ridge point), else the larger figure (memory on a tie); otherwise balanced.
pub fn verdict_with(sm_pct: f64, memory_pct: f64, tensor_pipe_pct: Option<f64>, compute_side: Option<bool>) -> Verdict {
    let compute = tensor_pipe_pct.map_or(sm_pct, |t| sm_pct.max(t));
    if compute < 40.0 && memory_pct < 40.0 {
        Verdict::UnderSaturated
    } else if compute > 80.0 && memory_pct > 80.0 {
        match compute_side {
            Some(true) => Verdict::ComputeBound,
            Some(false) => Verdict::MemoryBound,
            None if compute > memory_pct => Verdict::ComputeBound,
            None => Verdict::MemoryBound,
        }
    } else if memory_pct > 80.0 {
        Verdict::MemoryBound
    } else if compute > 80.0 {
        Verdict::ComputeBound
    } else {
        Verdict::Balanced
    }
}

/// Ceilings of one device.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Device {
    /// A known device name, when peaks came from the table (or the table matched).
    pub name: Option<String>,
    pub cc: String,
    /// `export` (peak metrics in the file), `known` (published peaks), or `none`.
    pub peaks_source: String,
    /// Where published peaks come from.
    pub citation: Option<String>,
    pub sm_frequency_hz: Option<f64>,
    pub dram_frequency_hz: Option<f64>,
    /// Non-tensor FP32 FMA peak (FLOP/s): the roofline's compute ceiling.
    pub peak_flops_per_s: Option<f64>,
    pub peak_fp64_flops_per_s: Option<f64>,
    pub peak_fp16_flops_per_s: Option<f64>,
    pub peak_dram_bytes_per_s: Option<f64>,
    /// FLOP/byte where the two FP32 ceilings meet.
    pub ridge_point: Option<f64>,
    /// Tensor ceiling of the family with the most tensor work over the launches
    /// (`tensor_family`): `peak_sustained` × SM Hz, median over launches; else published.
    pub peak_tensor_flops_per_s: Option<f64>,
    pub tensor_family: Option<String>,
    /// FLOP/byte where the tensor and DRAM ceilings meet.
    pub tensor_ridge_point: Option<f64>,
}

/// Figures of one launch.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct KernelSol {
    pub id: u64,
    pub name: String,
    pub stream: Option<i64>,
    pub grid: Option<[u64; 3]>,
    pub block: Option<[u64; 3]>,
    pub duration_ns: Option<i64>,
    pub sm_pct: Option<f64>,
    pub memory_pct: Option<f64>,
    pub dram_pct: Option<f64>,
    pub l1_pct: Option<f64>,
    pub l2_pct: Option<f64>,
    pub tensor_pipe_pct: Option<f64>,
    /// All FLOP/s: `fp_flops_per_s` + `tensor_flops_per_s`.
    pub flops_per_s: Option<f64>,
    pub flops: Option<f64>,
    /// Non-tensor FLOP/s (FADD/FMUL/FFMA instructions, ncu's roofline definition).
    pub fp_flops_per_s: Option<f64>,
    /// Tensor-core operations (`ncu_tensor`) and their rate.
    pub tensor_flops: Option<f64>,
    pub tensor_flops_per_s: Option<f64>,
    pub dram_bytes: Option<f64>,
    pub dram_bytes_per_s: Option<f64>,
    pub arithmetic_intensity: Option<f64>,
    pub verdict: Option<Verdict>,
    /// The verdict as a paragraph with its evidence (`ncu_detail::paragraph`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict_text: Option<String>,
    /// How much of its time the launch would lose at its ceiling, % of its duration
    /// (`roofline_speedup_pct`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roofline_speedup_pct: Option<f64>,
    /// ncu's largest global estimate (`ncu_detail::estimated_speedup`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_speedup: Option<crate::ncu_detail::EstimatedSpeedup>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occupancy: Option<crate::ncu_detail::Occupancy>,
    /// Where the stall shares come from, and how many PC samples they rest on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall_source: Option<crate::ncu_detail::StallSource>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall_samples: Option<f64>,
    /// Stall reasons, largest share first (`ncu_detail::stalls`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stalls: Vec<crate::ncu_detail::Stall>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::ncu_detail::MemoryWorkload>,
    /// ncu's rule results, largest estimated speedup first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<strobe_model::ncu::NcuRule>,
}

/// How much of a launch's duration it would lose at its ceiling, in %. With FLOP/s and an
/// arithmetic intensity: 1 − achieved ÷ attainable, attainable = min(compute ceiling,
/// intensity × DRAM ceiling), the compute ceiling being the tensor one for a launch that did
/// tensor work, else FP32. Otherwise (no FLOPs): its distance to the nearest Speed-of-Light
/// ceiling, 100 − max(SM %, memory %).
pub fn roofline_speedup_pct(k: &KernelSol, d: Option<&Device>) -> Option<f64> {
    let on_roof = (|| {
        let d = d?;
        let (f, ai) = (k.flops_per_s?, k.arithmetic_intensity?);
        let tensor = k.tensor_flops.is_some_and(|t| t > 0.0);
        let peak = if tensor { d.peak_tensor_flops_per_s.or(d.peak_flops_per_s) } else { d.peak_flops_per_s }?;
        let attainable = peak.min(ai * d.peak_dram_bytes_per_s?);
        (f > 0.0 && attainable > 0.0).then(|| (1.0 - f / attainable).max(0.0) * 100.0)
    })();
    on_roof.or_else(|| {
        let best =
            k.sm_pct.into_iter().chain(k.memory_pct).fold(None::<f64>, |a, v| Some(a.map_or(v, |a| a.max(v))))?;
        Some((100.0 - best).clamp(0.0, 100.0))
    })
}

/// Launches of one kernel name together: sums, and duration-weighted percentages.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct KernelAgg {
    pub name: String,
    pub launches: usize,
    pub ids: Vec<u64>,
    pub duration_ns: Option<i64>,
    pub sm_pct: Option<f64>,
    pub memory_pct: Option<f64>,
    pub dram_pct: Option<f64>,
    pub tensor_pipe_pct: Option<f64>,
    pub flops_per_s: Option<f64>,
    pub flops: Option<f64>,
    pub tensor_flops: Option<f64>,
    pub dram_bytes: Option<f64>,
    pub arithmetic_intensity: Option<f64>,
    pub verdict: Option<Verdict>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RooflineReport {
    /// Always `ncu`.
    pub format: &'static str,
    pub layout: NcuLayout,
    pub device: Device,
    /// One per launch, in export order.
    pub kernels: Vec<KernelSol>,
    /// One per kernel name, longest total duration first.
    pub by_name: Vec<KernelAgg>,
    pub notes: Vec<String>,
}

/// Weights of the FLOP sum: (op, FLOP per thread instruction).
const FLOP_OPS: [(&str, f64); 9] = [
    ("fadd", 1.0),
    ("fmul", 1.0),
    ("ffma", 2.0),
    ("dadd", 1.0),
    ("dmul", 1.0),
    ("dfma", 2.0),
    ("hadd", 2.0),
    ("hmul", 2.0),
    ("hfma", 4.0),
];

/// Achieved FLOP/s of a launch (see the module doc), or None when the export lacks the
/// instruction metrics.
pub fn achieved_flops_per_s(l: &NcuLaunch) -> Option<f64> {
    let mut per_cycle = None::<f64>;
    for (op, w) in FLOP_OPS {
        if let Some(v) = l.value(&format!("smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed")) {
            *per_cycle.get_or_insert(0.0) += w * v;
        } else if op.ends_with("fma") {
            let x = if op == "hfma" { 4 } else { 2 };
            if let Some(v) = l.value(&format!("derived__smsp__sass_thread_inst_executed_op_{op}_pred_on_x{x}")) {
                *per_cycle.get_or_insert(0.0) += v;
            }
        }
    }
    if let Some(pc) = per_cycle {
        return l.first_value(&SMSP_HZ).map(|hz| pc * hz);
    }
    let mut count = None::<f64>;
    for (op, w) in FLOP_OPS {
        for unit in ["smsp", "sm"] {
            if let Some(v) = l.value(&format!("{unit}__sass_thread_inst_executed_op_{op}_pred_on.sum")) {
                *count.get_or_insert(0.0) += w * v;
                break;
            }
        }
    }
    let dur_s = l.value(DURATION)? * 1e-9;
    count.filter(|_| dur_s > 0.0).map(|c| c / dur_s)
}

fn dram_bytes(l: &NcuLaunch) -> Option<f64> {
    if let Some(b) = l.value("dram__bytes.sum") {
        return Some(b);
    }
    let r = l.value("dram__bytes_read.sum");
    let w = l.value("dram__bytes_write.sum");
    if r.is_some() || w.is_some() {
        return Some(r.unwrap_or(0.0) + w.unwrap_or(0.0));
    }
    Some(l.value("dram__bytes.sum.per_second")? * l.value(DURATION)? * 1e-9)
}

fn dram_bytes_per_s(l: &NcuLaunch, bytes: Option<f64>) -> Option<f64> {
    if let Some(b) = l.value("dram__bytes.sum.per_second") {
        return Some(b);
    }
    let dur_s = l.value(DURATION)? * 1e-9;
    bytes.filter(|_| dur_s > 0.0).map(|b| b / dur_s)
}

fn add_opt(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    }
}

/// Figures of one launch; the verdict's roofline side uses `ridge` (FLOP/byte of the
/// kernel's own ceiling: tensor where it did tensor work, else FP32) when known.
pub fn kernel_sol_on(l: &NcuLaunch, d: Option<&Device>) -> KernelSol {
    let sm = l.value(SM_PCT);
    let mem = l.value(MEMORY_PCT);
    let fp = achieved_flops_per_s(l);
    let tensor = crate::ncu_tensor::tensor_work(l);
    let tensor_rate = tensor.as_ref().and_then(|t| t.flops_per_s);
    let flops_per_s = add_opt(fp, tensor_rate);
    let dur = l.value(DURATION);
    let bytes = dram_bytes(l);
    let bps = dram_bytes_per_s(l, bytes);
    let ai = flops_per_s.zip(bps).filter(|(_, b)| *b > 0.0).map(|(f, b)| f / b);
    let does_tensor = tensor.as_ref().is_some_and(|t| t.flops > 0.0);
    let ridge = d.and_then(|d| if does_tensor { d.tensor_ridge_point } else { d.ridge_point });
    let compute_side = ai.zip(ridge).map(|(a, r)| a >= r);
    let tensor_pipe = l.first_value(&TENSOR_PCT);
    let stalls = crate::ncu_detail::stalls(l);
    let mut k = KernelSol {
        id: l.id,
        name: l.name.clone(),
        stream: l.stream,
        grid: l.grid,
        block: l.block,
        duration_ns: dur.map(|d| d.round() as i64),
        sm_pct: sm,
        memory_pct: mem,
        dram_pct: l.first_value(&DRAM_PCT),
        l1_pct: l.first_value(&L1_PCT),
        l2_pct: l.value(L2_PCT),
        tensor_pipe_pct: tensor_pipe,
        flops_per_s,
        flops: add_opt(fp.zip(dur).map(|(f, d)| f * d * 1e-9), tensor.as_ref().map(|t| t.flops)),
        fp_flops_per_s: fp,
        tensor_flops: tensor.as_ref().map(|t| t.flops),
        tensor_flops_per_s: tensor_rate,
        dram_bytes: bytes,
        dram_bytes_per_s: bps,
        arithmetic_intensity: ai,
        verdict: sm.zip(mem).map(|(s, m)| verdict_with(s, m, tensor_pipe, compute_side)),
        verdict_text: None,
        roofline_speedup_pct: None,
        estimated_speedup: crate::ncu_detail::estimated_speedup(&l.rules),
        occupancy: crate::ncu_detail::occupancy(l),
        stall_source: stalls.as_ref().map(|s| s.source),
        stall_samples: stalls.as_ref().and_then(|s| s.samples),
        stalls: stalls.map(|s| s.reasons).unwrap_or_default(),
        memory: crate::ncu_detail::memory(l),
        rules: crate::ncu_detail::ranked_rules(&l.rules),
    };
    k.roofline_speedup_pct = roofline_speedup_pct(&k, d);
    k.verdict_text = crate::ncu_detail::paragraph::paragraph(&k);
    k
}

/// Figures of one launch, without a device for the verdict's roofline side.
pub fn kernel_sol(l: &NcuLaunch) -> KernelSol {
    kernel_sol_on(l, None)
}

/// Published peaks by compute capability (`efficiency::peaks`, sources there): name, [FP32,
/// FP64, FP16 non-tensor] FLOP/s, DRAM bytes/s, citation. CC 9.0 is H200 when the DRAM clock
/// is HBM3e's (≥ 2.9 GHz), else H100.
pub fn known_device(cc: &str, dram_hz: Option<f64>) -> Option<(&'static str, [Option<f64>; 3], f64, &'static str)> {
    let p = crate::efficiency::peaks::published_by_cc(cc, dram_hz)?;
    let t = 1e12;
    Some((p.name, [Some(p.fp32 * t), Some(p.fp64 * t), p.fp16.map(|x| x * t)], p.hbm_gbps * 1e9, p.citation))
}

/// Peak FMA FLOP/s of one precision from a launch's export metrics.
fn export_peak(l: &NcuLaunch, op: &str, x: f64) -> Option<f64> {
    let per_cycle = l
        .value(&format!("sm__sass_thread_inst_executed_op_{op}_pred_on.sum.peak_sustained"))
        .map(|v| v * x)
        .or_else(|| l.value(&format!("derived__sm__sass_thread_inst_executed_op_{op}_pred_on_x{x}")))?;
    Some(per_cycle * l.first_value(&SM_HZ)?)
}

pub fn device(launches: &[NcuLaunch]) -> Device {
    let mut d = Device {
        cc: launches.iter().map(|l| l.cc.as_str()).find(|c| !c.is_empty()).unwrap_or("").to_string(),
        ..Device::default()
    };
    // Clocks vary per launch (`--clock-control none`); the device's ceilings use the median
    // over launches, which short kernels' clock readings do not skew.
    let med = |f: &dyn Fn(&NcuLaunch) -> Option<f64>| {
        crate::stats::median(&launches.iter().filter_map(f).collect::<Vec<_>>())
    };
    d.sm_frequency_hz = med(&|l| l.first_value(&SM_HZ));
    d.dram_frequency_hz = med(&|l| l.value(DRAM_HZ));
    d.peak_flops_per_s = med(&|l| export_peak(l, "ffma", 2.0));
    d.peak_fp64_flops_per_s = med(&|l| export_peak(l, "dfma", 2.0));
    d.peak_fp16_flops_per_s = med(&|l| export_peak(l, "hfma", 4.0));
    d.peak_dram_bytes_per_s =
        med(&|l| l.value("dram__bytes.sum.peak_sustained").zip(l.value(DRAM_HZ)).map(|(b, hz)| b * hz));
    let known = known_device(&d.cc, d.dram_frequency_hz);
    if d.peak_flops_per_s.is_some() && d.peak_dram_bytes_per_s.is_some() {
        d.peaks_source = "export".into();
        d.name = known.map(|k| k.0.to_string());
    } else if let Some((name, [f32_, f64_, f16_], dram, cite)) = known {
        d.peaks_source = "known".into();
        d.name = Some(name.into());
        d.citation = Some(cite.into());
        d.peak_flops_per_s = d.peak_flops_per_s.or(f32_);
        d.peak_fp64_flops_per_s = d.peak_fp64_flops_per_s.or(f64_);
        d.peak_fp16_flops_per_s = d.peak_fp16_flops_per_s.or(f16_);
        d.peak_dram_bytes_per_s = d.peak_dram_bytes_per_s.or(Some(dram));
    } else {
        d.peaks_source =
            if d.peak_flops_per_s.is_some() || d.peak_dram_bytes_per_s.is_some() { "export" } else { "none" }.into();
    }
    d.ridge_point = d.peak_flops_per_s.zip(d.peak_dram_bytes_per_s).filter(|(_, b)| *b > 0.0).map(|(f, b)| f / b);
    tensor_ceiling(&mut d, launches);
    d
}

/// The tensor ceiling: of the family with the most tensor work over all launches, its
/// `peak_sustained` × SM Hz (median over launches), else the published dense peak of its
/// source type.
fn tensor_ceiling(d: &mut Device, launches: &[NcuLaunch]) {
    let works: Vec<crate::ncu_tensor::TensorWork> =
        launches.iter().filter_map(crate::ncu_tensor::tensor_work).collect();
    let mut by_family: BTreeMap<&str, f64> = BTreeMap::new();
    for w in &works {
        *by_family.entry(w.main_family.as_str()).or_default() += w.flops;
    }
    let Some((fam, _)) = by_family.iter().fold(None::<(&str, f64)>, |b, (f, v)| match b {
        Some(b) if b.1 >= *v => Some(b),
        _ => Some((f, *v)),
    }) else {
        return;
    };
    let peak_id = format!("sm__ops_path_tensor_{fam}.sum.peak_sustained");
    d.peak_tensor_flops_per_s = crate::stats::median(
        &launches
            .iter()
            .filter_map(|l| l.value(&peak_id).zip(l.first_value(&SM_HZ)).map(|(p, h)| p * h))
            .collect::<Vec<f64>>(),
    )
    .or_else(|| {
        let p = crate::efficiency::peaks::published_by_cc(&d.cc, d.dram_frequency_hz)?;
        let src = fam.split("src_").nth(1).unwrap_or("");
        let t = if src.starts_with("fp8") {
            p.tensor_fp8
        } else if src.starts_with("int8") {
            p.tensor_int8
        } else if src.starts_with("tf32") {
            p.tensor_tf32
        } else if src.starts_with("fp64") {
            p.tensor_fp64
        } else if src.starts_with("bf16") {
            p.tensor_bf16
        } else {
            Some(p.tensor_fp16)
        }?;
        Some(t * 1e12)
    });
    d.tensor_family = Some(fam.to_string());
    d.tensor_ridge_point =
        d.peak_tensor_flops_per_s.zip(d.peak_dram_bytes_per_s).filter(|(_, b)| *b > 0.0).map(|(f, b)| f / b);
}

fn sum_opt(it: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    it.fold(None, |acc, v| match v {
        Some(v) => Some(acc.unwrap_or(0.0) + v),
        None => acc,
    })
}

/// Duration-weighted mean of a percentage over launches that have both.
pub(crate) fn weighted(ks: &[&KernelSol], f: impl Fn(&KernelSol) -> Option<f64>) -> Option<f64> {
    let (mut num, mut den) = (0.0, 0.0);
    let mut plain = Vec::new();
    for k in ks {
        if let Some(v) = f(k) {
            plain.push(v);
            if let Some(d) = k.duration_ns {
                num += v * d as f64;
                den += d as f64;
            }
        }
    }
    if den > 0.0 {
        Some(num / den)
    } else if !plain.is_empty() {
        Some(plain.iter().sum::<f64>() / plain.len() as f64)
    } else {
        None
    }
}

pub fn aggregate(kernels: &[KernelSol]) -> Vec<KernelAgg> {
    let mut groups: BTreeMap<&str, Vec<&KernelSol>> = BTreeMap::new();
    let mut order = Vec::new();
    for k in kernels {
        let g = groups.entry(k.name.as_str()).or_default();
        if g.is_empty() {
            order.push(k.name.as_str());
        }
        g.push(k);
    }
    let mut out: Vec<KernelAgg> = order
        .into_iter()
        .map(|name| {
            let ks = &groups[name];
            let dur: Option<i64> = ks.iter().filter_map(|k| k.duration_ns).fold(None, |a, d| Some(a.unwrap_or(0) + d));
            let flops = sum_opt(ks.iter().map(|k| k.flops));
            let tensor_flops = sum_opt(ks.iter().map(|k| k.tensor_flops));
            let bytes = sum_opt(ks.iter().map(|k| k.dram_bytes));
            // FLOP/s over the launches that have FLOPs.
            let flop_dur: f64 =
                ks.iter().filter(|k| k.flops.is_some()).filter_map(|k| k.duration_ns).sum::<i64>() as f64 * 1e-9;
            let sm = weighted(ks, |k| k.sm_pct);
            let mem = weighted(ks, |k| k.memory_pct);
            let tensor_pipe = weighted(ks, |k| k.tensor_pipe_pct);
            // The launches' own verdicts decide the roofline side when they agree.
            let sides: Vec<bool> = ks
                .iter()
                .filter_map(|k| k.verdict)
                .filter_map(|v| match v {
                    Verdict::ComputeBound => Some(true),
                    Verdict::MemoryBound => Some(false),
                    _ => None,
                })
                .collect();
            let side = sides.first().copied().filter(|f| sides.iter().all(|x| x == f));
            KernelAgg {
                name: name.to_string(),
                launches: ks.len(),
                ids: ks.iter().map(|k| k.id).collect(),
                duration_ns: dur,
                sm_pct: sm,
                memory_pct: mem,
                dram_pct: weighted(ks, |k| k.dram_pct),
                tensor_pipe_pct: tensor_pipe,
                flops_per_s: flops.filter(|_| flop_dur > 0.0).map(|f| f / flop_dur),
                flops,
                tensor_flops,
                dram_bytes: bytes,
                arithmetic_intensity: flops.zip(bytes).filter(|(_, b)| *b > 0.0).map(|(f, b)| f / b),
                verdict: sm.zip(mem).map(|(s, m)| verdict_with(s, m, tensor_pipe, side)),
            }
        })
        .collect();
    out.sort_by_key(|k| std::cmp::Reverse(k.duration_ns.unwrap_or(0)));
    out
}

pub fn analyse(r: &NcuReport) -> RooflineReport {
    let device = device(&r.launches);
    let kernels: Vec<KernelSol> = r.launches.iter().map(|l| kernel_sol_on(l, Some(&device))).collect();
    let by_name = aggregate(&kernels);
    let counted = kernels.iter().any(|k| k.tensor_flops.is_some());
    let mut notes = vec![if counted { TENSOR_COUNTED_NOTE } else { TENSOR_NOTE }.to_string()];
    if kernels.iter().all(|k| k.flops_per_s.is_none()) {
        notes.push("the export has no FADD/FMUL/FFMA instruction metrics (export with --set full or the SpeedOfLight_RooflineChart section): no FLOP/s".into());
    }
    if kernels.iter().all(|k| k.verdict.is_none()) {
        notes.push("the export lacks SM or memory throughput %: no verdict".into());
    }
    RooflineReport { format: "ncu", layout: r.layout, device, kernels, by_name, notes }
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

fn short(name: &str, n: usize) -> String {
    if name.chars().count() <= n {
        name.to_string()
    } else {
        let s: String = name.chars().take(n - 1).collect();
        format!("{s}…")
    }
}

/// The readable table of `strobe report FILE.csv`.
pub fn to_text(r: &RooflineReport) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let d = &r.device;
    let _ = writeln!(s, "Nsight Compute export: {} launches, {} kernel names", r.kernels.len(), r.by_name.len());
    let _ = writeln!(
        s,
        "device: {} cc {}  peaks ({}): FP32 {} GFLOP/s, FP64 {} GFLOP/s, FP16 {} GFLOP/s, DRAM {} GB/s, ridge {} FLOP/byte",
        d.name.as_deref().unwrap_or("?"),
        if d.cc.is_empty() { "?" } else { &d.cc },
        d.peaks_source,
        opt(d.peak_flops_per_s, |v| format!("{:.0}", v / 1e9)),
        opt(d.peak_fp64_flops_per_s, |v| format!("{:.0}", v / 1e9)),
        opt(d.peak_fp16_flops_per_s, |v| format!("{:.0}", v / 1e9)),
        opt(d.peak_dram_bytes_per_s, |v| format!("{:.0}", v / 1e9)),
        opt(d.ridge_point, |v| format!("{v:.2}")),
    );
    if let Some(c) = &d.citation {
        let _ = writeln!(s, "  (published peaks: {c})");
    }
    if let Some(t) = d.peak_tensor_flops_per_s {
        let _ = writeln!(
            s,
            "  tensor ceiling {} GFLOP/s ({}), ridge {} FLOP/byte",
            format_args!("{:.0}", t / 1e9),
            d.tensor_family.as_deref().unwrap_or("?"),
            opt(d.tensor_ridge_point, |v| format!("{v:.1}"))
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:>4}  {:>10}  {:>5}  {:>5}  {:>5}  {:>7}  {:>10}  {:>10}  {:>8}  {:<15}  name",
        "id", "dur (µs)", "SM%", "Mem%", "DRAM%", "tensor%", "GFLOP/s", "DRAM MB", "FLOP/B", "verdict"
    );
    for k in &r.kernels {
        let _ = writeln!(
            s,
            "{:>4}  {:>10}  {:>5}  {:>5}  {:>5}  {:>7}  {:>10}  {:>10}  {:>8}  {:<15}  {}",
            k.id,
            opt(k.duration_ns.map(|d| d as f64), |v| format!("{:.3}", v / 1e3)),
            opt(k.sm_pct, |v| format!("{v:.1}")),
            opt(k.memory_pct, |v| format!("{v:.1}")),
            opt(k.dram_pct, |v| format!("{v:.1}")),
            opt(k.tensor_pipe_pct, |v| format!("{v:.1}")),
            opt(k.flops_per_s, |v| format!("{:.1}", v / 1e9)),
            opt(k.dram_bytes, |v| format!("{:.3}", v / 1e6)),
            opt(k.arithmetic_intensity, |v| format!("{v:.3}")),
            k.verdict.map(|v| v.as_str()).unwrap_or("-"),
            short(&k.name, 90),
        );
    }
    let _ = writeln!(s, "\nby kernel name (longest total first):");
    let _ = writeln!(
        s,
        "{:>8}  {:>12}  {:>5}  {:>5}  {:>5}  {:<15}  name",
        "launches", "total (µs)", "SM%", "Mem%", "DRAM%", "verdict"
    );
    for a in &r.by_name {
        let _ = writeln!(
            s,
            "{:>8}  {:>12}  {:>5}  {:>5}  {:>5}  {:<15}  {}",
            a.launches,
            opt(a.duration_ns.map(|d| d as f64), |v| format!("{:.3}", v / 1e3)),
            opt(a.sm_pct, |v| format!("{v:.1}")),
            opt(a.memory_pct, |v| format!("{v:.1}")),
            opt(a.dram_pct, |v| format!("{v:.1}")),
            a.verdict.map(|v| v.as_str()).unwrap_or("-"),
            short(&a.name, 90),
        );
    }
    detail_text(&mut s, r);
    let _ = writeln!(s);
    for n in &r.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

/// The verdict paragraphs and ncu's largest rule estimates over all launches, where the
/// report has them.
fn detail_text(s: &mut String, r: &RooflineReport) {
    use std::fmt::Write;
    if r.kernels.iter().any(|k| k.verdict_text.is_some()) {
        let _ = writeln!(s, "\nwhy (longest first):");
        let mut ks: Vec<&KernelSol> = r.kernels.iter().filter(|k| k.verdict_text.is_some()).collect();
        ks.sort_by_key(|k| std::cmp::Reverse(k.duration_ns.unwrap_or(0)));
        for k in ks {
            let _ = writeln!(s, "  #{} {}: {}", k.id, short(&k.name, 60), k.verdict_text.as_deref().unwrap_or(""));
        }
    }
    let mut rules: Vec<(u64, &strobe_model::ncu::NcuRule)> = r
        .kernels
        .iter()
        .flat_map(|k| k.rules.iter().filter(|x| x.speedup_pct.is_some()).map(move |x| (k.id, x)))
        .collect();
    if rules.is_empty() {
        return;
    }
    rules.sort_by(|a, b| b.1.speedup_pct.unwrap_or(0.0).total_cmp(&a.1.speedup_pct.unwrap_or(0.0)).then(a.0.cmp(&b.0)));
    let _ = writeln!(
        s,
        "\nncu's rules, largest estimated speedup first (% of the kernel's time; global = of the whole kernel):"
    );
    for (id, x) in rules.iter().take(15) {
        let _ = writeln!(
            s,
            "  #{id:<4} {:>6.2} % {:<6} {:<3} {:<26} {}",
            x.speedup_pct.unwrap_or(0.0),
            x.speedup_type.as_deref().unwrap_or(""),
            x.kind,
            x.name,
            short(&x.message, 110)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdict_rules() {
        assert_eq!(verdict(39.9, 39.9), Verdict::UnderSaturated);
        assert_eq!(verdict(40.0, 10.0), Verdict::Balanced);
        assert_eq!(verdict(10.0, 80.1), Verdict::MemoryBound);
        assert_eq!(verdict(80.1, 10.0), Verdict::ComputeBound);
        assert_eq!(verdict(90.0, 90.0), Verdict::MemoryBound);
        // The tensor pipe counts as compute.
        assert_eq!(verdict_with(30.0, 30.0, Some(85.0), None), Verdict::ComputeBound);
        // Both over 80 %: the roofline side decides, else the larger figure.
        assert_eq!(verdict_with(84.8, 89.1, Some(84.8), Some(true)), Verdict::ComputeBound);
        assert_eq!(verdict_with(84.8, 89.1, Some(84.8), Some(false)), Verdict::MemoryBound);
        assert_eq!(verdict_with(92.0, 85.0, None, None), Verdict::ComputeBound);
        assert_eq!(verdict(80.0, 80.0), Verdict::Balanced);
        assert_eq!(serde_json::to_string(&Verdict::UnderSaturated).unwrap(), "\"under_saturated\"");
    }

    #[test]
    fn known_devices() {
        assert_eq!(known_device("9.0", Some(3.2e9)).unwrap().0, "H200 SXM");
        assert_eq!(known_device("9.0", Some(2.6e9)).unwrap().0, "H100 SXM5");
        assert_eq!(known_device("8.0", None).unwrap().0, "A100 SXM4 80GB");
        assert_eq!(known_device("10.0", None).unwrap().0, "B200");
        assert!(known_device("12.0", None).is_none());
    }
}
