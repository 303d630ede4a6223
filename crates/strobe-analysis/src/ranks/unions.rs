//! One rank's GPU activity as interval unions over all its devices, built from
//! `gpu_time::device_unions` so that the rank figures use the single-trace definitions. A
//! rank normally drives one GPU; where a store holds several, a rank's time counts once
//! however many of its devices were busy.

use crate::gpu_time::DeviceUnions;
use crate::intervals::{intersect, union};
use std::borrow::Cow;

/// A rank's unions: its one device's own (borrowed, the usual case), or several devices'
/// merged.
#[derive(Clone, Debug, Default)]
pub struct RankUnions<'a> {
    pub busy: Cow<'a, [(i64, i64)]>,
    pub compute: Cow<'a, [(i64, i64)]>,
    pub comm: Cow<'a, [(i64, i64)]>,
    /// comm ∩ compute.
    pub overlapped: Cow<'a, [(i64, i64)]>,
}

/// A rank's unions from its device unions (the report's). One device's are
/// borrowed, not copied: a million-kernel rank's unions are tens of MB.
pub fn rank_unions_of(devs: &[DeviceUnions]) -> RankUnions<'_> {
    if let [d] = devs {
        return RankUnions {
            busy: Cow::Borrowed(&d.busy),
            compute: Cow::Borrowed(&d.compute),
            comm: Cow::Borrowed(&d.comm),
            overlapped: Cow::Borrowed(&d.overlapped),
        };
    }
    let merge =
        |f: fn(&DeviceUnions) -> &Vec<(i64, i64)>| union(devs.iter().flat_map(|d| f(d).iter().copied()).collect());
    let compute = merge(|d| &d.compute);
    let comm = merge(|d| &d.comm);
    let overlapped = intersect(&comm, &compute);
    RankUnions {
        busy: Cow::Owned(merge(|d| &d.busy)),
        compute: Cow::Owned(compute),
        comm: Cow::Owned(comm),
        overlapped: Cow::Owned(overlapped),
    }
}
