//! Plain types of a CUDA caching-allocator snapshot (`torch.cuda.memory._dump_snapshot`) and of a
//! `torch.cuda.memory_stats()` dump. Sizes are bytes as the source wrote them: blocks carry the
//! rounded `size` and the `requested_size`; trace entries carry the requested size (see DESIGN.md,
//! "Memory snapshot replay: mind the units").

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

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TraceEntry {
    pub action: Action,
    pub addr: u64,
    /// Requested bytes (alloc/free), segment bytes (segment_*), or the failed request (oom).
    pub size: u64,
    pub stream: i64,
    /// Microseconds, or [`TraceEntry::NO_TIME`] (read it with [`TraceEntry::time_us`]). Not an
    /// `Option`: a snapshot holds tens of millions of entries, and the two options made each
    /// one 72 bytes instead of 56.
    pub time: i64,
    /// `oom` entries: free device memory reported by the driver, or
    /// [`TraceEntry::NO_DEVICE_FREE`] (read it with [`TraceEntry::device_free`]).
    pub free_on_device: u64,
    pub stack: StackId,
    /// Index into [`MemorySnapshot::strings`] (0: none, or `N/A`).
    pub compile_context: u32,
    /// Index into [`MemorySnapshot::strings`] (0: none).
    pub user_metadata: u32,
}

impl TraceEntry {
    pub const NO_TIME: i64 = i64::MIN;
    /// No driver figure (2⁶⁴ − 1 free bytes cannot be reported).
    pub const NO_DEVICE_FREE: u64 = u64::MAX;

    pub fn time_us(&self) -> Option<i64> {
        (self.time != Self::NO_TIME).then_some(self.time)
    }
    pub fn device_free(&self) -> Option<u64> {
        (self.free_on_device != Self::NO_DEVICE_FREE).then_some(self.free_on_device)
    }
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
    /// What the reader had to assume: an older layout's missing fields, clamped values.
    pub notes: Vec<String>,
}

impl MemorySnapshot {
    pub fn stack(&self, id: StackId) -> impl Iterator<Item = &Frame> {
        self.stacks.get(id as usize).into_iter().flatten().map(|&f| &self.frames[f as usize])
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
        assert!(std::mem::size_of::<TraceEntry>() <= 56, "{}", std::mem::size_of::<TraceEntry>());
        let e = TraceEntry {
            action: Action::Oom,
            addr: 0,
            size: 1,
            stream: 0,
            time: TraceEntry::NO_TIME,
            free_on_device: 0,
            stack: 0,
            compile_context: 0,
            user_metadata: 0,
        };
        assert_eq!((e.time_us(), e.device_free()), (None, Some(0)));
    }
}
