//! The attribution as text: one line per step, the model at peak first, then every loss of at
//! least half a percent by size, the model-op inefficiency per op class and the other parts
//! with their largest contributor ("14 % host idle: cpu_stall_sleep").

use super::{StepBreakdown, PART_NAMES};
use std::fmt::Write;

fn pct(ns: i64, dur: i64) -> f64 {
    if dur > 0 {
        ns as f64 * 100.0 / dur as f64
    } else {
        0.0
    }
}

/// The step's line, without its name.
pub fn step_line(b: &StepBreakdown) -> String {
    let dur = b.dur_ns;
    let mut items: Vec<(i64, String)> = Vec::new();
    for (k, (key, label)) in PART_NAMES.iter().enumerate() {
        let ns = b.parts.values()[k];
        match *key {
            "model_at_peak_ns" => continue,
            "model_ops_inefficiency_ns" => {
                let listed: i64 = b.details.inefficiency_by_class.iter().map(|e| e.ns).sum();
                for e in &b.details.inefficiency_by_class {
                    items.push((e.ns, format!("{} inefficiency", e.name)));
                }
                if ns > listed {
                    items.push((ns - listed, label.to_string()));
                }
            }
            _ if ns <= 0 => {}
            "other_gpu_work_ns" => items.push((ns, named(label, b.details.other_gpu_work_top.first()))),
            "comm_wait_ns" => {
                let late = b.details.comm_wait_on.first().map(|e| match e.rank {
                    Some(r) => format!("{} (rank {r} late)", short(&e.name)),
                    None => short(&e.name),
                });
                items.push((ns, late.map_or(label.to_string(), |l| format!("{label}: {l}"))));
            }
            "idle_host_ns" => items.push((ns, named(label, b.details.idle_host_held_by.first()))),
            _ => items.push((ns, label.to_string())),
        }
    }
    items.sort_by_key(|x| std::cmp::Reverse(x.0));
    let mut line = format!("{:.1} ms: {:.0} % model at peak", dur as f64 / 1e6, pct(b.parts.model_at_peak_ns, dur));
    for (ns, what) in items.iter().filter(|x| pct(x.0, dur) >= 0.5) {
        let _ = write!(line, ", {:.0} % {what}", pct(*ns, dur));
    }
    line
}

fn named(label: &str, top: Option<&super::Evidence>) -> String {
    match top {
        Some(e) => format!("{label}: {}", short(&e.name)),
        None => label.to_string(),
    }
}

/// A name cut to 60 characters (kernel names run to hundreds).
fn short(name: &str) -> String {
    if name.chars().count() > 60 {
        name.chars().take(59).chain(['…']).collect()
    } else {
        name.to_string()
    }
}

/// The section of the text report: a header and one line per step (with its rank where the
/// steps are several ranks'), then the notes of each step that has some.
pub fn write(o: &mut String, steps: &[StepBreakdown]) {
    if steps.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nWhere each step went (docs/attribution.md; parts add up to the step):");
    let width = steps.iter().map(|s| s.step.chars().count()).max().unwrap_or(0).min(30);
    for s in steps {
        let rank = s.rank.map_or(String::new(), |r| format!("rank {r:<3} "));
        let _ = writeln!(o, "  {rank}{:<width$}  step {}", s.step, step_line(s));
        for n in &s.notes {
            let _ = writeln!(o, "  {:width$}    note: {n}", "", width = width + rank.len());
        }
    }
}
