//! The "which trace" combo box of the per-trace tables (kernels, ops), shown only when more than
//! one trace is open.

use crate::workspace::{TraceId, Workspace};

/// Draws the picker; a pick sets `choice`. `shown` is the trace the table shows now.
pub fn trace_picker(
    ui: &mut egui::Ui,
    ws: &Workspace,
    shown: Option<TraceId>,
    choice: &mut Option<TraceId>,
    salt: &str,
) {
    if ws.traces.len() < 2 {
        return;
    }
    let label = ws.traces.iter().find(|t| Some(t.id) == shown).map(|t| t.label.clone()).unwrap_or_default();
    egui::ComboBox::from_id_salt(salt)
        .selected_text(label.as_str())
        .show_ui(ui, |ui| {
            for t in &ws.traces {
                if ui.selectable_label(shown == Some(t.id), &t.label).clicked() {
                    *choice = Some(t.id);
                }
            }
        })
        .response
        // a name for screen readers (and kittest's accessibility check)
        .widget_info(|| egui::WidgetInfo::labeled(egui::Role::ComboBox, true, format!("Trace: {label}")));
}
