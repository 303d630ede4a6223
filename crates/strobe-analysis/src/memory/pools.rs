//! Memory pools of one device: the caching allocator hands an ordinary allocation only blocks of
//! the default pool, on the allocation's stream. A CUDA graph's private pool or a
//! `torch.cuda.MemPool` keeps its freed blocks for its own allocations, so their inactive bytes
//! are held, not fragmented; fragmentation is a figure of the default pool.
//!
//! Pool ids (c10 `MempoolId_t`): (0, 0) is the default pool; a capture given no pool makes
//! (n, 0); a pool made by the user (`torch.cuda.MemPool()`, `graph_pool_handle()`) is (0, n).

use super::bytes;
use serde::Serialize;
use strobe_model::memory::{BlockState, Segment};

pub const DEFAULT_POOL: (i64, i64) = (0, 0);

/// The segments of one pool on one stream: the unit within which the allocator reuses blocks.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PoolMemory {
    pub pool: (i64, i64),
    pub stream: i64,
    pub segments: usize,
    pub reserved_bytes: u64,
    pub allocated_bytes: u64,
    pub active_awaiting_free_bytes: u64,
    pub inactive_bytes: u64,
    pub largest_inactive_block: u64,
}

impl PoolMemory {
    pub fn is_default(&self) -> bool {
        self.pool == DEFAULT_POOL
    }
    /// 1 − largest inactive block / inactive bytes (0 with nothing inactive).
    pub fn fragmentation(&self) -> f64 {
        fragmentation(self.largest_inactive_block, self.inactive_bytes)
    }
}

pub fn fragmentation(largest: u64, inactive: u64) -> f64 {
    if inactive == 0 {
        0.0
    } else {
        1.0 - largest as f64 / inactive as f64
    }
}

/// "default pool", "CUDA graph pool (1,0)", "MemPool (0,1)" or "private pool (a,b)".
pub fn pool_name(pool: (i64, i64)) -> String {
    match pool {
        DEFAULT_POOL => "default pool".into(),
        (a, 0) => format!("CUDA graph pool ({a},0)"),
        (0, b) => format!("MemPool (0,{b})"),
        (a, b) => format!("private pool ({a},{b})"),
    }
}

/// What made a pool of this id, in a sentence (hover text).
pub fn pool_origin(pool: (i64, i64)) -> &'static str {
    match pool {
        DEFAULT_POOL => "the caching allocator's shared pool: every ordinary allocation comes from it",
        (_, 0) => "a CUDA graph's private pool, made by a capture given no pool; only that graph's allocations reuse its blocks",
        (0, _) => "a pool made by torch.cuda.MemPool() or torch.cuda.graph_pool_handle(); only allocations inside it reuse its blocks",
        _ => "a private pool; only allocations routed to it reuse its blocks",
    }
}

/// The device's segments grouped by (pool, stream): default pool first, then by id and stream.
pub fn pools<'a>(segments: impl IntoIterator<Item = &'a Segment>) -> Vec<PoolMemory> {
    let mut out: Vec<PoolMemory> = Vec::new();
    for g in segments {
        let i = match out.iter().position(|p| p.pool == g.pool_id && p.stream == g.stream) {
            Some(i) => i,
            None => {
                out.push(PoolMemory {
                    pool: g.pool_id,
                    stream: g.stream,
                    segments: 0,
                    reserved_bytes: 0,
                    allocated_bytes: 0,
                    active_awaiting_free_bytes: 0,
                    inactive_bytes: 0,
                    largest_inactive_block: 0,
                });
                out.len() - 1
            }
        };
        let p = &mut out[i];
        p.segments += 1;
        // a hostile file's sizes saturate rather than panic
        p.reserved_bytes = p.reserved_bytes.saturating_add(g.total_size);
        for b in &g.blocks {
            match b.state {
                BlockState::ActiveAllocated => p.allocated_bytes = p.allocated_bytes.saturating_add(b.size),
                BlockState::ActiveAwaitingFree => {
                    p.active_awaiting_free_bytes = p.active_awaiting_free_bytes.saturating_add(b.size)
                }
                BlockState::Inactive => {
                    p.inactive_bytes = p.inactive_bytes.saturating_add(b.size);
                    p.largest_inactive_block = p.largest_inactive_block.max(b.size);
                }
                BlockState::Unknown => {}
            }
        }
    }
    out.sort_by_key(|p| (!p.is_default(), p.pool, p.stream));
    out
}

/// Fragmentation of the default pool, all its streams together.
pub fn default_pool_fragmentation(pools: &[PoolMemory]) -> f64 {
    let d = pools.iter().filter(|p| p.is_default());
    let (largest, inactive) =
        d.fold((0u64, 0u64), |(l, i), p| (l.max(p.largest_inactive_block), i.saturating_add(p.inactive_bytes)));
    fragmentation(largest, inactive)
}

/// Inactive bytes held by pools other than the default one.
pub fn pool_held_inactive_bytes(pools: &[PoolMemory]) -> u64 {
    pools.iter().filter(|p| !p.is_default()).fold(0u64, |x, p| x.saturating_add(p.inactive_bytes))
}

/// What the pools say about the cached memory, in words: who holds the inactive bytes that
/// ordinary allocations cannot reuse, and the default pool's own fragmentation.
pub fn pool_notes(pools: &[PoolMemory], default_fragmentation: f64) -> Vec<String> {
    let mut notes = Vec::new();
    let held = pool_held_inactive_bytes(pools);
    if held > 0 {
        // one figure per pool id, its streams together
        let mut by_pool: Vec<((i64, i64), u64)> = Vec::new();
        for p in pools.iter().filter(|p| !p.is_default() && p.inactive_bytes > 0) {
            match by_pool.iter_mut().find(|(id, _)| *id == p.pool) {
                Some((_, b)) => *b = b.saturating_add(p.inactive_bytes),
                None => by_pool.push((p.pool, p.inactive_bytes)),
            }
        }
        // the largest holder first
        by_pool.sort_by_key(|&(id, b)| (std::cmp::Reverse(b), id));
        let names: Vec<String> = by_pool.iter().map(|&(id, b)| format!("{} ({})", pool_name(id), bytes(b))).collect();
        notes.push(format!(
            "{} reserved but inactive is held by {}: not reusable by ordinary allocations, and not fragmentation; fragmentation of the default pool {:.3}. A pool's memory returns to the device once the graph or pool is deleted and torch.cuda.empty_cache() runs.",
            bytes(held),
            join_and(&names),
            default_fragmentation
        ));
    }
    // blocks of one stream are not handed to another: a side stream's free segments are
    // separation, not pieces
    // the stream holding most of the default pool is the program's own; the others are side streams
    let default: Vec<&PoolMemory> = pools.iter().filter(|p| p.is_default()).collect();
    let main = default.iter().max_by_key(|p| (p.reserved_bytes, std::cmp::Reverse(p.stream))).map(|p| p.stream);
    if default.len() > 1 {
        for p in default.iter().filter(|p| p.inactive_bytes > 0 && Some(p.stream) != main) {
            notes.push(format!(
                "{} of the default pool's inactive memory sits in segments of stream {}: only allocations on that stream reuse it.",
                bytes(p.inactive_bytes),
                stream_name(p.stream)
            ));
        }
    }
    notes
}

/// Stream as the allocator writes it (a handle, in decimal as the history shows it); 0 is the
/// default stream.
pub fn stream_name(stream: i64) -> String {
    if stream == 0 {
        "0 (default)".into()
    } else {
        stream.to_string()
    }
}

fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strobe_model::memory::Block;

    fn seg(pool: (i64, i64), stream: i64, blocks: &[(u64, BlockState)]) -> Segment {
        Segment {
            device: 0,
            address: 0,
            total_size: blocks.iter().map(|b| b.0).sum(),
            stream,
            segment_type: String::new(),
            pool_id: pool,
            is_expandable: false,
            blocks: blocks
                .iter()
                .map(|&(size, state)| Block { address: 0, size, requested_size: None, state, stack: 0 })
                .collect(),
            stack: 0,
        }
    }

    #[test]
    fn pool_ids_are_named_by_who_made_them() {
        assert_eq!(pool_name((0, 0)), "default pool");
        assert_eq!(pool_name((3, 0)), "CUDA graph pool (3,0)");
        assert_eq!(pool_name((0, 2)), "MemPool (0,2)");
        assert_eq!(pool_name((4, 5)), "private pool (4,5)");
    }

    #[test]
    fn held_inactive_is_not_fragmentation() {
        use BlockState::*;
        // default pool: 4 + 2 free, largest 4 -> 1 - 4/6; the graph pool holds 100 in one piece
        let segs = [
            seg((0, 0), 0, &[(8, ActiveAllocated), (4, Inactive), (6, ActiveAllocated), (2, Inactive)]),
            seg((1, 0), 7, &[(10, ActiveAllocated), (100, Inactive)]),
            seg((1, 0), 7, &[(30, Inactive)]),
        ];
        let p = pools(&segs);
        assert_eq!(p.iter().map(|p| (p.pool, p.stream)).collect::<Vec<_>>(), [((0, 0), 0), ((1, 0), 7)]);
        assert_eq!(
            (p[1].segments, p[1].reserved_bytes, p[1].inactive_bytes, p[1].largest_inactive_block),
            (2, 140, 130, 100)
        );
        assert!((default_pool_fragmentation(&p) - (1.0 - 4.0 / 6.0)).abs() < 1e-12);
        assert_eq!(pool_held_inactive_bytes(&p), 130);
        let n = pool_notes(&p, default_pool_fragmentation(&p));
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(n[0].starts_with("130 B reserved but inactive is held by CUDA graph pool (1,0) (130 B)"), "{}", n[0]);
        assert!(n[0].contains("fragmentation of the default pool 0.333"), "{}", n[0]);
    }

    #[test]
    fn a_default_pool_alone_says_nothing() {
        use BlockState::*;
        let p = pools(&[seg((0, 0), 0, &[(4, Inactive), (2, Inactive)])]);
        assert!(pool_notes(&p, default_pool_fragmentation(&p)).is_empty());
        // a side stream's free segment is named; the stream holding most of the pool is not
        let p = pools(&[seg((0, 0), 0, &[(40, ActiveAllocated), (4, Inactive)]), seg((0, 0), 0x10, &[(20, Inactive)])]);
        let n = pool_notes(&p, default_pool_fragmentation(&p));
        assert_eq!(n, ["20 B of the default pool's inactive memory sits in segments of stream 16: only allocations on that stream reuse it."]);
    }
}
