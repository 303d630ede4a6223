//! The view state the panes share (marks, the window) with egui_kittest: the Notes tab edits
//! marks only by commands, and a command sent from another thread lands on the next frame.

use crate::common::*;
use egui::accesskit::Role;
use egui_kittest::kittest::{By, Queryable};
use strobe_ui::app::BottomTab;
use strobe_ui::commands::Command;

/// Shift+M names a note in the Notes tab; typing there renames the mark, "delete" removes
/// one: the timeline's marks (what it draws) follow.
#[test]
fn the_notes_tab_renames_and_deletes_marks_through_commands() {
    let mut h = harness(app_with(&["gpt_train.json.gz"]));
    let start = h.state().ws.extent().unwrap().0;
    h.state_mut().push(Command::AddMark { t: start + 2_000_000, note: String::new(), name_it: false });
    h.run_steps(2);
    // Shift+M over the timeline: a named note, focused in the Notes tab
    let plot = h.state().timeline().last_plot();
    h.hover_at(plot.center());
    h.key_press_modifiers(egui::Modifiers::SHIFT, egui::Key::M);
    h.run_steps(3);
    assert_eq!(h.state().bottom_tab(), BottomTab::Notes);
    assert_eq!(h.state().timeline_state().marks.len(), 2);
    let named = h.state().timeline_state().marks.list.iter().position(|m| m.note == "note").unwrap();
    let field = h.get(By::new().role(Role::TextInput).value("note"));
    assert!(field.is_focused(), "the new note's name is focused");
    field.type_text("X");
    h.run_steps(2);
    let note = &h.state().timeline_state().marks.list[named].note;
    assert!(note.contains('X') && note.len() == "note".len() + 1, "renamed: {note:?}");
    assert!(h.state().timeline_state().note_to_name.is_none(), "focused once");
    // the label the timeline draws at it
    let origin = h.state().timeline_state().view.origin;
    assert!(h.state().timeline_state().marks.label(named, origin).starts_with(note.as_str()));
    // delete the plain mark (the first row): the note is left
    let plain = 1 - named;
    h.get_all_by_label("delete").nth(plain).unwrap().click();
    h.run_steps(2);
    let marks = &h.state().timeline_state().marks.list;
    assert_eq!(marks.len(), 1);
    assert!(marks[0].note.contains('X'));
}

/// A worker thread's command (`ViewCtx::sender`) is applied on the next frame, not before.
#[test]
fn a_command_sent_from_another_thread_lands_on_the_next_frame() {
    let mut h = harness(app_with(&["gpt_train.json.gz"]));
    let start = h.state().ws.extent().unwrap().0;
    let tx = h.state().command_sender();
    std::thread::spawn(move || {
        tx.send(Command::AddMark { t: start + 1_000, note: "from a worker".into(), name_it: false });
    })
    .join()
    .unwrap();
    assert!(h.state().timeline_state().marks.is_empty(), "nothing applied outside a frame");
    h.step();
    let marks = &h.state().timeline_state().marks.list;
    assert_eq!(marks.len(), 1);
    assert_eq!((marks[0].t, marks[0].note.as_str()), (start + 1_000, "from a worker"));
}

/// A session file in the layout older versions wrote (the scroll inside `view`, folds as
/// group names, the alignment by name) reopens with its window, scroll, folds, pin and marks.
#[test]
fn an_older_session_file_still_opens() {
    let dir = tempfile::tempdir().unwrap();
    let (r0, r1) = (sample("ddp_rank0.json.gz"), sample("ddp_rank1.json.gz"));
    let origin = app_with_ranks(&["ddp_rank0.json.gz", "ddp_rank1.json.gz"]).ws.extent().unwrap().0;
    let text = serde_json::json!({
        "version": 1,
        "files": [r0, r1],
        "view": { "origin": origin, "t0": 1.0e6, "npp": 1000.0, "scroll_y": 12.0 },
        "folds": [{ "file": 1, "group": "gpu", "arg": 0 }, { "file": 0, "group": "counters", "arg": 0 }],
        "pinned": [{ "file": 0, "lane": "GPU 0 · stream 7" }],
        "marks": [{ "t": origin + 9000, "note": "b" }, { "t": origin + 4000, "note": "a" }],
        "alignment": "step_start",
        "label_w": 300.0,
        "bottom_tab": "Notes"
    });
    let file = dir.path().join("old.strobe");
    std::fs::write(&file, text.to_string()).unwrap();
    let mut app = strobe_ui::StrobeApp::new(None, strobe_ui::Settings::default());
    app.set_no_cache(true);
    let mut h = harness(app);
    let ctx = h.ctx.clone();
    h.state_mut().open_files(vec![file], true, &ctx);
    step_until(&mut h, |a| a.ws.traces.len() == 2 && !a.loading() && !a.ranks().busy());
    h.run_steps(3);
    let app = h.state();
    let st = app.timeline_state();
    let (id0, id1) = (app.ws.traces[0].id, app.ws.traces[1].id);
    use strobe_ui::timeline::GroupKey;
    assert!(st.collapsed.contains(&GroupKey::Gpu(id1, 0)) && st.collapsed.contains(&GroupKey::Counters(id0)));
    assert_eq!(st.collapsed.len(), 2);
    let lane = app.ws.traces[0].store.lanes.iter().position(|l| l.name == "GPU 0 · stream 7").unwrap() as u32;
    assert_eq!(st.pinned, vec![(id0, lane)]);
    let notes: Vec<&str> = st.marks.list.iter().map(|m| m.note.as_str()).collect();
    assert_eq!(notes, ["a", "b"], "in time order");
    assert_eq!(st.label_w, 300.0);
    assert_eq!((st.view.origin, st.view.t0, st.view.npp), (origin, 1.0e6, 1000.0), "the saved window");
    assert_eq!(st.scroll_y, 12.0, "the scroll, read from inside `view`");
    assert_eq!(app.ranks().alignment, strobe_analysis::ranks::align::Alignment::StepStart);
    assert_eq!(app.bottom_tab(), BottomTab::Notes);
}
