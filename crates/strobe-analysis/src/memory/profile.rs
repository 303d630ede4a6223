//! The same breakdown for a `torch.profiler(profile_memory=True)` trace: its `[memory]`
//! instants (an allocation's or free's address and bytes, and the allocator's total after it)
//! become the trace of a snapshot, the ops and Python functions enclosing each instant its stack,
//! the `record_function` ranges (`forward`, `backward`, `Optimizer.step#…`) its annotations, and
//! the snapshot rules decide the categories (as memory_viz's `profile_plot` does from the
//! profiler's own records). The profile starts after the model was built, so what it never saw
//! made (parameters, optimizer state made before it) is `other`, said as such; an instant no op
//! encloses is classified by its lifetime alone.

use super::breakdown::{peak_breakdown, PeakBreakdown};
use super::categories::Classifier;
use super::AllocationTimeline;
use rustc_hash::FxHashMap;
use serde::Serialize;
use strobe_model::memory::{Action, Annotation, Block, BlockState, Frame, MemorySnapshot, Segment, TraceEntry};
use strobe_model::SpanKind;
use strobe_store::Store;

#[derive(Clone, Debug, Serialize)]
pub struct ProfileBreakdown {
    pub device: i64,
    /// `[memory]` instants of the device read.
    pub events: usize,
    /// Of them, those with an op (or Python function) around them.
    pub with_op: usize,
    /// What the profile's allocations were at its allocated peak.
    pub peak_breakdown: PeakBreakdown,
}

#[derive(serde::Deserialize)]
struct MemoryArgs {
    #[serde(rename = "Addr")]
    addr: Option<u64>,
    #[serde(rename = "Bytes")]
    bytes: Option<i64>,
    #[serde(rename = "Total Allocated")]
    allocated: Option<i64>,
    #[serde(rename = "Device Id")]
    device: Option<i64>,
    #[serde(rename = "Device Type")]
    device_type: Option<i64>,
}

/// `file.py(123): function`, as Kineto names a Python function's span.
fn python_frame(name: &str) -> Option<Frame> {
    let (loc, func) = name.split_once("): ")?;
    let (file, line) = loc.rsplit_once('(')?;
    Some(Frame { name: func.to_string(), filename: file.to_string(), line: line.parse().ok()? })
}

/// One breakdown per GPU whose `[memory]` instants carry addresses; empty for other traces.
pub fn profile_breakdowns(store: &Store) -> Vec<ProfileBreakdown> {
    // instants named [memory] on GPU devices, in time order
    let mut events: Vec<(i64, u32, i64, u64, i64, i64)> = Vec::new(); // (ts, span, device, addr, bytes, total)
    for span in 0..store.span_count() as u32 {
        if store.span_kind(span) != SpanKind::Instant || store.span_name(span) != "[memory]" {
            continue;
        }
        let Ok(m) = serde_json::from_str::<MemoryArgs>(&store.span_args(span)) else { continue };
        let (Some(addr), Some(bytes), Some(d), Some(t)) = (m.addr, m.bytes, m.device, m.device_type) else { continue };
        if t == 0 || d < 0 || bytes == 0 {
            continue;
        }
        events.push((store.span_start(span), span, d, addr, bytes, m.allocated.unwrap_or(-1)));
    }
    if events.is_empty() {
        return Vec::new();
    }
    events.sort_unstable_by_key(|e| (e.0, e.1));
    let spans: Vec<u32> = events.iter().map(|e| e.1).collect();
    let stacks = store.enclosing_stacks(&spans);
    // record_function ranges, as the annotations a snapshot would carry (every device's)
    let mut ranges: Vec<(i64, i64, String)> = Vec::new();
    for span in 0..store.span_count() as u32 {
        if store.span_kind(span) == SpanKind::UserAnnotation {
            ranges.push((store.span_start(span), store.span_end(span), store.span_name(span).to_string()));
        }
    }
    let mut devices: Vec<i64> = events.iter().map(|e| e.2).collect();
    devices.sort_unstable();
    devices.dedup();
    devices
        .into_iter()
        .filter_map(|d| {
            let idx: Vec<usize> = (0..events.len()).filter(|&i| events[i].2 == d).collect();
            device_breakdown(store, d, &idx, &events, &stacks, &ranges)
        })
        .collect()
}

fn device_breakdown(
    store: &Store,
    device: i64,
    idx: &[usize],
    events: &[(i64, u32, i64, u64, i64, i64)],
    stacks: &[Vec<u32>],
    ranges: &[(i64, i64, String)],
) -> Option<ProfileBreakdown> {
    let dev = usize::try_from(device).ok()?;
    let mut s = MemorySnapshot { stacks: vec![Vec::new()], ..Default::default() };
    let mut frame_id: FxHashMap<(String, String, i64), u32> = FxHashMap::default();
    let mut stack_id: FxHashMap<Vec<u32>, u32> = FxHashMap::default();
    let mut trace = Vec::with_capacity(idx.len());
    let mut with_op = 0;
    let mut open: FxHashMap<u64, u64> = FxHashMap::default();
    for &i in idx {
        let (ts, _, _, addr, bytes, _) = events[i];
        // innermost first, as a snapshot's stacks are
        let mut frames: Vec<u32> = Vec::new();
        for &sp in stacks[i].iter().rev() {
            let name = store.span_name(sp);
            let f = match store.span_kind(sp) {
                SpanKind::PythonFunction => python_frame(name),
                _ => None,
            }
            .unwrap_or_else(|| Frame { name: name.to_string(), filename: String::new(), line: 0 });
            let key = (f.name.clone(), f.filename.clone(), f.line);
            let id = *frame_id.entry(key).or_insert_with(|| {
                s.frames.push(f);
                (s.frames.len() - 1) as u32
            });
            frames.push(id);
        }
        with_op += !frames.is_empty() as usize;
        let stack = if frames.is_empty() {
            0
        } else {
            *stack_id.entry(frames.clone()).or_insert_with(|| {
                s.stacks.push(frames);
                (s.stacks.len() - 1) as u32
            })
        };
        let (action, size) = if bytes > 0 {
            open.insert(addr, bytes as u64);
            (Action::Alloc, bytes as u64)
        } else {
            open.remove(&addr);
            (Action::FreeCompleted, bytes.unsigned_abs())
        };
        // times stay in the trace's nanoseconds, the annotations' unit too
        trace.push(TraceEntry { addr, size, time: ts, stack, stream: 0, extra: 0, action });
    }
    // what was allocated before the profile and never freed in it: the last total less what
    // the profile itself left open, one block (so the stack's height is the allocator's total)
    let last_total = idx.last().map(|&i| events[i].5).unwrap_or(-1);
    let open_bytes: u64 = open.values().sum();
    let mut blocks: Vec<Block> = open
        .iter()
        .map(|(&a, &n)| Block {
            address: a,
            size: n,
            requested_size: Some(n),
            state: BlockState::ActiveAllocated,
            stack: 0,
        })
        .collect();
    let before = (last_total.max(0) as u64).saturating_sub(open_bytes);
    if before > 0 {
        blocks.push(Block {
            address: 0,
            size: before,
            requested_size: Some(before),
            state: BlockState::ActiveAllocated,
            stack: 0,
        });
    }
    // each block a segment of its own: the timeline reads only the active blocks' addresses
    for b in blocks {
        s.segments.push(Segment {
            device,
            address: b.address,
            total_size: b.size,
            stream: 0,
            segment_type: String::new(),
            pool_id: (0, 0),
            is_expandable: false,
            blocks: vec![b],
            stack: 0,
        });
    }
    for (t0, t1, name) in ranges {
        for (stage, t) in [("START", *t0), ("END", *t1)] {
            s.external_annotations.push(Annotation {
                stage: stage.into(),
                name: name.clone(),
                device,
                time_us: Some(t),
            });
        }
    }
    s.external_annotations.sort_by_key(|a| (a.time_us, a.stage == "START"));
    s.device_traces = vec![Vec::new(); dev + 1];
    s.device_traces[dev] = trace;
    let tl = AllocationTimeline::build(&s, device);
    // the profile began after the model was made: what it never saw made is before its window
    let c = Classifier::with_window(&s, device, true);
    Some(ProfileBreakdown { device, events: idx.len(), with_op, peak_breakdown: peak_breakdown(&s, &tl, &c) })
}
