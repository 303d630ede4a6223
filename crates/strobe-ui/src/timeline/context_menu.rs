//! Right-click menus, as in Perfetto: on a span (copy its name, find every span of the name)
//! and on a lane (its label or its empty part: pin it to the top, hide it, copy its name);
//! and the "Hidden lanes" menu in the ruler's corner that shows hidden lanes again. What they
//! change goes out as commands, like every other click.

use super::hover::Hover;
use super::layout::RowKind;
use super::{TimelineState, TimelineView};
use crate::commands::Command;
use crate::workspace::{TraceId, Workspace};
use egui::{Pos2, Rect, Ui};

/// What a right-click landed on: a lane, and the span under the pointer if any.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MenuTarget {
    pub trace: TraceId,
    pub lane: u32,
    pub span: Option<u32>,
}

/// The corner menu's button text with `n` lanes hidden.
pub fn hidden_menu_label(n: usize) -> String {
    format!("Hidden lanes ({n})")
}

impl TimelineView {
    /// What a right-click at `p` (screen) is on: the span the frame found under the pointer,
    /// else the lane row there. None on headers and other rows.
    pub(super) fn menu_target(
        &self,
        st: &TimelineState,
        ws: &Workspace,
        hover: Option<Hover>,
        p: Pos2,
    ) -> Option<MenuTarget> {
        if let Some(Hover::Item { ti, span, .. }) = hover {
            let t = ws.traces.get(ti)?;
            let lane = t.store.span_meta(span).lane;
            return Some(MenuTarget { trace: t.id, lane, span: Some(span) });
        }
        let row = self.layout.row_at(p.y - self.last_plot().min.y, st.scroll_y)?;
        match row.kind {
            RowKind::Lane { ti, lane, .. } => Some(MenuTarget { trace: ws.traces.get(ti)?.id, lane, span: None }),
            _ => None,
        }
    }

    /// The right-click menu of the body: opened on the target a right-click found, its
    /// entries while it stays open.
    pub(super) fn context_menu(
        &mut self,
        resp: &egui::Response,
        (st, ws): (&TimelineState, &Workspace),
        hover: Option<Hover>,
        cmds: &mut Vec<Command>,
    ) {
        if resp.secondary_clicked() {
            self.menu_target = resp.interact_pointer_pos().and_then(|p| self.menu_target(st, ws, hover, p));
        }
        let Some(target) = self.menu_target else { return };
        resp.context_menu(|ui| menu_entries(ui, target, (st, ws), cmds));
    }

    /// The ruler's corner (over the label column): a menu of the hidden lanes, each shown
    /// again by a click, when some are hidden.
    pub(super) fn hidden_lanes_menu(
        &self,
        ui: &mut Ui,
        ruler: Rect,
        (st, ws): (&TimelineState, &Workspace),
        cmds: &mut Vec<Command>,
    ) {
        if st.hidden.is_empty() {
            return;
        }
        let label_w = self.last_plot().min.x - ruler.min.x;
        let w = 118.0_f32.min(label_w - 4.0);
        let at = Rect::from_min_max(
            egui::pos2(ruler.min.x + label_w - w - 4.0, ruler.min.y + 2.0),
            egui::pos2(ruler.min.x + label_w - 4.0, ruler.max.y - 2.0),
        );
        ui.scope_builder(egui::UiBuilder::new().max_rect(at), |ui| {
            ui.menu_button(hidden_menu_label(st.hidden.len()), |ui| {
                for &(trace, lane) in &st.hidden {
                    let Some(t) = ws.trace(trace) else { continue };
                    let name = t.store.lanes.get(lane as usize).map(|l| l.name.as_str()).unwrap_or("?");
                    let label = if ws.traces.len() > 1 {
                        format!("Show {} · {name}", t.label)
                    } else {
                        format!("Show {name}")
                    };
                    if ui.button(label).clicked() {
                        cmds.push(Command::RevealLane { trace, lane });
                        ui.close();
                    }
                }
                ui.separator();
                if ui.button("Show all").clicked() {
                    cmds.push(Command::ShowHiddenLanes);
                    ui.close();
                }
            });
        });
    }
}

/// The menu's entries for `target`.
fn menu_entries(ui: &mut Ui, target: MenuTarget, (st, ws): (&TimelineState, &Workspace), cmds: &mut Vec<Command>) {
    let Some(t) = ws.trace(target.trace) else { return };
    let lane_name = t.store.lanes.get(target.lane as usize).map(|l| l.name.clone()).unwrap_or_default();
    if let Some(span) = target.span {
        let name = t.store.span_name(span).to_string();
        ui.label(egui::RichText::new(super::truncate(&name, 60)).weak());
        if ui.button("Copy name").clicked() {
            ui.ctx().copy_text(name.clone());
            ui.close();
        }
        if ui.button("Find all with this name").clicked() {
            cmds.push(Command::FindAll(name));
            ui.close();
        }
        ui.separator();
    }
    ui.label(egui::RichText::new(super::truncate(&lane_name, 60)).weak());
    let (trace, lane) = (target.trace, target.lane);
    let pinned = st.pinned.contains(&(trace, lane));
    if ui.button(if pinned { "Unpin lane" } else { "Pin lane to top" }).clicked() {
        cmds.push(Command::TogglePin { trace, lane });
        ui.close();
    }
    if ui.button("Hide lane").clicked() {
        cmds.push(Command::SetLaneHidden { trace, lane, hidden: true });
        ui.close();
    }
    if ui.button("Copy lane name").clicked() {
        ui.ctx().copy_text(lane_name);
        ui.close();
    }
}
