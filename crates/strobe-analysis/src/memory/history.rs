//! The allocator's segments and blocks as they were after any number of trace entries.
//!
//! A snapshot holds the final segments and blocks, and a ring buffer of the entries that led
//! there. Walking back from the final state and undoing entries gives the state at any earlier
//! entry — including the blocks alive before the ring's first entry, which a forward replay from
//! nothing cannot know. Each step is O(log n), so arrow-key scrubbing costs nothing; what an
//! undo or redo removes is kept per entry, so stepping back and forth restores exact sizes
//! (rounded block sizes from the final state, not the requested sizes the trace carries).

use std::collections::{BTreeMap, HashMap};
use strobe_model::memory::{Action, BlockState, MemorySnapshot, StackId, TraceEntry};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveSegment {
    pub size: u64,
    pub stream: i64,
    /// Mapped range of an expandable segment (adjacent ones of a stream form one region).
    pub expandable: bool,
    /// `segment_pool_id` of a segment of the final state; trace entries carry no pool, so a
    /// segment the trace alone knows of is taken as the default pool's.
    pub pool: (i64, i64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveBlock {
    pub size: u64,
    pub requested: u64,
    pub state: BlockState,
    pub stack: StackId,
}

/// One region (a segment, or adjacent mapped ranges of an expandable segment) with its blocks
/// in address order, free gaps included as `Inactive` blocks.
#[derive(Clone, Debug, PartialEq)]
pub struct RegionView {
    pub address: u64,
    pub size: u64,
    pub stream: i64,
    pub expandable: bool,
    /// `segment_pool_id`: (0, 0) is the default pool (see `pools`).
    pub pool: (i64, i64),
    pub blocks: Vec<BlockView>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockView {
    pub address: u64,
    pub size: u64,
    pub requested: u64,
    pub state: BlockState,
    pub stack: StackId,
}

/// Free-memory figures of one state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FreeFigures {
    pub regions: usize,
    pub reserved_bytes: u64,
    pub occupied_blocks: usize,
    pub occupied_bytes: u64,
    /// Of the default pool's regions: the blocks an ordinary allocation may be given.
    pub largest_free_block: u64,
    /// Free bytes inside the default pool's regions, per stream, ascending by stream.
    pub free_by_stream: Vec<(i64, u64)>,
    /// Free bytes inside regions of other pools (CUDA graph pools, MemPools): held for them.
    pub pool_held_free_bytes: u64,
}

#[derive(Clone, Copy, Debug)]
enum Removed {
    Block(u64, LiveBlock),
    Segment(u64, LiveSegment),
}

#[derive(Clone, Debug)]
pub struct AllocatorHistory {
    device: i64,
    /// Entries applied: the state is the one after `pos` entries.
    pos: usize,
    len: usize,
    segments: BTreeMap<u64, LiveSegment>,
    blocks: BTreeMap<u64, LiveBlock>,
    /// What applying or undoing entry i took out, to put back exactly in the other direction.
    stash: HashMap<usize, Vec<Removed>>,
    /// Whether the trace logs `free_requested` (older snapshots log only `free_completed`).
    logs_free_requested: bool,
}

fn device_trace(s: &MemorySnapshot, device: i64) -> &[TraceEntry] {
    usize::try_from(device).ok().and_then(|d| s.device_traces.get(d)).map(Vec::as_slice).unwrap_or(&[])
}

impl AllocatorHistory {
    /// The final state (after every entry of `device`'s trace).
    pub fn new(s: &MemorySnapshot, device: i64) -> AllocatorHistory {
        let trace = device_trace(s, device);
        let mut h = AllocatorHistory {
            device,
            pos: trace.len(),
            len: trace.len(),
            segments: BTreeMap::new(),
            blocks: BTreeMap::new(),
            stash: HashMap::new(),
            logs_free_requested: trace.iter().any(|e| e.action == Action::FreeRequested),
        };
        for g in s.segments.iter().filter(|g| g.device == device) {
            let seg =
                LiveSegment { size: g.total_size, stream: g.stream, expandable: g.is_expandable, pool: g.pool_id };
            h.segments.insert(g.address, seg);
            let mut a = g.address;
            for b in &g.blocks {
                if b.state != BlockState::Inactive {
                    let lb = LiveBlock { size: b.size, requested: b.requested(), state: b.state, stack: b.stack };
                    h.blocks.insert(a, lb);
                }
                // a hostile file's sizes saturate rather than panic (as all sums here)
                a = a.saturating_add(b.size);
            }
        }
        h
    }

    pub fn device(&self) -> i64 {
        self.device
    }
    /// Entries applied so far (0 ..= len).
    pub fn position(&self) -> usize {
        self.pos
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Moves to the state after `k` entries (clamped to the trace), stepping one entry at a time.
    pub fn seek(&mut self, s: &MemorySnapshot, k: usize) {
        let trace = device_trace(s, self.device);
        let k = k.min(trace.len());
        while self.pos > k {
            self.pos -= 1;
            self.undo(self.pos, &trace[self.pos], s.stream(&trace[self.pos]));
        }
        while self.pos < k {
            self.apply(self.pos, &trace[self.pos], s.stream(&trace[self.pos]));
            self.pos += 1;
        }
    }

    fn undo(&mut self, i: usize, e: &TraceEntry, stream: i64) {
        self.step(i, e, stream, false);
    }

    fn apply(&mut self, i: usize, e: &TraceEntry, stream: i64) {
        self.step(i, e, stream, true);
    }

    /// Entry `i` applied (`forward`) or undone. Each direction of an entry either puts
    /// something in (a block, a segment, a mapped range) or takes it out; what is taken out is
    /// kept under `i`, so putting it back in the other direction restores it exactly instead of
    /// rebuilding it from the entry's (requested) size.
    fn step(&mut self, i: usize, e: &TraceEntry, stream: i64, forward: bool) {
        let (addr, size) = (e.addr, e.size);
        if e.action == Action::FreeRequested {
            match self.blocks.get_mut(&addr) {
                Some(b) => b.state = if forward { BlockState::ActiveAwaitingFree } else { BlockState::ActiveAllocated },
                None if !forward => {
                    self.blocks.insert(addr, trace_block(e, BlockState::ActiveAllocated));
                }
                None => {}
            }
            return;
        }
        let adds_forward = match e.action {
            Action::Alloc | Action::SegmentAlloc | Action::SegmentMap => true,
            Action::FreeCompleted | Action::SegmentFree | Action::SegmentUnmap => false,
            _ => return,
        };
        if adds_forward != forward {
            let removed: Vec<Removed> = match e.action {
                Action::Alloc | Action::FreeCompleted => {
                    self.blocks.remove(&addr).map(|b| Removed::Block(addr, b)).into_iter().collect()
                }
                Action::SegmentAlloc | Action::SegmentFree => {
                    self.segments.remove(&addr).map(|g| Removed::Segment(addr, g)).into_iter().collect()
                }
                _ => self.cut(addr, size),
            };
            self.stash.insert(i, removed);
            return;
        }
        // kept (even if empty: nothing was there to take out) → exactly that; else from the entry
        if let Some(back) = self.stash.remove(&i) {
            for r in back {
                self.restore(r);
            }
            return;
        }
        match e.action {
            Action::Alloc => {
                self.blocks.insert(addr, trace_block(e, BlockState::ActiveAllocated));
            }
            Action::FreeCompleted => {
                let state =
                    if self.logs_free_requested { BlockState::ActiveAwaitingFree } else { BlockState::ActiveAllocated };
                self.blocks.insert(addr, trace_block(e, state));
            }
            Action::SegmentAlloc | Action::SegmentFree => {
                self.segments
                    .insert(addr, LiveSegment { size, stream, expandable: false, pool: super::pools::DEFAULT_POOL });
            }
            _ => self.add_mapped(addr, size, stream),
        }
    }

    fn restore(&mut self, r: Removed) {
        match r {
            Removed::Block(a, b) => {
                self.blocks.insert(a, b);
            }
            Removed::Segment(a, g) => {
                self.segments.insert(a, g);
            }
        }
    }

    /// Removes `[addr, addr + size)` from the segments, splitting any that straddle its ends.
    /// Returns the pieces removed.
    fn cut(&mut self, addr: u64, size: u64) -> Vec<Removed> {
        let (lo, hi) = (addr, addr.saturating_add(size));
        let hit: Vec<u64> = self
            .segments
            .range(..hi)
            .rev()
            .take_while(|(&a, g)| a.saturating_add(g.size) > lo)
            .map(|(&a, _)| a)
            .collect();
        let mut removed = Vec::new();
        for a in hit {
            let g = self.segments.remove(&a).expect("listed above");
            let end = a.saturating_add(g.size);
            let (cut_lo, cut_hi) = (a.max(lo), end.min(hi));
            removed.push(Removed::Segment(cut_lo, LiveSegment { size: cut_hi - cut_lo, ..g }));
            if a < lo {
                self.segments.insert(a, LiveSegment { size: lo - a, ..g });
            }
            if end > hi {
                self.segments.insert(hi, LiveSegment { size: end - hi, ..g });
            }
        }
        removed
    }

    fn add_mapped(&mut self, addr: u64, size: u64, stream: i64) {
        self.segments.insert(addr, LiveSegment { size, stream, expandable: true, pool: super::pools::DEFAULT_POOL });
    }

    /// Regions in address order: segments, with adjacent mapped ranges of one stream joined.
    fn regions(&self) -> Vec<(u64, LiveSegment)> {
        let mut out: Vec<(u64, LiveSegment)> = Vec::with_capacity(self.segments.len());
        for (&a, &g) in &self.segments {
            if let Some((pa, pg)) = out.last_mut() {
                if g.expandable
                    && pg.expandable
                    && pa.saturating_add(pg.size) == a
                    && pg.stream == g.stream
                    && pg.pool == g.pool
                {
                    pg.size = pg.size.saturating_add(g.size);
                    continue;
                }
            }
            out.push((a, g));
        }
        out
    }

    /// Every region with its blocks and free gaps, in address order.
    pub fn view(&self) -> Vec<RegionView> {
        self.regions()
            .into_iter()
            .map(|(a, g)| {
                let end = a.saturating_add(g.size);
                let mut blocks = Vec::new();
                let mut cur = a;
                for (&ba, b) in self.blocks.range(a..end) {
                    if ba > cur {
                        blocks.push(free_block(cur, ba - cur));
                    }
                    blocks.push(BlockView {
                        address: ba,
                        size: b.size,
                        requested: b.requested,
                        state: b.state,
                        stack: b.stack,
                    });
                    cur = cur.max(ba.saturating_add(b.size));
                }
                if end > cur {
                    blocks.push(free_block(cur, end - cur));
                }
                RegionView {
                    address: a,
                    size: g.size,
                    stream: g.stream,
                    expandable: g.expandable,
                    pool: g.pool,
                    blocks,
                }
            })
            .collect()
    }

    pub fn free_figures(&self) -> FreeFigures {
        let regions = self.view();
        let mut f = FreeFigures {
            regions: regions.len(),
            reserved_bytes: regions.iter().fold(0u64, |x, r| x.saturating_add(r.size)),
            occupied_blocks: self.blocks.len(),
            occupied_bytes: self.blocks.values().fold(0u64, |x, b| x.saturating_add(b.size)),
            ..FreeFigures::default()
        };
        let mut by: BTreeMap<i64, u64> = BTreeMap::new();
        for r in &regions {
            for b in r.blocks.iter().filter(|b| b.state == BlockState::Inactive) {
                if r.pool != super::pools::DEFAULT_POOL {
                    f.pool_held_free_bytes = f.pool_held_free_bytes.saturating_add(b.size);
                    continue;
                }
                f.largest_free_block = f.largest_free_block.max(b.size);
                let x = by.entry(r.stream).or_default();
                *x = x.saturating_add(b.size);
            }
        }
        f.free_by_stream = by.into_iter().collect();
        f
    }

    /// The block (allocated or awaiting free) at `addr`, if any.
    pub fn block(&self, addr: u64) -> Option<&LiveBlock> {
        self.blocks.get(&addr)
    }
}

fn trace_block(e: &TraceEntry, state: BlockState) -> LiveBlock {
    LiveBlock { size: e.size, requested: e.size, state, stack: e.stack }
}

fn free_block(address: u64, size: u64) -> BlockView {
    BlockView { address, size, requested: 0, state: BlockState::Inactive, stack: 0 }
}
