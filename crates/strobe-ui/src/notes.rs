//! The Notes tab: every mark and named note (M, Shift+M on the timeline) with its time from
//! the workspace's start and its distance from the one before; rename, jump to, delete.

use crate::commands::Command;
use crate::timeline::TimelineView;
use crate::view_ctx::ViewCtx;
use strobe_analysis::report::fmt_ns;

pub fn ui(ui: &mut egui::Ui, tl: &mut TimelineView, cx: &mut ViewCtx) {
    if tl.marks.is_empty() {
        ui.weak("No marks yet: M on the timeline marks the time under the pointer, Shift+M adds a named note.");
        return;
    }
    let origin = tl.view.origin;
    let focus = tl.note_to_name.take();
    let mut delete = None;
    egui::ScrollArea::vertical().id_salt("notes_scroll").auto_shrink([false, false]).show(ui, |ui| {
        egui::Grid::new("notes_grid").num_columns(5).striped(true).show(ui, |ui| {
            for h in ["", "time", "Δ previous", "note", ""] {
                ui.strong(h);
            }
            ui.end_row();
            let n = tl.marks.list.len();
            for i in 0..n {
                let prev = i.checked_sub(1).map(|p| tl.marks.list[p].t);
                let m = &mut tl.marks.list[i];
                if ui.link(format!("M{}", i + 1)).on_hover_text("show it").clicked() {
                    let w = (tl.view.npp * tl.plot_width as f64) as i64;
                    cx.emit(Command::ZoomTo { t0: m.t - w / 2, t1: m.t + w / 2 });
                }
                ui.monospace(fmt_ns(m.t - origin));
                ui.monospace(prev.map(|p| fmt_ns(m.t - p)).unwrap_or_default());
                let r =
                    ui.add(egui::TextEdit::singleline(&mut m.note).hint_text("name this mark").desired_width(260.0));
                if focus == Some(i) {
                    r.request_focus();
                }
                if ui.small_button("delete").clicked() {
                    delete = Some(i);
                }
                ui.end_row();
            }
        });
    });
    if let Some(i) = delete {
        tl.marks.list.remove(i);
    }
}
