//! The allocation stack swept forward over trace positions: a Fenwick tree over allocation
//! indices holds the sizes of those alive, so moving on costs O(log n) per alloc or free
//! passed, and "which band covers height y" is one O(log n) descent. This is what lets the
//! active-memory timeline paint millions of allocations without walking each alive one per
//! pixel column.

use super::AllocationTimeline;

pub struct StackSweep<'a> {
    tl: &'a AllocationTimeline,
    tree: Vec<i64>,
    pos: usize,
    total: i64,
    /// Allocs and frees applied since the start (work done).
    pub events: usize,
}

impl<'a> StackSweep<'a> {
    /// The stack at position `k`.
    pub fn new(tl: &'a AllocationTimeline, k: usize) -> StackSweep<'a> {
        let mut s = StackSweep { tl, tree: vec![0; tl.allocs.len() + 1], pos: k, total: 0, events: 0 };
        let mut alive = Vec::new();
        tl.alive_at(k, |i| alive.push(i));
        for i in alive {
            s.add(i, tl.allocs[i].size as i64);
        }
        s
    }

    pub fn position(&self) -> usize {
        self.pos
    }
    /// Bytes alive at the current position.
    pub fn total(&self) -> i64 {
        self.total
    }

    fn add(&mut self, i: usize, d: i64) {
        self.total += d;
        let mut j = i + 1;
        while j < self.tree.len() {
            self.tree[j] += d;
            j += j & j.wrapping_neg();
        }
    }

    /// Moves forward to position `k` (never back).
    pub fn advance_to(&mut self, k: usize) {
        if k <= self.pos {
            return;
        }
        let (lo, hi) = (self.pos as i64, k as i64);
        let tl = self.tl;
        for i in tl.starting_in(lo, hi) {
            self.add(i, tl.allocs[i].size as i64);
            self.events += 1;
        }
        for &i in tl.ending_in(lo, hi) {
            self.add(i as usize, -(tl.allocs[i as usize].size as i64));
            self.events += 1;
        }
        self.pos = k;
    }

    /// The allocation covering height `y` bytes from the bottom, if the stack reaches it.
    pub fn band_at(&self, y: i64) -> Option<usize> {
        if y < 0 || y >= self.total {
            return None;
        }
        // largest prefix of indices whose sum stays <= y; the next index covers y
        let n = self.tree.len() - 1;
        let mut pos = 0usize;
        let mut rem = y;
        let mut step = n.next_power_of_two();
        while step > 0 {
            let nxt = pos + step;
            if nxt <= n && self.tree[nxt] <= rem {
                pos = nxt;
                rem -= self.tree[nxt];
            }
            step >>= 1;
        }
        (pos < n).then_some(pos)
    }
}
