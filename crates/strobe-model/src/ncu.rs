//! Nsight Compute (ncu) exports: one record per profiled kernel launch, each with its
//! metrics normalised to base units. Written by `strobe_import::ncu_csv`, read by
//! `strobe_analysis::roofline` and the kernel pane.
//!
//! Base units: sizes in `byte`, times in `ns` (the crate-wide time unit), frequencies in
//! `hz`, rates per `second` (`byte/second`, `inst/second`), percentages in `%`, and counts
//! in their own unit (`cycle`, `inst`, `warp`, ...). Per-cycle and per-block units keep
//! their denominator (`byte/cycle`, `inst/cycle`), only the numerator is scaled.

use std::collections::BTreeMap;

/// One metric of one launch.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NcuMetric {
    /// The value in `unit` (base units); `None` when the export has no number (`n/a`,
    /// `(64, 1, 1)`, `PolicySpread`, ...).
    pub value: Option<f64>,
    /// The base unit after normalisation (see the module doc).
    pub unit: String,
    /// The value text and unit exactly as the export wrote them.
    pub raw: String,
    pub raw_unit: String,
}

/// Which export layout the launches came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NcuLayout {
    /// `--page raw`: one row per launch, one column per metric, a units row.
    Raw,
    /// `--page details` / `--csv --metrics` / section exports: one row per launch × metric.
    Details,
}

/// One profiled kernel launch.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NcuLaunch {
    /// ncu's launch id (`ID` column).
    pub id: u64,
    /// Kernel name as ncu printed it (ncu demangles by default; an `_Z…` name is kept as is).
    pub name: String,
    pub process_id: Option<i64>,
    pub process: String,
    pub host: String,
    pub device: Option<u32>,
    /// Compute capability, e.g. `9.0`.
    pub cc: String,
    pub context: Option<i64>,
    pub stream: Option<i64>,
    /// `(x, y, z)`; older exports only give a total (then `[n, 1, 1]`).
    pub grid: Option<[u64; 3]>,
    pub block: Option<[u64; 3]>,
    /// Older exports' `Kernel Time` column (a wall-clock timestamp text).
    pub kernel_time: Option<String>,
    /// Metric id → value. Metric ids are ncu's (`gpu__time_duration.sum`); the display
    /// names of the details page are mapped onto them where known (`Duration` →
    /// `gpu__time_duration.sum`), and otherwise kept as `Section/Name`.
    pub metrics: BTreeMap<String, NcuMetric>,
    /// ncu's rule results (its "guided analysis"), one per rule message, in report order.
    /// Empty when the export has none (the raw page never has them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<NcuRule>,
}

/// One message of one of ncu's rules for a launch: what the details page prints in its
/// `Rule Name`, `Rule Type`, `Rule Description`, `Estimated Speedup Type` and `Estimated
/// Speedup` columns.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NcuRule {
    /// The rule's identifier (`UncoalescedGlobalAccess`).
    pub name: String,
    /// The section it belongs to (`MemoryWorkloadAnalysis_Tables`), where the export says.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub section: String,
    /// `OPT` (an optimisation), `WRN`, `ERR` or `INF`, as ncu prints them.
    #[serde(rename = "type")]
    pub kind: String,
    /// The message, with ncu's cross-reference markup rendered as its CSV export renders it.
    pub message: String,
    /// `global` (a share of the whole kernel's time) or `local` (of the part the rule looks
    /// at); absent when the rule estimates no speedup.
    pub speedup_type: Option<String>,
    /// ncu's estimated speedup, % of the kernel's duration.
    pub speedup_pct: Option<f64>,
}

impl NcuLaunch {
    /// A metric's value in base units.
    pub fn value(&self, id: &str) -> Option<f64> {
        self.metrics.get(id).and_then(|m| m.value)
    }
    /// The first of several metric ids that has a value.
    pub fn first_value(&self, ids: &[&str]) -> Option<f64> {
        ids.iter().find_map(|id| self.value(id))
    }
}

/// A whole ncu export.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NcuReport {
    pub layout: NcuLayout,
    /// In export order.
    pub launches: Vec<NcuLaunch>,
}
