//! The Ranks tab's per-group bandwidth table (below the HTA tables): one row per process
//! group, collective kind and size class with its bus bandwidth against the link's speed
//! (`comm_groups`), the slow-link verdict above it. Clicking a row shows its slowest instance
//! on its first rank.

use super::heat_map::Click;
use super::Computed;
use egui::RichText;
use egui_extras::{Column, TableBuilder};

fn gbps(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.2}")).unwrap_or_else(|| "-".into())
}

/// The slow-link verdict line (beside the straggler verdict).
pub fn verdict(c: &Computed) -> Option<String> {
    let r = &c.report;
    if r.group_collectives.is_empty() {
        return None;
    }
    Some(match r.slow_links.as_slice() {
        [] => "No slow link: every group moves its collectives within half of its peer groups' bus bandwidth.".into(),
        [one] => one.evidence.clone(),
        many => format!(
            "{} slow links: {}",
            many.len(),
            many.iter().map(|s| s.evidence.as_str()).collect::<Vec<_>>().join("; ")
        ),
    })
}

pub fn ui(ui: &mut egui::Ui, c: &Computed) -> Option<Click> {
    let r = &c.report;
    if let Some(v) = verdict(c) {
        ui.label(RichText::new(v).strong());
    }
    if r.comm_groups.is_empty() {
        return None;
    }
    ui.strong("Collective bandwidth per process group");
    ui.weak("Bus bandwidth as nccl-tests defines it (GB/s), over the time after every rank arrived. Click a row for its slowest instance.");
    let mut click = None;
    ui.push_id("comm_groups", |ui| {
        TableBuilder::new(ui)
            .id_salt("comm_groups_table")
            .striped(true)
            .sense(egui::Sense::click())
            .column(Column::auto().at_least(120.0))
            .columns(Column::auto().at_least(70.0), 8)
            .header(18.0, |mut h| {
                for t in
                    ["group", "ranks", "kind", "size", "count", "busbw median", "busbw p10", "time ms", "link (GB/s)"]
                {
                    h.col(|ui| {
                        ui.strong(t);
                    });
                }
            })
            .body(|b| {
                b.rows(18.0, r.comm_groups.len(), |mut row| {
                    let g = &r.comm_groups[row.index()];
                    let name = match &g.desc {
                        Some(d) if d != "undefined" => format!("{} ({d})", g.group),
                        _ => g.group.clone(),
                    };
                    let ranks =
                        if g.ranks.len() <= 8 { format!("{:?}", g.ranks) } else { format!("{} ranks", g.ranks.len()) };
                    let cells = [
                        name,
                        ranks,
                        g.kind.clone(),
                        g.size_class.clone(),
                        g.count.to_string(),
                        gbps(g.busbw_median_gbps),
                        gbps(g.busbw_p10_gbps),
                        format!("{:.3}", g.transfer_ns as f64 / 1e6),
                        format!("{} ({})", g.link, gbps(g.expected_gbps)),
                    ];
                    for s in cells {
                        row.col(|ui| {
                            // not selectable: a selectable label would take the row's click
                            ui.add(egui::Label::new(RichText::new(s).monospace()).selectable(false));
                        });
                    }
                    if row.response().clicked() {
                        click = g.slowest.and_then(|i| slowest_click(c, i));
                    }
                });
            });
    });
    click
}

/// The instance `i` of `group_collectives` on its first rank, in that rank's own clock.
fn slowest_click(c: &Computed, i: usize) -> Option<Click> {
    let r = &c.report;
    let inst = r.group_collectives.get(i)?;
    let rank = *inst.ranks.first()?;
    let rank_index = r.ranks.iter().position(|e| e.rank == rank)?;
    let off = r.alignment.offsets_ns.get(rank_index).copied().unwrap_or(0);
    let (t0, t1) = (inst.starts_ns.first()? - off, inst.ends_ns.first()? - off);
    // some context either side, as a step click gives
    let pad = (t1 - t0).max(1);
    Some(Click { rank_index, step: Some((t0 - pad, t1 + pad)) })
}
