//! Where did the step go: each step's wall time on its GPU split into named parts that add up
//! to the step exactly (docs/attribution.md), and the step's critical path.
//!
//! The types here are what the report (`step_breakdown`), the diff, the rank summaries and the
//! viewer's Step view share; the computations live in the files beside.

pub mod breakdown;
pub mod compare;
pub mod critical_path;
pub mod holders;
pub mod idle_causes;
pub mod ranks;
pub mod rounding;
pub mod stretches;
pub mod sweep;
pub mod text;
pub mod work_owners;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

/// One step of one rank, its time split.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepBreakdown {
    /// The step's name as the report's `steps[]` names it (`ProfilerStep#3`, an NVTX range…).
    pub step: String,
    /// The rank, where several ranks are reported together.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rank: Option<i64>,
    pub start_ns: i64,
    pub dur_ns: i64,
    /// Non-overlapping parts; their sum is `dur_ns`.
    pub parts: Parts,
    pub details: Details,
    /// The longest dependency path through the step, where the trace links host and device.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub critical_path: Option<CriticalPath>,
    /// What could not be attributed as the definition says, and why (no shapes, no GPU work…).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub notes: Vec<String>,
}

/// A step's wall time on its GPU, in ns; the fields add up to the step's `dur_ns`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parts {
    /// The step's model FLOPs at the unit's peak: `model_at_peak_ns / dur_ns` is the step's MFU.
    pub model_at_peak_ns: i64,
    /// The rest of the GPU time of ops with a FLOP formula (their roofline's possible saving).
    pub model_ops_inefficiency_ns: i64,
    /// GPU time of work with no model FLOPs or no formula (copies, optimizer, unmodelled ops).
    pub other_gpu_work_ns: i64,
    /// Exposed communication spent waiting for late peers.
    pub comm_wait_ns: i64,
    /// Exposed communication moving data.
    pub comm_transfer_ns: i64,
    /// Pipeline warm-up, cool-down and P2P wait.
    pub pipeline_bubble_ns: i64,
    /// GPU idle: the host was not submitting.
    pub idle_host_ns: i64,
    /// GPU idle: a synchronisation held the host.
    pub idle_sync_ns: i64,
    /// GPU idle: launch overhead between back-to-back kernels.
    pub idle_launch_ns: i64,
    /// GPU idle for any other reason.
    pub idle_other_ns: i64,
}

/// The parts in their fixed order: key (as in the JSON), label for people.
pub const PART_NAMES: [(&str, &str); 10] = [
    ("model_at_peak_ns", "model at peak"),
    ("model_ops_inefficiency_ns", "model-op inefficiency"),
    ("other_gpu_work_ns", "other GPU work"),
    ("comm_wait_ns", "comm wait"),
    ("comm_transfer_ns", "comm transfer"),
    ("pipeline_bubble_ns", "pipeline bubble"),
    ("idle_host_ns", "host idle"),
    ("idle_sync_ns", "sync idle"),
    ("idle_launch_ns", "launch overhead"),
    ("idle_other_ns", "other idle"),
];

impl Parts {
    /// The values in `PART_NAMES` order.
    pub fn values(&self) -> [i64; 10] {
        [
            self.model_at_peak_ns,
            self.model_ops_inefficiency_ns,
            self.other_gpu_work_ns,
            self.comm_wait_ns,
            self.comm_transfer_ns,
            self.pipeline_bubble_ns,
            self.idle_host_ns,
            self.idle_sync_ns,
            self.idle_launch_ns,
            self.idle_other_ns,
        ]
    }

    /// The parts from their values in `PART_NAMES` order.
    pub fn from_values(v: [i64; 10]) -> Parts {
        Parts {
            model_at_peak_ns: v[0],
            model_ops_inefficiency_ns: v[1],
            other_gpu_work_ns: v[2],
            comm_wait_ns: v[3],
            comm_transfer_ns: v[4],
            pipeline_bubble_ns: v[5],
            idle_host_ns: v[6],
            idle_sync_ns: v[7],
            idle_launch_ns: v[8],
            idle_other_ns: v[9],
        }
    }

    /// A part by its JSON key.
    pub fn get(&self, key: &str) -> Option<i64> {
        PART_NAMES.iter().position(|(k, _)| *k == key).map(|i| self.values()[i])
    }

    pub fn total(&self) -> i64 {
        self.values().iter().sum()
    }
}

/// What each part is made of, largest first: the links from a part to its evidence.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Details {
    /// The step's MFU (`model_at_peak_ns / dur_ns`), where its ops give FLOPs.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mfu: Option<f64>,
    /// The step's model FLOPs.
    pub model_flops: f64,
    /// `model_ops_inefficiency_ns` per op class (GEMM, attention, norm, elementwise, …).
    pub inefficiency_by_class: Vec<Evidence>,
    /// `other_gpu_work_ns`'s largest contributors.
    pub other_gpu_work_top: Vec<Evidence>,
    /// `comm_wait_ns` per collective that waited, with the late rank where known.
    pub comm_wait_on: Vec<Evidence>,
    /// `idle_host_ns`: the CPU ranges that held the host during the idle gaps.
    pub idle_host_held_by: Vec<Evidence>,
}

/// A named share of a part, with where to find it in the trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub name: String,
    pub ns: i64,
    /// A span that shows it (the collective, the CPU range, the longest kernel…).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub span: Option<u32>,
    /// The rank it points at (a late peer), where it is another rank.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rank: Option<i64>,
}

/// The longest dependency path through a step (CPU ops, launches, kernels per stream, syncs,
/// collectives), split by what bounds it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CriticalPath {
    pub length_ns: i64,
    pub bounds: Bounds,
    /// The ops with most time on the path, largest first.
    pub top_ops: Vec<Evidence>,
    /// The path's spans in time order (the viewer outlines them and steps through them).
    pub spans: Vec<u32>,
}

/// The critical path's time by what bounds it; the fields add up to `length_ns`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bounds {
    pub cpu_ns: i64,
    pub gpu_compute_ns: i64,
    pub gpu_comm_ns: i64,
    pub launch_overhead_ns: i64,
    pub kernel_gap_ns: i64,
    pub data_loading_ns: i64,
}
