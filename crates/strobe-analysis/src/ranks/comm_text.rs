//! The text of the several-rank report's process groups, bandwidth table and slow links.

use super::report::MultiRankReport;
use crate::report::fmt_ns;
use std::fmt::Write;

fn gbps(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.2}")).unwrap_or_else(|| "-".into())
}

pub fn to_text(r: &MultiRankReport) -> String {
    let mut o = String::new();
    if !r.process_groups.is_empty() {
        let _ = writeln!(o, "\nProcess groups:");
        for g in &r.process_groups {
            let _ = writeln!(o, "  {:<24} ranks {:?}", g.label(), g.ranks);
        }
    }
    if !r.comm_groups.is_empty() {
        let _ = writeln!(
            o,
            "\nCollective bandwidth per group (GB/s; busbw as nccl-tests): group, kind, size, count, busbw median / p10, algbw median, time, link (expected)"
        );
        for c in &r.comm_groups {
            let name = match &c.desc {
                Some(d) if d != "undefined" => format!("{} ({d})", c.group),
                _ => c.group.clone(),
            };
            let _ = writeln!(
                o,
                "  {:<20} {:<15} {:<16} {:>4}  {:>8} / {:<8} {:>8}  {:>10}  {} ({})",
                name,
                c.kind,
                c.size_class,
                c.count,
                gbps(c.busbw_median_gbps),
                gbps(c.busbw_p10_gbps),
                gbps(c.algbw_median_gbps),
                fmt_ns(c.transfer_ns),
                c.link,
                c.expected_gbps.map(|g| format!("{g:.0} GB/s")).unwrap_or_else(|| "unknown".into())
            );
        }
        let unknown = r.group_collectives.iter().filter(|c| c.bytes.is_none()).count();
        if unknown > 0 {
            let why = r.group_collectives.iter().find_map(|c| c.size_unknown.clone()).unwrap_or_default();
            let _ = writeln!(o, "  {unknown} instances of unknown size ({why})");
        }
    }
    if !r.group_collectives.is_empty() {
        let _ = writeln!(o, "\nSlow links:");
        if r.slow_links.is_empty() {
            let _ = writeln!(
                o,
                "  none (a group under {:.0}% of its peer groups' bus bandwidth, same kind and size, with nobody late)",
                100.0 * super::comm_groups::SLOW_FRACTION
            );
        }
        for s in &r.slow_links {
            let _ = writeln!(o, "  {}", s.evidence);
        }
    }
    if !r.comm_notes.is_empty() {
        let _ = writeln!(o, "\nProcess-group notes:");
        for n in &r.comm_notes {
            let _ = writeln!(o, "  {n}");
        }
    }
    o
}
