//! Bandwidth per process group, and slow rank vs slow link (MegaScale's distinction).
//!
//! `comm_groups` has one row per group, collective kind and size class: how many instances,
//! their median and 10th-percentile bus bandwidth, their transfer time, and the link's
//! expected speed (from the GPU's name, or `--link-gbps`).
//!
//! A rank that arrives late is a straggler (`straggler`); the transfer time starts at the
//! latest arrival, so lateness never lowers a bandwidth here. A group whose instances of one
//! kind and size class move their bytes at under `SLOW_FRACTION` of the median of the other
//! groups' medians for that kind and class, while the ranks arrived together (the median skew
//! under the median transfer), is a **slow link**: its ranks, and where two slow groups
//! overlap, the ranks they share. Persistent when more than half of the steps (and at least
//! two) where the group ran that kind and class had a slow instance, else one-off: the
//! straggler rule's cut.

use super::bandwidth::link_of;
use super::digest::RankDigest;
use super::group_match::GroupCollective;
use super::groups::ProcessGroup;
use crate::report::fmt_ns;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// Under this fraction of the peer groups' median bus bandwidth a group is slow.
pub const SLOW_FRACTION: f64 = 0.5;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CommGroupRow {
    pub group: String,
    /// Its description, where the trace gives one (`default_pg`, `dp_stage0`, …).
    pub desc: Option<String>,
    pub ranks: Vec<i64>,
    pub kind: String,
    /// Messages from `size_lo_bytes` (included) to 4 × that (excluded); 0 below 1 KiB.
    pub size_class: String,
    pub size_lo_bytes: u64,
    pub count: usize,
    /// Of the instances with a known size and time.
    pub measured: usize,
    pub bytes_median: Option<u64>,
    pub busbw_median_gbps: Option<f64>,
    pub busbw_p10_gbps: Option<f64>,
    pub algbw_median_gbps: Option<f64>,
    /// Sum of the instances' transfer times.
    pub transfer_ns: i64,
    /// The link the group's devices talk over and its one-way speed, where known.
    pub link: String,
    pub expected_gbps: Option<f64>,
    /// The instance of lowest bus bandwidth (index into `group_collectives`).
    pub slowest: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SlowKind {
    Persistent,
    OneOff,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SlowLink {
    pub group: String,
    pub ranks: Vec<i64>,
    pub kind: String,
    pub size_class: String,
    pub busbw_median_gbps: f64,
    /// The median of the other groups' medians of the same kind and class.
    pub peers_median_gbps: f64,
    /// Where two slow groups overlap: the ranks they share (the likely link).
    pub shared_ranks: Vec<i64>,
    pub pattern: SlowKind,
    pub slow_steps: usize,
    pub steps: usize,
    pub evidence: String,
}

/// The size class of `bytes`: powers of 4 from 1 KiB.
pub fn size_class(bytes: u64) -> (u64, String) {
    if bytes < 1024 {
        return (0, "< 1 KiB".into());
    }
    let mut lo = 1024u64;
    while lo.saturating_mul(4) <= bytes && lo < (1 << 60) {
        lo *= 4;
    }
    (lo, format!("{}–{}", human(lo), human(lo.saturating_mul(4))))
}

fn human(b: u64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024 && v.is_multiple_of(1024) && u < U.len() - 1 {
        v /= 1024;
        u += 1;
    }
    format!("{v} {}", U[u])
}

/// The rows of `comm_groups` and the slow-link verdicts over the matched instances `gc`.
/// `link_gbps` overrides the expected speed of every link.
pub fn comm_groups(
    gc: &[GroupCollective],
    ranks: &[RankDigest],
    groups: &[ProcessGroup],
    link_gbps: Option<f64>,
) -> (Vec<CommGroupRow>, Vec<SlowLink>) {
    let mut by: BTreeMap<(String, String, u64), Vec<usize>> = BTreeMap::new();
    for (i, c) in gc.iter().enumerate() {
        let lo = c.bytes.map(|b| size_class(b).0).unwrap_or(u64::MAX);
        by.entry((c.group.clone(), c.kind.clone(), lo)).or_default().push(i);
    }
    let mut rows = Vec::new();
    for ((group, kind, lo), idx) in &by {
        let first = &gc[idx[0]];
        let mut bus: Vec<f64> = idx.iter().filter_map(|&i| gc[i].busbw_gbps).collect();
        let alg: Vec<f64> = idx.iter().filter_map(|&i| gc[i].algbw_gbps).collect();
        let sizes: Vec<u64> = idx.iter().filter_map(|&i| gc[i].bytes).collect();
        crate::stats::sort(&mut bus);
        let slowest = idx
            .iter()
            .copied()
            .filter(|&i| gc[i].busbw_gbps.is_some())
            .min_by(|&a, &b| gc[a].busbw_gbps.partial_cmp(&gc[b].busbw_gbps).unwrap_or(std::cmp::Ordering::Equal));
        // the link: the first open rank's device and backend
        let rec = ranks.iter().find(|r| first.ranks.first() == Some(&r.rank)).map(|r| &r.comm_records);
        let (link, expected) = match link_gbps {
            Some(g) => ("given (--link-gbps)".to_string(), Some(g)),
            None => link_of(rec.and_then(|r| r.device.as_deref()), rec.and_then(|r| r.backend.as_deref())),
        };
        let desc = groups.iter().find(|g| &g.name == group).and_then(|g| g.desc.clone()).or_else(|| {
            let r = rec?;
            first.ops.first().and_then(|&o| r.ops.get(o)).and_then(|o| o.group_desc.clone())
        });
        rows.push(CommGroupRow {
            group: group.clone(),
            desc,
            ranks: first.ranks.clone(),
            kind: kind.clone(),
            size_class: if *lo == u64::MAX { "size unknown".into() } else { size_class(*lo).1 },
            size_lo_bytes: if *lo == u64::MAX { 0 } else { *lo },
            count: idx.len(),
            measured: bus.len(),
            bytes_median: crate::stats::median(&sizes),
            busbw_median_gbps: crate::stats::median_sorted(&bus),
            busbw_p10_gbps: crate::stats::percentile_sorted(&bus, 10.0),
            algbw_median_gbps: crate::stats::median(&alg),
            transfer_ns: idx.iter().map(|&i| gc[i].transfer_ns).sum(),
            link,
            expected_gbps: expected,
            slowest,
        });
    }
    let slow = slow_links(gc, &by, &rows);
    (rows, slow)
}

fn slow_links(
    gc: &[GroupCollective],
    by: &BTreeMap<(String, String, u64), Vec<usize>>,
    rows: &[CommGroupRow],
) -> Vec<SlowLink> {
    let mut out: Vec<SlowLink> = Vec::new();
    for r in rows {
        let Some(mine) = r.busbw_median_gbps else { continue };
        let peers: Vec<f64> = rows
            .iter()
            .filter(|o| {
                o.group != r.group
                    && o.kind == r.kind
                    && o.size_lo_bytes == r.size_lo_bytes
                    && o.size_class == r.size_class
            })
            .filter_map(|o| o.busbw_median_gbps)
            .collect();
        let Some(peer) = crate::stats::median(&peers) else { continue };
        if mine >= SLOW_FRACTION * peer || mine.is_nan() {
            continue;
        }
        let lo = if r.size_class == "size unknown" { u64::MAX } else { r.size_lo_bytes };
        let Some(idx) = by.get(&(r.group.clone(), r.kind.clone(), lo)) else { continue };
        let skews: Vec<i64> = idx.iter().map(|&i| gc[i].skew_ns).collect();
        let transfers: Vec<i64> = idx.iter().map(|&i| gc[i].transfer_ns).collect();
        let (skew, transfer) =
            (crate::stats::median(&skews).unwrap_or(0), crate::stats::median(&transfers).unwrap_or(0));
        if skew >= transfer {
            // the ranks did not arrive together: the straggler rule speaks for these
            continue;
        }
        let mut steps: BTreeSet<Option<&str>> = BTreeSet::new();
        let mut slow_steps: BTreeSet<Option<&str>> = BTreeSet::new();
        for &i in idx {
            steps.insert(gc[i].step.as_deref());
            if gc[i].busbw_gbps.is_some_and(|b| b < SLOW_FRACTION * peer) {
                slow_steps.insert(gc[i].step.as_deref());
            }
        }
        let pattern = if slow_steps.len() >= 2 && 2 * slow_steps.len() > steps.len() {
            SlowKind::Persistent
        } else {
            SlowKind::OneOff
        };
        out.push(SlowLink {
            group: r.group.clone(),
            ranks: r.ranks.clone(),
            kind: r.kind.clone(),
            size_class: r.size_class.clone(),
            busbw_median_gbps: mine,
            peers_median_gbps: peer,
            shared_ranks: Vec::new(),
            pattern,
            slow_steps: slow_steps.len(),
            steps: steps.len(),
            evidence: String::new(),
        });
    }
    // where slow groups overlap, the ranks they share point at the link
    let sets: Vec<(String, BTreeSet<i64>)> =
        out.iter().map(|s| (s.group.clone(), s.ranks.iter().copied().collect())).collect();
    for s in &mut out {
        let mine: BTreeSet<i64> = s.ranks.iter().copied().collect();
        let mut shared = BTreeSet::new();
        for (g, other) in &sets {
            if *g != s.group {
                shared.extend(mine.intersection(other).copied());
            }
        }
        s.shared_ranks = shared.into_iter().collect();
        let med =
            gc.iter().filter(|c| c.group == s.group && c.kind == s.kind).map(|c| c.transfer_ns).collect::<Vec<_>>();
        s.evidence = format!(
            "slow link: group {} (ranks {:?}) moves {} {} at {:.2} GB/s bus bandwidth (median), under {:.0}% of its peer groups' {:.2} GB/s, with nobody late (median transfer {}){}; {} in {} of {} steps",
            s.group,
            s.ranks,
            s.kind,
            s.size_class,
            s.busbw_median_gbps,
            100.0 * SLOW_FRACTION,
            s.peers_median_gbps,
            fmt_ns(crate::stats::median(&med).unwrap_or(0)),
            if s.shared_ranks.is_empty() { String::new() } else { format!("; it shares ranks {:?} with another slow group", s.shared_ranks) },
            match s.pattern {
                SlowKind::Persistent => "persistent",
                SlowKind::OneOff => "one-off",
            },
            s.slow_steps,
            s.steps
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(group: &str, ranks: &[i64], step: &str, bytes: u64, transfer_ns: i64, skew_ns: i64) -> GroupCollective {
        let (alg, bus) = super::super::bandwidth::bandwidth("all_reduce", ranks.len(), bytes, transfer_ns).unwrap();
        GroupCollective {
            group: group.into(),
            group_from: "recorded",
            kind: "all_reduce".into(),
            name: "allreduce".into(),
            occurrence: 0,
            ranks: ranks.to_vec(),
            group_size: ranks.len(),
            step: Some(step.into()),
            starts_ns: vec![0; ranks.len()],
            ends_ns: vec![transfer_ns; ranks.len()],
            skew_ns,
            last_ranks: vec![],
            transfer_ns,
            bytes: Some(bytes),
            size_unknown: None,
            algbw_gbps: Some(alg),
            busbw_gbps: Some(bus),
            ops: vec![],
        }
    }

    #[test]
    fn size_classes() {
        assert_eq!(size_class(10).0, 0);
        assert_eq!(size_class(1024).1, "1 KiB–4 KiB");
        assert_eq!(size_class(5 << 20).1, "4 MiB–16 MiB");
        assert_eq!(size_class(u64::MAX).0, 1 << 60);
    }

    #[test]
    fn a_slow_group_with_nobody_late_is_a_slow_link() {
        let mut gc = Vec::new();
        for s in ["s1", "s2", "s3"] {
            gc.push(inst("a", &[0, 1], s, 8 << 20, 100_000, 1_000));
            gc.push(inst("b", &[2, 3], s, 8 << 20, 100_000, 1_000));
            gc.push(inst("c", &[4, 5], s, 8 << 20, 400_000, 1_000));
            // late arrivals, not a slow link: the straggler rule names them
            gc.push(inst("d", &[6, 7], s, 8 << 20, 400_000, 900_000));
        }
        let (rows, slow) = comm_groups(&gc, &[], &[], Some(450.0));
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0].expected_gbps, Some(450.0));
        assert_eq!(slow.len(), 1, "{slow:?}");
        assert_eq!(slow[0].group, "c");
        assert_eq!(slow[0].pattern, SlowKind::Persistent);
        assert!(slow[0].evidence.contains("ranks [4, 5]"));
    }
}
