//! View ▸ Idle threshold with egui_kittest: typed as a number of µs, Enter applies it, the
//! menu stays open while it is edited, the summary strip and the band row say which
//! threshold their figures are at, and the value is not carried to the next run.

use crate::common;

use crate::common::{app_with, harness};
use egui::accesskit::Role;
use egui_kittest::kittest::{By, Queryable};
use strobe_ui::Settings;

#[test]
fn a_typed_threshold_applies_on_enter_and_shows_in_the_strip() {
    let mut h = harness(app_with(&["gpt_train.json.gz"]));
    // the default, stated where the idle split is shown
    h.get_by_label("gaps ≥ 10 µs");
    let view = h.get_by_label("View").rect().center();
    common::click_at(&mut h, view);
    // a mouse click into the field, as a user makes it (press and release on it)
    let at = h.get(By::new().role(Role::TextInput).label("Idle threshold")).rect().center();
    common::click_at(&mut h, at);
    // clicking into the field left the menu open
    let field = h.get(By::new().role(Role::TextInput).label("Idle threshold"));
    assert!(field.is_focused(), "the field has the keyboard");
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.run_steps(1);
    // typed as keys arrive from the window (text events, not an accessibility action)
    h.event(egui::Event::Text("50".into()));
    h.run_steps(1);
    assert_eq!(h.get(By::new().role(Role::TextInput).label("Idle threshold")).value().as_deref(), Some("50"));
    // nothing applied while typing
    assert_eq!(h.state().ws.figure_settings().idle_threshold_ns, 10_000);
    h.key_press(egui::Key::Enter);
    common::step_until(&mut h, |app| app.ws.traces[0].idle().first().is_some_and(|d| d.threshold_ns == 50_000));
    assert_eq!(h.state().ws.figure_settings().idle_threshold_ns, 50_000);
    assert_eq!(h.state().settings.idle_threshold_us, 50.0);
    // the menu is still open: its field is there, showing the applied value
    assert_eq!(h.get(By::new().role(Role::TextInput).label("Idle threshold")).value().as_deref(), Some("50"));
    h.run_steps(2);
    h.get_by_label("gaps ≥ 50 µs");
}

#[test]
fn a_threshold_that_is_not_a_number_is_not_applied() {
    let mut h = harness(app_with(&["gpt_train.json.gz"]));
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get(By::new().role(Role::TextInput).label("Idle threshold")).click();
    h.run_steps(1);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.run_steps(1);
    h.get(By::new().role(Role::TextInput).label("Idle threshold")).type_text("ten");
    h.run_steps(1);
    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    assert_eq!(h.state().ws.figure_settings().idle_threshold_ns, 10_000);
    h.get_by_label_contains("a number of µs");
}

#[test]
fn the_threshold_is_not_remembered_between_runs() {
    let mut s = Settings { idle_threshold_us: 50.0, ..Settings::default() };
    s.step_pattern = "Step#\\d+".into();
    let stored = serde_json::to_string(&s).unwrap();
    assert!(!stored.contains("idle_threshold"), "not written: {stored}");
    let back: Settings = serde_json::from_str(&stored).unwrap();
    assert_eq!(back.idle_threshold_us, 10.0, "the next run starts at the default");
    assert_eq!(back.step_pattern, s.step_pattern, "the other settings are kept");
    // a settings file written before (with the field) does not bring it back either
    let old: Settings = serde_json::from_str(r#"{"idle_threshold_us": 75.0, "show_bands": false}"#).unwrap();
    assert_eq!(old.idle_threshold_us, 10.0);
    assert!(!old.show_bands);
}
