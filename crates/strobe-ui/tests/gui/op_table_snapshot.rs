//! A PNG snapshot of the Ops tab (the whole window, `aten::mm` clicked), rendered as
//! snapshots.rs renders its panes: `UPDATE_SNAPSHOTS=1` rewrites it after a change meant
//! to show; without a wgpu adapter the test says so and passes.

use crate::common;

use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use strobe_ui::app::BottomTab;
use strobe_ui::StrobeApp;

#[test]
fn ops_tab_gpt_train() {
    let Some(renderer) = common::renderer("ops_tab_gpt_train") else { return };
    let mut app = common::app_with(&["gpt_train.json.gz"]);
    app.ws.traces[0].wait_for_analyses();
    app.set_bottom_tab(BottomTab::Ops);
    let mut h = Harness::builder()
        .with_size([1600.0, 1000.0])
        .renderer(renderer)
        .build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    h.run_steps(4);
    h.get_by_label("aten::mm").click();
    h.run_steps(4);
    h.snapshot("ops_tab_gpt_train");
}
