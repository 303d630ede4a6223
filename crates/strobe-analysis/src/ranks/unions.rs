//! One rank's GPU activity as interval unions over all its devices, built from
//! `gpu_time::device_unions` so that the rank figures use the single-trace definitions. A
//! rank normally drives one GPU; where a store holds several, a rank's time counts once
//! however many of its devices were busy.

use crate::gpu_time::device_unions;
use crate::intervals::{intersect, total, union};

#[derive(Clone, Debug, Default)]
pub struct RankUnions {
    pub busy: Vec<(i64, i64)>,
    pub compute: Vec<(i64, i64)>,
    pub comm: Vec<(i64, i64)>,
    /// comm ∩ compute.
    pub overlapped: Vec<(i64, i64)>,
}

pub fn rank_unions(store: &strobe_store::Store) -> RankUnions {
    rank_unions_of(&device_unions(store))
}

/// `rank_unions` from the device unions already computed (the report's).
pub fn rank_unions_of(devs: &[crate::gpu_time::DeviceUnions]) -> RankUnions {
    let merge = |f: fn(&crate::gpu_time::DeviceUnions) -> &Vec<(i64, i64)>| {
        union(devs.iter().flat_map(|d| f(d).iter().copied()).collect())
    };
    let compute = merge(|d| &d.compute);
    let comm = merge(|d| &d.comm);
    let overlapped = intersect(&comm, &compute);
    RankUnions { busy: merge(|d| &d.busy), compute, comm, overlapped }
}

/// Length of `u ∩ [start, end)`.
pub fn clipped(u: &[(i64, i64)], start: i64, end: i64) -> i64 {
    if end <= start {
        return 0;
    }
    let i = u.partition_point(|&(_, e)| e <= start);
    total(&intersect(&u[i..], &[(start, end)]))
}
