//! Ctrl+P: find a track (lane) by name across every open trace, as Perfetto's track search
//! does; Enter or a click shows it (unfolds its groups, scrolls to it, flashes it), the pin
//! button keeps it at the top of the timeline, the check box shows or hides it.

use crate::commands::Command;
use crate::view_ctx::ViewCtx;
use crate::workspace::TraceId;

#[derive(Default)]
pub struct TrackFinder {
    pub open: bool,
    pub query: String,
    focus: bool,
}

/// Results listed at most (the filter narrows the rest).
const MAX_SHOWN: usize = 200;

impl TrackFinder {
    pub fn open(&mut self) {
        self.open = true;
        self.focus = true;
        self.query.clear();
    }

    /// Every lane whose "trace · lane" label contains the query (any case).
    pub fn matches(&self, cx: &ViewCtx) -> Vec<(TraceId, u32, String)> {
        let q = self.query.to_lowercase();
        let mut out = Vec::new();
        for t in &cx.ws.traces {
            for (l, d) in t.store.lanes.iter().enumerate() {
                let li = t.store.lane_index()[l];
                if li.member_end == li.member_begin {
                    continue;
                }
                let label = format!("{} · {}", t.label, d.name);
                if q.is_empty() || label.to_lowercase().contains(&q) {
                    out.push((t.id, l as u32, label));
                }
            }
        }
        out
    }

    pub fn ui(&mut self, ctx: &egui::Context, cx: &mut ViewCtx) {
        let (pinned, hidden) = (&cx.state.pinned, &cx.state.hidden);
        if !self.open {
            return;
        }
        let mut open = self.open;
        let mut close = false;
        egui::Window::new("Find a track").open(&mut open).default_width(520.0).collapsible(false).show(ctx, |ui| {
            let r = ui.add(egui::TextEdit::singleline(&mut self.query).hint_text("lane name (Enter shows the first)"));
            if std::mem::take(&mut self.focus) {
                r.request_focus();
            }
            let found = self.matches(cx);
            if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                if let Some((trace, lane, _)) = found.first() {
                    cx.emit(Command::RevealLane { trace: *trace, lane: *lane });
                    close = true;
                }
            }
            if ui.input(|i| i.key_pressed(egui::Key::Escape)) {
                close = true;
            }
            ui.weak(format!("{} tracks", found.len()));
            egui::ScrollArea::vertical().max_height(360.0).show(ui, |ui| {
                for (trace, lane, label) in found.iter().take(MAX_SHOWN) {
                    ui.horizontal(|ui| {
                        let mut shown = !hidden.contains(&(*trace, *lane));
                        let c = ui.checkbox(&mut shown, "").on_hover_text("shown on the timeline");
                        c.widget_info(|| {
                            egui::WidgetInfo::selected(egui::Role::CheckBox, true, shown, format!("show {label}"))
                        });
                        if c.changed() {
                            cx.emit(Command::SetLaneHidden { trace: *trace, lane: *lane, hidden: !shown });
                        }
                        let is_pinned = pinned.contains(&(*trace, *lane));
                        if ui.small_button(if is_pinned { "unpin" } else { "pin" }).clicked() {
                            cx.emit(Command::TogglePin { trace: *trace, lane: *lane });
                        }
                        if ui.link(label).clicked() {
                            cx.emit(Command::RevealLane { trace: *trace, lane: *lane });
                            close = true;
                        }
                    });
                }
            });
        });
        self.open = open && !close;
    }
}
