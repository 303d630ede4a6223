//! The stragglers with their evidence, the HTA-parity tables and the A/B diff, as plain
//! tables of the figures `strobe_analysis` computed.

use super::Computed;
use egui::RichText;
use egui_extras::{Column, TableBuilder};
use strobe_analysis::diff::{DiffRow, DiffStatus};

fn ms(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

pub fn hta(ui: &mut egui::Ui, c: &Computed) {
    ui.push_id("hta_rank_table", |ui| hta_table(ui, c));
    kernel_breakdown(ui, c);
}

fn hta_table(ui: &mut egui::Ui, c: &Computed) {
    let r = &c.report;
    TableBuilder::new(ui)
        .id_salt("hta_table")
        .striped(true)
        .column(Column::auto())
        .columns(Column::auto().at_least(80.0), 8)
        .header(18.0, |mut h| {
            for t in [
                "rank",
                "compute %",
                "non-compute %",
                "idle %",
                "comm overlap %",
                "launches paired",
                "median launch delay µs",
                "kernels < 10 µs",
                "delay outliers",
            ] {
                h.col(|ui| {
                    ui.strong(t);
                });
            }
        })
        .body(|b| {
            // one row per rank, only the visible ones laid out (a thousand ranks)
            b.rows(18.0, r.ranks.len(), |mut row| {
                let i = row.index();
                let rk = &r.ranks[i];
                let (t, o, l) = (&r.temporal_breakdown[i], &r.comm_overlap[i], &r.launch_stats[i]);
                {
                    let cells = [
                        format!("rank {}", rk.rank),
                        format!("{:.1}", t.compute_pct),
                        format!("{:.1}", t.non_compute_pct),
                        format!("{:.1}", t.idle_pct),
                        format!("{:.1}", o.overlap_pct),
                        l.paired.to_string(),
                        format!("{:.1}", l.launch_delay.median_ns as f64 / 1e3),
                        l.short_kernels.to_string(),
                        l.launch_delay_outliers.to_string(),
                    ];
                    for s in cells {
                        row.col(|ui| {
                            ui.monospace(s);
                        });
                    }
                }
            });
        });
}

/// Per rank: GPU kernel time by type (compute / comm / memory) and the kernels covering 80 %.
fn kernel_breakdown(ui: &mut egui::Ui, c: &Computed) {
    ui.add_space(6.0);
    ui.strong("Kernel time by type (HTA get_gpu_kernel_breakdown): the kernels covering 80 % of each type");
    let row_h = ui.spacing().interact_size.y;
    let kbs = &c.report.kernel_breakdown;
    // the visible ranks only (an opened one pushes the rest down, which is fine to scroll)
    egui::ScrollArea::vertical().id_salt("kernel_breakdown_scroll").max_height(240.0).show_rows(
        ui,
        row_h,
        kbs.len(),
        |ui, range| {
            for kb in &kbs[range] {
                let line = kb
                    .types
                    .iter()
                    .map(|t| format!("{} {:.1}% ({} ms)", t.kind, t.pct, ms(t.total_ns)))
                    .collect::<Vec<_>>()
                    .join(" · ");
                egui::CollapsingHeader::new(format!("rank {}: {line}", kb.rank)).id_salt(("kb", kb.rank)).show(
                    ui,
                    |ui| {
                        for t in &kb.types {
                            ui.label(RichText::new(&t.kind).strong());
                            for k in &t.top {
                                ui.monospace(format!(
                                    "{:>5.1}%  {:>6}×  {:>9} ms  {}",
                                    k.pct,
                                    k.count,
                                    ms(k.total_ns),
                                    k.name
                                ));
                            }
                        }
                    },
                );
            }
        },
    );
}

fn diff_rows(ui: &mut egui::Ui, id: &str, rows: &[DiffRow]) {
    TableBuilder::new(ui)
        .id_salt(id)
        .striped(true)
        .column(Column::remainder().at_least(240.0).clip(true))
        .columns(Column::auto().at_least(70.0), 6)
        .max_scroll_height(260.0)
        .header(18.0, |mut h| {
            for t in ["name", "count A", "count B", "total A ms", "total B ms", "Δ ms", "B/A"] {
                h.col(|ui| {
                    ui.strong(t);
                });
            }
        })
        .body(|b| {
            b.rows(18.0, rows.len(), |mut row| {
                let d = &rows[row.index()];
                let tag = match d.status {
                    DiffStatus::Added => " (added)",
                    DiffStatus::Removed => " (removed)",
                    DiffStatus::Both => "",
                };
                let cells = [
                    format!("{}{tag}", d.name),
                    d.count_a.to_string(),
                    d.count_b.to_string(),
                    ms(d.total_a_ns),
                    ms(d.total_b_ns),
                    format!("{:+.3}", d.delta_ns as f64 / 1e6),
                    d.ratio.map_or("—".into(), |x| format!("{x:.2}")),
                ];
                for s in cells {
                    row.col(|ui| {
                        ui.monospace(s);
                    });
                }
            });
        });
}

/// Returns (trace, offset, rank) for both traces when the user aligns them at a step.
pub fn diff(ui: &mut egui::Ui, c: &Computed) -> Option<Vec<(crate::workspace::TraceId, i64, i64)>> {
    let Some(d) = &c.diff else {
        ui.weak("Diff compares exactly two traces: open two (A = the lower rank, B = the other).");
        return None;
    };
    ui.label(format!("A = {}   B = {}   (sorted by |Δ|; the timelines above share the aligned axis)", d.a, d.b));
    let mut align = None;
    let both: Vec<&strobe_analysis::ranks::step_table::StepRow> =
        c.report.steps.iter().filter(|s| s.per_rank.len() == 2).collect();
    if !both.is_empty() {
        ui.horizontal_wrapped(|ui| {
            ui.label("Align the two timelines at:");
            for s in both {
                if ui.small_button(&s.name).on_hover_text("this step starts at the same time in A and B").clicked() {
                    let (a, b) = (&s.per_rank[0], &s.per_rank[1]);
                    if let (Some(ta), Some(tb)) = (c.trace_of_rank[0], c.trace_of_rank[1]) {
                        align = Some(vec![(ta, 0, a.rank), (tb, a.start_ns - b.start_ns, b.rank)]);
                    }
                }
            }
        });
    }
    super::diff_breakdown::ui(ui, d.step_breakdown.as_ref());
    ui.separator();
    ui.strong(format!("GPU kernels ({})", d.kernels.len()));
    diff_rows(ui, "diff_kernels", &d.kernels);
    ui.separator();
    ui.strong(format!("CPU ops ({})", d.cpu_ops.len()));
    diff_rows(ui, "diff_ops", &d.cpu_ops);
    align
}
