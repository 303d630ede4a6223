//! The efficiency section of `strobe report`'s text.

use super::Efficiency;
use crate::report::fmt_ns;
use std::fmt::Write;

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

fn short(name: &str, n: usize) -> String {
    if name.chars().count() <= n {
        name.to_string()
    } else {
        name.chars().take(n - 1).chain(['…']).collect()
    }
}

/// Ops (top 15 by time lost), kernels (top 10) and MFU per step; nothing when no op has a
/// formula.
pub fn write(o: &mut String, e: &Efficiency) {
    if e.ops.is_empty() && e.steps.iter().all(|s| s.model_flops == 0.0) {
        for n in &e.notes {
            let _ = writeln!(o, "\nEfficiency: {n}");
        }
        return;
    }
    let d = &e.device;
    let peak = |k: &str| d.peaks.get(k).copied();
    let _ = writeln!(
        o,
        "\nEfficiency (roofline from recorded shapes; device {} = {}, peaks {}: bf16 tensor {} TFLOP/s, fp32 {} TFLOP/s, HBM {} GB/s)",
        if d.name.is_empty() { "?" } else { &d.name },
        d.matched.as_deref().unwrap_or("?"),
        d.source,
        opt(peak("tensor_bf16"), |v| format!("{:.0}", v / 1e12)),
        opt(peak("fp32"), |v| format!("{:.1}", v / 1e12)),
        opt(peak(super::peaks::HBM), |v| format!("{:.0}", v / 1e9)),
    );
    let pct = if e.op_gpu_ns > 0 { e.modeled_gpu_ns as f64 * 100.0 / e.op_gpu_ns as f64 } else { 0.0 };
    let _ = writeln!(
        o,
        "  ops with a formula cover {} of {} op GPU time ({pct:.1}%)",
        fmt_ns(e.modeled_gpu_ns),
        fmt_ns(e.op_gpu_ns)
    );
    let _ = writeln!(
        o,
        "  {:>6} {:>11} {:>9} {:>8} {:>7} {:>7} {:>11}  {:<7} {:<11} name",
        "count", "GPU", "TFLOP/s", "GB/s", "%peak", "eff", "lost", "bound", "unit"
    );
    for x in e.ops.iter().take(15) {
        row(o, x.count, x.gpu_ns, &x.figures, x.unit.as_str(), &x.name);
    }
    if !e.kernels.is_empty() {
        let _ = writeln!(o, "  kernels (work of the op that launched them):");
        for k in e.kernels.iter().take(10) {
            row(o, k.count, k.gpu_ns, &k.figures, k.unit.as_str(), &short(&k.name, 80));
        }
    }
    for s in &e.steps {
        let _ = writeln!(
            o,
            "  {:<20} {:>11}  model {:.2} TFLOP  MFU {}{}",
            s.name,
            fmt_ns(s.dur_ns),
            s.model_flops / 1e12,
            opt(s.mfu, |v| format!("{:.1}%", v * 100.0)),
            s.hfu.map(|h| format!("  HFU {:.1}%", h * 100.0)).unwrap_or_default()
        );
    }
    if let Some(u) = e.unmodeled.first() {
        let _ = writeln!(o, "  most GPU time without a formula: {} ({}, {}×)", u.name, fmt_ns(u.gpu_ns), u.count);
    }
    for n in &e.notes {
        let _ = writeln!(o, "  note: {n}");
    }
}

/// One line of the ops or kernels table.
fn row(o: &mut String, count: u64, gpu_ns: i64, f: &super::Figures, unit: &str, name: &str) {
    let _ = writeln!(
        o,
        "  {:>6} {:>11} {:>9} {:>8} {:>7} {:>7} {:>11}  {:<7} {:<11} {}",
        count,
        fmt_ns(gpu_ns),
        opt(f.tflops_per_s, |v| format!("{v:.1}")),
        opt(f.gbps, |v| format!("{v:.0}")),
        opt(f.pct_of_peak, |v| format!("{v:.1}%")),
        opt(f.efficiency, |v| format!("{:.0}%", v * 100.0)),
        opt(f.lost_ns, |v| fmt_ns(v.round() as i64)),
        f.bound.map(|b| b.as_str()).unwrap_or("-"),
        unit,
        name
    );
}
