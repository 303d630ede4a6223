//! The finest level of detail of one lane: its members grouped by depth, and the coarser
//! levels built over each depth.

use super::bucket::bucket;
use crate::format::SpanMeta;
use crate::lod::{build_depth_levels, LodItem};
use crate::scratch::{Scratch, ScratchDir};
use rayon::prelude::*;

pub(crate) struct LaneLod {
    /// Member indices grouped by depth (start order within a depth): the finest level.
    pub depth_members: Scratch<u32>,
    pub depth_ranges: Vec<(usize, usize)>,
    pub levels: Vec<(u32, u32, Scratch<LodItem>)>,
}

/// One lane's level of detail: its members grouped by depth, then each depth's coarser levels,
/// depths in parallel.
pub(crate) fn build_lane_lod(
    start: &[i64],
    end: &[i64],
    depth: &[u32],
    span: &[u32],
    metas: &[SpanMeta],
    scratch: &ScratchDir,
) -> LaneLod {
    let n = start.len();
    if n == 0 {
        return LaneLod { depth_members: Scratch::default(), depth_ranges: Vec::new(), levels: Vec::new() };
    }
    let max_depth = depth.iter().copied().max().unwrap_or(0) as usize;
    let (counts, depth_members) = bucket(max_depth + 1, depth.iter().map(|&d| d as usize), scratch);
    let depth_ranges: Vec<(usize, usize)> = (0..=max_depth).map(|d| (counts[d], counts[d + 1])).collect();
    let extent = end.iter().copied().max().unwrap_or(0) - start[0];
    // depths in parallel: most of a trace's spans can sit on one lane (a CPU thread's ops and
    // Python frames), whose depths are the only parallelism there is
    let per_depth: Vec<Vec<(u32, Scratch<LodItem>)>> = depth_ranges
        .par_iter()
        .map(|&(b, e)| {
            let members = &depth_members[b..e];
            build_depth_levels(
                || {
                    members.iter().map(|&m| {
                        let meta = metas[span[m as usize] as usize];
                        LodItem::single(start[m as usize], end[m as usize], m, meta.name, meta.kind)
                    })
                },
                || members.iter().map(|&m| (start[m as usize], end[m as usize])),
                members.len(),
                extent,
                scratch,
            )
        })
        .collect();
    let levels = per_depth
        .into_iter()
        .enumerate()
        .flat_map(|(d, ls)| ls.into_iter().map(move |(w, its)| (d as u32, w, its)))
        .collect();
    LaneLod { depth_members, depth_ranges, levels }
}
