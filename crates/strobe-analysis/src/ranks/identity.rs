//! Which rank a trace is: `distributedInfo.rank` where the trace says, else a number after
//! `rank` in the file name (`rank3`, `rank-3`, `rank_3`, any case), else its place in the
//! order given. If that leaves two traces with the same rank (two files claiming rank 0), the
//! order given wins for all of them: a wrong but unique numbering beats a silent merge.

use serde::Serialize;
use strobe_store::Store;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankFrom {
    /// `distributedInfo.rank` (Kineto) or the equivalent the importer stored.
    Metadata,
    FileName,
    Order,
    /// One process of a several-process Nsight Systems report, numbered by its CUDA device.
    DeviceOrder,
    /// One process of such a report, numbered by pid (no device of its own).
    ProcessOrder,
}

impl RankFrom {
    pub fn as_str(self) -> &'static str {
        match self {
            RankFrom::Metadata => "trace metadata",
            RankFrom::FileName => "file name",
            RankFrom::Order => "order given",
            RankFrom::DeviceOrder => "CUDA device order of the report's processes",
            RankFrom::ProcessOrder => "process order of the report's processes",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RankIdentity {
    pub rank: i64,
    pub from: RankFrom,
}

/// The number after the last `rank` in a file name, optionally after `-` or `_`.
pub fn rank_from_file_name(path: &str) -> Option<i64> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path).to_ascii_lowercase();
    let mut found = None;
    let mut from = 0;
    while let Some(i) = name[from..].find("rank") {
        let rest = &name[from + i + 4..];
        let rest = rest.strip_prefix(['-', '_']).unwrap_or(rest);
        let digits: &str = &rest[..rest.bytes().take_while(|b| b.is_ascii_digit()).count()];
        if let Ok(n) = digits.parse::<i64>() {
            found = Some(n);
        }
        from += i + 4;
    }
    found
}

/// The rank of each trace, in the order given (`sources[i]` is the path of `stores[i]`).
pub fn identify_ranks(stores: &[&Store], sources: &[&str]) -> Vec<RankIdentity> {
    let claims: Vec<super::digest::RankClaim> = stores.iter().map(|s| claim_of(s)).collect();
    identify(&claims, sources)
}

/// The rank the trace at `source`, the `index`th given, claims on its own: what `identify`
/// gives it unless two traces claim one rank (then every trace is numbered by its order).
pub fn claimed_rank(store: &Store, source: &str, index: usize) -> i64 {
    claimed_identity(&claim_of(store), Some(source), index).rank
}

/// What a store says of its rank: its metadata's rank and how the importer split it out.
pub(crate) fn claim_of(store: &Store) -> super::digest::RankClaim {
    super::digest::RankClaim {
        meta_rank: store.meta.distributed.as_ref().and_then(|d| d.rank),
        split: store.meta.extra.get("rank_from").and_then(|v| v.as_str()).map(str::to_string),
    }
}

fn claimed_identity(c: &super::digest::RankClaim, source: Option<&str>, i: usize) -> RankIdentity {
    if let Some(r) = c.meta_rank {
        let from = match c.split.as_deref() {
            Some("device order") => RankFrom::DeviceOrder,
            Some("process order") => RankFrom::ProcessOrder,
            _ => RankFrom::Metadata,
        };
        RankIdentity { rank: r, from }
    } else if let Some(r) = source.and_then(rank_from_file_name) {
        RankIdentity { rank: r, from: RankFrom::FileName }
    } else {
        RankIdentity { rank: i as i64, from: RankFrom::Order }
    }
}

/// The rank of each trace from what it claims (`claims[i]` from the trace at `sources[i]`).
pub fn identify(claims: &[super::digest::RankClaim], sources: &[&str]) -> Vec<RankIdentity> {
    let ids: Vec<RankIdentity> =
        claims.iter().enumerate().map(|(i, c)| claimed_identity(c, sources.get(i).copied(), i)).collect();
    let mut seen: Vec<i64> = ids.iter().map(|r| r.rank).collect();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() == ids.len() {
        ids
    } else {
        (0..ids.len()).map(|i| RankIdentity { rank: i as i64, from: RankFrom::Order }).collect()
    }
}

/// The process a rank's store holds: the one the importer kept when it split a report into
/// ranks (`meta.extra["rank_pid"]`), else the process of the CPU thread with the most spans.
pub fn rank_process(store: &Store) -> Option<i64> {
    if let Some(p) = store.meta.extra.get("rank_pid").and_then(|v| v.as_i64()) {
        return Some(p);
    }
    let mut best: Option<(usize, i64)> = None;
    for (lane, d) in store.lanes.iter().enumerate() {
        if let strobe_model::LaneKind::CpuThread { pid: strobe_model::IdKey::Num(p), .. } = d.kind {
            let n = store.lane_spans(lane as u32).span.len();
            if best.is_none_or(|b| n > b.0) {
                best = Some((n, p));
            }
        }
    }
    best.map(|b| b.1)
}

/// The devices of a rank's GPU streams, ascending.
pub fn rank_devices(store: &Store) -> Vec<i64> {
    let mut d: Vec<i64> = store
        .lanes
        .iter()
        .filter(|l| matches!(l.kind, strobe_model::LaneKind::GpuStream { .. }))
        .filter_map(|l| l.kind.device())
        .collect();
    d.sort_unstable();
    d.dedup();
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names() {
        assert_eq!(rank_from_file_name("traces/ddp_rank0.json.gz"), Some(0));
        assert_eq!(rank_from_file_name("sampled_rank-1.json.gz"), Some(1));
        assert_eq!(rank_from_file_name("/x/RANK_12.pt.trace.json"), Some(12));
        assert_eq!(rank_from_file_name("rank3/worker.json"), None);
        assert_eq!(rank_from_file_name("ranking_trace.json"), None);
        assert_eq!(rank_from_file_name("trace.json"), None);
    }
}
