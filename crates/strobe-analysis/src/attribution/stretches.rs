//! The stretches of a step where no GPU work ran, each with what it counts as: exposed comm or
//! idle by cause. A rank's digest keeps them so the several-rank report can move time to the
//! parts only other ranks decide: exposed comm inside a wait for a late peer becomes comm
//! wait, and idle or exposed comm inside a pipeline stage's bubble becomes pipeline bubble.

use super::{Parts, StepBreakdown};
use crate::intervals::total_within;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StretchKind {
    CommTransfer,
    IdleHost,
    IdleSync,
    IdleLaunch,
    IdleOther,
}

impl StretchKind {
    /// The part it counts in.
    pub fn part(self, p: &mut Parts) -> &mut i64 {
        match self {
            StretchKind::CommTransfer => &mut p.comm_transfer_ns,
            StretchKind::IdleHost => &mut p.idle_host_ns,
            StretchKind::IdleSync => &mut p.idle_sync_ns,
            StretchKind::IdleLaunch => &mut p.idle_launch_ns,
            StretchKind::IdleOther => &mut p.idle_other_ns,
        }
    }
}

/// `[start, end)` of a step where no GPU work ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stretch {
    pub start: i64,
    pub end: i64,
    pub kind: StretchKind,
    /// Index into the step's `details.idle_host_held_by` (host idle held by a named range).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub held_by: Option<u32>,
}

/// A wait for a late peer at one collective, in the waiting rank's clock.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerWait {
    pub start: i64,
    pub end: i64,
    pub collective: String,
    pub late_rank: Option<i64>,
    pub span: u32,
}

/// Moves the time of `stretches` (the step's, sorted) that lies in `bubble` (sorted, disjoint)
/// to `pipeline_bubble_ns`, then the exposed comm inside the peer waits to `comm_wait_ns`.
/// Only time already counted as exposed comm or idle moves, so the parts still add up.
pub fn reclassify(b: &mut StepBreakdown, stretches: &[Stretch], bubble: &[(i64, i64)], waits: &[PeerWait]) {
    let mut moved_held = vec![0i64; b.details.idle_host_held_by.len()];
    let mut wait_on: Vec<(usize, i64)> = Vec::new();
    for st in stretches {
        // never more than the part holds (a part a capped model at peak took from)
        let in_bubble = total_within(bubble, st.start, st.end).min(*st.kind.part(&mut b.parts));
        if in_bubble > 0 {
            *st.kind.part(&mut b.parts) -= in_bubble;
            b.parts.pipeline_bubble_ns += in_bubble;
            if let Some(h) = st.held_by.and_then(|h| moved_held.get_mut(h as usize)) {
                *h += in_bubble;
            }
        }
        if st.kind != StretchKind::CommTransfer {
            continue;
        }
        // the stretch less the bubble, against each wait it meets
        let rest = crate::intervals::subtract(&[(st.start, st.end)], bubble);
        for (i, w) in waits.iter().enumerate() {
            if w.end <= st.start || w.start >= st.end {
                continue;
            }
            let ns = total_within(&rest, w.start, w.end);
            if ns > 0 {
                wait_on.push((i, ns));
            }
        }
    }
    // waits of several collectives can overlap: each instant moves once
    let mut wait_iv: Vec<(i64, i64)> = waits.iter().map(|w| (w.start, w.end)).collect();
    wait_iv = crate::intervals::union(wait_iv);
    let comm: Vec<(i64, i64)> = stretches
        .iter()
        .filter(|s| s.kind == StretchKind::CommTransfer)
        .flat_map(|s| crate::intervals::subtract(&[(s.start, s.end)], bubble))
        .collect();
    let moved: i64 = crate::intervals::intersect(&comm, &wait_iv)
        .iter()
        .map(|x| x.1 - x.0)
        .sum::<i64>()
        .min(b.parts.comm_transfer_ns);
    b.parts.comm_transfer_ns -= moved;
    b.parts.comm_wait_ns += moved;
    for (e, m) in b.details.idle_host_held_by.iter_mut().zip(moved_held) {
        e.ns -= m;
    }
    b.details.idle_host_held_by.retain(|e| e.ns > 0);
    b.details.idle_host_held_by.sort_by(|x, y| y.ns.cmp(&x.ns).then_with(|| x.name.cmp(&y.name)));
    let mut on: Vec<super::Evidence> = Vec::new();
    for (i, ns) in wait_on {
        let w = &waits[i];
        match on.iter_mut().find(|e| e.span == Some(w.span)) {
            Some(e) => e.ns += ns,
            None => on.push(super::Evidence { name: w.collective.clone(), ns, span: Some(w.span), rank: w.late_rank }),
        }
    }
    on.sort_by(|x, y| y.ns.cmp(&x.ns).then_with(|| x.name.cmp(&y.name)));
    b.details.comm_wait_on = on;
}
