//! Sessions with egui_kittest: what a user set up (folds, a pinned lane, marks, a zoom, the
//! alignment, the tab) saved to a `.strobe` file and reopened in a fresh app.

use crate::common::*;
use strobe_ui::app::BottomTab;
use strobe_ui::commands::Command;
use strobe_ui::timeline::GroupKey;
use strobe_ui::{Settings, StrobeApp};

#[test]
fn a_saved_session_reopens_as_it_was_left() {
    let mut h = harness(app_with_ranks(&["ddp_rank0.json.gz", "ddp_rank1.json.gz"]));
    let (r0, r1) = (trace_id(&h, 0), trace_id(&h, 1));
    let stream7 = h.state().ws.traces[0].store.lanes.iter().position(|l| l.name == "GPU 0 · stream 7").unwrap() as u32;
    let ctx = h.ctx.clone();
    {
        let app = h.state_mut();
        let start = app.ws.extent().unwrap().0;
        app.timeline_state_mut().collapsed.insert(GroupKey::Gpu(r1, 0));
        app.timeline_state_mut().marks.add(start + 5_000_000, "slow here".into());
        app.set_bottom_tab(BottomTab::Ranks);
        app.apply(Command::TogglePin { trace: r0, lane: stream7 }, &ctx);
        app.apply(Command::ZoomTo { t0: start + 1_000_000, t1: start + 3_000_000 }, &ctx);
    }
    h.run_steps(2);
    let before = h.state().session();
    let offsets: Vec<i64> = h.state().ws.traces.iter().map(|t| t.offset_ns).collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("job.strobe");
    h.state_mut().apply(Command::SaveSession(Some(file.clone())), &ctx);
    assert!(file.is_file(), "errors: {:?}", h.state().errors());
    // panel sizes as if the user had dragged the panels' edges before saving
    let mut saved = strobe_ui::session::Session::read(&file).unwrap();
    let dragged = strobe_ui::session::PanelSizes { bottom: 333.0, details: 444.0 };
    assert!(saved.panels.is_some(), "the panel sizes are saved");
    saved.panels = Some(dragged);
    saved.write(&file).unwrap();

    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    let mut h2 = harness(app);
    let ctx2 = h2.ctx.clone();
    h2.state_mut().open_files(vec![file.clone()], true, &ctx2);
    step_until(&mut h2, |a| a.ws.traces.len() == 2 && !a.loading() && !a.ranks().busy());
    h2.run_steps(3);
    let app = h2.state();
    assert_eq!(app.ws.traces.len(), 2, "errors: {:?}", app.errors());
    let after = app.session();
    assert_eq!(after.files, before.files);
    assert_eq!(after.folds.len(), before.folds.len());
    for f in &before.folds {
        assert!(after.folds.contains(f), "{f:?} kept");
    }
    assert_eq!(after.pinned, before.pinned, "the pinned lane, by name");
    assert_eq!(after.timeline.marks, before.timeline.marks);
    assert_eq!(after.alignment, before.alignment);
    assert_eq!(app.bottom_tab(), BottomTab::Ranks);
    let panels = after.panels.expect("panel sizes");
    assert!((panels.bottom - dragged.bottom).abs() < 0.5, "bottom panel {panels:?}");
    assert!((panels.details - dragged.details).abs() < 0.5, "details panel {panels:?}");
    let (v0, v1) = (before.timeline.view, after.timeline.view);
    assert_eq!((v0.origin, v0.t0, v0.npp), (v1.origin, v1.t0, v1.npp), "the same window");
    let offsets2: Vec<i64> = app.ws.traces.iter().map(|t| t.offset_ns).collect();
    assert_eq!(offsets2, offsets, "the ranks aligned the same way");
    let pinned_row = app.timeline().layout.rows.first().unwrap();
    assert!(matches!(pinned_row.kind, strobe_ui::timeline::RowKind::Lane { pinned: true, .. }), "{pinned_row:?}");
}
