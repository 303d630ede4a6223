//! The memory pane's compare mode: the snapshot open before (A) against this one (B), as
//! `strobe diff A.pickle B.pickle` prints it — each peak per category and per source line with
//! the deltas (they add up to the difference of the peaks), the segments only one side has, and
//! the allocator's figures side by side. The comparison is made on a worker thread.

use super::breakdown_view::{category_color, category_label};
use crate::documents::MemoryDoc;
use crate::jobs::{Pending, Poll};
use egui::RichText;
use strobe_analysis::memory::diff::{self, MemoryDiff};
use strobe_analysis::memory::{bytes, peak_breakdown, Classifier, MemoryReport};
use strobe_model::memory::MemorySnapshot;

#[derive(Default)]
pub struct CompareView {
    job: Option<Pending<MemoryDiff>>,
    /// The two files the result is of.
    of: Option<(std::path::PathBuf, std::path::PathBuf)>,
    pub result: Option<MemoryDiff>,
    /// A and B the other way round (which of two files opened together loads first is chance).
    pub swapped: bool,
    /// Rows drawn in the last frame (tests read them).
    pub category_rows: usize,
    pub source_rows: usize,
}

/// Each device's report with its peak broken down (built from the document's own timelines).
fn with_breakdowns(
    s: &MemorySnapshot,
    r: &MemoryReport,
    timelines: &[std::sync::Arc<strobe_analysis::memory::AllocationTimeline>],
) -> MemoryReport {
    let mut r = r.clone();
    for (d, tl) in r.devices.iter_mut().zip(timelines) {
        if d.trace_entries > 0 {
            let c = Classifier::with_window(s, d.device, d.history_window.is_some());
            d.peak_breakdown = Some(peak_breakdown(s, tl, &c));
        }
    }
    r
}

fn signed(d: i64) -> String {
    match d.cmp(&0) {
        std::cmp::Ordering::Equal => "0".into(),
        std::cmp::Ordering::Less => format!("-{}", bytes(d.unsigned_abs())),
        std::cmp::Ordering::Greater => format!("+{}", bytes(d as u64)),
    }
}

fn name(p: &std::path::Path) -> String {
    p.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

impl CompareView {
    /// Starts the comparison of `a` and `b` unless it is made or under way.
    fn ensure(&mut self, ctx: &egui::Context, a: &MemoryDoc, b: &MemoryDoc) {
        let (a, b) = if self.swapped { (b, a) } else { (a, b) };
        let key = (a.path.clone(), b.path.clone());
        if self.of.as_ref() == Some(&key) {
            return;
        }
        self.of = Some(key);
        self.result = None;
        let (sa, ra, ta) = (a.snapshot.clone(), a.report.clone(), a.timelines.clone());
        let (sb, rb, tb) = (b.snapshot.clone(), b.report.clone(), b.timelines.clone());
        let (na, nb) = (name(&a.path), name(&b.path));
        self.job = Some(Pending::spawn_ui(ctx, move || {
            let ra = with_breakdowns(&sa, &ra, &ta);
            let rb = with_breakdowns(&sb, &rb, &tb);
            diff::diff(&na, (&sa, &ra), &nb, (&sb, &rb))
        }));
    }

    /// Waits for the comparison (tests).
    pub fn wait(&mut self) {
        if let Some(j) = self.job.take() {
            self.result = j.wait();
        }
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, a: &MemoryDoc, b: &MemoryDoc, device: i64) {
        self.ensure(ui.ctx(), a, b);
        if let Some(j) = &self.job {
            match j.poll() {
                Poll::Ready(r) => {
                    self.result = Some(r);
                    self.job = None;
                }
                Poll::Lost => self.job = None,
                Poll::Running => {}
            }
        }
        self.category_rows = 0;
        self.source_rows = 0;
        let Some(r) = &self.result else {
            crate::jobs::busy_indicator(ui, "comparing the two snapshots' peaks…");
            return;
        };
        let Some(d) = r.devices.iter().find(|d| d.device == device).or(r.devices.first()) else {
            ui.weak("Neither snapshot has a device to compare.");
            return;
        };
        ui.horizontal_wrapped(|ui| {
            ui.strong(format!("A: {}  ->  B: {}", r.a, r.b));
            if ui.small_button("swap A and B").clicked() {
                self.swapped = !self.swapped;
            }
            ui.label(format!(
                "peak allocated {} -> {} ({})",
                bytes(d.peak_allocated_a.max(0) as u64),
                bytes(d.peak_allocated_b.max(0) as u64),
                signed(d.peak_allocated_delta)
            ));
        });
        ui.weak(format!("A: {}\nB: {}", d.note_a, d.note_b));
        egui::ScrollArea::vertical().id_salt("mem_compare_scroll").show(ui, |ui| {
            ui.columns(2, |cols| {
                let ui = &mut cols[0];
                ui.strong("Per category, at each peak");
                let scale = d.categories.iter().map(|c| c.a_bytes.max(c.b_bytes)).max().unwrap_or(1).max(1) as f32;
                egui::Grid::new("mem_compare_categories").num_columns(5).striped(true).show(ui, |ui| {
                    for h in ["category", "A", "B", "delta", ""] {
                        ui.strong(h);
                    }
                    ui.end_row();
                    for c in d.categories.iter().filter(|c| c.a_bytes != 0 || c.b_bytes != 0) {
                        ui.label(RichText::new(category_label(c.category)).color(category_color(c.category)));
                        ui.monospace(bytes(c.a_bytes.max(0) as u64));
                        ui.monospace(bytes(c.b_bytes.max(0) as u64));
                        ui.monospace(signed(c.delta));
                        // A above B, to one scale
                        let (rect, _) = ui.allocate_exact_size(egui::vec2(120.0, 12.0), egui::Sense::hover());
                        let bar = |y: f32, v: i64, alpha: u8| {
                            let w = rect.width() * (v.max(0) as f32 / scale);
                            let col = category_color(c.category).gamma_multiply(alpha as f32 / 255.0);
                            ui.painter().rect_filled(
                                egui::Rect::from_min_size(egui::pos2(rect.left(), y), egui::vec2(w.max(1.0), 5.0)),
                                0.0,
                                col,
                            );
                        };
                        bar(rect.top(), c.a_bytes, 120);
                        bar(rect.top() + 6.0, c.b_bytes, 255);
                        ui.end_row();
                        self.category_rows += 1;
                    }
                    ui.strong("peak");
                    ui.monospace(bytes(d.peak_allocated_a.max(0) as u64));
                    ui.monospace(bytes(d.peak_allocated_b.max(0) as u64));
                    ui.monospace(signed(d.peak_allocated_delta));
                    ui.end_row();
                });
                ui.add_space(6.0);
                ui.strong("Allocator, side by side");
                egui::Grid::new("mem_compare_figures").num_columns(3).striped(true).show(ui, |ui| {
                    for h in ["", "A", "B"] {
                        ui.strong(h);
                    }
                    ui.end_row();
                    for f in &d.side_by_side {
                        let v = |x: f64| match f.name {
                            "fragmentation" => format!("{x:.3}"),
                            "segments" => format!("{x}"),
                            _ => bytes(x.max(0.0) as u64),
                        };
                        ui.label(f.name.replace('_', " "));
                        ui.monospace(v(f.a));
                        ui.monospace(v(f.b));
                        ui.end_row();
                    }
                });
                let g = &d.segments;
                ui.label(format!(
                    "segments {} -> {}: {} of the same size elsewhere, {} added ({}), {} removed ({})",
                    g.a_count,
                    g.b_count,
                    g.moved,
                    g.added.len(),
                    bytes(g.added_bytes),
                    g.removed.len(),
                    bytes(g.removed_bytes)
                ));
                for (what, list) in [("added", &g.added), ("removed", &g.removed)] {
                    for s in list.iter().take(8) {
                        ui.weak(format!("  {what}: {} at 0x{:x}, stream {}", bytes(s.total_size), s.address, s.stream));
                    }
                }
                let ui = &mut cols[1];
                ui.strong("Per source line, largest change first");
                egui::Grid::new("mem_compare_sources").num_columns(4).striped(true).show(ui, |ui| {
                    for h in ["A", "B", "delta", "first user frame"] {
                        ui.strong(h);
                    }
                    ui.end_row();
                    for s in d.by_source.iter().filter(|s| s.delta != 0).take(40) {
                        ui.monospace(bytes(s.a_bytes.max(0) as u64));
                        ui.monospace(bytes(s.b_bytes.max(0) as u64));
                        ui.monospace(RichText::new(signed(s.delta)).color(category_color(s.category)));
                        ui.label(&s.frame);
                        ui.end_row();
                        self.source_rows += 1;
                    }
                });
                let unchanged = d.by_source.iter().filter(|s| s.delta == 0).count();
                if unchanged > 0 {
                    ui.weak(format!("{unchanged} lines hold the same bytes at both peaks"));
                }
            });
        });
    }
}
