//! The memory pane (issue #5) with egui_kittest: open a snapshot pickle, see the summary, the
//! OOM verdict and the segment map.

use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use std::path::PathBuf;
use strobe_ui::app::BottomTab;
use strobe_ui::{Settings, StrobeApp};

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces").join(name)
}

fn harness(files: &[&str]) -> Harness<'static, StrobeApp> {
    let mut app = StrobeApp::new(None, Settings::default());
    app.loader.no_cache = true;
    for f in files {
        app.open_blocking(&sample(f)).expect("open sample");
    }
    let mut h =
        Harness::builder().with_size([1600.0, 1000.0]).build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    h.run_steps(3);
    h
}

#[test]
fn oom_snapshot_opens_in_the_memory_pane() {
    let h = harness(&["mem_oom.pickle"]);
    {
        let app = h.state();
        assert!(app.ws.traces.is_empty(), "a snapshot is not a timeline");
        assert_eq!(app.bottom_tab, BottomTab::Memory);
        let p = app.memory.as_ref().expect("memory pane");
        assert_eq!(p.report.devices.len(), 1);
        assert_eq!(p.segments.segments_drawn.min(1), 1, "segment rows drawn");
        assert!(p.segments.blocks_drawn > 0);
        assert_eq!(p.summary.ooms_shown, 1);
    }
    h.get_by_label("OOM at entry 4354: process_limit");
    h.get_by_label("peak reserved");
    h.get_by_label("Hover a block for its sizes and stack; click to pin it.");
}

#[test]
fn multi_device_snapshot_switches_devices() {
    let mut h = harness(&["mem_expandable_oom.pickle"]);
    h.get_by_label("GPU 1").click();
    h.run_steps(3);
    let p = h.state().memory.as_ref().unwrap();
    assert_eq!(p.device, 1);
    assert_eq!(p.report.devices[1].ooms[0].verdict, "real_shortage");
    h.get_by_label("OOM at entry 421: real_shortage");
}

#[test]
fn a_snapshot_next_to_a_timeline_is_a_bottom_tab() {
    let mut h = harness(&["gpt_train.json.gz", "mem_train.pickle"]);
    h.run_steps(2);
    let app = h.state();
    assert_eq!(app.ws.traces.len(), 1);
    assert_eq!(app.bottom_tab, BottomTab::Memory);
    assert!(app.memory.as_ref().unwrap().segments.segments_drawn > 0);
    h.get_by_label("Memory");
}

#[test]
fn hostile_pickle_is_a_clear_error() {
    let dir = std::env::temp_dir().join(format!("strobe-mem-pane-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("evil.pickle");
    std::fs::write(&p, b"\x80\x02cposix\nsystem\n.").unwrap();
    let mut app = StrobeApp::new(None, Settings::default());
    let e = app.open_blocking(&p).unwrap_err();
    assert!(e.contains("evil.pickle") && e.contains("GLOBAL"), "{e}");
    assert!(app.memory.is_none());
    let _ = std::fs::remove_dir_all(&dir);
}
