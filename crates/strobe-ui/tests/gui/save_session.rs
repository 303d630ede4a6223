//! File ▸ Save session… where the desktop has no file dialog (no portal, no zenity): the
//! built-in dialog takes a typed path, asks before replacing a file, and the status line says
//! where the session went or why it was not written.

use crate::common::*;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use strobe_ui::commands::Command;
use strobe_ui::{Settings, StrobeApp};

/// File ▸ Save session…, as a user clicks it.
fn click_save_session(h: &mut Harness<'static, StrobeApp>) {
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Save session…").click();
    h.run_steps(3);
}

/// Types `path` over the proposed file name and presses Save.
fn save_as(h: &mut Harness<'static, StrobeApp>, path: &std::path::Path) {
    h.get_by_label("File name").focus();
    h.run_steps(1);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.get_by_label("File name").type_text(&path.display().to_string());
    h.run_steps(2);
    h.get_by_label("Save").click();
    h.run_steps(3);
}

#[test]
fn the_built_in_dialog_saves_a_session_that_reopens() {
    let mut app = app_with(&["gpt_train.json.gz"]);
    app.set_native_dialogs(false);
    let mut h = harness(app);
    let ctx = h.ctx.clone();
    let start = h.state().ws.extent().unwrap().0;
    h.state_mut().apply(Command::ZoomTo { t0: start + 2_000_000, t1: start + 9_000_000 }, &ctx);
    h.state_mut().timeline_state_mut().marks.add(start + 4_000_000, "look here".into());
    h.run_steps(2);

    click_save_session(&mut h);
    assert!(h.state_mut().save_browser_mut().open, "the built-in Save dialog is up");
    assert_eq!(h.state_mut().save_browser_mut().name, "gpt_train.strobe", "named after the trace");
    let dir = tempfile::tempdir().unwrap();
    // typed without the extension: the session file gets it
    save_as(&mut h, &dir.path().join("job"));
    let file = dir.path().join("job.strobe");
    assert!(file.is_file(), "errors: {:?}", h.state().errors());
    assert!(!h.state_mut().save_browser_mut().open, "the dialog closes once saved");
    let said = format!("Session saved to {}", file.display());
    assert!(h.state().notices().iter().any(|n| n.text == said), "{:?}", h.state().notices());
    h.get_by_label(&said);

    // saving over it asks first; the file is replaced only once the user says so
    h.state_mut().timeline_state_mut().marks.add(start + 6_000_000, "and here".into());
    let before = std::fs::read_to_string(&file).unwrap();
    click_save_session(&mut h);
    assert_eq!(h.state_mut().save_browser_mut().dir, dir.path(), "proposed where the last one went");
    save_as(&mut h, &file);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before, "not replaced before the user agrees");
    h.get_by_label_contains("already exists");
    h.get_by_label("Replace it").click();
    h.run_steps(3);
    assert_ne!(std::fs::read_to_string(&file).unwrap(), before, "replaced");

    // the saved session reopens as it was left: the file, the window, both marks
    let saved = h.state().session();
    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    let mut h2 = harness(app);
    let ctx2 = h2.ctx.clone();
    h2.state_mut().open_files(vec![file.clone()], true, &ctx2);
    step_until(&mut h2, |a| a.ws.traces.len() == 1 && !a.loading());
    h2.run_steps(3);
    let reopened = h2.state().session();
    assert_eq!(reopened.files, vec![sample("gpt_train.json.gz")], "errors: {:?}", h2.state().errors());
    assert_eq!(reopened.timeline.marks, saved.timeline.marks);
    assert_eq!(reopened.timeline.marks.list.len(), 2);
    let (v0, v1) = (saved.timeline.view, reopened.timeline.view);
    assert_eq!((v0.origin, v0.t0, v0.npp), (v1.origin, v1.t0, v1.npp), "the same window");
}

#[test]
fn a_session_that_cannot_be_written_says_so_in_the_status_line() {
    let mut app = app_with(&["gpt_train.json.gz"]);
    app.set_native_dialogs(false);
    let mut h = harness(app);
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no such folder").join("job.strobe");
    click_save_session(&mut h);
    save_as(&mut h, &missing);
    assert!(!missing.exists());
    let errors = h.state().errors().to_vec();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("the session was not saved: ") && errors[0].contains("no such folder"), "{errors:?}");
    h.get_by_label(&format!("Error: {}", errors[0]));
}

/// Without a session bus and without zenity (a bare X server), rfd shows no dialog: Save
/// session… falls back to the built-in one and the status line says why.
#[test]
fn no_desktop_dialog_falls_back_to_the_built_in_one() {
    let zenity =
        std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("zenity").is_file()));
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some() || zenity {
        eprintln!("skipped: this desktop may show a real file dialog");
        return;
    }
    let mut h = harness(app_with(&["gpt_train.json.gz"]));
    click_save_session(&mut h);
    step_until(&mut h, |a| !a.notices().is_empty());
    h.run_steps(2);
    assert!(h.state_mut().save_browser_mut().open, "the built-in Save dialog is up");
    let notice = h.state().notices()[0].clone();
    assert_eq!(notice.text, "No desktop file dialog here (no portal, no zenity): using the built-in one");
    // why, in rfd's words, on hover: zenity was tried last
    assert!(notice.detail.as_deref().is_some_and(|d| d.contains("zenity")), "{notice:?}");
    h.get_by_label(&notice.text);
    h.get_by_label("File name");
    // from then on it opens at once, and Open… goes straight to the built-in browser too
    h.get_by_label("Cancel").click();
    h.run_steps(2);
    click_save_session(&mut h);
    assert!(h.state_mut().save_browser_mut().open);
    assert_eq!(h.state().notices().len(), 1, "said once");
}
