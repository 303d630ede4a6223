//! A long name (a templated kernel's runs to hundreds of characters) on one line: elided to
//! the width there is, the whole name on hover, and a button that copies it.

/// What the copy button reads, for tests and screen readers.
pub const COPY_LABEL: &str = "Copy the whole name";

/// `name` in monospace on one line (bold when `strong`), elided, with a copy button after it.
pub fn name_line(ui: &mut egui::Ui, name: &str, strong: bool) {
    ui.horizontal(|ui| {
        let mut text = egui::RichText::new(name).monospace();
        if strong {
            text = text.strong();
        }
        // room for the button after the name
        let room = (ui.available_width() - 48.0).max(40.0);
        ui.scope(|ui| {
            ui.set_max_width(room);
            ui.add(egui::Label::new(text).truncate().show_tooltip_when_elided(false)).on_hover_text(name);
        });
        let b = ui.small_button("copy").on_hover_text("copy the whole name");
        b.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, COPY_LABEL));
        if b.clicked() {
            ui.ctx().copy_text(name.to_string());
        }
    });
}
