//! Plain types shared by every Strobe crate. Time is always `i64` nanoseconds, in the
//! source's own clock (no rebasing), so exports and cross-tool comparisons stay exact.

pub mod flight_recorder;
pub mod gpu_metrics;
mod kinds;
pub mod memory;
mod meta;
pub mod ncu;

pub use kinds::{CopyDir, LaneKind, SpanKind};
pub use meta::{DeviceInfo, DistributedInfo, LoadSummary, SourceFormat, TraceMeta, Truncation};

/// The counter series of a GPU's memory water level, written alike by every importer that
/// has one (Kineto `[memory]` events, nsys memory-usage events) and read by the report and
/// the timeline's GPU group.
pub mod gpu_memory {
    /// Counter name.
    pub const NAME: &str = "GPU memory";
    /// Bytes held by live tensors (the caching allocator's "allocated").
    pub const ALLOCATED: &str = "allocated bytes";
    /// Bytes the allocator holds from the driver (its "reserved"; `cudaMalloc`'d memory).
    pub const RESERVED: &str = "reserved bytes";
}

/// Nanoseconds.
pub type Ns = i64;

/// Span flag bits.
pub mod flags {
    /// A `B` event whose `E` never came: the span is kept with its end set to the end of
    /// its thread's last event, and this flag set (exports report `dur_ns = -1`).
    pub const UNCLOSED: u16 = 1;
    /// An instant event (`i`/`I`, NVTX mark): duration 0.
    pub const INSTANT: u16 = 2;
}

/// A process or thread identifier as the source wrote it: the trace-event format allows
/// strings (`"pid": "Spans"`), which must survive to exports unchanged.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum IdKey {
    Num(i64),
    Str(String),
}

impl IdKey {
    /// Numeric value used for ordering; strings sort after numbers.
    pub fn as_num(&self) -> Option<i64> {
        match self {
            IdKey::Num(n) => Some(*n),
            IdKey::Str(_) => None,
        }
    }
}

impl std::fmt::Display for IdKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IdKey::Num(n) => write!(f, "{n}"),
            IdKey::Str(s) => f.write_str(s),
        }
    }
}

/// What a PyTorch profiler (Kineto) pseudo process stands for: Kineto writes its own session
/// span under `"pid": "Spans"`, its iteration markers under `"pid": "Traces"`, the
/// "Record Window End" instant with an empty pid, and CUPTI overhead under pid -1. None for a
/// real process (any other pid, including other tools' string pids, which keep their names).
pub fn profiler_pseudo_process(pid: &IdKey) -> Option<&'static str> {
    match pid {
        IdKey::Str(s) if s == "Spans" => Some("profiler session"),
        IdKey::Str(s) if s == "Traces" => Some("profiler markers"),
        IdKey::Str(s) if s.is_empty() => Some("global instants"),
        IdKey::Num(-1) => Some("profiler overhead"),
        _ => None,
    }
}

/// Classifies a GPU kernel name the way `strobe report` defines comm: NCCL or RCCL in the
/// name, any case.
pub fn is_comm_kernel(name: &str) -> bool {
    let bytes = name.as_bytes();
    bytes.windows(4).any(|w| {
        let l = [
            w[0].to_ascii_lowercase(),
            w[1].to_ascii_lowercase(),
            w[2].to_ascii_lowercase(),
            w[3].to_ascii_lowercase(),
        ];
        &l == b"nccl" || &l == b"rccl"
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn comm_names() {
        assert!(is_comm_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
        assert!(is_comm_kernel("void RCCL_kernel<..>"));
        assert!(!is_comm_kernel("nvjet_sm90_tst"));
        assert!(!is_comm_kernel("ncc"));
    }
}
