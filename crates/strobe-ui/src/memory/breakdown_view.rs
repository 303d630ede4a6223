//! What the allocated bytes are made of, at the peak or at the history position: one bar per
//! category (the rules that decided it on hover), and the source lines, largest first, each a
//! link to its allocations in the active-memory timeline.

use egui::{Color32, RichText};
use strobe_analysis::memory::categories::Category;
use strobe_analysis::memory::{bytes, AllocationTimeline, PeakBreakdown};

pub fn category_color(c: Category) -> Color32 {
    match c {
        Category::Parameter => Color32::from_rgb(66, 133, 244),
        Category::Gradient => Color32::from_rgb(244, 140, 40),
        Category::OptimizerState => Color32::from_rgb(171, 71, 188),
        Category::Activation => Color32::from_rgb(67, 160, 71),
        Category::Temporary => Color32::from_rgb(150, 150, 150),
        Category::InputBatch => Color32::from_rgb(0, 172, 193),
        Category::Other => Color32::from_rgb(95, 95, 95),
    }
}

pub fn category_label(c: Category) -> &'static str {
    match c {
        Category::Parameter => "parameters",
        Category::Gradient => "gradients",
        Category::OptimizerState => "optimizer state",
        Category::Activation => "activations",
        Category::Temporary => "temporaries",
        Category::InputBatch => "input batch",
        Category::Other => "other",
    }
}

/// A category bar and its figures; hover for the rules.
pub fn categories_ui(ui: &mut egui::Ui, b: &PeakBreakdown) -> usize {
    let total = b.allocated_bytes.max(1) as f32;
    let mut rows = 0;
    egui::Grid::new("mem_categories_grid").num_columns(3).show(ui, |ui| {
        for c in b.categories.iter().filter(|c| c.count > 0) {
            let (rect, resp) = ui.allocate_exact_size(egui::vec2(120.0, 12.0), egui::Sense::hover());
            let w = rect.width() * (c.bytes.max(0) as f32 / total).clamp(0.0, 1.0);
            ui.painter().rect_filled(rect, 1.0, ui.visuals().extreme_bg_color);
            ui.painter().rect_filled(
                egui::Rect::from_min_size(rect.min, egui::vec2(w.max(1.0), rect.height())),
                1.0,
                category_color(c.category),
            );
            let rules: Vec<String> =
                c.rules.iter().map(|r| format!("{}: {}", bytes(r.bytes.max(0) as u64), r.text)).collect();
            resp.on_hover_text(rules.join("\n"));
            ui.label(RichText::new(category_label(c.category)).color(category_color(c.category)))
                .on_hover_text(c.rules.iter().map(|r| r.text).collect::<Vec<_>>().join("\n"));
            ui.monospace(format!(
                "{:>11} {:>5.1}%  {} alloc.",
                bytes(c.bytes.max(0) as u64),
                100.0 * c.bytes as f32 / total,
                c.count
            ));
            ui.end_row();
            rows += 1;
        }
    });
    rows
}

/// The source lines, largest first: a click on a line asks for its largest allocation (index
/// into the timeline's allocations), a click on "n allocations" lists them.
pub fn sources_ui(ui: &mut egui::Ui, b: &PeakBreakdown, tl: &AllocationTimeline, max_rows: usize) -> Option<usize> {
    let mut pick = None;
    let total = b.allocated_bytes.max(1) as f32;
    egui::Grid::new("mem_sources_grid").num_columns(4).striped(true).show(ui, |ui| {
        ui.strong("bytes");
        ui.strong("");
        ui.strong("allocations");
        ui.strong("first user frame");
        ui.end_row();
        for s in b.by_source.iter().take(max_rows) {
            ui.monospace(format!("{:>11} {:>5.1}%", bytes(s.bytes.max(0) as u64), 100.0 * s.bytes as f32 / total));
            let (rect, _) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
            ui.painter().rect_filled(rect, 2.0, category_color(s.category));
            ui.menu_button(format!("{}", s.count), |ui| {
                egui::ScrollArea::vertical().max_height(260.0).show(ui, |ui| {
                    for &i in s.allocations.iter().take(200) {
                        let a = &tl.allocs[i];
                        let made =
                            a.alloc_entry.map_or("before the trace".to_string(), |e| format!("made at entry {e}"));
                        if ui.button(format!("{}, {made}", bytes(a.size))).clicked() {
                            pick = Some(i);
                            ui.close();
                        }
                    }
                    if s.allocations.len() > 200 {
                        ui.weak(format!("… {} more", s.allocations.len() - 200));
                    }
                });
            })
            .response
            .on_hover_text("its allocations: pick one to show it in the active-memory timeline");
            let cats: Vec<String> = s
                .categories
                .iter()
                .map(|(c, n)| format!("{}: {}", category_label(*c), bytes((*n).max(0) as u64)))
                .collect();
            if ui.link(&s.frame).on_hover_text(format!("{}\nshow its largest allocation", cats.join("\n"))).clicked() {
                pick = s.allocations.first().copied();
            }
            ui.end_row();
        }
    });
    if b.by_source.len() > max_rows {
        ui.weak(format!("… {} more lines", b.by_source.len() - max_rows));
    }
    pick
}
