//! Every allocation of one device as an interval of trace positions, stacked in allocation
//! order — the data behind the active-memory timeline. Position k is the state after k
//! entries (as in [`super::Replay`]); an allocation made by entry a and freed by entry f is
//! alive at positions a+1 ..= f. Allocations alive before the ring buffer's first entry are
//! rebuilt from what the trace frees without having allocated, and from the final blocks the
//! trace never allocated, so the stack's height at every position equals the replayed
//! allocated bytes. An implicit interval tree over the positions (the store's cgranges layout)
//! answers "alive at k, bottom to top" in O(log n + alive), with no cap on how many exist.

use super::range_max::RangeMinMax;
use super::{device_trace, replay_walk};
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
    pub reserved: RangeMinMax,
    /// `time_us` of each position (the replay's), [`TraceEntry::NO_TIME`] where none (8
    /// bytes a position, not an `Option`'s 16). Read with [`AllocationTimeline::time_at`].
    time_us: Vec<i64>,
    /// Entry count (positions run 0 ..= len).
    pub len: usize,
}

/// Σ sizes alive at each position 0 ..= n: the differences, summed in place (one vector of a
/// trace's length, not two: on a 25 M-entry trace each is 0.2 GB of fresh pages).
fn stack_heights(allocs: &[Allocation], start: &[i64], end: &[i64], n: usize) -> Vec<i64> {
    let mut h = vec![0i64; n + 2];
    for (i, a) in allocs.iter().enumerate() {
        h[start[i] as usize] += a.size as i64;
        h[(end[i] as usize).min(n + 1)] -= a.size as i64;
    }
    h.truncate(n + 1);
    let mut sum = 0;
    for x in h.iter_mut() {
        sum += *x;
        *x = sum;
    }
    h
}

impl AllocationTimeline {
    pub fn build(s: &MemorySnapshot, device: i64) -> AllocationTimeline {
        // the replay (reserved bytes, times) is a pass of its own: on another core
        let (built, (reserved, time_us)) = rayon::join(
            || Self::intervals(s, device),
            || {
                let n = device_trace(s, device).len() + 1;
                let (mut reserved, mut time_us) = (Vec::with_capacity(n), Vec::with_capacity(n));
                replay_walk(s, device, |_, _, r, t| {
                    reserved.push(r);
                    time_us.push(t.unwrap_or(TraceEntry::NO_TIME));
                });
                (reserved, time_us)
            },
        );
        let (allocs, start, end, n) = built;
        let (heights, (max_end, by_end)) = rayon::join(
            || RangeMinMax::new(stack_heights(&allocs, &start, &end, n)),
            || {
                let mut max_end = vec![0; end.len()];
                interval::build_max_end(&end, &mut max_end);
                let mut by_end: Vec<u32> = (0..allocs.len() as u32).collect();
                by_end.sort_by_key(|&i| end[i as usize]);
                (max_end, by_end)
            },
        );
        AllocationTimeline {
            device,
            allocs,
            start,
            end,
            max_end,
            by_end,
            allocated: heights,
            reserved: RangeMinMax::new(reserved),
            time_us,
            len: n,
        }
    }

    /// Every allocation of `device` stacked, with its start and end positions, and the
    /// trace's length.
    #[allow(clippy::type_complexity)]
    fn intervals(s: &MemorySnapshot, device: i64) -> (Vec<Allocation>, Vec<i64>, Vec<i64>, usize) {
        let trace = device_trace(s, device);
        let n = trace.len();
        let mut before: Vec<Allocation> = Vec::new();
        // an allocation takes an alloc, a free_requested and a free_completed entry: room for
        // all of them at once (pages beyond what is used are never touched), where doubling
        // would copy hundreds of MB into fresh pages
        let mut during: Vec<Allocation> = Vec::with_capacity(n / 2 + 16);
        let mut open: FxHashMap<u64, usize> = FxHashMap::default();
        for (i, e) in trace.iter().enumerate() {
            match e.action {
                Action::Alloc => {
                    open.insert(e.addr, during.len());
                    during.push(Allocation {
                        addr: e.addr,
                        size: e.size,
                        stream: s.stream(e),
                        stack: e.stack,
                        alloc_entry: Some(i as u32),
                        free_entry: None,
                    });
                }
                Action::FreeCompleted => match open.remove(&e.addr) {
                    Some(j) => during[j].free_entry = Some(i as u32),
                    None => before.push(Allocation {
                        addr: e.addr,
                        size: e.size,
                        stream: s.stream(e),
                        stack: e.stack,
                        alloc_entry: None,
                        free_entry: Some(i as u32),
                    }),
                },
                _ => {}
            }
        }
        // final blocks the trace never allocated lived through all of it: bottom of the stack
        let mut forever: Vec<Allocation> = Vec::new();
        for g in s.segments.iter().filter(|g| g.device == device) {
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
                a += b.size;
            }
        }
        forever.sort_by_key(|a| a.addr);
        // later-freed lower, so the bands that vanish first sit on top and the rest do not move
        before.sort_by_key(|a| std::cmp::Reverse(a.free_entry));
        // forever, then before, then during: put in front of `during` where it lies (the
        // exact-size replacement moves `during` up once, in its own spare room)
        let mut allocs = during;
        allocs.splice(0..0, forever.into_iter().chain(before));
        let start: Vec<i64> = allocs.iter().map(|a| a.alloc_entry.map_or(0, |e| e as i64 + 1)).collect();
        let end: Vec<i64> = allocs.iter().map(|a| a.free_entry.map_or(n as i64 + 1, |e| e as i64 + 1)).collect();
        (allocs, start, end, n)
    }

    /// The time of position `k`, if it has one.
    pub fn time_at(&self, k: usize) -> Option<i64> {
        self.time_us.get(k).copied().filter(|&t| t != TraceEntry::NO_TIME)
    }
    /// The first position's time that there is.
    pub fn first_time(&self) -> Option<i64> {
        self.time_us.iter().copied().find(|&t| t != TraceEntry::NO_TIME)
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
        self.reserved.query(k0, k1.max(k0 + 1)).map_or((0, 0), |x| (x.0, x.1))
    }

    /// Max allocated bytes over positions `[k0, k1)`.
    pub fn allocated_max(&self, k0: usize, k1: usize) -> i64 {
        let k0 = k0.min(self.len);
        self.allocated.query(k0, k1.max(k0 + 1)).map_or(0, |x| x.1)
    }
}
