//! Several ranks of one training job side by side: who they are, how their clocks line up,
//! which collectives match, the per-step rank table, the straggler and the HTA-parity
//! tables. Every function takes the ranks' stores as they are (one store per rank, each in its
//! own clock) and never rewrites a store: alignment is an offset per rank applied on read.
//!
//! Ranks are always handled in ascending rank order (`RankTrace`s sorted by `rank`); the
//! reference rank of the alignment is the first, the lowest.

pub mod align;
pub mod bandwidth;
pub mod breakdown;
pub mod collectives;
pub mod comm_groups;
pub mod comm_ops;
pub mod comm_text;
pub mod digest;
pub mod distribution;
pub mod exposed;
pub mod group_infer;
pub mod group_match;
mod group_order;
pub mod groups;
pub mod identity;
pub mod launch;
pub mod memcpy_bandwidth;
pub mod queue;
pub mod report;
pub mod span_bandwidth;
pub mod step_table;
pub mod straggler;
pub mod unions;

#[cfg(test)]
mod tests;

use strobe_store::Store;

/// One rank: its number, where it came from, its store and its steps (`rank_steps`).
#[derive(Clone, Copy)]
pub struct RankTrace<'a> {
    pub rank: i64,
    pub source: &'a str,
    pub store: &'a Store,
    pub steps: &'a [crate::steps::Step],
}

/// The rank's steps (`steps::find_steps` by `rule`), each name once: where a name repeats
/// (the same step recorded on two threads) the earliest is kept, so a step has one range.
pub fn rank_steps(store: &Store, rule: &crate::steps::StepRule) -> Vec<crate::steps::Step> {
    distinct_steps(crate::steps::find_steps(store, rule))
}

/// The first step of each name, as `rank_steps` keeps them.
pub fn distinct_steps(steps: Vec<crate::steps::Step>) -> Vec<crate::steps::Step> {
    let mut seen = std::collections::HashSet::new();
    steps.into_iter().filter(|s| seen.insert(s.name.clone())).collect()
}

/// The indices of the steps `distinct_steps` keeps, in order.
pub fn distinct_step_indices(steps: &[crate::steps::Step]) -> Vec<usize> {
    let mut seen = std::collections::HashSet::new();
    (0..steps.len()).filter(|&i| seen.insert(steps[i].name.as_str())).collect()
}

/// The step of `steps` whose range `[start, start + dur)` holds `ts`.
pub fn step_at(steps: &[crate::steps::Step], ts: i64) -> Option<&crate::steps::Step> {
    steps.iter().find(|s| s.start_ns <= ts && ts < s.start_ns + s.dur_ns)
}

/// The ranks sorted by rank number: the order every table here uses.
pub fn sorted_ranks<'a>(ranks: &[RankTrace<'a>]) -> Vec<RankTrace<'a>> {
    let mut v = ranks.to_vec();
    v.sort_by_key(|r| r.rank);
    v
}
