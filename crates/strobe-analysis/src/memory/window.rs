//! Whether a device's trace covers the whole run, or only its last part.
//!
//! `_record_memory_history(max_entries=N)` keeps a ring buffer: once N entries are recorded,
//! each new one overwrites the oldest, and the snapshot holds the last N in order. torch writes
//! N nowhere in the snapshot (not in `allocator_settings`), so a wrapped buffer is known by what
//! its entries do: freeing blocks (or segments) the trace never allocated means they were made
//! before its first entry — the ring wrapped, or recording began mid-run. Either way the trace
//! covers the last part of the run, and the allocator state before it is what the final state
//! implies (see `history.rs`). A trace whose length is a round number is very likely a full ring
//! buffer of that `max_entries` (1 is torch 2.0's default `trace_alloc_max_entries`); the length
//! alone, without frees of untraced blocks, proves nothing and is not reported.

use rustc_hash::FxHashSet;
use serde::Serialize;
use strobe_model::memory::{Action, TraceEntry};

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HistoryWindow {
    pub entries: usize,
    /// `time_us` of the last entry minus that of the first (None without timestamps).
    pub duration_us: Option<i64>,
    /// Blocks freed (`free_requested` or `free_completed`) that the trace never allocated.
    pub untraced_block_frees: usize,
    /// `segment_free` of segments the trace never allocated.
    pub untraced_segment_frees: usize,
    /// The first entry freeing something untraced.
    pub first_untraced_entry: usize,
    /// The length is a round number, as a full `max_entries` ring buffer has.
    pub full_ring_buffer: bool,
    /// "history covers the last … of the run; figures before it are reconstructed from the final state"
    pub note: String,
    /// The evidence, in words.
    pub evidence: String,
}

/// The window of `trace`, or None where nothing shows that the trace misses the run's start.
pub fn history_window(trace: &[TraceEntry]) -> Option<HistoryWindow> {
    let mut open: FxHashSet<u64> = FxHashSet::default();
    let mut untraced_pending: FxHashSet<u64> = FxHashSet::default();
    let mut segments: FxHashSet<u64> = FxHashSet::default();
    let (mut blocks, mut segs, mut first) = (0usize, 0usize, None);
    for (i, e) in trace.iter().enumerate() {
        let untraced = match e.action {
            Action::Alloc => {
                open.insert(e.addr);
                false
            }
            Action::FreeRequested => !open.contains(&e.addr) && untraced_pending.insert(e.addr),
            Action::FreeCompleted => !open.remove(&e.addr) && !untraced_pending.remove(&e.addr),
            Action::SegmentAlloc => {
                segments.insert(e.addr);
                false
            }
            Action::SegmentFree => {
                let u = !segments.remove(&e.addr);
                segs += u as usize;
                if u {
                    first.get_or_insert(i);
                }
                continue;
            }
            _ => false,
        };
        if untraced {
            blocks += 1;
            first.get_or_insert(i);
        }
    }
    let first = first?;
    let n = trace.len();
    let times = || trace.iter().filter_map(|e| e.time_us());
    let duration_us = times().next().zip(times().next_back()).map(|(a, b)| b - a);
    let full_ring_buffer = looks_like_max_entries(n);
    let entries = if n == 1 { "1 entry".to_string() } else { format!("{n} entries") };
    let span = match duration_us {
        Some(d) => format!("{} ({entries})", duration(d)),
        None => entries,
    };
    let note =
        format!("history covers the last {span} of the run; figures before it are reconstructed from the final state");
    let mut what = Vec::new();
    if blocks > 0 {
        what.push(format!("frees {blocks} block{} it never allocated", if blocks == 1 { "" } else { "s" }));
    }
    if segs > 0 {
        what.push(format!("releases {segs} segment{} it never allocated", if segs == 1 { "" } else { "s" }));
    }
    let cause = if n == 1 {
        "a ring buffer of 1 entry, torch 2.0's default _record_memory_history(trace_alloc_max_entries=1)".to_string()
    } else if full_ring_buffer {
        format!("{n} entries is a full _record_memory_history(max_entries={n}) ring buffer that wrapped")
    } else {
        "the ring buffer wrapped or recording began mid-run".to_string()
    };
    let evidence = format!("the trace {} (first at entry {first}): {cause}", what.join(" and "));
    Some(HistoryWindow {
        entries: n,
        duration_us,
        untraced_block_frees: blocks,
        untraced_segment_frees: segs,
        first_untraced_entry: first,
        full_ring_buffer,
        note,
        evidence,
    })
}

/// A `max_entries` a person would type: 1 (torch 2.0's default), d·10^k from 1000 up, or a
/// power of two from 1024 up.
pub fn looks_like_max_entries(n: usize) -> bool {
    if n == 1 || (n >= 1024 && n.is_power_of_two()) {
        return true;
    }
    let mut m = n;
    while m >= 10 && m.is_multiple_of(10) {
        m /= 10;
    }
    n >= 1000 && m < 10
}

/// A duration in µs, in the unit a person reads it in.
pub fn duration(us: i64) -> String {
    let a = us.unsigned_abs() as f64;
    if a < 1e3 {
        format!("{us} µs")
    } else if a < 1e6 {
        format!("{:.1} ms", us as f64 / 1e3)
    } else if a < 60e6 {
        format!("{:.2} s", us as f64 / 1e6)
    } else {
        let s = us / 1_000_000;
        format!("{} min {} s", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(action: Action, addr: u64, t: i64) -> TraceEntry {
        TraceEntry { action, addr, size: 512, stream: 0, time: t, stack: 0, extra: 0 }
    }

    #[test]
    fn a_trace_from_the_start_has_no_window() {
        use Action::*;
        let t = [
            e(SegmentAlloc, 0, 0),
            e(Alloc, 0, 1),
            e(FreeRequested, 0, 2),
            e(FreeCompleted, 0, 3),
            e(SegmentFree, 0, 4),
        ];
        assert_eq!(history_window(&t), None);
        assert_eq!(history_window(&[]), None);
    }

    #[test]
    fn frees_of_untraced_blocks_open_a_window() {
        use Action::*;
        // block 8 was allocated before the first entry: freed in two steps, counted once
        let t = [e(Alloc, 0, 10), e(FreeRequested, 8, 20), e(FreeCompleted, 8, 30), e(FreeCompleted, 0, 2_500_010)];
        let w = history_window(&t).unwrap();
        assert_eq!((w.untraced_block_frees, w.untraced_segment_frees, w.first_untraced_entry), (1, 0, 1));
        assert_eq!(w.duration_us, Some(2_500_000));
        assert!(!w.full_ring_buffer);
        assert_eq!(
            w.note,
            "history covers the last 2.50 s (4 entries) of the run; figures before it are reconstructed from the final state"
        );
        assert!(w.evidence.contains("frees 1 block it never allocated (first at entry 1)"), "{}", w.evidence);
        let w = history_window(&[e(SegmentFree, 64, 0)]).unwrap();
        assert_eq!((w.untraced_segment_frees, w.entries, w.full_ring_buffer), (1, 1, true));
        assert!(w.note.starts_with("history covers the last 0 µs (1 entry)"), "{}", w.note);
    }

    #[test]
    fn round_lengths() {
        for n in [1, 1000, 2000, 5000, 100_000, 1_000_000, 1024, 65536] {
            assert!(looks_like_max_entries(n), "{n}");
        }
        for n in [0, 2, 10, 100, 999, 1001, 4609, 10307, 1500, 3000 + 7, 100_001] {
            assert!(!looks_like_max_entries(n), "{n}");
        }
    }
}
