//! Every allocation of one device as an interval of trace positions, stacked in allocation
//! order — the data behind the active-memory timeline. Position k is the state after k
//! entries (as in [`super::Replay`]); an allocation made by entry a and freed by entry f is
//! alive at positions a+1 ..= f. Allocations alive before the ring buffer's first entry are
//! rebuilt from what the trace frees without having allocated, and from the final blocks the
//! trace never allocated, so the stack's height at every position equals the replayed
//! allocated bytes. An implicit interval tree over the positions (the store's cgranges layout)
//! answers "alive at k, bottom to top" in O(log n + alive), with no cap on how many exist.

use super::device_trace;
use super::range_max::RangeMinMax;
use rustc_hash::FxHashMap;
use strobe_model::memory::{Action, MemorySnapshot, StackId, TraceEntry};
use strobe_store::interval;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allocation {
    pub addr: u64,
    /// Requested bytes (the replay's unit).
    pub size: u64,
    pub stream: i64,
    pub stack: StackId,
    /// The `alloc` entry; `None` when made before the trace's first entry.
    pub alloc_entry: Option<u32>,
    /// The `free_completed` entry; `None` when still alive at the end.
    pub free_entry: Option<u32>,
}

#[derive(Clone, Debug, Default)]
pub struct AllocationTimeline {
    pub device: i64,
    /// Stacking order, bottom first: allocations from before the trace, then by alloc entry.
    pub allocs: Vec<Allocation>,
    /// Alive at positions `[start[i], end[i])`, sorted by start.
    start: Vec<i64>,
    end: Vec<i64>,
    max_end: Vec<i64>,
    /// Allocation indices ordered by `end`.
    by_end: Vec<u32>,
    /// Allocated and reserved bytes per position, with O(log n) range min/max. `allocated` is
    /// the height of the stack drawn (Σ alive sizes): the replayed allocated bytes whenever the
    /// trace is consistent with the final blocks, and still what is on screen when it is not.
    pub allocated: RangeMinMax,
    /// Reserved bytes as a step function: from position `reserved_at[i]` on, `reserved[i]`
    /// (it changes only at segment entries, a few thousand in millions).
    reserved_at: Vec<u32>,
    reserved: RangeMinMax,
    /// Entry count (positions run 0 ..= len).
    pub len: usize,
}

/// Marks a `freed` entry as an index into `before` (else into `during`).
const BEFORE: u32 = 1 << 31;

/// What one pass over a device's trace yields: the allocations in trace order, the order they
/// are freed in, and the two byte series, each relative to the trace's start (their offsets
/// are known only at its end).
struct Pass {
    /// Allocated by the trace, in alloc order.
    during: Vec<Allocation>,
    /// Freed by the trace without having been allocated in it, in free order.
    before: Vec<Allocation>,
    /// Who each `free_completed` entry freed, in trace order (so by end position): a `during`
    /// index, or `BEFORE |` a `before` index.
    freed: Vec<u32>,
    /// Stack height at each position 0 ..= n, less the allocations alive at position 0.
    heights: Vec<i64>,
    /// The positions where reserved bytes change (0 first) and the bytes from there on, less
    /// the reserved bytes at position 0.
    reserved_at: Vec<u32>,
    reserved: Vec<i64>,
    /// Alloc entries not freed yet at the end, by address.
    open: FxHashMap<u64, usize>,
}

impl Pass {
    fn run(s: &MemorySnapshot, trace: &[TraceEntry]) -> Pass {
        let n = trace.len();
        // an allocation takes an alloc, a free_requested and a free_completed entry: room for
        // all of them at once (pages beyond what is used are never touched), where doubling
        // would copy hundreds of MB into fresh pages
        let mut p = Pass {
            during: Vec::with_capacity(n / 2 + 16),
            before: Vec::new(),
            freed: Vec::with_capacity(n / 2 + 16),
            heights: Vec::with_capacity(n + 1),
            reserved_at: vec![0],
            reserved: vec![0],
            open: FxHashMap::default(),
        };
        let (mut height, mut res) = (0i64, 0i64);
        p.heights.push(0);
        for (i, e) in trace.iter().enumerate() {
            match e.action {
                Action::Alloc => {
                    p.open.insert(e.addr, p.during.len());
                    height = height.wrapping_add(e.size as i64);
                    p.during.push(Allocation {
                        addr: e.addr,
                        size: e.size,
                        stream: s.stream(e),
                        stack: e.stack,
                        alloc_entry: Some(i as u32),
                        free_entry: None,
                    });
                }
                Action::FreeCompleted => match p.open.remove(&e.addr) {
                    Some(j) => {
                        let a = &mut p.during[j];
                        a.free_entry = Some(i as u32);
                        height = height.wrapping_sub(a.size as i64);
                        p.freed.push(j as u32);
                    }
                    None => {
                        height = height.wrapping_sub(e.size as i64);
                        p.freed.push(BEFORE | p.before.len() as u32);
                        p.before.push(Allocation {
                            addr: e.addr,
                            size: e.size,
                            stream: s.stream(e),
                            stack: e.stack,
                            alloc_entry: None,
                            free_entry: Some(i as u32),
                        });
                    }
                },
                a => {
                    // segment entries: a step of the reserved bytes, as the replay counts them
                    let d = super::reserved_delta(a, e.size);
                    if d != 0 {
                        res = res.wrapping_add(d);
                        p.reserved_at.push(i as u32 + 1);
                        p.reserved.push(res);
                    }
                }
            }
            p.heights.push(height);
        }
        p
    }
}

impl AllocationTimeline {
    /// One pass over the trace (on a 25 M-entry trace each pass reads 1.4 GB of entries, and
    /// each series of a trace's length is 0.2 GB of fresh pages), then the indexes over it.
    pub fn build(s: &MemorySnapshot, device: i64) -> AllocationTimeline {
        let trace = device_trace(s, device);
        let n = trace.len();
        // entries are u32 and `freed` keeps a tag bit: a trace longer than that has no timeline.
        // Byte sums wrap (as `replay`'s do) rather than panic on a hostile file's sizes
        if n >= BEFORE as usize {
            return AllocationTimeline { device, ..Default::default() };
        }
        let Pass { mut during, before, freed, mut heights, reserved_at, mut reserved, open } = Pass::run(s, trace);
        // final blocks the trace never allocated lived through all of it: bottom of the stack
        let mut forever: Vec<Allocation> = Vec::new();
        let mut final_res = 0i64;
        for g in s.segments.iter().filter(|g| g.device == device) {
            final_res = final_res.wrapping_add(g.total_size as i64);
            let mut a = g.address;
            for b in &g.blocks {
                if b.state.is_active() && !open.contains_key(&a) {
                    forever.push(Allocation {
                        addr: a,
                        size: b.requested(),
                        stream: g.stream,
                        stack: b.stack,
                        alloc_entry: None,
                        free_entry: None,
                    });
                }
                a = a.wrapping_add(b.size);
            }
        }
        forever.sort_by_key(|a| a.addr);
        let (nf, nb) = (forever.len() as u32, before.len() as u32);
        // stacked: forever, then before (later-freed lower, so the bands that vanish first sit
        // on top and the rest do not move: `before` reversed), then during, put in front of
        // `during` where it lies (it moves up once, in its own spare room)
        let base = forever.iter().chain(&before).fold(0i64, |s, a| s.wrapping_add(a.size as i64));
        let unfreed: Vec<u32> =
            during.iter().enumerate().filter(|(_, a)| a.free_entry.is_none()).map(|(j, _)| j as u32).collect();
        during.splice(0..0, forever.into_iter().chain(before.into_iter().rev()));
        let allocs = during;
        // by end: the frees in trace order (each entry frees one, so their ends differ and
        // rise), then those alive at the end in stacking order, as a stable sort by end has them
        let at = |f: u32| if f & BEFORE != 0 { nf + (nb - 1 - (f & !BEFORE)) } else { nf + nb + f };
        let by_end: Vec<u32> =
            freed.iter().map(|&f| at(f)).chain(0..nf).chain(unfreed.iter().map(|&j| nf + nb + j)).collect();
        drop(freed);
        drop(unfreed);
        let start: Vec<i64> = allocs.iter().map(|a| a.alloc_entry.map_or(0, |e| e as i64 + 1)).collect();
        let end: Vec<i64> = allocs.iter().map(|a| a.free_entry.map_or(n as i64 + 1, |e| e as i64 + 1)).collect();
        // anchored so the replay ends at the final state, as `replay` is
        let res0 = final_res.wrapping_sub(reserved.last().copied().unwrap_or(0));
        let (allocated, (max_end, reserved)) = rayon::join(
            || {
                for h in heights.iter_mut() {
                    *h = h.wrapping_add(base);
                }
                RangeMinMax::new(heights)
            },
            || {
                let mut max_end = vec![0; end.len()];
                interval::build_max_end(&end, &mut max_end);
                for r in reserved.iter_mut() {
                    *r = r.wrapping_add(res0);
                }
                (max_end, RangeMinMax::new(reserved))
            },
        );
        AllocationTimeline { device, allocs, start, end, max_end, by_end, allocated, reserved_at, reserved, len: n }
    }

    /// The time of position `k` (the replay's: that of the entry that led to it, the first
    /// entry's at 0), read from `s`, the snapshot this timeline was built from.
    pub fn time_at(&self, s: &MemorySnapshot, k: usize) -> Option<i64> {
        device_trace(s, self.device).get(k.saturating_sub(1))?.time_us()
    }
    /// The first position's time that there is.
    pub fn first_time(&self, s: &MemorySnapshot) -> Option<i64> {
        device_trace(s, self.device).iter().find_map(TraceEntry::time_us)
    }

    /// Calls `f(index)` for each allocation alive at position `k`, bottom to top.
    pub fn alive_at(&self, k: usize, f: impl FnMut(usize)) {
        interval::query(&self.start, &self.end, &self.max_end, k as i64, k as i64 + 1, f);
    }

    /// The allocation whose band covers `bytes` (from the bottom) at position `k`.
    pub fn band_at(&self, k: usize, bytes: f64) -> Option<usize> {
        let mut y = 0.0;
        let mut hit = None;
        self.alive_at(k, |i| {
            if hit.is_none() {
                let top = y + self.allocs[i].size as f64;
                if bytes >= y && bytes < top {
                    hit = Some(i);
                }
                y = top;
            }
        });
        hit
    }

    /// Indices of allocations that become alive in `(lo, hi]` (a contiguous run: they are
    /// ordered by start).
    pub fn starting_in(&self, lo: i64, hi: i64) -> std::ops::Range<usize> {
        self.start.partition_point(|&x| x <= lo)..self.start.partition_point(|&x| x <= hi)
    }

    /// Indices of allocations that stop being alive in `(lo, hi]`.
    pub fn ending_in(&self, lo: i64, hi: i64) -> &[u32] {
        let a = self.by_end.partition_point(|&i| self.end[i as usize] <= lo);
        let b = self.by_end.partition_point(|&i| self.end[i as usize] <= hi);
        &self.by_end[a..b]
    }

    /// The position in `[k0, k1)` where allocated bytes peak (the first such), so a pixel
    /// column standing for many entries shows the state at its peak and no peak is lost.
    pub fn peak_in(&self, k0: usize, k1: usize) -> usize {
        let last = self.len;
        let k0 = k0.min(last);
        self.allocated.query(k0, k1.max(k0 + 1)).map_or(k0, |x| x.2)
    }

    /// Min and max reserved bytes over positions `[k0, k1)`.
    pub fn reserved_range(&self, k0: usize, k1: usize) -> (i64, i64) {
        let k0 = k0.min(self.len);
        let k1 = k1.max(k0 + 1);
        // the step in effect at k0, through the last that begins before k1
        let i0 = self.reserved_at.partition_point(|&p| p as usize <= k0).saturating_sub(1);
        let i1 = self.reserved_at.partition_point(|&p| (p as usize) < k1);
        self.reserved.query(i0, i1.max(i0 + 1)).map_or((0, 0), |x| (x.0, x.1))
    }

    /// Max allocated bytes over positions `[k0, k1)`.
    pub fn allocated_max(&self, k0: usize, k1: usize) -> i64 {
        let k0 = k0.min(self.len);
        self.allocated.query(k0, k1.max(k0 + 1)).map_or(0, |x| x.1)
    }
}

#[cfg(test)]
mod tests {
    //! The one-pass build against a direct reading of the definitions: alive means
    //! `start <= k < end`, heights are sums over the alive, `by_end` is a stable sort by end,
    //! reserved bytes and times are `replay`'s.
    use super::*;
    use strobe_model::memory::{Block, BlockState, Segment};

    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    fn entry(action: Action, addr: u64, size: u64, time: i64) -> TraceEntry {
        TraceEntry { addr, size, time, stack: 0, stream: 0, extra: 0, action }
    }

    /// A trace over a few addresses (so reuse, frees of what was allocated before the ring's
    /// start and double allocs all occur), segment events, missing times, and final blocks
    /// some of which the trace allocated.
    fn random_snapshot(seed: u64) -> MemorySnapshot {
        let mut r = Lcg(seed);
        let n = r.next(60) as usize;
        let mut trace = Vec::new();
        for i in 0..n {
            let action = match r.next(7) {
                0 | 1 => Action::Alloc,
                2 | 3 => Action::FreeCompleted,
                4 => Action::SegmentAlloc,
                5 => Action::SegmentFree,
                _ => Action::FreeRequested,
            };
            let time = if r.next(5) == 0 { TraceEntry::NO_TIME } else { 10 * i as i64 };
            trace.push(entry(action, 0x1000 * (1 + r.next(6)), 1 + r.next(100), time));
        }
        let blocks = (0..r.next(5))
            .map(|_| Block {
                address: 0,
                size: 0x1000,
                requested_size: if r.next(2) == 0 { None } else { Some(1 + r.next(0x1000)) },
                state: [BlockState::ActiveAllocated, BlockState::Inactive, BlockState::ActiveAwaitingFree]
                    [r.next(3) as usize],
                stack: 0,
            })
            .collect::<Vec<_>>();
        let segment = Segment {
            device: 0,
            address: 0x1000,
            total_size: 0x1000 * blocks.len() as u64 + r.next(1000),
            stream: 0,
            segment_type: String::new(),
            pool_id: (0, 0),
            is_expandable: false,
            blocks,
            stack: 0,
        };
        MemorySnapshot { segments: vec![segment], device_traces: vec![trace], streams: vec![0], ..Default::default() }
    }

    #[test]
    fn one_pass_matches_the_definitions() {
        for seed in 0..3000 {
            let s = random_snapshot(seed);
            let tl = AllocationTimeline::build(&s, 0);
            let n = s.device_traces[0].len();
            assert_eq!(tl.len, n);
            let m = tl.allocs.len();
            // stacking order: from before the trace (no alloc entry) first, then by alloc entry
            let first_during = tl.allocs.iter().position(|a| a.alloc_entry.is_some()).unwrap_or(m);
            assert!(tl.allocs[first_during..].windows(2).all(|w| w[0].alloc_entry < w[1].alloc_entry));
            // ... and among those, the final blocks by address, then the frees latest first
            let pre = &tl.allocs[..first_during];
            let nf = pre.iter().take_while(|a| a.free_entry.is_none()).count();
            assert!(pre[..nf].windows(2).all(|w| w[0].addr < w[1].addr));
            assert!(pre[nf..].windows(2).all(|w| w[0].free_entry > w[1].free_entry && w[1].free_entry.is_some()));
            let alive = |i: usize, k: usize| tl.start[i] as usize <= k && k < tl.end[i] as usize;
            for (i, a) in tl.allocs.iter().enumerate() {
                assert_eq!(tl.start[i], a.alloc_entry.map_or(0, |e| e as i64 + 1));
                assert_eq!(tl.end[i], a.free_entry.map_or(n as i64 + 1, |e| e as i64 + 1));
            }
            let mut stable: Vec<u32> = (0..m as u32).collect();
            stable.sort_by_key(|&i| tl.end[i as usize]);
            assert_eq!(tl.by_end, stable, "seed {seed}");
            let replay = super::super::replay(&s, 0);
            for k in 0..=n {
                let mut got = Vec::new();
                tl.alive_at(k, |i| got.push(i));
                let want: Vec<usize> = (0..m).filter(|&i| alive(i, k)).collect();
                assert_eq!(got, want, "seed {seed} k {k}");
                let h: i64 = want.iter().map(|&i| tl.allocs[i].size as i64).sum();
                assert_eq!(tl.allocated_max(k, k + 1), h, "seed {seed} k {k}");
                assert_eq!(tl.time_at(&s, k), replay.time_us[k], "seed {seed} k {k}");
                for k1 in k + 1..=n + 1 {
                    let w = &replay.reserved[k..k1.min(n + 1)];
                    let want = (*w.iter().min().unwrap(), *w.iter().max().unwrap());
                    assert_eq!(tl.reserved_range(k, k1), want, "seed {seed} [{k}, {k1})");
                }
            }
            assert_eq!(tl.first_time(&s), replay.time_us.iter().find_map(|&t| t));
        }
    }
}

#[cfg(test)]
mod hostile {
    use super::*;

    #[test]
    fn sizes_near_the_top_of_u64_do_not_panic() {
        let e = |action, addr| TraceEntry { addr, size: 3 << 61, time: 0, stack: 0, stream: 0, extra: 0, action };
        let trace: Vec<TraceEntry> = [
            Action::Alloc,
            Action::SegmentAlloc,
            Action::SegmentMap,
            Action::FreeRequested,
            Action::FreeCompleted,
            Action::SegmentUnmap,
            Action::Oom,
        ]
        .into_iter()
        .flat_map(|a| (0..4).map(move |i| e(a, 10 + i)))
        .collect();
        use strobe_model::memory::{Block, BlockState, Segment};
        let block = |state| Block { address: 0, size: 3 << 61, requested_size: None, state, stack: 0 };
        let blocks = [BlockState::ActiveAllocated, BlockState::Inactive, BlockState::ActiveAwaitingFree];
        let segment = Segment {
            device: 0,
            address: 1 << 40,
            total_size: u64::MAX,
            stream: 0,
            segment_type: String::new(),
            pool_id: (0, 0),
            is_expandable: false,
            blocks: blocks.iter().flat_map(|&b| [block(b), block(b)]).collect(),
            stack: 0,
        };
        let s = MemorySnapshot {
            segments: vec![segment.clone(), segment],
            device_traces: vec![trace],
            streams: vec![0],
            ..Default::default()
        };
        let tl = AllocationTimeline::build(&s, 0);
        let _ = (tl.allocated_max(0, 29), tl.reserved_range(0, 29));
        let r = super::super::analyse(&s);
        let _ = super::super::to_text(&r);
        // walked both ways, as the pane's history slider does
        let mut h = super::super::history::AllocatorHistory::new(&s, 0);
        for k in (0..=28).rev().chain(0..=28) {
            h.seek(&s, k);
            let _ = (h.view(), h.free_figures());
        }
    }
}
