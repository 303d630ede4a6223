//! Allocator history scrubber: a slider over trace positions (position k = after k entries),
//! arrow keys step one entry (Shift: 100), Home/End jump, and the entry just applied is
//! listed with its stack. The segment map below draws the state at that position.

use strobe_analysis::memory::{bytes, AllocatorHistory};
use strobe_model::memory::{Action, MemorySnapshot, TraceEntry};

#[derive(Default)]
pub struct HistoryBar {}

fn entry_at<'a>(s: &'a MemorySnapshot, h: &AllocatorHistory) -> Option<(usize, &'a TraceEntry)> {
    let k = h.position().checked_sub(1)?;
    let t = usize::try_from(h.device()).ok().and_then(|d| s.device_traces.get(d))?;
    t.get(k).map(|e| (k, e))
}

impl HistoryBar {
    /// Returns the position to move to, if the user moved it.
    pub fn ui(&mut self, ui: &mut egui::Ui, s: &MemorySnapshot, h: &AllocatorHistory) -> Option<usize> {
        let n = h.len();
        let mut k = h.position();
        let before = k;
        let typing = ui.ctx().egui_wants_keyboard_input();
        if !typing {
            ui.input(|i| {
                let step = if i.modifiers.shift { 100 } else { 1 };
                if i.key_pressed(egui::Key::ArrowRight) {
                    k = (k + step).min(n);
                }
                if i.key_pressed(egui::Key::ArrowLeft) {
                    k = k.saturating_sub(step);
                }
                if i.key_pressed(egui::Key::Home) {
                    k = 0;
                }
                if i.key_pressed(egui::Key::End) {
                    k = n;
                }
            });
        }
        ui.horizontal(|ui| {
            ui.strong("Allocator history");
            if ui.small_button("<").on_hover_text("one entry back (Left arrow key)").clicked() {
                k = k.saturating_sub(1);
            }
            if ui.small_button(">").on_hover_text("one entry on (Right arrow key)").clicked() {
                k = (k + 1).min(n);
            }
            let w = (ui.available_width() - 160.0).max(80.0);
            ui.spacing_mut().slider_width = w;
            ui.add(egui::Slider::new(&mut k, 0..=n).text(format!("of {n}")));
        });
        match entry_at(s, h) {
            Some((i, e)) => {
                let what = match e.action {
                    Action::Oom => format!(
                        "entry {i}: OOM — {} requested, {} free on the device",
                        bytes(e.size),
                        bytes(s.device_free(e).unwrap_or(0))
                    ),
                    a => {
                        format!("entry {i}: {} {} at 0x{:x}, stream {}", a.as_str(), bytes(e.size), e.addr, s.stream(e))
                    }
                };
                // the line that asked, not the allocator's own frame every entry starts with
                let top = super::stack::user_frame(s, e.stack).map(|f| format!(" — {}", super::stack::line(f)));
                ui.label(format!("{what}{}", top.unwrap_or_default()));
            }
            None => {
                ui.weak("Before the first entry: the state rebuilt from what the trace shows alive then.");
            }
        }
        (k != before).then_some(k)
    }

    /// Address of the block the entry just applied touched (outlined in the segment map).
    pub fn entry_block(&self, s: &MemorySnapshot, h: &AllocatorHistory) -> Option<u64> {
        entry_at(s, h).filter(|(_, e)| !matches!(e.action, Action::Oom | Action::Snapshot)).map(|(_, e)| e.addr)
    }
}
