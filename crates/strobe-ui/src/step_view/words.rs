//! A step's losses in words: every part but the model's own time at peak, the model-op
//! inefficiency split by op class, each with the name of what it is made of where the
//! breakdown gives one ("20 % GEMM inefficiency, 14 % host idle (cpu_stall_sleep)").

use strobe_analysis::attribution::{Evidence, StepBreakdown, PART_NAMES};

/// One named loss of a step.
#[derive(Clone, Debug, PartialEq)]
pub struct Loss {
    pub label: String,
    pub ns: i64,
}

/// How an op class reads: GEMM in capitals (as people write it), the others as named.
pub fn class_label(name: &str) -> String {
    if name.eq_ignore_ascii_case("gemm") {
        "GEMM".into()
    } else {
        name.replace('_', " ")
    }
}

/// The step's losses, largest first (ties in part order); none of 0 ns.
pub fn losses(s: &StepBreakdown) -> Vec<Loss> {
    let d = &s.details;
    let mut out: Vec<Loss> = Vec::new();
    let named = |label: &str, top: &[Evidence]| match top.first() {
        Some(e) if !e.name.is_empty() => format!("{label} ({})", e.name),
        _ => label.to_string(),
    };
    for ((key, label), ns) in PART_NAMES.iter().zip(s.parts.values()) {
        match *key {
            "model_at_peak_ns" => {}
            "model_ops_inefficiency_ns" => {
                // each class a loss of its own; what the classes leave is the part's rest
                let mut left = ns;
                for e in d.inefficiency_by_class.iter().filter(|e| e.ns > 0) {
                    out.push(Loss { label: format!("{} inefficiency", class_label(&e.name)), ns: e.ns });
                    left -= e.ns;
                }
                if left > 0 {
                    let label = if d.inefficiency_by_class.is_empty() {
                        label.to_string()
                    } else {
                        format!("{label} (other classes)")
                    };
                    out.push(Loss { label, ns: left });
                }
            }
            "other_gpu_work_ns" => out.push(Loss { label: named(label, &d.other_gpu_work_top), ns }),
            "idle_host_ns" => out.push(Loss { label: named(label, &d.idle_host_held_by), ns }),
            "comm_wait_ns" => {
                let on = d.comm_wait_on.iter().find_map(|e| e.rank);
                let label = on.map_or_else(|| label.to_string(), |r| format!("{label} (on rank {r})"));
                out.push(Loss { label, ns });
            }
            _ => out.push(Loss { label: label.to_string(), ns }),
        }
    }
    out.retain(|l| l.ns > 0);
    // stable: equal losses keep the parts' order
    out.sort_by_key(|l| std::cmp::Reverse(l.ns));
    out
}

/// The step's `n` largest losses as a share of the step: "20 % GEMM inefficiency, 14 % host
/// idle (cpu_stall_sleep)". None for a step of no length or no loss.
pub fn top_losses(s: &StepBreakdown, n: usize) -> Option<String> {
    if s.dur_ns <= 0 {
        return None;
    }
    let words: Vec<String> = losses(s)
        .into_iter()
        .take(n)
        .map(|l| format!("{:.0} % {}", l.ns as f64 * 100.0 / s.dur_ns as f64, l.label))
        .collect();
    (!words.is_empty()).then(|| words.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use strobe_analysis::attribution::{Details, Parts};

    fn ev(name: &str, ns: i64) -> Evidence {
        Evidence { name: name.into(), ns, ..Default::default() }
    }

    /// A 90 ms step: 30 ms model at peak, 18 ms GEMM + 4 ms attention inefficiency, 12.6 ms
    /// host idle in `cpu_stall_sleep`, the rest smaller.
    fn gpt_step() -> StepBreakdown {
        let parts = Parts {
            model_at_peak_ns: 30_000_000,
            model_ops_inefficiency_ns: 22_000_000,
            other_gpu_work_ns: 9_000_000,
            idle_host_ns: 12_600_000,
            idle_launch_ns: 10_000_000,
            idle_other_ns: 6_400_000,
            ..Default::default()
        };
        let details = Details {
            inefficiency_by_class: vec![ev("gemm", 18_000_000), ev("attention", 4_000_000)],
            idle_host_held_by: vec![ev("cpu_stall_sleep", 12_600_000)],
            other_gpu_work_top: vec![ev("Optimizer.step#AdamW.step", 9_000_000)],
            ..Default::default()
        };
        StepBreakdown { step: "ProfilerStep#3".into(), dur_ns: parts.total(), parts, details, ..Default::default() }
    }

    #[test]
    fn the_two_largest_losses_read_as_shares_of_the_step() {
        let s = gpt_step();
        assert_eq!(s.dur_ns, 90_000_000);
        // 18 / 90 = 20 %, 12.6 / 90 = 14 %
        assert_eq!(top_losses(&s, 2).as_deref(), Some("20 % GEMM inefficiency, 14 % host idle (cpu_stall_sleep)"));
        let all = losses(&s);
        assert_eq!(all.iter().map(|l| l.ns).sum::<i64>(), 60_000_000, "every part but the model's at-peak time");
        assert_eq!(all[2].label, "launch overhead");
    }

    #[test]
    fn no_loss_or_no_length_says_nothing() {
        assert_eq!(top_losses(&StepBreakdown::default(), 2), None);
        let parts = Parts { model_at_peak_ns: 5, ..Default::default() };
        assert_eq!(top_losses(&StepBreakdown { dur_ns: 5, parts, ..Default::default() }, 2), None);
    }

    #[test]
    fn inefficiency_without_classes_is_one_loss() {
        let parts = Parts { model_ops_inefficiency_ns: 40, comm_wait_ns: 60, ..Default::default() };
        let details =
            Details { comm_wait_on: vec![Evidence { rank: Some(1), ..ev("ncclAllReduce", 60) }], ..Default::default() };
        let s = StepBreakdown { dur_ns: 100, parts, details, ..Default::default() };
        assert_eq!(top_losses(&s, 2).as_deref(), Some("60 % comm wait (on rank 1), 40 % model-op inefficiency"));
    }
}
