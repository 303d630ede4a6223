//! PNG snapshots of the timeline pane, rendered by egui_kittest with wgpu (a GPU or a software
//! Vulkan/GL driver): `cargo test -p strobe-ui --features snapshot --test snapshots`;
//! `UPDATE_SNAPSHOTS=1` rewrites tests/snapshots/*.png after a change meant to show.
#![cfg(feature = "snapshot")]

use egui_kittest::Harness;
use std::path::PathBuf;
use strobe_ui::commands::Highlight;
use strobe_ui::{Settings, StrobeApp};

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces").join(name)
}

/// The timeline alone (no menus or other panes), 1600 × 900.
fn timeline(files: &[&str], align: bool) -> Harness<'static, StrobeApp> {
    let mut app = StrobeApp::new(None, Settings::default());
    app.loader.no_cache = true;
    for f in files {
        app.open_blocking(&sample(f)).expect("open sample");
    }
    if align {
        app.ranks.update_blocking(&app.ws);
        app.apply_rank_offsets();
    }
    let mut h = Harness::builder().with_size([1600.0, 900.0]).wgpu().build_ui_state(
        |ui, app: &mut StrobeApp| {
            let mut cmds = Vec::new();
            app.timeline.ui(ui, &app.ws, &app.sel, &Highlight::default(), &mut cmds);
        },
        app,
    );
    h.run_steps(3);
    h
}

#[test]
fn gpt_train_whole_trace() {
    let mut h = timeline(&["gpt_train.json.gz"], false);
    h.snapshot("timeline_gpt_train");
}

#[test]
fn two_aligned_ranks() {
    let mut h = timeline(&["ddp_rank0.json.gz", "ddp_rank1.json.gz"], true);
    h.snapshot("timeline_ddp_aligned");
}
