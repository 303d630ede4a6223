//! Read and write access to the app's parts, for tests and benchmarks that set it up the way
//! a user would leave it and check what the panes hold.

use super::{BottomTab, StrobeApp};
use crate::area::AreaTable;
use crate::file_browser::FileBrowser;
use crate::kernel_table::KernelTable;
use crate::loader::Loader;
use crate::search::SearchBar;
use crate::timeline::{TimelineState, TimelineView};

impl StrobeApp {
    /// Ask the desktop for file dialogs (off: the built-in ones at once; tests).
    pub fn set_native_dialogs(&mut self, on: bool) {
        self.native_dialogs = on;
    }

    /// The built-in Save session… dialog.
    pub fn save_browser_mut(&mut self) -> &mut crate::save_browser::SaveBrowser {
        &mut self.save_browser
    }

    /// What the status line says besides errors and loads.
    pub fn notices(&self) -> &[super::Notice] {
        &self.notices
    }

    /// Loads without reading or writing the store cache (tests).
    pub fn set_no_cache(&mut self, on: bool) {
        self.loader.no_cache = on;
    }

    /// The timeline pane's own state (layout, frame statistics, flash).
    pub fn timeline(&self) -> &TimelineView {
        &self.timeline
    }

    pub fn timeline_mut(&mut self) -> &mut TimelineView {
        &mut self.timeline
    }

    /// The view state every pane reads: window, scroll, marks, folds, pins.
    pub fn timeline_state(&self) -> &TimelineState {
        &self.timeline_state
    }

    pub fn timeline_state_mut(&mut self) -> &mut TimelineState {
        &mut self.timeline_state
    }

    /// A sender of commands, as a worker thread would get it.
    pub fn command_sender(&self) -> crate::commands::CommandSender {
        self.sender.clone()
    }

    pub fn ranks_mut(&mut self) -> &mut crate::ranks::RanksPane {
        &mut self.ranks
    }

    pub fn kernels_mut(&mut self) -> &mut KernelTable {
        &mut self.kernels
    }

    pub fn kernel_sol_mut(&mut self) -> Option<&mut crate::kernel_sol::KernelSolPane> {
        self.kernel_sol.as_mut()
    }

    pub fn set_bottom_tab(&mut self, t: BottomTab) {
        self.bottom_tab = t;
    }

    pub fn kernels(&self) -> &KernelTable {
        &self.kernels
    }

    pub fn flight_recorder(&self) -> &crate::flight_recorder_pane::FlightRecorderPane {
        &self.flight_recorder
    }

    /// Selects a cell of the flight-recorder grid on the group it is in (snapshots).
    pub fn select_flight_recorder_cell(&mut self, rank: u32, seq: i64) {
        self.flight_recorder.selected = Some((rank, seq));
    }

    pub fn kernel_sol(&self) -> Option<&crate::kernel_sol::KernelSolPane> {
        self.kernel_sol.as_ref()
    }

    pub fn memory(&self) -> Option<&crate::memory::MemoryPane> {
        self.memory.as_ref()
    }

    pub fn efficiency(&self) -> &crate::efficiency_pane::EfficiencyPane {
        &self.efficiency
    }

    pub fn ranks(&self) -> &crate::ranks::RanksPane {
        &self.ranks
    }

    pub fn pipeline(&self) -> &crate::pipeline::PipelinePane {
        &self.pipeline
    }

    pub fn browser(&self) -> &FileBrowser {
        &self.browser
    }

    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    pub fn bottom_tab(&self) -> BottomTab {
        self.bottom_tab
    }

    pub fn search(&self) -> &SearchBar {
        &self.search
    }

    pub fn area(&self) -> &AreaTable {
        &self.area
    }

    pub fn browser_mut(&mut self) -> &mut FileBrowser {
        &mut self.browser
    }

    pub fn loader(&self) -> &Loader {
        &self.loader
    }

    /// Whether files are still loading.
    pub fn loading(&self) -> bool {
        self.loader.busy()
    }
}
