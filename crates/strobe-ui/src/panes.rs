//! The bottom panel's tabs: one `Pane` trait (a title, whether the tab is offered for what is
//! open, its `ui`), implemented here for every tab, and the tab bar and dispatch that go
//! through it. `BottomTab` stays the tabs' id (sessions save it); the list of tabs is
//! `StrobeApp::bottom_tabs`.

use crate::app::BottomTab;
use crate::view_ctx::ViewCtx;
use crate::workspace::Workspace;

pub trait Pane {
    /// The tab's label.
    fn title(&self) -> &str;
    /// Whether the tab is offered for what is open.
    fn applies(&self, _ws: &Workspace) -> bool {
        true
    }
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx);
}

/// The tab bar over `tabs` (those that apply), then the chosen tab's pane.
pub fn show(ui: &mut egui::Ui, tabs: &mut [(BottomTab, &mut dyn Pane)], tab: &mut BottomTab, cx: &mut ViewCtx) {
    ui.horizontal(|ui| {
        for (id, pane) in tabs.iter().filter(|(_, p)| p.applies(cx.ws)) {
            ui.selectable_value(tab, *id, pane.title());
        }
    });
    ui.separator();
    // The tab draws into exactly the panel's space, clipped: a tab with much to show
    // scrolls inside it instead of growing the panel (its height is the user's).
    let area = ui.available_rect_before_wrap();
    ui.allocate_rect(area, egui::Sense::hover());
    let mut ui = ui.new_child(egui::UiBuilder::new().max_rect(area).layout(*ui.layout()));
    ui.set_clip_rect(area.intersect(ui.clip_rect()));
    if let Some((_, pane)) = tabs.iter_mut().find(|(id, _)| id == tab) {
        pane.ui(&mut ui, cx);
    }
}

impl Pane for crate::kernel_table::KernelTable {
    fn title(&self) -> &str {
        "Kernels"
    }
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        crate::kernel_table::KernelTable::ui(self, ui, cx)
    }
}

impl Pane for crate::op_table_pane::OpTablePane {
    fn title(&self) -> &str {
        "Ops"
    }
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        crate::op_table_pane::OpTablePane::ui(self, ui, cx)
    }
}

impl Pane for crate::area::AreaTable {
    fn title(&self) -> &str {
        "Area selection"
    }
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        crate::area::AreaTable::ui(self, ui, cx)
    }
}

/// The Load summary tab (`load_summary::ui`; it keeps no state).
#[derive(Default)]
pub struct LoadSummary;

impl Pane for LoadSummary {
    fn title(&self) -> &str {
        "Load summary"
    }
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        crate::load_summary::ui(ui, cx)
    }
}

impl Pane for crate::gaps_pane::GapsPane {
    fn title(&self) -> &str {
        "Gaps"
    }
    fn applies(&self, ws: &Workspace) -> bool {
        !ws.traces.is_empty()
    }
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        crate::gaps_pane::GapsPane::ui(self, ui, cx)
    }
}

impl Pane for crate::step_view::StepsPane {
    fn title(&self) -> &str {
        "Steps"
    }
    fn applies(&self, ws: &Workspace) -> bool {
        !ws.traces.is_empty()
    }
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        crate::step_view::StepsPane::ui(self, ui, cx)
    }
}

impl Pane for crate::efficiency_pane::EfficiencyPane {
    fn title(&self) -> &str {
        "Efficiency"
    }
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        crate::efficiency_pane::EfficiencyPane::ui(self, ui, cx)
    }
}

/// The Nsight Compute kernel pane, there while an ncu export is open.
impl Pane for Option<crate::kernel_sol::KernelSolPane> {
    fn title(&self) -> &str {
        "Kernel SOL (ncu)"
    }
    fn applies(&self, _ws: &Workspace) -> bool {
        self.is_some()
    }
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        match self {
            Some(p) => p.ui(ui, cx),
            None => {
                ui.weak("Open an Nsight Compute report (.ncu-rep) or CSV export (ncu --csv --page raw) to see its kernels here.");
            }
        }
    }
}

/// The memory pane, there while a memory snapshot is open.
impl Pane for Option<crate::memory::MemoryPane> {
    fn title(&self) -> &str {
        "Memory"
    }
    fn applies(&self, _ws: &Workspace) -> bool {
        self.is_some()
    }
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        match self {
            Some(p) => p.ui(ui, cx),
            None => {
                ui.weak("Open a memory snapshot (torch.cuda.memory._dump_snapshot) to see it here.");
            }
        }
    }
}

impl Pane for crate::ranks::RanksPane {
    fn title(&self) -> &str {
        "Ranks"
    }
    fn applies(&self, ws: &Workspace) -> bool {
        crate::ranks::RanksPane::applies(ws)
    }
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        crate::ranks::RanksPane::ui(self, ui, cx)
    }
}

impl Pane for crate::pipeline::PipelinePane {
    fn title(&self) -> &str {
        "Pipeline"
    }
    /// Once the open ranks are found to form a pipeline.
    fn applies(&self, ws: &Workspace) -> bool {
        ws.pipeline.is_some()
    }
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        crate::pipeline::PipelinePane::ui(self, ui, cx)
    }
}

impl Pane for crate::flight_recorder_pane::FlightRecorderPane {
    fn title(&self) -> &str {
        "Flight recorder"
    }
    fn applies(&self, ws: &Workspace) -> bool {
        !ws.flight_recorder.is_empty()
    }
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        crate::flight_recorder_pane::FlightRecorderPane::ui(self, ui, cx)
    }
}

impl Pane for crate::notes::NotesPane {
    fn title(&self) -> &str {
        "Notes"
    }
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        crate::notes::NotesPane::ui(self, ui, cx)
    }
}
