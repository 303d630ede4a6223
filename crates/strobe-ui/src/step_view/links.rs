//! From a part of a step to its evidence, as commands (the pane never reaches into another):
//! an op class opens the Efficiency tab filtered to it, other GPU work, a comm wait or a
//! host-idle stretch reveals the span that shows it (the kernel, the straggler's collective,
//! the CPU range that held the host), a pipeline bubble shows the step with its pipeline strip
//! and the Pipeline tab, and the other idle parts show the step on the timeline.

use super::words::class_label;
use crate::commands::Command;
use crate::workspace::{SpanRef, TraceId};
use strobe_analysis::attribution::{Evidence, StepBreakdown};

/// One line of a part's evidence: what it is, its ns, and what a click asks for.
#[derive(Clone, Debug, PartialEq)]
pub struct EvidenceLink {
    pub label: String,
    pub ns: i64,
    pub commands: Vec<Command>,
}

/// Shows step `s` of `trace` on the timeline.
pub fn show_step(trace: TraceId, s: &StepBreakdown) -> Command {
    Command::ShowRankStep { trace, t0: s.start_ns, t1: s.start_ns + s.dur_ns }
}

fn span_links(trace: TraceId, list: &[Evidence], what: impl Fn(&Evidence) -> String) -> Vec<EvidenceLink> {
    list.iter()
        .map(|e| EvidenceLink {
            label: what(e),
            ns: e.ns,
            commands: e.span.map(|span| Command::RevealSpan(SpanRef { trace, span })).into_iter().collect(),
        })
        .collect()
}

/// The evidence lines of part `key` (a `PART_NAMES` key) in step `s`, largest first as the
/// breakdown lists them.
pub fn evidence(trace: TraceId, s: &StepBreakdown, key: &str) -> Vec<EvidenceLink> {
    let d = &s.details;
    match key {
        "model_ops_inefficiency_ns" => d
            .inefficiency_by_class
            .iter()
            .map(|e| EvidenceLink {
                label: class_label(&e.name),
                ns: e.ns,
                commands: vec![Command::ShowEfficiency { trace, class: Some(e.name.clone()) }],
            })
            .collect(),
        "other_gpu_work_ns" => span_links(trace, &d.other_gpu_work_top, |e| e.name.clone()),
        "comm_wait_ns" => span_links(trace, &d.comm_wait_on, |e| match e.rank {
            Some(r) => format!("{} (waiting for rank {r})", e.name),
            None => e.name.clone(),
        }),
        "idle_host_ns" => span_links(trace, &d.idle_host_held_by, |e| e.name.clone()),
        _ => Vec::new(),
    }
}

/// What a click on part `key` itself asks for: its largest evidence where that links, else
/// where the part is seen (the Efficiency tab for the model's ops, the pipeline for a
/// bubble, the step on the timeline for the rest).
pub fn part_commands(trace: TraceId, s: &StepBreakdown, key: &str) -> Vec<Command> {
    if let Some(first) = evidence(trace, s, key).into_iter().find(|e| !e.commands.is_empty()) {
        return first.commands;
    }
    match key {
        "model_at_peak_ns" | "model_ops_inefficiency_ns" => vec![Command::ShowEfficiency { trace, class: None }],
        "pipeline_bubble_ns" => vec![show_step(trace, s), Command::ShowPipeline],
        _ => vec![show_step(trace, s)],
    }
}

/// How a click on part `key` reads in its tooltip.
pub fn part_link_text(key: &str) -> &'static str {
    match key {
        "model_at_peak_ns" => "click: the Efficiency tab",
        "model_ops_inefficiency_ns" => "click: the Efficiency tab, filtered to the largest op class",
        "other_gpu_work_ns" => "click: its largest contributor on the timeline",
        "comm_wait_ns" => "click: the collective that waited, on the timeline",
        "idle_host_ns" => "click: the CPU range that held the host, on the timeline",
        "pipeline_bubble_ns" => "click: the step with its pipeline strip, and the Pipeline tab",
        _ => "click: the step on the timeline",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strobe_analysis::attribution::{Details, Parts};

    #[test]
    fn each_part_links_to_its_evidence() {
        let t = TraceId(3);
        let details = Details {
            inefficiency_by_class: vec![Evidence { name: "gemm".into(), ns: 5, ..Default::default() }],
            idle_host_held_by: vec![Evidence { name: "cpu_stall_sleep".into(), ns: 4, span: Some(42), rank: None }],
            comm_wait_on: vec![Evidence { name: "ncclAllReduce".into(), ns: 3, span: None, rank: Some(1) }],
            ..Default::default()
        };
        let s = StepBreakdown { start_ns: 100, dur_ns: 50, parts: Parts::default(), details, ..Default::default() };
        assert_eq!(
            part_commands(t, &s, "model_ops_inefficiency_ns"),
            vec![Command::ShowEfficiency { trace: t, class: Some("gemm".into()) }]
        );
        assert_eq!(part_commands(t, &s, "idle_host_ns"), vec![Command::RevealSpan(SpanRef { trace: t, span: 42 })]);
        // a wait whose collective has no span: the step, where it is seen
        let step = Command::ShowRankStep { trace: t, t0: 100, t1: 150 };
        assert_eq!(part_commands(t, &s, "comm_wait_ns"), vec![step.clone()]);
        assert_eq!(evidence(t, &s, "comm_wait_ns")[0].label, "ncclAllReduce (waiting for rank 1)");
        assert_eq!(part_commands(t, &s, "pipeline_bubble_ns"), vec![step.clone(), Command::ShowPipeline]);
        assert_eq!(part_commands(t, &s, "idle_launch_ns"), vec![step]);
        assert_eq!(part_commands(t, &s, "model_at_peak_ns"), vec![Command::ShowEfficiency { trace: t, class: None }]);
    }
}
