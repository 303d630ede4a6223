//! The pipeline section of `strobe report` over several ranks, as text.

use super::PipelineReport;
use crate::report::fmt_ns;
use std::fmt::Write;

pub fn to_text(p: &PipelineReport) -> String {
    let mut o = String::new();
    let order: Vec<String> = p.stage_order.iter().map(|r| r.to_string()).collect();
    let _ = writeln!(
        o,
        "\nPipeline: {} stages, ranks in stage order {}; schedule {}{}; {} microbatches (from {})",
        p.stages,
        order.join(" → "),
        p.schedule.as_str(),
        if p.virtual_stages > 1 { format!(" (v = {})", p.virtual_stages) } else { String::new() },
        p.microbatches,
        match p.microbatch_source {
            super::microbatch::MicrobatchSource::Annotation => "annotations",
            super::microbatch::MicrobatchSource::Transfers => "transfer boundaries",
        }
    );
    if p.pipelines.len() > 1 {
        let _ = writeln!(o, "  {} pipelines side by side (pipeline × data parallel):", p.pipelines.len());
        for l in &p.pipelines {
            let order: Vec<String> = l.stage_order.iter().map(|r| r.to_string()).collect();
            let peers: Vec<String> = l
                .dp_peers
                .iter()
                .zip(&l.dp_groups)
                .map(|(r, g)| format!("{r:?}{}", g.as_ref().map(|g| format!(" on {g}")).unwrap_or_default()))
                .collect();
            let _ = writeln!(o, "    {}   data-parallel peers by stage: {}", order.join(" → "), peers.join(", "));
        }
    }
    let rules: std::collections::BTreeMap<&str, usize> = p.peers.iter().fold(Default::default(), |mut m, x| {
        *m.entry(x.rule.as_str()).or_default() += x.ops;
        m
    });
    if !rules.is_empty() {
        let parts: Vec<String> = rules.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let _ = writeln!(o, "  peers as global ranks: {}", parts.join(", "));
    }
    for n in &p.peer_notes {
        let _ = writeln!(o, "  note: {n}");
    }
    match (&p.theoretical_bubble_pct, &p.theoretical_bubble_formula) {
        (Some(t), Some(f)) => {
            let _ = writeln!(o, "  theoretical bubble {t:.1}% of the step: {f}");
        }
        _ => {
            let _ = writeln!(o, "  theoretical bubble: not stated (schedule not recognised)");
        }
    }
    if let Some(e) = &p.bottleneck_evidence {
        let _ = writeln!(o, "  bottleneck: {e}");
    }
    let _ = writeln!(o, "  step, stage, rank, F/B, work, bubble (%), warm-up, P2P wait, other idle, cool-down");
    for s in &p.steps {
        for (k, r) in s.stages.iter().enumerate() {
            let _ = writeln!(
                o,
                "  {:<16} {:>3} {:>5} {:>3}/{:<3} {:>10} {:>10} ({:>5.1}%) {:>10} {:>10} {:>10} {:>10}",
                if k == 0 { s.name.as_str() } else { "" },
                r.stage,
                r.rank,
                r.forward,
                r.backward,
                fmt_ns(r.work_ns),
                fmt_ns(r.bubble_ns),
                r.bubble_pct,
                fmt_ns(r.warmup_ns),
                fmt_ns(r.p2p_wait_ns),
                fmt_ns(r.other_idle_ns),
                fmt_ns(r.cooldown_ns)
            );
        }
    }
    if !p.p2p.is_empty() {
        let _ = writeln!(o, "  P2P links (from → to: pairs, bytes, transfer, wait, of which the receiver waited):");
        for l in &p.p2p {
            let _ = writeln!(
                o,
                "    stage {} (rank {}) → stage {} (rank {}): {} pairs, {} B, transfer {}, wait {} (receiver {})",
                l.from_stage,
                l.from_rank,
                l.to_stage,
                l.to_rank,
                l.pairs,
                l.bytes,
                fmt_ns(l.transfer_ns),
                fmt_ns(l.wait_ns),
                fmt_ns(l.recv_wait_ns)
            );
        }
    }
    o
}
