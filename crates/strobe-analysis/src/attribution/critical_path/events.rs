//! The events of one step that the critical path runs through, clipped as HTA clips a step:
//! the CPU ops, CUDA runtime/driver calls and data-loading ranges of every CPU thread that
//! start inside the step (and last longer than 0), and the GPU ops (kernels, copies, sets)
//! whose launch call starts inside the step.

use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicU16, Ordering};
use strobe_model::{is_comm_kernel, LaneKind, SpanKind};
use strobe_store::Store;

use super::graph::NO_EVENT;

/// What a name says about an event, decided once per name.
pub mod name {
    /// Holds the CUDA runtime's lock (HTA's list): calls of these names on different threads
    /// run one at a time.
    pub const LOCK: u16 = 1;
    /// The CPU waits in it for the GPU: its own time is no work (HTA's blocking calls).
    pub const BLOCKING: u16 = 2;
    /// `cudaDeviceSynchronize`: waits for every stream.
    pub const DEVICE_SYNC: u16 = 4;
    /// `cudaStreamSynchronize` / `cudaEventSynchronize`: waits for one stream's work.
    pub const ONE_STREAM_SYNC: u16 = 8;
    /// A copy call that can wait for its own copy (`cudaMemcpy`, `cudaMemcpyAsync`).
    pub const COPY_CALL: u16 = 16;
    pub const STREAM_WAIT_EVENT: u16 = 32;
    pub const EVENT_RECORD: u16 = 64;
    /// A data-loading range (`data_loading::is_data_range`).
    pub const DATA: u16 = 128;
    /// The names HTA picks the forward and the backward thread by.
    pub const FORWARD: u16 = 256;
    pub const AUTOGRAD: u16 = 512;
    pub const COMM: u16 = 1024;
}

pub fn classify_name(n: &str) -> u16 {
    use name::*;
    let mut f = 0;
    if matches!(n, "cudaLaunchKernel" | "cudaMemcpyAsync" | "cudaHostAlloc") {
        f |= LOCK;
    }
    if matches!(
        n,
        "cudaDeviceSynchronize" | "cudaStreamSynchronize" | "cudaEventQuery" | "cudaEventSynchronize" | "cudaMemcpy"
    ) {
        f |= BLOCKING;
    }
    match n {
        "cudaDeviceSynchronize" => f |= DEVICE_SYNC,
        "cudaStreamSynchronize" | "cudaEventSynchronize" => f |= ONE_STREAM_SYNC,
        "cudaMemcpy" | "cudaMemcpyAsync" => f |= COPY_CALL,
        "cudaStreamWaitEvent" => f |= STREAM_WAIT_EVENT,
        "cudaEventRecord" | "cudaEventRecordWithFlags" => f |= EVENT_RECORD,
        _ => {}
    }
    if super::data_loading::is_data_range(n) {
        f |= DATA;
    }
    if n.contains("forward") {
        f |= FORWARD;
    }
    if n.contains("autograd") {
        f |= AUTOGRAD;
    }
    if is_comm_kernel(n) {
        f |= COMM;
    }
    f
}

/// One event of the step: nodes `2 i` (start) and `2 i + 1` (end) of the graph.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    pub span: u32,
    pub start: i64,
    pub end: i64,
    pub lane: u32,
    pub gpu: bool,
    pub kind: SpanKind,
    pub names: u16,
    /// GPU op: the event of its launch call (NO_EVENT where that call is outside the step).
    pub launch: u32,
    /// GPU op: when its launch call started.
    pub launch_start: i64,
    /// GPU op: HTA's "the stream was empty": every op before it on its stream had started when
    /// its launch call began, and no later op was launched before it started.
    pub queue_empty: bool,
    /// The span whose name the event's time is listed under in `top_ops`: a CPU event's
    /// innermost enclosing CPU op (itself where it is one), a GPU op's launching op.
    pub op: u32,
    /// CPU event inside a data-loading range (or one itself).
    pub in_data: bool,
}

/// The step's events: the CPU ones first, in lane then start order, then the GPU ones in lane
/// (stream) then start order.
pub struct StepEvents {
    pub events: Vec<Event>,
    pub first_gpu: usize,
    /// (forward thread, backward thread): the backward thread's events are walked as the
    /// forward thread's, as HTA does, so the path runs on through the backward pass.
    pub merged: Option<(u32, u32)>,
}

/// The name flags of string ids, each decided on first use and kept for every step of the
/// trace (the steps' threads share them: a name's flags are the same whoever decides them).
pub struct Names(Vec<AtomicU16>);

/// Set in a slot whose flags are decided (the flags use the bits below it).
const DECIDED: u16 = 1 << 15;

impl Names {
    pub fn new(store: &Store) -> Names {
        Names((0..store.string_count()).map(|_| AtomicU16::new(0)).collect())
    }

    pub fn of(&self, store: &Store, id: u32) -> u16 {
        let Some(slot) = self.0.get(id as usize) else { return classify_name(store.string(id)) };
        match slot.load(Ordering::Relaxed) {
            0 => {
                let f = classify_name(store.string(id));
                slot.store(f | DECIDED, Ordering::Relaxed);
                f
            }
            f => f & !DECIDED,
        }
    }
}

fn in_window(starts: &[i64], t0: i64, t1: i64) -> std::ops::Range<usize> {
    starts.partition_point(|&s| s < t0)..starts.partition_point(|&s| s <= t1)
}

pub fn collect(store: &Store, t0: i64, t1: i64, names: &Names) -> StepEvents {
    let mut events = Vec::new();
    let mut by_span: FxHashMap<u32, u32> = FxHashMap::default();
    let mut lane_names: FxHashMap<u32, u16> = FxHashMap::default();
    for (lane, desc) in store.lanes.iter().enumerate() {
        if !matches!(desc.kind, LaneKind::CpuThread { .. }) {
            continue;
        }
        let v = store.lane_spans(lane as u32);
        for k in in_window(v.starts, t0, t1) {
            let (sid, start, end) = (v.span[k], v.starts[k], v.ends[k]);
            if end <= start {
                continue;
            }
            let m = store.span_meta(sid);
            let kind = SpanKind::from_u8(m.kind);
            let flags = names.of(store, m.name);
            let node_kind = matches!(kind, SpanKind::CpuOp | SpanKind::CudaRuntime | SpanKind::CudaDriver);
            let data = flags & name::DATA != 0
                && matches!(kind, SpanKind::CpuOp | SpanKind::UserAnnotation | SpanKind::PythonFunction);
            // the thread-picking names count on CPU ops and annotations, as HTA's do
            let picks = matches!(kind, SpanKind::CpuOp | SpanKind::UserAnnotation)
                && flags & (name::FORWARD | name::AUTOGRAD) != 0;
            if !(node_kind || data || picks) {
                continue;
            }
            let mut names_kept = flags;
            if !data {
                names_kept &= !name::DATA;
            }
            if picks {
                *lane_names.entry(lane as u32).or_default() |= flags & (name::FORWARD | name::AUTOGRAD);
            }
            if !node_kind && !data {
                continue;
            }
            by_span.insert(sid, events.len() as u32);
            events.push(Event {
                span: sid,
                start,
                end,
                lane: lane as u32,
                gpu: false,
                kind,
                names: names_kept,
                launch: NO_EVENT,
                launch_start: 0,
                queue_empty: false,
                op: sid,
                in_data: false,
            });
        }
    }
    let first_gpu = events.len();
    let launches = store.launch_table();
    for (lane, desc) in store.lanes.iter().enumerate() {
        if !matches!(desc.kind, LaneKind::GpuStream { .. }) {
            continue;
        }
        let v = store.lane_spans(lane as u32);
        let launch_start = |k: usize| launches.get(v.span[k]).map(|l| store.span_start(l));
        let mut k = v.starts.partition_point(|&s| s < t0);
        while k < v.starts.len() {
            let sid = v.span[k];
            let ls = launch_start(k);
            if v.starts[k] > t1 && ls.is_none_or(|l| l > t1) {
                break;
            }
            let kind = store.span_kind(sid);
            let Some(l) = launches.get(sid) else {
                k += 1;
                continue;
            };
            let (lstart, lend) = (store.span_start(l), store.span_end(l));
            if !matches!(kind, SpanKind::Kernel | SpanKind::Memcpy | SpanKind::Memset)
                || lstart < t0
                || lstart > t1
                || lend <= lstart
            {
                k += 1;
                continue;
            }
            let before_started = k == 0 || v.starts[k - 1] <= lstart;
            let next_launched_later = k + 1 >= v.starts.len() || launch_start(k + 1).is_none_or(|n| n > v.starts[k]);
            let launch = by_span.get(&l).copied().unwrap_or(NO_EVENT);
            events.push(Event {
                span: sid,
                start: v.starts[k],
                end: v.ends[k].max(v.starts[k]),
                lane: lane as u32,
                gpu: true,
                kind,
                names: names.of(store, store.span_meta(sid).name) & name::COMM,
                launch,
                launch_start: lstart,
                queue_empty: before_started && next_launched_later,
                op: sid,
                in_data: false,
            });
            k += 1;
        }
    }
    // HTA's thread merge: the one thread with `forward` ops and the one with `autograd` ops
    let only = |flag: u16| {
        let mut it = lane_names.iter().filter(|(_, &f)| f & flag != 0).map(|(&l, _)| l);
        match (it.next(), it.next()) {
            (Some(l), None) => Some(l),
            _ => None,
        }
    };
    let merged = match (only(name::FORWARD), only(name::AUTOGRAD)) {
        (Some(f), Some(b)) if f != b => Some((f, b)),
        _ => None,
    };
    StepEvents { events, first_gpu, merged }
}
