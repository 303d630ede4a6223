//! PyTorch flight-recorder dumps (`TORCH_FR_BUFFER_SIZE`; `_dump_fr_trace()` /
//! `_dump_nccl_trace()`, or the watchdog on a timeout): one rank's ring buffer of the
//! collectives and point-to-point ops it issued, with the process groups it knew.

use serde::Serialize;

/// One rank's dump, as read.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FrDump {
    /// The file it came from.
    pub path: String,
    /// Global rank: the dump's own `rank` field where it has one, else the number the file's
    /// name ends with (the recorder itself writes none).
    pub rank: u32,
    /// Where the rank came from: `dump` or `file name`.
    pub rank_from: String,
    /// The dump's `version` field ("2.10" …), as written.
    pub version: String,
    /// `pickle` or `json`.
    pub form: String,
    /// `comm_lib_version` / `nccl_version`, where written.
    pub comm_lib_version: Option<String>,
    /// `pg_config`: every process group the rank created, by name.
    pub groups: Vec<FrGroup>,
    /// `pg_status`: per group id, the last collective sequence numbers enqueued, started and
    /// completed (-1 or absent where the recorder wrote none).
    pub group_status: Vec<FrGroupStatus>,
    /// The buffer's entries, oldest first (the order the recorder dumps them).
    pub entries: Vec<FrEntry>,
    /// What was read differently from the known layout: unknown fields, another version,
    /// entries left out and why.
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FrGroup {
    /// The group's name (`"0"` for the default group; c10d numbers groups in creation order,
    /// the same on every rank).
    pub name: String,
    /// Its description (`default_pg`, or what `new_group(group_desc=…)` was given).
    pub desc: String,
    /// Global ranks of its members, in group-rank order.
    pub ranks: Vec<u32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FrGroupStatus {
    /// The group's id (a number, kept as written).
    pub pg_id: String,
    pub last_enqueued: Option<i64>,
    pub last_started: Option<i64>,
    pub last_completed: Option<i64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FrState {
    Scheduled,
    Started,
    Completed,
}

impl FrState {
    pub fn as_str(self) -> &'static str {
        match self {
            FrState::Scheduled => "scheduled",
            FrState::Started => "started",
            FrState::Completed => "completed",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FrEntry {
    /// `record_id`: the rank's running count of recorded ops.
    pub record_id: i64,
    pub pg_id: i64,
    /// `process_group`'s name and description.
    pub group: String,
    pub group_desc: String,
    /// The group's k-th collective (0 on a point-to-point op in newer dumps).
    pub collective_seq_id: i64,
    /// The group's k-th point-to-point op on this rank.
    pub p2p_seq_id: i64,
    pub op_id: i64,
    /// `profiling_name`, such as `nccl:all_reduce` or `gloo:send`.
    pub profiling_name: String,
    /// `is_p2p` where written; else guessed from the name.
    pub is_p2p: bool,
    pub input_sizes: Vec<Vec<i64>>,
    pub input_dtypes: Vec<String>,
    pub output_sizes: Vec<Vec<i64>>,
    pub output_dtypes: Vec<String>,
    pub state: FrState,
    pub time_created_ns: i64,
    pub time_started_ns: Option<i64>,
    pub time_completed_ns: Option<i64>,
    pub duration_ms: Option<f64>,
    pub timeout_ms: Option<i64>,
    pub retired: Option<bool>,
    pub thread_name: Option<String>,
    pub thread_id: Option<String>,
    /// Python frames, innermost first.
    pub frames: Vec<FrFrame>,
}

impl FrEntry {
    /// The op without its backend prefix (`nccl:all_reduce` → `all_reduce`).
    pub fn op(&self) -> &str {
        self.profiling_name.rsplit_once(':').map_or(self.profiling_name.as_str(), |(_, op)| op)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FrFrame {
    pub name: String,
    pub filename: String,
    pub line: i64,
}
