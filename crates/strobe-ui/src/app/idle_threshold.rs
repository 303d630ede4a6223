//! View ▸ Idle threshold: a number typed in µs, applied with Enter (or when the field loses
//! focus). It holds for this run only, like the other analysis options of a viewer session:
//! each start is at the default, so a figure never silently depends on a value chosen weeks ago.

use super::Settings;
use crate::commands::Command;

/// The field's text while it is edited (egui's temporary memory: dropped when the menu closes).
fn text_id() -> egui::Id {
    egui::Id::unique("idle_threshold_text")
}

/// A threshold typed as text: a positive number of µs (an optional "µs"/"us" suffix is
/// accepted), at most one second.
pub fn parse_us(text: &str) -> Option<f64> {
    let t = text.trim().trim_end_matches("µs").trim_end_matches("us").trim();
    let v: f64 = t.replace(',', ".").parse().ok()?;
    (v.is_finite() && v > 0.0 && v <= 1e6).then_some(v)
}

/// The threshold in µs as the field shows it (no trailing zeros).
pub fn show_us(us: f64) -> String {
    let s = format!("{us:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub fn ui(ui: &mut egui::Ui, settings: &mut Settings, cmds: &mut Vec<Command>) {
    ui.horizontal(|ui| {
        let label = ui.label("Idle threshold").on_hover_text(
            "gaps at least this long are idle gaps (host wait); shorter ones are kernel wait. Reset to the default at each start.",
        );
        let id = text_id();
        let mut text = ui.data_mut(|d| d.get_temp::<String>(id)).unwrap_or_else(|| show_us(settings.idle_threshold_us));
        let r = ui.add(
            egui::TextEdit::singleline(&mut text)
                .desired_width(64.0)
                .align(egui::Align2::RIGHT_CENTER)
                .id_salt("idle_threshold_field"),
        )
        .labelled_by(label.id);
        ui.label("µs");
        let parsed = parse_us(&text);
        // Enter (or leaving the field) applies a valid number; an invalid one stays for fixing
        match parsed {
            Some(us) if r.lost_focus() => {
                if us != settings.idle_threshold_us {
                    settings.idle_threshold_us = us;
                    cmds.push(Command::SetIdleThreshold((us * 1e3).round() as i64));
                }
                ui.data_mut(|d| d.remove::<String>(id));
            }
            Some(_) if !r.has_focus() => {
                ui.data_mut(|d| d.remove::<String>(id));
            }
            _ => {
                ui.data_mut(|d| d.insert_temp(id, text.clone()));
            }
        }
        if parsed.is_none() {
            ui.colored_label(egui::Color32::from_rgb(235, 120, 90), "a number of µs, > 0 and ≤ 1 000 000")
                .on_hover_text("Enter applies it");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_thresholds() {
        assert_eq!(parse_us("50"), Some(50.0));
        assert_eq!(parse_us(" 2.5 µs"), Some(2.5));
        assert_eq!(parse_us("7us"), Some(7.0));
        assert_eq!(parse_us("0,5"), Some(0.5));
        assert_eq!(parse_us("0"), None);
        assert_eq!(parse_us("-3"), None);
        assert_eq!(parse_us("ten"), None);
        assert_eq!(parse_us("2000000"), None);
        assert_eq!(show_us(10.0), "10");
        assert_eq!(show_us(2.5), "2.5");
    }
}
