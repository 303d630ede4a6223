//! The GUI tests, one binary: each file is a pane or a habit tested as a person uses it. One
//! binary rather than one per file, because each links all of egui, wgpu and the importers.

#[path = "../common/mod.rs"]
mod common;
mod step_data;

mod app_layout;
mod collective_details;
mod cuda_graph_table;
mod efficiency_pane;
mod efficiency_roofline;
mod flight_recorder_pane;
mod gaps_pane;
mod gpu_counter_rows;
mod idle_threshold;
mod kernel_detail;
mod kernel_sol;
mod light_theme;
mod memory_categories_pane;
mod memory_pane;
mod memory_pools;
mod nsys_nccl_details;
mod nsys_ranks;
mod nvtx_gpu_index;
mod op_table_pane;
mod op_table_snapshot;
mod overview_later;
mod pane_widths;
mod pipeline_pane;
mod ranks_pane;
mod save_session;
mod selection_and_lanes;
mod session;
mod snapshots;
mod step_view;
mod stragglers_view;
mod summary_folder;
mod timeline;
mod ui;
mod view_state;
mod window_title;
