//! A stable counting sort by a small key.

use crate::scratch::{Scratch, ScratchDir};

/// A stable counting sort of indices `0..n` by a small key: returns the bucket offsets
/// (`n_buckets + 1` of them) and the indices grouped by key, in their original order within
/// each key. O(n); used to group spans by lane and a lane's members by depth.
pub(super) fn bucket(
    n_buckets: usize,
    keys: impl Iterator<Item = usize> + Clone,
    scratch: &ScratchDir,
) -> (Vec<usize>, Scratch<u32>) {
    let mut offsets = vec![0usize; n_buckets + 1];
    for k in keys.clone() {
        offsets[k + 1] += 1;
    }
    for i in 1..offsets.len() {
        offsets[i] += offsets[i - 1];
    }
    let mut fill = offsets.clone();
    let mut order: Scratch<u32> = Scratch::zeroed(scratch, offsets[n_buckets]);
    let slots = order.as_mut_slice();
    for (i, k) in keys.enumerate() {
        slots[fill[k]] = i as u32;
        fill[k] += 1;
    }
    (offsets, order)
}
