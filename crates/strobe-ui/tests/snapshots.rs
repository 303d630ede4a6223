//! PNG snapshots of the timeline, memory, kernel (ncu) and ranks panes, rendered by
//! egui_kittest with wgpu (a GPU or a software Vulkan/GL driver):
//! `cargo test -p strobe-ui --features snapshot --test snapshots`; `UPDATE_SNAPSHOTS=1`
//! rewrites tests/snapshots/*.png after a change meant to show.
#![cfg(feature = "snapshot")]

mod common;

use egui_kittest::Harness;
use strobe_ui::app::BottomTab;
use strobe_ui::StrobeApp;

/// The timeline alone (no menus or other panes), 1600 × 900.
fn timeline(files: &[&str], align: bool) -> Harness<'static, StrobeApp> {
    let app = if align { common::app_with_ranks(files) } else { common::app_with(files) };
    let mut h = Harness::builder()
        .with_size([1600.0, 900.0])
        .wgpu()
        .build_ui_state(|ui, app: &mut StrobeApp| app.timeline_pane(ui), app);
    h.run_steps(3);
    h
}

/// The whole window with one bottom tab shown.
fn window(app: StrobeApp, tab: BottomTab) -> Harness<'static, StrobeApp> {
    let mut app = app;
    app.set_bottom_tab(tab);
    let mut h = Harness::builder()
        .with_size([1600.0, 1000.0])
        .wgpu()
        .build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    h.run_steps(4);
    h
}

#[test]
fn gpt_train_whole_trace() {
    let mut h = timeline(&["gpt_train.json.gz"], false);
    h.snapshot("timeline_gpt_train");
}

#[test]
fn gpt_train_before_its_figures() {
    // the rows the overview fills are held open and say so
    let mut h = Harness::builder().with_size([1600.0, 900.0]).wgpu().build_ui_state(
        |ui, app: &mut StrobeApp| app.timeline_pane(ui),
        common::app_before_the_figures_of("gpt_train.json.gz"),
    );
    h.run_steps(3);
    h.snapshot("timeline_gpt_train_before_figures");
}

#[test]
fn two_aligned_ranks() {
    let mut h = timeline(&["ddp_rank0.json.gz", "ddp_rank1.json.gz"], true);
    h.snapshot("timeline_ddp_aligned");
}

#[test]
fn memory_pane_oom_snapshot() {
    let mut h = window(common::app_with(&["mem_oom.pickle"]), BottomTab::Memory);
    h.snapshot("memory_oom");
}

#[test]
fn kernel_pane_ncu_raw() {
    let mut h = window(common::app_with(&["ncu_raw.csv"]), BottomTab::KernelSol);
    h.snapshot("kernel_sol_ncu_raw");
}

#[test]
fn ranks_pane_heat_map() {
    let app = common::app_with_ranks(&["ddp_rank0.json.gz", "ddp_rank1.json.gz"]);
    let mut h = window(app, BottomTab::Ranks);
    h.snapshot("ranks_ddp");
}
