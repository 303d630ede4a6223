//! The `cudaProfilerStart` / `cudaProfilerStop` capture range: what the program asked to be
//! profiled. Nsight Systems records the two calls as CUDA runtime calls when it traces the
//! whole run (no `--capture-range`), and Megatron-style scripts bracket the steps they want
//! with them; everything before (CUDA init, warm-up) is the prologue.

use serde::Serialize;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CaptureRange {
    /// End of the first `cudaProfilerStart`.
    pub start_ns: i64,
    /// Start of the last `cudaProfilerStop` after it (`i64::MAX` when there is none: the range
    /// runs to the end of the trace).
    pub end_ns: i64,
    pub starts: usize,
    pub stops: usize,
}

fn is_call(name: &str, base: &str) -> bool {
    // runtime (`cudaProfilerStart`) and driver (`cuProfilerStart`) spellings, ABI suffixes
    name.strip_prefix(base).is_some_and(|r| r.is_empty() || r.starts_with("_v"))
}

/// The capture range, where the trace records at least one `cudaProfilerStart`.
pub fn capture_range(store: &Store) -> Option<CaptureRange> {
    // Names are compared once each, spans by name id: a report has millions of runtime calls
    // and a few thousand distinct names, and most traces have no profiler call at all.
    let ids = |bases: [&str; 2]| -> Vec<u32> {
        (0..store.string_count() as u32).filter(|&id| bases.iter().any(|b| is_call(store.string(id), b))).collect()
    };
    let start_ids = ids(["cudaProfilerStart", "cuProfilerStart"]);
    if start_ids.is_empty() {
        return None;
    }
    let stop_ids = ids(["cudaProfilerStop", "cuProfilerStop"]);
    // one pass over the span metadata in id order (every span of a CPU thread is a member of
    // its lane once): sequential, where walking each lane's members read them through ids
    let cpu_lane: Vec<bool> = store.lanes.iter().map(|d| matches!(d.kind, LaneKind::CpuThread { .. })).collect();
    let (span_starts, span_ends) = store.span_times();
    let (mut starts, mut stops) = (Vec::new(), Vec::new());
    for (i, m) in store.span_metas().iter().enumerate() {
        let (is_start, is_stop) = (start_ids.contains(&m.name), stop_ids.contains(&m.name));
        if !(is_start || is_stop)
            || !matches!(SpanKind::from_u8(m.kind), SpanKind::CudaRuntime | SpanKind::CudaDriver)
            || !cpu_lane.get(m.lane as usize).copied().unwrap_or(false)
        {
            continue;
        }
        let (Some(&s), Some(&e)) = (span_starts.get(i), span_ends.get(i)) else { continue };
        if is_start {
            starts.push(e);
        } else {
            stops.push(s);
        }
    }
    let start_ns = starts.iter().copied().min()?;
    let end_ns = stops.iter().copied().filter(|&s| s >= start_ns).max().unwrap_or(i64::MAX);
    Some(CaptureRange { start_ns, end_ns, starts: starts.len(), stops: stops.len() })
}
