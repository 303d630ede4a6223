//! Analyses: plain functions over a `Store`, one module per question. The CLI and the GUI
//! both call these; neither re-derives a number.

pub mod anomalies;
pub mod attribution;
pub mod cuda_graphs;
pub mod diff;
pub mod efficiency;
pub mod export;
pub mod figures;
pub mod flight_recorder;
pub mod gaps;
pub mod gpu_metrics;
pub mod gpu_time;
pub mod headline;
pub mod idle;
pub mod intervals;
pub mod kernels;
pub mod memory;
pub mod memory_level;
pub mod ncu_detail;
pub mod ncu_gain;
pub mod ncu_match;
pub mod ncu_tensor;
pub mod nvtx_gpu;
pub mod op_table;
pub mod pipeline;
pub mod ranks;
pub mod report;
pub mod roofline;
pub mod span_durations;
pub mod stats;
pub mod steps;
pub mod streams;
#[cfg(test)]
mod test_util;
