//! View > Theme > Light: the timeline's own colours (selected outline, flow arrows, marks,
//! counter and memory lines) are drawn dark on the light background. A PNG snapshot, rendered
//! as snapshots.rs renders (skipped where wgpu finds no adapter); the theme setting
//! itself is checked without a renderer.

use crate::common;

use egui_kittest::Harness;
use strobe_model::SpanKind;
use strobe_ui::commands::Command;
use strobe_ui::workspace::SpanRef;
use strobe_ui::StrobeApp;

/// gpt_train with its longest launched kernel selected (its flow arrow drawn) and a mark.
fn selected_and_marked() -> StrobeApp {
    let mut app = common::app_with(&["gpt_train.json.gz"]);
    let t = &app.ws.traces[0];
    let st = &t.store;
    let span = (0..st.span_count() as u32)
        .filter(|&s| st.span_kind(s) == SpanKind::Kernel && st.flows_to(s).next().is_some())
        .max_by_key(|&s| st.span_end(s) - st.span_start(s))
        .expect("a launched kernel");
    let (id, at) = (t.id, st.span_start(span));
    app.push(Command::SelectSpan(SpanRef { trace: id, span }));
    app.timeline_state_mut().marks.add(at, "here".into());
    app
}

#[test]
fn timeline_in_the_light_theme() {
    let Some(r) = common::renderer("timeline_in_the_light_theme") else { return };
    let mut h = Harness::builder()
        .with_size([1600.0, 900.0])
        .with_theme(egui::Theme::Light)
        .renderer(r)
        .build_ui_state(|ui, app: &mut StrobeApp| app.timeline_pane(ui), selected_and_marked());
    h.run_steps(3);
    h.snapshot("timeline_gpt_train_light");
}

/// The theme picked in View > Theme is the window's, and is what the settings keep.
#[test]
fn the_theme_menu_sets_and_remembers_the_theme() {
    let mut h = common::harness(common::app_with(&["gpt_train.json.gz"]));
    use egui_kittest::kittest::Queryable;
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("Light").click();
    h.run_steps(3);
    assert_eq!(h.state().settings.theme, egui::ThemePreference::Light);
    assert_eq!(h.ctx.theme(), egui::Theme::Light, "the window is light");
    assert!(!h.ctx.global_style().visuals.dark_mode);
    let saved = serde_json::to_string(&h.state().settings).unwrap();
    let back: strobe_ui::Settings = serde_json::from_str(&saved).unwrap();
    assert_eq!(back.theme, egui::ThemePreference::Light, "remembered: {saved}");
    // the View menu stays open after a choice (it closes on a click outside it)
    h.get_by_label("Dark").click();
    h.run_steps(3);
    assert_eq!(h.ctx.theme(), egui::Theme::Dark);
}
