//! The Load summary tab: per open trace what was read, skipped and noted (the profiler's own
//! warnings among the notes), and whether the file was cut short.

use crate::view_ctx::ViewCtx;

pub fn ui(ui: &mut egui::Ui, cx: &mut ViewCtx) {
    egui::ScrollArea::vertical().id_salt("load_summary").auto_shrink([false, false]).show(ui, |ui| {
        for t in &cx.ws.traces {
            let m = &t.store.meta;
            ui.strong(format!("{} — {} ({})", t.label, t.path.display(), m.format.as_str()));
            ui.label(format!(
                "{} events · {} spans · {} lanes · {} flows · {} counter series",
                m.load.events,
                t.store.span_count(),
                t.store.lanes.len(),
                t.store.flows().len(),
                t.store.counters.len()
            ));
            if !m.load.skipped.is_empty() {
                let sk: Vec<String> = m.load.skipped.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                ui.label(format!("skipped: {}", sk.join(", ")));
            }
            for n in &m.load.notes {
                // the profiler's own warnings and errors (an nsys export's DIAGNOSTIC_EVENT)
                // say which figures to distrust: they stand out
                if n.starts_with("nsys warning:") || n.starts_with("nsys error:") {
                    ui.colored_label(egui::Color32::from_rgb(230, 180, 60), n);
                } else {
                    ui.label(format!("note: {n}"));
                }
            }
            if let Some(cut) = &m.load.truncated {
                ui.colored_label(egui::Color32::from_rgb(230, 180, 60), cut.message());
            }
            ui.separator();
        }
    });
}
