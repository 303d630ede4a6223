//! The text report's line per step: "critical path 42.1 ms: 61 % GPU compute, 20 % CPU, …;
//! top: aten::mm".

use super::CriticalPathEntry;
use crate::attribution::{Bounds, CriticalPath};
use crate::report::fmt_ns;
use std::fmt::Write;

/// The bounds with their labels, in the order the line gives them when tied.
fn labelled(b: &Bounds) -> [(&'static str, i64); 6] {
    [
        ("GPU compute", b.gpu_compute_ns),
        ("GPU comm", b.gpu_comm_ns),
        ("CPU", b.cpu_ns),
        ("data loading", b.data_loading_ns),
        ("launch overhead", b.launch_overhead_ns),
        ("kernel gaps", b.kernel_gap_ns),
    ]
}

pub fn line(cp: &CriticalPath) -> String {
    let mut parts: Vec<(&str, i64)> = labelled(&cp.bounds).into_iter().filter(|&(_, ns)| ns > 0).collect();
    parts.sort_by_key(|&(_, ns)| std::cmp::Reverse(ns));
    let total = cp.length_ns.max(1) as f64;
    let shares: Vec<String> =
        parts.iter().map(|(label, ns)| format!("{:.0} % {label}", *ns as f64 * 100.0 / total)).collect();
    let mut o = format!("critical path {}: {}", fmt_ns(cp.length_ns), shares.join(", "));
    if let Some(t) = cp.top_ops.first() {
        let _ = write!(o, "; top: {}", t.name);
    }
    o
}

/// The report's block: one line per step, or its note.
pub fn write(o: &mut String, entries: &[CriticalPathEntry]) {
    if entries.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nCritical path per step (HTA's lightweight definition, docs/critical_path.md):");
    for e in entries {
        match (&e.path, &e.note) {
            (Some(cp), _) => {
                let _ = writeln!(o, "  {:<20} {}", e.step, line(cp));
            }
            (None, note) => {
                let _ = writeln!(o, "  {:<20} {}", e.step, note.as_deref().unwrap_or("no critical path"));
            }
        }
    }
}
