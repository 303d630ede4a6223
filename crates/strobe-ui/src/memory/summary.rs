//! The analysis figures of one device and its OOM verdicts.

use super::pool_style::{held_color, pool_color, swatch};
use egui::{Color32, RichText};
use strobe_analysis::memory::pools::{pool_name, pool_origin, stream_name};
use strobe_analysis::memory::{bytes, DeviceMemory};

#[derive(Default)]
pub struct SummaryView {
    /// OOM verdicts drawn in the last frame (tests read it).
    pub ooms_shown: usize,
    /// Notes (older layout, history window) drawn in the last frame.
    pub notes_shown: usize,
    /// Rows of the pool table and pool notes drawn in the last frame.
    pub pools_shown: usize,
    pub pool_notes_shown: usize,
}

pub const NOTE_COLOR: Color32 = Color32::from_rgb(230, 160, 40);

pub fn verdict_color(v: &str) -> Color32 {
    match v {
        "process_limit" => Color32::from_rgb(244, 180, 0),
        "real_shortage" => Color32::from_rgb(219, 68, 55),
        "fragmentation" => Color32::from_rgb(171, 71, 188),
        _ => Color32::from_rgb(66, 133, 244),
    }
}

impl SummaryView {
    /// Returns a trace position to show when a link is clicked.
    /// `notes`: what the reader assumed about the file (older layouts); the device's history
    /// window, where its trace covers only the end of the run, is said below them.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        d: &DeviceMemory,
        notes: &[String],
        peak_position: Option<usize>,
    ) -> Option<usize> {
        let mut goto = None;
        self.notes_shown = 0;
        for n in notes {
            ui.label(RichText::new(n).color(NOTE_COLOR));
            self.notes_shown += 1;
        }
        if let Some(w) = &d.history_window {
            ui.label(RichText::new(&w.note).strong().color(NOTE_COLOR)).on_hover_text(&w.evidence);
            ui.label(RichText::new(&w.evidence).weak());
            self.notes_shown += 1;
        } else if d.trace_entries == 0 {
            ui.weak("No allocation trace: the figures and the segment map are the final state.");
        }
        if self.notes_shown > 0 || d.trace_entries == 0 {
            ui.add_space(6.0);
        }
        egui::Grid::new("mem_summary_grid").num_columns(2).striped(true).show(ui, |ui| {
            let row = |ui: &mut egui::Ui, k: &str, v: String| {
                ui.label(k);
                ui.monospace(v);
                ui.end_row();
            };
            row(ui, "segments / blocks", format!("{} / {}", d.segments, d.blocks));
            row(ui, "reserved", bytes(d.reserved_bytes));
            row(ui, "allocated", bytes(d.allocated_bytes));
            row(ui, "awaiting free", bytes(d.active_awaiting_free_bytes));
            row(ui, "inactive (cached)", bytes(d.inactive_bytes));
            row(ui, "largest inactive block", bytes(d.largest_inactive_block));
            if d.pools.iter().any(|p| !p.is_default()) {
                row(ui, "held by other pools", bytes(d.pool_held_inactive_bytes));
                row(ui, "fragmentation (default pool)", format!("{:.3}", d.fragmentation));
            } else {
                row(ui, "fragmentation", format!("{:.3}", d.fragmentation));
            }
            row(ui, "rounding waste", bytes(d.rounding_waste_bytes));
            row(ui, "trace entries", d.trace_entries.to_string());
            ui.label("peak allocated");
            ui.horizontal(|ui| {
                ui.monospace(bytes(d.peak_allocated_bytes.max(0) as u64));
                if let Some(k) = peak_position {
                    if ui
                        .link(format!("at entry {}", k.saturating_sub(1)))
                        .on_hover_text("show it in the timeline")
                        .clicked()
                    {
                        goto = Some(k);
                    }
                }
            });
            ui.end_row();
            row(ui, "peak reserved", bytes(d.peak_reserved_bytes.max(0) as u64));
        });
        self.pools_ui(ui, d);
        self.ooms_shown = d.ooms.len();
        if d.ooms.is_empty() {
            ui.add_space(6.0);
            ui.weak("No OOM in this trace.");
        }
        for o in &d.ooms {
            ui.add_space(8.0);
            ui.label(
                RichText::new(format!("OOM at entry {}: {}", o.entry, o.verdict))
                    .strong()
                    .color(verdict_color(o.verdict)),
            );
            ui.label(format!(
                "{} requested, {} free on the device; {} allocated, {} reserved at that point",
                bytes(o.requested_bytes),
                bytes(o.device_free_bytes),
                bytes(o.evidence.allocated_bytes.max(0) as u64),
                bytes(o.evidence.reserved_bytes.max(0) as u64)
            ));
            ui.label(RichText::new(&o.suggestion).italics());
            if ui.link("Show this moment in the timeline").clicked() {
                goto = Some(o.entry);
            }
        }
        goto
    }
}

impl SummaryView {
    /// Where the device has more than one pool or stream: a row per (pool, stream) and what
    /// the pools say (who holds the inactive bytes ordinary allocations cannot reuse).
    fn pools_ui(&mut self, ui: &mut egui::Ui, d: &DeviceMemory) {
        self.pools_shown = 0;
        self.pool_notes_shown = 0;
        if d.pools.len() > 1 {
            ui.add_space(8.0);
            ui.strong("Pools").on_hover_text(
                "The allocator reuses a freed block only within its pool and stream: the default pool serves ordinary allocations; a CUDA graph pool or a MemPool keeps its blocks for its own.",
            );
            egui::Grid::new("mem_pools_grid").num_columns(6).striped(true).show(ui, |ui| {
                for h in ["pool", "stream", "reserved", "allocated", "inactive", "frag"] {
                    ui.weak(h);
                }
                ui.end_row();
                for p in &d.pools {
                    ui.horizontal(|ui| {
                        if let Some(c) = pool_color(p.pool) {
                            swatch(ui, held_color(c));
                        }
                        ui.label(pool_name(p.pool)).on_hover_text(pool_origin(p.pool));
                    });
                    ui.monospace(stream_name(p.stream));
                    ui.monospace(bytes(p.reserved_bytes));
                    ui.monospace(bytes(p.allocated_bytes));
                    ui.monospace(bytes(p.inactive_bytes));
                    ui.monospace(format!("{:.3}", p.fragmentation()));
                    ui.end_row();
                    self.pools_shown += 1;
                }
            });
        }
        for n in &d.pool_notes {
            ui.add_space(4.0);
            ui.label(RichText::new(n).color(NOTE_COLOR));
            self.pool_notes_shown += 1;
        }
    }
}

/// `torch.cuda.memory_stats()` figures, when a dump was opened beside the snapshot.
pub fn stats_ui(ui: &mut egui::Ui, s: &strobe_analysis::memory::StatsReport) {
    ui.add_space(10.0);
    ui.strong("torch.cuda.memory_stats()");
    let b = |v: Option<u64>| v.map(bytes).unwrap_or_else(|| "—".into());
    let n = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_else(|| "—".into());
    egui::Grid::new("mem_stats_grid").num_columns(2).striped(true).show(ui, |ui| {
        for (k, v) in [
            ("allocated / peak", format!("{} / {}", b(s.allocated_bytes), b(s.allocated_peak_bytes))),
            ("reserved / peak", format!("{} / {}", b(s.reserved_bytes), b(s.reserved_peak_bytes))),
            ("free in split blocks", b(s.inactive_split_bytes)),
            ("alloc retries / OOMs", format!("{} / {}", n(s.num_alloc_retries), n(s.num_ooms))),
            ("cudaMalloc / cudaFree", format!("{} / {}", n(s.num_device_alloc), n(s.num_device_free))),
        ] {
            ui.label(k);
            ui.monospace(v);
            ui.end_row();
        }
    });
    for note in &s.notes {
        ui.label(RichText::new(note).italics());
    }
}
