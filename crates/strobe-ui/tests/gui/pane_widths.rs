//! Widths and fits with egui_kittest: every rank of a four-rank job in the summary strip, a
//! note field as wide as the Notes tab allows.

use crate::common;

use crate::common::{app_with, harness};
use egui::accesskit::Role;
use egui_kittest::kittest::{By, Queryable};
use strobe_ui::app::BottomTab;
use strobe_ui::commands::Command;

#[test]
fn the_summary_strip_shows_all_four_ranks() {
    let files =
        ["pp4_1f1b_rank0.json.gz", "pp4_1f1b_rank1.json.gz", "pp4_1f1b_rank2.json.gz", "pp4_1f1b_rank3.json.gz"];
    // a laptop-sized window: each rank's line of figures wraps
    let mut h = common::harness_sized(app_with(&files), [1100.0, 800.0]);
    common::step_until(&mut h, |a| a.ws.traces.iter().all(|t| t.derived.overview_ready()));
    h.run_steps(3);
    let timeline_top = h.state().timeline().last_plot().min.y - strobe_ui::timeline::RULER_H;
    let labels: Vec<String> = h.state().ws.traces.iter().map(|t| t.label.clone()).collect();
    assert_eq!(labels.len(), 4);
    for l in &labels {
        let r = h.get_by_label(l).rect();
        // drawn in full above the timeline, not scrolled out of the strip
        assert!(r.bottom() < timeline_top, "{l} at {r:?}, timeline from y={timeline_top}");
        assert!(r.height() > 8.0, "{l} is visible: {r:?}");
    }
}

#[test]
fn a_note_field_takes_the_tabs_width() {
    let mut app = app_with(&["gpt_train.json.gz"]);
    let start = app.ws.extent().unwrap().0;
    app.push(Command::AddMark { t: start + 2_000_000, note: "warm-up ends".into(), name_it: false });
    app.set_bottom_tab(BottomTab::Notes);
    let mut h = harness(app);
    h.run_steps(3);
    let field = h.get(By::new().role(Role::TextInput).value("warm-up ends")).rect();
    let mark = h.get_by_label("M1").rect();
    // the window is 1600 wide, Details takes its side: the field gets most of the rest
    assert!(field.width() >= 600.0, "note field {field:?}");
    assert!(field.left() > mark.right(), "right of the mark's columns");
}
