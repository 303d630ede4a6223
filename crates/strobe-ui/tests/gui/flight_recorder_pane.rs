//! The flight-recorder pane with egui_kittest: open four ranks' dumps of a desync, read the
//! verdict, click it and a grid cell, and see the entry's details.

use crate::common;

use crate::common::{app_with, click_at, harness};
use egui_kittest::kittest::Queryable;
use strobe_ui::app::BottomTab;

const DESYNC: [&str; 4] = [
    "flight_recorder/gloo_desync/rank_0",
    "flight_recorder/gloo_desync/rank_1",
    "flight_recorder/gloo_desync/rank_2",
    "flight_recorder/gloo_desync/rank_3",
];

#[test]
fn four_dumps_of_a_desync_show_the_verdict_and_the_grid() {
    let mut h = harness(app_with(&DESYNC));
    assert!(h.state().ws.traces.is_empty(), "dumps are not timelines");
    assert_eq!(h.state().ws.flight_recorder.len(), 4);
    assert_eq!(h.state().bottom_tab(), BottomTab::FlightRecorder);
    h.get_by_label("4 rank dump(s), 3 group(s), 4 mismatch(es)");
    let verdict = "at seq 7 on group 0 (default_pg): desync: rank 1 called all_reduce, the other 3 all_gather";
    h.get_all_by_label(verdict).next().expect("the desync sentence").click();
    h.run_steps(2);
    assert_eq!(h.state().flight_recorder().selected, Some((1, 7)));
    // the details name the odd entry, its sizes and its Python frames
    h.get_by_label("rank 1, seq 7 on group 0");
    h.get_by_label("gloo:all_reduce");
    // input and output: 8 floats each (the others passed 4 × 8 out)
    assert_eq!(h.get_all_by_label("[[8]] [\"Float\"]").count(), 2);
    assert!(
        h.get_all_by_label_contains("record_flight_recorder.py").next().is_some(),
        "a frame of the recording script"
    );

    // a click on rank 3's cell at seq 2 (row 3, column 1) selects it
    let (origin, cell) = h.state().flight_recorder().grid_origin.expect("grid drawn");
    click_at(&mut h, origin + egui::vec2(cell * 1.5, cell * 3.5));
    h.run_steps(2);
    assert_eq!(h.state().flight_recorder().selected, Some((3, 2)));
    h.get_by_label("gloo:broadcast");
}

#[test]
fn a_group_button_switches_the_grid() {
    let mut h = harness(app_with(&DESYNC));
    h.get_by_label("2 (dp_replica_1)").click();
    h.run_steps(2);
    assert_eq!(h.state().flight_recorder().group, 2);
    h.get_by_label("members [2, 3] (from entries); 3 collective sequence numbers");
}

#[test]
fn a_folder_of_dumps_opens_every_rank() {
    let app = strobe_ui::StrobeApp::new(None, strobe_ui::Settings::default());
    let mut h = harness(app);
    let ctx = h.ctx.clone();
    h.state_mut().open_files(vec![common::sample("flight_recorder/gloo_p2p")], true, &ctx);
    common::step_until(&mut h, |a| a.ws.flight_recorder.len() == 4);
    assert_eq!(h.state().ws.flight_recorder.iter().map(|d| d.rank).collect::<Vec<_>>(), [0, 1, 2, 3]);
    h.run_steps(2);
    h.get_by_label("at seq 7 on group 0 (default_pg): ranks 0, 1 never arrived; 2 others called all_reduce");
}
