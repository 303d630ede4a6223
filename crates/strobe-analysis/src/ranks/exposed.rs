//! Exposed wait: the part of a rank's wait at a collective that its own compute did not hide.
//!
//! At a collective a rank waits from its arrival (its comm kernel's start) until the last rank
//! arrives: `wait = skew − arrival`, the interval `[start, start + wait)` in its own clock. Where
//! its compute kernels run during that interval (FSDP's all-gathers issued early on their own
//! stream, DDP's bucket all-reduces under the backward pass) the wait costs nothing; only
//! `wait − |compute ∩ [start, start + wait)|` blocked the rank.

use super::collectives::Collective;
use super::digest::RankDigest;

/// Rank `i`'s (index in rank order) exposed wait at `c`, `rank` its digest.
pub fn exposed_wait(c: &Collective, i: usize, rank: &RankDigest) -> i64 {
    let wait = c.skew_ns - c.arrival_ns[i];
    if wait <= 0 {
        return 0;
    }
    let start = rank.comm[c.kernels[i]].start;
    wait - crate::intervals::total_within(&rank.compute, start, start + wait)
}

/// The rank `c` waited for: the last to arrive (the lowest on an exact tie).
pub fn waited_for(c: &Collective) -> Option<i64> {
    c.last_ranks.iter().copied().min()
}
