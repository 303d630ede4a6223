//! What the window says about what is open: its title, the bundled sample when `strobe`
//! started without a file, a failed open naming its file once, and File > Recent listing a
//! rank set as one entry that reopens the set.

use crate::common::*;
use egui_kittest::kittest::Queryable;
use strobe_ui::{Settings, StrobeApp};

fn empty_app() -> StrobeApp {
    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    app
}

/// The title the window was last given (the viewport command the app sent).
fn sent_title(h: &egui_kittest::Harness<'static, StrobeApp>) -> Option<String> {
    h.output().viewport_output.values().flat_map(|v| &v.commands).rev().find_map(|c| match c {
        egui::ViewportCommand::Title(t) => Some(t.clone()),
        _ => None,
    })
}

#[test]
fn the_title_names_what_is_open() {
    let mut h = harness(empty_app());
    assert_eq!(h.state().window_title(), "Strobe");
    let ctx = h.ctx.clone();
    h.state_mut().open_files(vec![sample("gpt_train.json.gz")], true, &ctx);
    // the frame that takes the file in gives the window its title
    step_until(&mut h, |a| a.ws.traces.len() == 1 && !a.loading());
    assert_eq!(h.state().window_title(), "gpt_train.json.gz — Strobe");
    assert_eq!(sent_title(&h).as_deref(), Some("gpt_train.json.gz — Strobe"), "given to the window");

    let ranks = vec![sample("ddp_rank0.json.gz"), sample("ddp_rank1.json.gz")];
    h.state_mut().open_files(ranks.clone(), true, &ctx);
    step_until(&mut h, |a| a.ws.traces.len() == 2 && !a.loading());
    assert_eq!(h.state().window_title(), "2 ranks — ddp_rank0.json.gz… — Strobe");
    assert_eq!(sent_title(&h).as_deref(), Some("2 ranks — ddp_rank0.json.gz… — Strobe"));

    // File > Recent: the set is one entry, which reopens both ranks
    let recent = &h.state().settings.recent;
    assert_eq!(recent[0].0, ranks, "{recent:?}");
    assert_eq!(recent.iter().filter(|r| r.0.contains(&ranks[0])).count(), 1, "not split: {recent:?}");
    h.state_mut().push(strobe_ui::commands::Command::CloseAll);
    h.run_steps(2);
    assert_eq!(h.state().window_title(), "Strobe");
    h.get_by_label("File").click();
    h.run_steps(2);
    h.get_by_label("Recent").hover();
    h.run_steps(2);
    h.get_by_label("2 ranks — ddp_rank0.json.gz…").click();
    step_until(&mut h, |a| a.ws.traces.len() == 2 && !a.loading());
    let opened: Vec<_> = h.state().ws.traces.iter().map(|t| t.path.clone()).collect();
    assert_eq!(opened, ranks);
}

#[test]
fn the_bundled_sample_says_it_is_the_sample() {
    let dir = tempfile::tempdir().unwrap();
    let p = strobe_ui::sample::materialize(Some(dir.path())).unwrap();
    let mut app = empty_app();
    app.showing_sample(&p);
    let mut h = harness(app);
    let ctx = h.ctx.clone();
    h.state_mut().open_files(vec![p.clone()], false, &ctx);
    step_until(&mut h, |a| a.ws.traces.len() == 1 && !a.loading());
    h.step();
    assert_eq!(h.state().window_title(), "sample: gpt_train.json.gz — Strobe");
    h.get_by_label_contains("Showing the bundled sample trace (gpt_train.json.gz)");
    assert!(h.state().settings.recent.is_empty(), "the sample is not a recent file");
    // the user's own file replaces it: the title and the status line stop saying "sample"
    h.state_mut().open_files(vec![sample("gpt_train.json.gz")], true, &ctx);
    step_until(&mut h, |a| a.ws.traces.len() == 1 && a.ws.traces[0].path != p && !a.loading());
    h.run_steps(2);
    assert_eq!(h.state().window_title(), "gpt_train.json.gz — Strobe");
    assert!(h.query_by_label_contains("bundled sample").is_none());
}

#[test]
fn an_empty_file_names_its_path_once() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "").unwrap();
    let mut h = harness(empty_app());
    let ctx = h.ctx.clone();
    h.state_mut().open_files(vec![empty.clone()], true, &ctx);
    step_until(&mut h, |a| !a.errors().is_empty() && !a.loading());
    let shown = empty.display().to_string();
    let e = h.state().errors()[0].clone();
    assert_eq!(e, format!("{shown}: empty file: no JSON in it"));
    assert_eq!(e.matches(&shown).count(), 1, "{e}");
    h.run_steps(1);
    h.get_by_label(&format!("Error: {e}"));
}
