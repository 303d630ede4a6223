//! The Ops section of `strobe report`'s text: torch.profiler's `key_averages().table()` columns
//! for the host rows (CPU ops, `record_function` ranges, runtime calls) by device total; the
//! device rows are the kernel table above it.

use super::OpRow;
use crate::report::fmt_ns;
use std::fmt::Write;

/// The first `top` host rows of `rows` (already by device total); nothing without rows.
pub fn write(o: &mut String, rows: &[OpRow], top: usize) {
    let host: Vec<&OpRow> = rows.iter().filter(|r| !r.on_device).collect();
    if host.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\nOps (torch.profiler key_averages; top {} of {} by device total):",
        top.min(host.len()),
        host.len()
    );
    let _ = writeln!(
        o,
        "  {:>7} {:>12} {:>12} {:>12} {:>12} {:>12}  name",
        "calls", "CPU total", "self CPU", "CPU mean", "device total", "self device"
    );
    for r in host.into_iter().take(top) {
        let name: String =
            if r.name.chars().count() > 70 { r.name.chars().take(69).chain(['…']).collect() } else { r.name.clone() };
        let _ = writeln!(
            o,
            "  {:>7} {:>12} {:>12} {:>12} {:>12} {:>12}  {}",
            r.count,
            fmt_ns(r.cpu_total_ns),
            fmt_ns(r.self_cpu_ns),
            fmt_ns(r.cpu_mean_ns()),
            fmt_ns(r.device_total_ns),
            fmt_ns(r.self_device_ns),
            name
        );
    }
}
