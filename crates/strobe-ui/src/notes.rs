//! The Notes tab: every mark and named note (M, Shift+M on the timeline) with its time from
//! the workspace's start and its distance from the one before; rename, jump to, delete. The
//! marks are the app's (`TimelineState`): the tab reads them and asks for changes.

use crate::commands::Command;
use crate::view_ctx::ViewCtx;
use strobe_analysis::report::fmt_ns;

/// The width of the mark, time, Δ and delete columns with their spacing, left of and beside
/// the note.
const NOTE_OTHERS_W: f32 = 330.0;
/// The narrowest a note field gets (a narrow pane scrolls).
const NOTE_MIN_W: f32 = 240.0;

#[derive(Default)]
pub struct NotesPane;

impl NotesPane {
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        let marks = &cx.state.marks;
        if marks.is_empty() {
            ui.weak("No marks yet: M on the timeline marks the time under the pointer, Shift+M adds a named note.");
            return;
        }
        let origin = cx.state.view.origin;
        let focus = cx.state.note_to_name;
        let mut asked = Vec::new();
        egui::ScrollArea::vertical().id_salt("notes_scroll").auto_shrink([false, false]).show(ui, |ui| {
            // the note takes the width the other columns leave (a grid cell would give a text
            // field only the width its column had in the frame before: a few characters)
            let note_w = (ui.available_width() - NOTE_OTHERS_W).max(NOTE_MIN_W);
            egui::Grid::new("notes_grid").num_columns(5).striped(true).show(ui, |ui| {
                for h in ["", "time", "Δ previous", "note", ""] {
                    ui.strong(h);
                }
                ui.end_row();
                for (i, m) in marks.list.iter().enumerate() {
                    let prev = i.checked_sub(1).map(|p| marks.list[p].t);
                    if ui.link(format!("M{}", i + 1)).on_hover_text("show it").clicked() {
                        asked.push(Command::CenterOn(m.t));
                    }
                    ui.monospace(fmt_ns(m.t - origin));
                    ui.monospace(prev.map(|p| fmt_ns(m.t - p)).unwrap_or_default());
                    // edited here, kept by the app: the text field shows the note as applied
                    let mut note = m.note.clone();
                    let r = ui.add(
                        egui::TextEdit::singleline(&mut note)
                            .hint_text("name this mark")
                            .min_size(egui::vec2(note_w, 0.0)),
                    );
                    if r.changed() {
                        asked.push(Command::RenameMark { index: i, note });
                    }
                    if focus == Some(i) {
                        r.request_focus();
                        asked.push(Command::NoteFocused);
                    }
                    if ui.small_button("delete").clicked() {
                        asked.push(Command::DeleteMark(i));
                    }
                    ui.end_row();
                }
            });
        });
        for c in asked {
            cx.emit(c);
        }
    }
}
