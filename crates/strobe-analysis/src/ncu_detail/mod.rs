//! What `--set full` records about one launch beyond its Speed-of-Light figures, read off its
//! ncu metrics and rule results (`strobe_model::ncu::NcuLaunch`):
//! - `occupancy`: theoretical vs achieved, what limits it, registers, shared memory, waves;
//! - `stalls`: why warps wait, as shares of the stall reasons, ncu's names and meanings;
//! - `memory`: cache hit rates, DRAM traffic, bank conflicts, the memory chart's flows;
//! - `rules`: ncu's own rule results, ranked by estimated speedup;
//! - `paragraph`: the verdict as a sentence that uses all of them.
//!
//! A figure the report lacks is absent (`None`, an empty list), never zero.

pub mod memory;
pub mod occupancy;
pub mod paragraph;
pub mod rules;
pub mod stalls;

pub use memory::{memory, MemoryFlow, MemoryWorkload};
pub use occupancy::{occupancy, Occupancy};
pub use rules::{estimated_speedup, ranked_rules, EstimatedSpeedup};
pub use stalls::{stalls, Stall, StallSource, Stalls};
