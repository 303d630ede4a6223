//! The report's lines on a GPU's sampled metrics: their means and 90th percentiles, the
//! busy-but-not-working time, and memory-bound kernels far from the DRAM bandwidth.

use super::kernels::KernelMetrics;
use super::not_working::BusyNotWorking;
use super::GpuMetric;
use crate::report::fmt_ns;
use std::fmt::Write;

fn value(v: f64, unit: &str) -> String {
    let n = if v.abs() >= 100.0 { format!("{v:.0}") } else { format!("{v:.1}") };
    match unit {
        "" => n,
        "%" => format!("{n}%"),
        u => format!("{n} {u}"),
    }
}

/// A GPU's lines of the text report: its metrics, then what they say.
pub fn gpu_lines(o: &mut String, g: &crate::gpu_time::GpuTime) {
    metrics_line(o, &g.metrics);
    if let Some(b) = &g.busy_not_working {
        not_working_line(o, b, g.start_ns);
    }
    low_dram_lines(o, &g.kernel_metrics);
}

/// One line: each usual metric's mean and p90, the others counted.
pub fn metrics_line(o: &mut String, metrics: &[GpuMetric]) {
    let Some(first) = metrics.first() else { return };
    let usual: Vec<&GpuMetric> =
        metrics.iter().filter(|m| strobe_model::gpu_metrics::is_usual(&format!("{} [{}]", m.name, m.unit))).collect();
    let shown: Vec<String> =
        usual.iter().map(|m| format!("{} {} / {}", m.name, value(m.mean, &m.unit), value(m.p90, &m.unit))).collect();
    let rest = metrics.len() - usual.len();
    let more = if rest > 0 { format!("; {rest} more in --json") } else { String::new() };
    let _ = writeln!(o, "  metrics (mean / p90, {} samples each): {}{more}", first.samples, shown.join(", "));
}

/// The busy-but-not-working line, where there is such time.
pub fn not_working_line(o: &mut String, b: &BusyNotWorking, t0: i64) {
    let sm_count = b.sm_count;
    if b.low_ns == 0 {
        return;
    }
    let _ = write!(
        o,
        "  busy but not working: {} of {} kernel-busy time ({:.1}%) had SMs Active < {:.0}%",
        fmt_ns(b.low_ns),
        fmt_ns(b.busy_ns),
        b.low_pct,
        b.threshold_pct
    );
    if let Some(s) = b.stretches.first() {
        let _ = write!(
            o,
            "; longest {} at {} from start, SMs Active {:.0}%",
            fmt_ns(s.end_ns - s.start_ns),
            fmt_ns(s.start_ns - t0),
            s.sms_active
        );
        if let Some(t) = s.tensor_active {
            let _ = write!(o, ", Tensor Active {t:.0}%");
        }
        if let Some(k) = &s.kernel {
            let _ = write!(o, ", mostly {}", short(k));
            match (s.grid_blocks, sm_count) {
                (Some(g), Some(sms)) if g < sms as u64 => {
                    let _ = write!(o, " ({g} blocks for {sms} SMs: a grid too small to fill the GPU)");
                }
                (Some(g), Some(sms)) => {
                    let _ = write!(o, " ({g} blocks on {sms} SMs: look at its last wave, the tail)");
                }
                _ => {}
            }
        }
    }
    let _ = writeln!(o);
}

/// A line per memory-bound kernel far below the DRAM bandwidth.
pub fn low_dram_lines(o: &mut String, kernels: &[KernelMetrics]) {
    for k in kernels.iter().filter(|k| k.low_dram) {
        let _ = writeln!(
            o,
            "  memory-bound ({}) at DRAM {:.0}% of peak: {} ({} launches, {}): latency-bound, not bandwidth-bound",
            k.memory_bound.as_deref().unwrap_or("-"),
            k.dram_pct.unwrap_or(0.0),
            short(&k.name),
            k.count,
            fmt_ns(k.gpu_ns)
        );
    }
}

fn short(name: &str) -> String {
    if name.chars().count() > 70 {
        name.chars().take(69).chain(['…']).collect()
    } else {
        name.to_string()
    }
}
