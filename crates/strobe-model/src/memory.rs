//! Plain types of a CUDA caching-allocator snapshot (`torch.cuda.memory._dump_snapshot`) and of a
//! `torch.cuda.memory_stats()` dump. Sizes are bytes as the source wrote them: blocks carry the
//! rounded `size` and the `requested_size`; trace entries carry the requested size (see
//! docs/architecture.md, "Memory snapshot replay: mind the units").

use std::collections::BTreeMap;

/// Index into [`MemorySnapshot::stacks`]; stack 0 is always the empty stack.
pub type StackId = u32;

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Frame {
    pub name: String,
    pub filename: String,
    pub line: i64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum BlockState {
    ActiveAllocated,
    /// `active_awaiting_free` (older torch) or `active_pending_free`: freed by the program,
    /// waiting on stream events before the allocator may reuse it.
    ActiveAwaitingFree,
    Inactive,
    /// Any other state string (kept as inactive-like for sums: not counted anywhere).
    Unknown,
}

impl BlockState {
    pub fn parse(s: &str) -> BlockState {
        match s {
            "active_allocated" => BlockState::ActiveAllocated,
            "active_awaiting_free" | "active_pending_free" => BlockState::ActiveAwaitingFree,
            "inactive" => BlockState::Inactive,
            _ => BlockState::Unknown,
        }
    }
    /// Still held by the program or waiting to be freed (counted by the allocated replay anchor).
    pub fn is_active(self) -> bool {
        matches!(self, BlockState::ActiveAllocated | BlockState::ActiveAwaitingFree)
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Block {
    pub address: u64,
    /// Rounded size the allocator handed out.
    pub size: u64,
    /// The program's request, where the snapshot has it.
    pub requested_size: Option<u64>,
    pub state: BlockState,
    pub stack: StackId,
}

impl Block {
    /// `requested_size`, or `size` where absent.
    pub fn requested(&self) -> u64 {
        self.requested_size.unwrap_or(self.size)
    }
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Segment {
    pub device: i64,
    pub address: u64,
    pub total_size: u64,
    pub stream: i64,
    /// `large` / `small` (empty where absent).
    pub segment_type: String,
    pub pool_id: (i64, i64),
    pub is_expandable: bool,
    pub blocks: Vec<Block>,
    pub stack: StackId,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Action {
    Alloc,
    FreeRequested,
    FreeCompleted,
    SegmentAlloc,
    SegmentFree,
    SegmentMap,
    SegmentUnmap,
    Snapshot,
    Oom,
    Other,
}

impl Action {
    pub fn parse(s: &str) -> Action {
        match s {
            "alloc" => Action::Alloc,
            "free_requested" => Action::FreeRequested,
            "free_completed" => Action::FreeCompleted,
            "segment_alloc" => Action::SegmentAlloc,
            "segment_free" => Action::SegmentFree,
            "segment_map" => Action::SegmentMap,
            "segment_unmap" => Action::SegmentUnmap,
            "snapshot" => Action::Snapshot,
            "oom" => Action::Oom,
            _ => Action::Other,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Alloc => "alloc",
            Action::FreeRequested => "free_requested",
            Action::FreeCompleted => "free_completed",
            Action::SegmentAlloc => "segment_alloc",
            Action::SegmentFree => "segment_free",
            Action::SegmentMap => "segment_map",
            Action::SegmentUnmap => "segment_unmap",
            Action::Snapshot => "snapshot",
            Action::Oom => "oom",
            Action::Other => "other",
        }
    }
}

/// One allocator event. 40 bytes: a 2 GB snapshot holds 25 M of them, and on a machine that
/// hands out fresh pages at 1–2 GB/s every 8 bytes here is 0.1–0.2 s of the open. Streams
/// (a few per snapshot) and the fields most entries lack sit in the snapshot's side tables.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TraceEntry {
    pub addr: u64,
    /// Requested bytes (alloc/free), segment bytes (segment_*), or the failed request (oom).
    pub size: u64,
    /// Microseconds, or [`TraceEntry::NO_TIME`] (read it with [`TraceEntry::time_us`]).
    pub time: i64,
    pub stack: StackId,
    /// Index into [`MemorySnapshot::streams`] (read it with [`MemorySnapshot::stream`]).
    pub stream: u32,
    /// Index into [`MemorySnapshot::entry_extras`] (0: none of them).
    pub extra: u32,
    pub action: Action,
}

impl TraceEntry {
    pub const NO_TIME: i64 = i64::MIN;

    pub fn time_us(&self) -> Option<i64> {
        (self.time != Self::NO_TIME).then_some(self.time)
    }
}

/// A trace entry's fields that most entries lack (shared: equal ones are stored once).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct EntryExtra {
    /// `oom` entries: free device memory reported by the driver.
    pub device_free: Option<u64>,
    /// Index into [`MemorySnapshot::strings`] (0: none, or `N/A`).
    pub compile_context: u32,
    /// Index into [`MemorySnapshot::strings`] (0: none).
    pub user_metadata: u32,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Annotation {
    pub stage: String,
    pub name: String,
    pub device: i64,
    pub time_us: Option<i64>,
}

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct MemorySnapshot {
    pub segments: Vec<Segment>,
    /// One list per device index.
    pub device_traces: Vec<Vec<TraceEntry>>,
    /// As written (plain data converted to JSON); `None` in older snapshots.
    pub allocator_settings: Option<serde_json::Value>,
    pub external_annotations: Vec<Annotation>,
    /// Distinct frames; stacks refer to them by index.
    pub frames: Vec<Frame>,
    /// Stacks as frame indices, innermost first; `stacks[0]` is empty.
    pub stacks: Vec<Vec<u32>>,
    /// Interned texts of trace entries; `strings[0]` is empty.
    pub strings: Vec<String>,
    /// The streams trace entries name (`TraceEntry::stream` indexes it); `streams[0]` is 0.
    pub streams: Vec<i64>,
    /// `TraceEntry::extra` indexes it; `entry_extras[0]` is all none.
    pub entry_extras: Vec<EntryExtra>,
    /// What the reader had to assume: an older layout's missing fields, clamped values.
    pub notes: Vec<String>,
}

impl MemorySnapshot {
    pub fn stack(&self, id: StackId) -> impl Iterator<Item = &Frame> {
        self.stacks.get(id as usize).into_iter().flatten().map(|&f| &self.frames[f as usize])
    }
    /// The stream an entry ran on (0 where the entry's index is out of range).
    pub fn stream(&self, e: &TraceEntry) -> i64 {
        self.streams.get(e.stream as usize).copied().unwrap_or(0)
    }
    pub fn extra(&self, e: &TraceEntry) -> &EntryExtra {
        static NONE: EntryExtra = EntryExtra { device_free: None, compile_context: 0, user_metadata: 0 };
        self.entry_extras.get(e.extra as usize).unwrap_or(&NONE)
    }
    /// `oom` entries: free device memory reported by the driver.
    pub fn device_free(&self, e: &TraceEntry) -> Option<u64> {
        self.extra(e).device_free
    }
    pub fn text(&self, id: u32) -> &str {
        self.strings.get(id as usize).map(String::as_str).unwrap_or("")
    }
    /// Devices with segments or trace entries, ascending.
    pub fn devices(&self) -> Vec<i64> {
        let mut d: Vec<i64> = self.segments.iter().map(|s| s.device).collect();
        d.extend(self.device_traces.iter().enumerate().filter(|(_, t)| !t.is_empty()).map(|(i, _)| i as i64));
        d.sort_unstable();
        d.dedup();
        d
    }
}

/// `torch.cuda.memory_stats()` as a JSON object of numbers.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct MemoryStats {
    pub values: BTreeMap<String, f64>,
}

impl MemoryStats {
    pub fn get(&self, key: &str) -> Option<f64> {
        self.values.get(key).copied()
    }
    pub fn get_u64(&self, key: &str) -> Option<u64> {
        self.get(key).filter(|v| *v >= 0.0).map(|v| v as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_entry_stays_compact() {
        // 25 M entries in a 2 GB snapshot: every 8 bytes here is 200 MB of the open's memory
        assert!(std::mem::size_of::<TraceEntry>() <= 40, "{}", std::mem::size_of::<TraceEntry>());
        let s = MemorySnapshot {
            streams: vec![0, 7],
            entry_extras: vec![EntryExtra::default(), EntryExtra { device_free: Some(0), ..Default::default() }],
            ..Default::default()
        };
        let e = TraceEntry {
            action: Action::Oom,
            addr: 0,
            size: 1,
            stream: 1,
            time: TraceEntry::NO_TIME,
            stack: 0,
            extra: 1,
        };
        assert_eq!((e.time_us(), s.device_free(&e), s.stream(&e)), (None, Some(0), 7));
        let plain = TraceEntry { extra: 0, stream: 0, ..e };
        assert_eq!((s.device_free(&plain), s.stream(&plain)), (None, 0));
        // an index from a hand-made value out of range reads as none, not a panic
        let odd = TraceEntry { extra: 9, stream: 9, ..plain };
        assert_eq!((s.device_free(&odd), s.stream(&odd)), (None, 0));
    }
}
