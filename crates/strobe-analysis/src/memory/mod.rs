//! Memory snapshot analysis, per device: the allocator's final figures, a replay of the trace
//! (allocated and reserved bytes after each entry), peaks, and a verdict for each OOM. The
//! definitions are docs/memory.md's; units follow docs/architecture.md ("Memory snapshot
//! replay: mind the units"): allocations replay in requested bytes, segments in segment bytes.

mod allocations;
pub mod breakdown;
pub mod categories;
pub mod diff;
pub mod frames;
mod history;
pub mod pools;
pub mod profile;
mod range_max;
mod stack_sweep;
mod stats;
mod window;

pub use allocations::{Allocation, AllocationTimeline};
pub use breakdown::{breakdown_at, peak_breakdown, PeakBreakdown};
pub use categories::{Category, Classifier};
pub use history::{AllocatorHistory, BlockView, FreeFigures, LiveBlock, RegionView};
pub use pools::PoolMemory;
pub use range_max::RangeMinMax;
pub use stack_sweep::StackSweep;
pub use stats::{stats_report, stats_text, StatsReport};
pub use window::{duration, history_window, looks_like_max_entries, HistoryWindow};

use serde::Serialize;
use strobe_model::memory::{Action, BlockState, MemorySnapshot};

#[derive(Clone, Debug, Serialize)]
pub struct MemoryReport {
    pub format: &'static str,
    /// What the reader assumed (older layouts, clamped values).
    pub notes: Vec<String>,
    pub devices: Vec<DeviceMemory>,
}

#[derive(Clone, Debug, Serialize)]
pub struct DeviceMemory {
    pub device: i64,
    pub segments: usize,
    pub blocks: usize,
    pub reserved_bytes: u64,
    pub allocated_bytes: u64,
    pub active_awaiting_free_bytes: u64,
    pub inactive_bytes: u64,
    pub largest_inactive_block: u64,
    /// Of the default pool: other pools' inactive bytes are held by them, not fragmented.
    pub fragmentation: f64,
    /// Segments by (pool, stream), default pool first.
    pub pools: Vec<PoolMemory>,
    /// Inactive bytes of pools other than the default one (CUDA graph pools, MemPools).
    pub pool_held_inactive_bytes: u64,
    /// What the pools say about the cached memory (empty for a default pool on one stream).
    pub pool_notes: Vec<String>,
    pub rounding_waste_bytes: u64,
    pub trace_entries: usize,
    /// Set where the trace covers only the last part of the run (a wrapped ring buffer).
    pub history_window: Option<HistoryWindow>,
    pub peak_allocated_bytes: i64,
    pub peak_reserved_bytes: i64,
    pub ooms: Vec<OomVerdict>,
    /// What the allocated peak is made of (`analyse_with_breakdown`; the pane makes its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_breakdown: Option<PeakBreakdown>,
}

#[derive(Clone, Debug, Serialize)]
pub struct OomVerdict {
    /// Index of the `oom` entry in the device's trace.
    pub entry: usize,
    pub requested_bytes: u64,
    pub device_free_bytes: u64,
    /// `process_limit`, `real_shortage`, `fragmentation` or `cache_held`.
    pub verdict: &'static str,
    pub evidence: OomEvidence,
    pub suggestion: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct OomEvidence {
    /// Replayed allocated bytes (requested) at the entry.
    pub allocated_bytes: i64,
    /// Replayed reserved bytes at the entry.
    pub reserved_bytes: i64,
    /// reserved − allocated.
    pub cached_free_bytes: i64,
    /// Largest free gap in any segment at the OOM (blocks replayed back from the final state).
    pub largest_free_block: u64,
    /// Free bytes inside the default pool's segments of the failing allocation's stream.
    pub same_stream_free_bytes: u64,
    /// Free bytes inside segments of other pools (CUDA graph pools, MemPools): an ordinary
    /// allocation cannot be given them.
    pub pool_held_free_bytes: u64,
    pub time_us: Option<i64>,
}

/// Allocated and reserved bytes over one device's trace: index 0 is before the first entry,
/// index i+1 after entry i.
#[derive(Clone, Debug, Default)]
pub struct Replay {
    pub allocated: Vec<i64>,
    pub reserved: Vec<i64>,
    /// `time_us` of entry i at index i+1 (index 0 repeats the first entry's).
    pub time_us: Vec<Option<i64>>,
}

impl Replay {
    pub fn peak_allocated(&self) -> i64 {
        self.allocated.iter().copied().max().unwrap_or(0)
    }
    pub fn peak_reserved(&self) -> i64 {
        self.reserved.iter().copied().max().unwrap_or(0)
    }
}

fn alloc_delta(a: Action, size: u64) -> i64 {
    match a {
        Action::Alloc => size as i64,
        Action::FreeCompleted => (size as i64).wrapping_neg(),
        _ => 0,
    }
}

fn reserved_delta(a: Action, size: u64) -> i64 {
    match a {
        Action::SegmentAlloc | Action::SegmentMap => size as i64,
        Action::SegmentFree | Action::SegmentUnmap => (size as i64).wrapping_neg(),
        _ => 0,
    }
}

/// Replays `device`'s trace, anchored so that it ends at the final state: allocated at
/// Σ requested size of active (allocated or awaiting-free) blocks, reserved at Σ total_size.
pub fn replay(s: &MemorySnapshot, device: i64) -> Replay {
    let n = device_trace(s, device).len() + 1;
    let mut r =
        Replay { allocated: Vec::with_capacity(n), reserved: Vec::with_capacity(n), time_us: Vec::with_capacity(n) };
    replay_walk(s, device, |_, a, res, t| {
        r.allocated.push(a);
        r.reserved.push(res);
        r.time_us.push(t);
    });
    r
}

pub(crate) fn device_trace(s: &MemorySnapshot, device: i64) -> &[strobe_model::memory::TraceEntry] {
    usize::try_from(device).ok().and_then(|d| s.device_traces.get(d)).map_or(&[], Vec::as_slice)
}

/// The replay as a walk, without keeping it: `f(k, allocated, reserved, time_us)` at each
/// position k of [`Replay`] in order (what the report needs is a few figures of it, and a
/// trace of 25 M entries makes 0.8 GB of vectors).
pub fn replay_walk(s: &MemorySnapshot, device: i64, mut f: impl FnMut(usize, i64, i64, Option<i64>)) {
    let trace = device_trace(s, device);
    let segs = s.segments.iter().filter(|g| g.device == device);
    let mut final_alloc = 0i64;
    let mut final_res = 0i64;
    for g in segs {
        final_res = final_res.wrapping_add(g.total_size as i64);
        for b in g.blocks.iter().filter(|b| b.state.is_active()) {
            final_alloc = final_alloc.wrapping_add(b.requested() as i64);
        }
    }
    // byte sums wrap rather than panic on a hostile file's sizes (no device holds 2^63 bytes)
    let da = trace.iter().fold(0i64, |x, e| x.wrapping_add(alloc_delta(e.action, e.size)));
    let dr = trace.iter().fold(0i64, |x, e| x.wrapping_add(reserved_delta(e.action, e.size)));
    let (mut a, mut res) = (final_alloc.wrapping_sub(da), final_res.wrapping_sub(dr));
    f(0, a, res, trace.first().and_then(|e| e.time_us()));
    for (k, e) in trace.iter().enumerate() {
        a = a.wrapping_add(alloc_delta(e.action, e.size));
        res = res.wrapping_add(reserved_delta(e.action, e.size));
        f(k + 1, a, res, e.time_us());
    }
}

pub fn analyse(s: &MemorySnapshot) -> MemoryReport {
    MemoryReport {
        format: "memory_snapshot",
        notes: s.notes.clone(),
        devices: s.devices().into_iter().map(|d| device(s, d)).collect(),
    }
}

/// `analyse`, with each device's peak broken down by category and source line (one more pass
/// over the trace per device: the allocation timeline).
pub fn analyse_with_breakdown(s: &MemorySnapshot) -> MemoryReport {
    let mut r = analyse(s);
    for d in &mut r.devices {
        if d.trace_entries > 0 {
            let tl = AllocationTimeline::build(s, d.device);
            let c = Classifier::with_window(s, d.device, d.history_window.is_some());
            d.peak_breakdown = Some(peak_breakdown(s, &tl, &c));
        }
    }
    r
}

pub fn device(s: &MemorySnapshot, d: i64) -> DeviceMemory {
    let segs: Vec<_> = s.segments.iter().filter(|g| g.device == d).collect();
    let mut m = DeviceMemory {
        device: d,
        segments: segs.len(),
        blocks: segs.iter().map(|g| g.blocks.len()).sum(),
        // sizes are a file's words: a hostile one's sums saturate rather than panic
        reserved_bytes: segs.iter().fold(0u64, |x, g| x.saturating_add(g.total_size)),
        allocated_bytes: 0,
        active_awaiting_free_bytes: 0,
        inactive_bytes: 0,
        largest_inactive_block: 0,
        fragmentation: 0.0,
        pools: pools::pools(segs.iter().copied()),
        pool_held_inactive_bytes: 0,
        pool_notes: Vec::new(),
        rounding_waste_bytes: 0,
        trace_entries: 0,
        history_window: None,
        peak_allocated_bytes: 0,
        peak_reserved_bytes: 0,
        ooms: Vec::new(),
        peak_breakdown: None,
    };
    for b in segs.iter().flat_map(|g| &g.blocks) {
        match b.state {
            BlockState::ActiveAllocated => {
                m.allocated_bytes = m.allocated_bytes.saturating_add(b.size);
                m.rounding_waste_bytes = m.rounding_waste_bytes.saturating_add(b.size.saturating_sub(b.requested()));
            }
            BlockState::ActiveAwaitingFree => {
                m.active_awaiting_free_bytes = m.active_awaiting_free_bytes.saturating_add(b.size)
            }
            BlockState::Inactive => {
                m.inactive_bytes = m.inactive_bytes.saturating_add(b.size);
                m.largest_inactive_block = m.largest_inactive_block.max(b.size);
            }
            BlockState::Unknown => {}
        }
    }
    m.fragmentation = pools::default_pool_fragmentation(&m.pools);
    m.pool_held_inactive_bytes = pools::pool_held_inactive_bytes(&m.pools);
    m.pool_notes = pools::pool_notes(&m.pools, m.fragmentation);
    let empty = Vec::new();
    let trace = usize::try_from(d).ok().and_then(|i| s.device_traces.get(i)).unwrap_or(&empty);
    m.trace_entries = trace.len();
    m.history_window = history_window(trace);
    // the replay's peaks, and its values just after each OOM (in trace order)
    let oom_at: Vec<usize> =
        trace.iter().enumerate().filter(|(_, e)| e.action == Action::Oom).map(|(k, _)| k).collect();
    let mut at_oom: Vec<(i64, i64)> = Vec::with_capacity(oom_at.len());
    let (mut peak_a, mut peak_r) = (i64::MIN, i64::MIN);
    replay_walk(s, d, |k, a, res, _| {
        peak_a = peak_a.max(a);
        peak_r = peak_r.max(res);
        if at_oom.len() < oom_at.len() && oom_at[at_oom.len()] + 1 == k {
            at_oom.push((a, res));
        }
    });
    m.peak_allocated_bytes = peak_a;
    m.peak_reserved_bytes = peak_r;
    // OOMs in descending order, so one walk back from the final state reaches them all
    let mut hist = AllocatorHistory::new(s, d);
    let mut ooms = Vec::new();
    for (&k, &(allocated, reserved)) in oom_at.iter().zip(&at_oom).rev() {
        let e = &trace[k];
        hist.seek(s, k);
        let f = hist.free_figures();
        let same_stream = f.free_by_stream.iter().find(|(st, _)| *st == s.stream(e)).map_or(0, |x| x.1);
        let ev = OomEvidence {
            allocated_bytes: allocated,
            reserved_bytes: reserved,
            cached_free_bytes: reserved - allocated,
            largest_free_block: f.largest_free_block,
            same_stream_free_bytes: same_stream,
            pool_held_free_bytes: f.pool_held_free_bytes,
            time_us: e.time_us(),
        };
        let req = e.size;
        let free = s.device_free(e).unwrap_or(0);
        let verdict = if free >= req {
            "process_limit"
        } else if ev.allocated_bytes + req as i64 > ev.reserved_bytes + free as i64 {
            "real_shortage"
        } else if ev.same_stream_free_bytes + free >= req {
            // the memory is there, on this stream, but in pieces no single block spans
            "fragmentation"
        } else {
            "cache_held"
        };
        ooms.push(OomVerdict {
            entry: k,
            requested_bytes: req,
            device_free_bytes: free,
            verdict,
            suggestion: suggestion(verdict, req, free, &ev),
            evidence: ev,
        });
    }
    ooms.reverse();
    m.ooms = ooms;
    m
}

fn suggestion(verdict: &str, req: u64, free: u64, ev: &OomEvidence) -> String {
    match verdict {
        "process_limit" => format!(
            "The device still had {} free for a {} request: a per-process cap refused it. Raise or remove the cap (torch.cuda.set_per_process_memory_fraction, or the job's memory limit), or lower the batch size to fit under it.",
            bytes(free), bytes(req)
        ),
        "real_shortage" => format!(
            "Even freeing every cached block would not make room ({} allocated + {} requested > {} reserved + {} free on the device). Reduce the batch size or sequence length, use activation checkpointing or lower precision, or free references kept across steps.",
            bytes(ev.allocated_bytes.max(0) as u64), bytes(req), bytes(ev.reserved_bytes.max(0) as u64), bytes(free)
        ),
        "fragmentation" => format!(
            "The free memory on the failing stream ({} cached + {} on the device) could hold the {} request, but the largest free block is {}: it is there, in pieces. Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (or max_split_size_mb), and allocate large long-lived buffers first.",
            bytes(ev.same_stream_free_bytes), bytes(free), bytes(req), bytes(ev.largest_free_block)
        ),
        _ => {
            let mut s = format!(
                "Reserved-but-free memory ({}) sits in segments of other streams or pools; the failing stream has only {} free. Free those tensors earlier or allocate them on the same stream (avoid record_stream across streams), call torch.cuda.empty_cache() between phases, or set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.",
                bytes(ev.cached_free_bytes.max(0) as u64), bytes(ev.same_stream_free_bytes)
            );
            if ev.pool_held_free_bytes > 0 {
                s.push_str(&format!(
                    " {} of it is held by CUDA graph pools or MemPools, which give it only to their own allocations: delete the graph or pool you no longer replay, then call torch.cuda.empty_cache().",
                    bytes(ev.pool_held_free_bytes)
                ));
            }
            s
        }
    }
}

/// Human-readable bytes (binary units).
pub fn bytes(n: u64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut i = 0;
    while v >= 1024.0 && i < U.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{n} B")
    } else {
        format!("{v:.2} {}", U[i])
    }
}

pub fn to_text(r: &MemoryReport) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let _ = writeln!(o, "Memory snapshot: {} device(s)", r.devices.len());
    for n in &r.notes {
        let _ = writeln!(o, "  note: {n}");
    }
    for d in &r.devices {
        let _ = writeln!(
            o,
            "\nDevice {}: {} segments, {} blocks, {} trace entries",
            d.device, d.segments, d.blocks, d.trace_entries
        );
        if let Some(w) = &d.history_window {
            let _ = writeln!(o, "  {}\n    ({})", w.note, w.evidence);
        } else if d.trace_entries == 0 {
            let _ = writeln!(o, "  no allocation trace: figures are the final state only");
        }
        let _ = writeln!(o, "  reserved            {:>12}", bytes(d.reserved_bytes));
        let _ = writeln!(o, "  allocated           {:>12}", bytes(d.allocated_bytes));
        let _ = writeln!(o, "  awaiting free       {:>12}", bytes(d.active_awaiting_free_bytes));
        let _ = writeln!(
            o,
            "  inactive (cached)   {:>12}   largest block {}",
            bytes(d.inactive_bytes),
            bytes(d.largest_inactive_block)
        );
        let other_pools = d.pools.iter().any(|p| !p.is_default());
        if other_pools {
            let _ = writeln!(o, "  held by other pools {:>12}", bytes(d.pool_held_inactive_bytes));
            let _ = writeln!(o, "  fragmentation       {:>12.3}   (default pool)", d.fragmentation);
        } else {
            let _ = writeln!(o, "  fragmentation       {:>12.3}", d.fragmentation);
        }
        let _ = writeln!(o, "  rounding waste      {:>12}", bytes(d.rounding_waste_bytes));
        let _ = writeln!(o, "  peak allocated      {:>12}", bytes(d.peak_allocated_bytes.max(0) as u64));
        let _ = writeln!(o, "  peak reserved       {:>12}", bytes(d.peak_reserved_bytes.max(0) as u64));
        if d.pools.len() > 1 {
            pools_text(&mut o, &d.pools);
        }
        for n in &d.pool_notes {
            let _ = writeln!(o, "  {n}");
        }
        if let Some(b) = &d.peak_breakdown {
            breakdown_text(&mut o, b);
        }
        for oom in &d.ooms {
            let _ = writeln!(
                o,
                "  OOM at entry {}: {} requested, {} free on device -> {}\n    {}",
                oom.entry,
                bytes(oom.requested_bytes),
                bytes(oom.device_free_bytes),
                oom.verdict,
                oom.suggestion
            );
        }
    }
    o
}

/// The pools table of `to_text`: one line per (pool, stream).
fn pools_text(o: &mut String, pools: &[PoolMemory]) {
    use std::fmt::Write;
    let _ = writeln!(
        o,
        "  {:<24} {:>18} {:>4} {:>12} {:>12} {:>12} {:>7}",
        "pool", "stream", "segs", "reserved", "allocated", "inactive", "frag"
    );
    for p in pools {
        let _ = writeln!(
            o,
            "  {:<24} {:>18} {:>4} {:>12} {:>12} {:>12} {:>7.3}",
            pools::pool_name(p.pool),
            pools::stream_name(p.stream),
            p.segments,
            bytes(p.reserved_bytes),
            bytes(p.allocated_bytes),
            bytes(p.inactive_bytes),
            p.fragmentation()
        );
    }
}

/// The peak breakdown of `to_text`: categories with their rules, then the top source lines.
pub fn breakdown_text(o: &mut String, b: &PeakBreakdown) {
    use std::fmt::Write;
    let _ =
        writeln!(o, "  at the allocated peak (position {}): {}", b.position, bytes(b.allocated_bytes.max(0) as u64));
    let _ = writeln!(o, "    ({})", b.note);
    for c in b.categories.iter().filter(|c| c.count > 0) {
        let share = if b.allocated_bytes > 0 { 100.0 * c.bytes as f64 / b.allocated_bytes as f64 } else { 0.0 };
        let _ = writeln!(
            o,
            "    {:<16} {:>12} {:>5.1}%  {:>6} allocations",
            c.category.as_str(),
            bytes(c.bytes.max(0) as u64),
            share,
            c.count
        );
        for r in &c.rules {
            let _ = writeln!(o, "      {:>12}  {}", bytes(r.bytes.max(0) as u64), r.text);
        }
    }
    const TOP: usize = 15;
    let _ = writeln!(o, "    by source line (first user frame), largest first:");
    for s in b.by_source.iter().take(TOP) {
        let _ = writeln!(
            o,
            "    {:>12} {:>6}  {:<15} {}",
            bytes(s.bytes.max(0) as u64),
            s.count,
            s.category.as_str(),
            s.frame
        );
    }
    if b.by_source.len() > TOP {
        let _ = writeln!(o, "    … {} more lines (--json lists all)", b.by_source.len() - TOP);
    }
}
