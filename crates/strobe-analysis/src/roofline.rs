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
//!   Tensor-core work (HMMA/GMMA) is not in these counters: GEMM and attention kernels show
//!   a low FLOP/s here; `tensor_pipe_pct` (`sm__pipe_tensor_cycles_active…`) shows it.
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

/// The note shown wherever achieved FLOP/s is.
pub const TENSOR_NOTE: &str =
    "FLOP/s counts FADD/FMUL/FFMA (and double/half) instructions only: tensor-core work (HMMA/GMMA, \
i.e. most GEMM and attention FLOPs) is not included; see tensor_pipe_pct for tensor-pipe utilisation.";

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

/// The SOL reading rules: both < 40 % → under-saturated; memory > 80 % → memory-bound;
/// compute > 80 % → compute-bound; otherwise balanced.
pub fn verdict(sm_pct: f64, memory_pct: f64) -> Verdict {
    if sm_pct < 40.0 && memory_pct < 40.0 {
        Verdict::UnderSaturated
    } else if memory_pct > 80.0 {
        Verdict::MemoryBound
    } else if sm_pct > 80.0 {
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
}

/// Figures of one launch.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
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
    pub flops_per_s: Option<f64>,
    pub flops: Option<f64>,
    pub dram_bytes: Option<f64>,
    pub dram_bytes_per_s: Option<f64>,
    pub arithmetic_intensity: Option<f64>,
    pub verdict: Option<Verdict>,
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

/// Figures of one launch.
pub fn kernel_sol(l: &NcuLaunch) -> KernelSol {
    let sm = l.value(SM_PCT);
    let mem = l.value(MEMORY_PCT);
    let flops_per_s = achieved_flops_per_s(l);
    let dur = l.value(DURATION);
    let bytes = dram_bytes(l);
    let bps = dram_bytes_per_s(l, bytes);
    KernelSol {
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
        tensor_pipe_pct: l.first_value(&TENSOR_PCT),
        flops_per_s,
        flops: flops_per_s.zip(dur).map(|(f, d)| f * d * 1e-9),
        dram_bytes: bytes,
        dram_bytes_per_s: bps,
        arithmetic_intensity: flops_per_s.zip(bps).filter(|(_, b)| *b > 0.0).map(|(f, b)| f / b),
        verdict: sm.zip(mem).map(|(s, m)| verdict(s, m)),
    }
}

/// Published peaks (non-tensor vector FMA and DRAM bandwidth, SXM parts at boost clock).
/// Sources:
/// - A100 SXM4 80GB: NVIDIA A100 Tensor Core GPU datasheet (2021): FP64 9.7 TFLOPS, FP32
///   19.5 TFLOPS, HBM2e 2,039 GB/s; FP16 non-tensor 78 TFLOPS from the NVIDIA A100 Tensor
///   Core GPU Architecture whitepaper, table 1.
/// - H100 SXM5: NVIDIA H100 Tensor Core GPU datasheet: FP64 34 TFLOPS, FP32 67 TFLOPS,
///   3.35 TB/s; FP16 non-tensor 133.8 TFLOPS from the NVIDIA H100 Tensor Core GPU
///   Architecture whitepaper (v1.04), table 2.
/// - H200 SXM: NVIDIA H200 Tensor Core GPU datasheet: FP64 34 TFLOPS, FP32 67 TFLOPS,
///   4.8 TB/s (same GH100 SMs as H100 SXM, so FP16 non-tensor as H100).
/// - B200: NVIDIA HGX B200 datasheet (8-GPU totals ÷ 8): FP64 37 TFLOPS, FP32 75 TFLOPS,
///   HBM3e 8 TB/s.
/// - V100 SXM2: NVIDIA Tesla V100 datasheet: FP64 7.8 TFLOPS, FP32 15.7 TFLOPS, 900 GB/s.
///
/// `cc` is the export's compute capability; CC 9.0 is H200 when the DRAM clock is HBM3e's
/// (≥ 2.9 GHz), else H100.
pub fn known_device(cc: &str, dram_hz: Option<f64>) -> Option<(&'static str, [Option<f64>; 3], f64, &'static str)> {
    let t = 1e12;
    Some(match cc.trim() {
        "7.0" => ("V100 SXM2", [Some(15.7 * t), Some(7.8 * t), Some(31.4 * t)], 0.9e12, "NVIDIA Tesla V100 datasheet"),
        "8.0" => (
            "A100 SXM4 80GB",
            [Some(19.5 * t), Some(9.7 * t), Some(78.0 * t)],
            2.039e12,
            "NVIDIA A100 datasheet / A100 architecture whitepaper",
        ),
        "9.0" if dram_hz.is_some_and(|h| h >= 2.9e9) => (
            "H200 SXM",
            [Some(67.0 * t), Some(34.0 * t), Some(133.8 * t)],
            4.8e12,
            "NVIDIA H200 datasheet / H100 architecture whitepaper",
        ),
        "9.0" => (
            "H100 SXM5",
            [Some(67.0 * t), Some(34.0 * t), Some(133.8 * t)],
            3.35e12,
            "NVIDIA H100 datasheet / H100 architecture whitepaper",
        ),
        "10.0" => {
            ("B200", [Some(75.0 * t), Some(37.0 * t), None], 8.0e12, "NVIDIA HGX B200 datasheet (8-GPU totals / 8)")
        }
        _ => return None,
    })
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
    d
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
            let bytes = sum_opt(ks.iter().map(|k| k.dram_bytes));
            // FLOP/s over the launches that have FLOPs.
            let flop_dur: f64 =
                ks.iter().filter(|k| k.flops.is_some()).filter_map(|k| k.duration_ns).sum::<i64>() as f64 * 1e-9;
            let sm = weighted(ks, |k| k.sm_pct);
            let mem = weighted(ks, |k| k.memory_pct);
            KernelAgg {
                name: name.to_string(),
                launches: ks.len(),
                ids: ks.iter().map(|k| k.id).collect(),
                duration_ns: dur,
                sm_pct: sm,
                memory_pct: mem,
                dram_pct: weighted(ks, |k| k.dram_pct),
                tensor_pipe_pct: weighted(ks, |k| k.tensor_pipe_pct),
                flops_per_s: flops.filter(|_| flop_dur > 0.0).map(|f| f / flop_dur),
                flops,
                dram_bytes: bytes,
                arithmetic_intensity: flops.zip(bytes).filter(|(_, b)| *b > 0.0).map(|(f, b)| f / b),
                verdict: sm.zip(mem).map(|(s, m)| verdict(s, m)),
            }
        })
        .collect();
    out.sort_by_key(|k| std::cmp::Reverse(k.duration_ns.unwrap_or(0)));
    out
}

pub fn analyse(r: &NcuReport) -> RooflineReport {
    let kernels: Vec<KernelSol> = r.launches.iter().map(kernel_sol).collect();
    let by_name = aggregate(&kernels);
    let mut notes = vec![TENSOR_NOTE.to_string()];
    if kernels.iter().all(|k| k.flops_per_s.is_none()) {
        notes.push("the export has no FADD/FMUL/FFMA instruction metrics (export with --set full or the SpeedOfLight_RooflineChart section): no FLOP/s".into());
    }
    if kernels.iter().all(|k| k.verdict.is_none()) {
        notes.push("the export lacks SM or memory throughput %: no verdict".into());
    }
    RooflineReport { format: "ncu", layout: r.layout, device: device(&r.launches), kernels, by_name, notes }
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
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:>4}  {:>10}  {:>5}  {:>5}  {:>5}  {:>7}  {:>10}  {:>10}  {:>8}  {:<15}  name",
        "id", "dur (us)", "SM%", "Mem%", "DRAM%", "tensor%", "GFLOP/s", "DRAM MB", "FLOP/B", "verdict"
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
        "launches", "total (us)", "SM%", "Mem%", "DRAM%", "verdict"
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
    let _ = writeln!(s);
    for n in &r.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
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
