//! Sorting a lane's spans when they arrive as a few ascending runs, as they nearly always do:
//! an nsys table is flushed per buffer (1–2 descents in 2 M spans), a Kineto thread's events
//! restart once per step. Merging the runs needs one `u32` per span beside them; sorting
//! copied keys (24 bytes a span, and a stable sort's buffer as large again) was the highest
//! point of a 1 GB Kineto trace's whole ingest, ~110 MB above what was live.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Sorts `ids` by `key` (a total order: ties broken inside the key) by merging its ascending
/// runs, if it has at most `max_runs` of them; otherwise leaves it as it is and returns false.
pub fn merge_runs<K: Ord + Copy>(ids: &mut [u32], key: impl Fn(u32) -> K, max_runs: usize) -> bool {
    // run i is ids[bounds[i]..bounds[i + 1]]
    let Some(&first) = ids.first() else { return true };
    let mut bounds = vec![0usize];
    // each key read once (they are loads from the staged columns)
    let mut prev = key(first);
    for (i, &id) in ids.iter().enumerate().skip(1) {
        let k = key(id);
        if k < prev {
            if bounds.len() == max_runs {
                return false;
            }
            bounds.push(i);
        }
        prev = k;
    }
    bounds.push(ids.len());
    if bounds.len() <= 2 {
        return true;
    }
    let mut out = Vec::with_capacity(ids.len());
    let mut at: Vec<usize> = bounds[..bounds.len() - 1].to_vec();
    let mut heads: BinaryHeap<Reverse<(K, usize)>> = (0..at.len()).map(|r| Reverse((key(ids[at[r]]), r))).collect();
    while let Some(Reverse((_, r))) = heads.pop() {
        out.push(ids[at[r]]);
        at[r] += 1;
        // the run's next element; a run's keys ascend, so it goes back in behind this one
        if at[r] < bounds[r + 1] {
            heads.push(Reverse((key(ids[at[r]]), r)));
        }
    }
    ids.copy_from_slice(&out);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sorted_by_key(ids: &[u32], keys: &[(i64, i64)]) -> Vec<u32> {
        let mut v = ids.to_vec();
        v.sort_by_key(|&i| (keys[i as usize].0, Reverse(keys[i as usize].1), i));
        v
    }

    proptest! {
        /// Merging gives what a sort gives, for inputs made of a few runs (concatenated
        /// sorted pieces) and for arbitrary ones, or declines when there are too many runs.
        #[test]
        fn merging_runs_sorts(
            pieces in prop::collection::vec(prop::collection::vec((0i64..50, 0i64..50), 0..40), 1..8),
            shuffle in prop::collection::vec((0i64..1000, 0i64..1000), 0..60),
            max_runs in 1usize..10,
        ) {
            let mut keys: Vec<(i64, i64)> = Vec::new();
            let mut ids: Vec<u32> = Vec::new();
            for mut piece in pieces {
                piece.sort_by_key(|&(s, e)| (s, Reverse(e)));
                for k in piece {
                    ids.push(keys.len() as u32);
                    keys.push(k);
                }
            }
            for k in shuffle {
                ids.push(keys.len() as u32);
                keys.push(k);
            }
            let expect = sorted_by_key(&ids, &keys);
            let mut got = ids.clone();
            let key = |i: u32| (keys[i as usize].0, Reverse(keys[i as usize].1), i);
            if merge_runs(&mut got, key, max_runs) {
                prop_assert_eq!(got, expect);
            } else {
                prop_assert_eq!(&got, &ids, "declined: left as it was");
                let descents = ids.windows(2).filter(|w| key(w[1]) < key(w[0])).count();
                prop_assert!(descents + 1 > max_runs);
            }
        }
    }

    #[test]
    fn two_interleaved_runs_and_an_empty_slice() {
        let keys = [5i64, 1, 6, 2, 7, 3];
        // ids in push order: runs by key are [5], [1, 6], [2, 7], [3]
        let mut ids: Vec<u32> = (0..6).collect();
        assert!(merge_runs(&mut ids, |i| (keys[i as usize], i), 4));
        assert_eq!(ids, vec![1, 3, 5, 0, 2, 4]);
        let mut ids: Vec<u32> = (0..6).collect();
        assert!(!merge_runs(&mut ids, |i| (keys[i as usize], i), 3));
        assert!(merge_runs(&mut [], |i: u32| i, 1));
    }
}
