//! Flight-recorder dumps across ranks: what a hang diagnosis needs. Each group's collectives
//! are matched by `collective_seq_id` (the group's k-th collective is the same call on every
//! member), and at each sequence number the members' entries are compared: a member that never
//! got there, an op, a size or a dtype that differs (docs/flight_recorder.md has the rules).

mod groups;
mod matching;
mod p2p;
mod text;

pub use matching::{cell, completed, Cell};
pub use text::{mismatch_sentence, to_text};

use serde::Serialize;
use strobe_model::flight_recorder::FrDump;

#[derive(Clone, Debug, Default, Serialize)]
pub struct FrReport {
    pub ranks: Vec<RankSummary>,
    pub groups: Vec<GroupSummary>,
    pub mismatches: Vec<Mismatch>,
    /// Per group, the last collective every member completed, with nothing odd at it.
    pub last_completed_everywhere: Vec<LastCompleted>,
    /// Per group, where it stopped: the first sequence number something is wrong at, who got
    /// there and who did not.
    pub stuck: Vec<Stuck>,
    /// Point-to-point ops not completed at the dump, per rank. A rank hung in a `recv` is
    /// here.
    pub pending_p2p: Vec<PendingP2p>,
    /// Sends matched with their receives with nothing odd (`p2p`); what is odd is among the
    /// mismatches, with `p2p` set.
    pub p2p_matched: usize,
    /// Ranks a group names (or the rank numbers between those open) with no dump opened.
    pub missing_dumps: Vec<u32>,
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct RankSummary {
    pub rank: u32,
    pub path: String,
    pub version: String,
    pub form: String,
    pub entries: usize,
    pub collectives: usize,
    pub p2p: usize,
    /// The last entry recorded (highest `record_id`).
    pub last: Option<EntryRef>,
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EntryRef {
    pub group: String,
    pub seq: i64,
    pub p2p: bool,
    pub op: String,
    pub state: String,
    pub record_id: i64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct GroupSummary {
    pub name: String,
    pub desc: String,
    /// Global ranks of its members.
    pub members: Vec<u32>,
    /// Where the members came from: `pg_config`, `default group` (every rank) or `entries`
    /// (the ranks that recorded an op on it: gloo writes no usable `pg_config`).
    pub members_from: String,
    /// Collective sequence numbers seen on any member, ascending.
    pub seqs: Vec<i64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mismatch {
    pub group: String,
    pub desc: String,
    pub seq: i64,
    /// `missing` (members that never got to this sequence number), `op`, `size` or `dtype`.
    pub kind: String,
    /// The value most members have (the op on a `missing`).
    pub majority: String,
    /// Every value with the ranks that have it, most ranks first.
    pub values: Vec<ValueRanks>,
    /// The odd ranks: those without the majority value (or missing).
    pub ranks: Vec<u32>,
    /// A point-to-point pair rather than a group's collective: `seq` is the first end's
    /// `p2p_seq_id`, the values are each end's "send to R" / "recv from R" (with sizes or
    /// dtypes), and `missing` means the peer never posted its end.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub p2p: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ValueRanks {
    pub value: String,
    pub ranks: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LastCompleted {
    pub group: String,
    pub seq: i64,
    pub op: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stuck {
    pub group: String,
    pub desc: String,
    pub seq: i64,
    /// The op most of the ranks there called.
    pub op: String,
    /// Members with an entry at this sequence number.
    pub arrived: Vec<u32>,
    /// Arrived, with the entry not completed (waiting inside it).
    pub not_completed: Vec<u32>,
    /// Members that never got here, each with the last collective it recorded on the group.
    pub not_arrived: Vec<Behind>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PendingP2p {
    pub rank: u32,
    pub entry: EntryRef,
    /// Its sizes, as "in … out …".
    pub sizes: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Behind {
    pub rank: u32,
    pub last_seq: Option<i64>,
    pub last_op: Option<String>,
}

/// The report over one or more ranks' dumps.
pub fn analyse(dumps: &[FrDump]) -> FrReport {
    let mut report = FrReport::default();
    let mut dumps: Vec<&FrDump> = dumps.iter().collect();
    dumps.sort_by_key(|d| d.rank);
    for w in dumps.windows(2) {
        if w[0].rank == w[1].rank {
            report.notes.push(format!(
                "two dumps for rank {}: {} and {}; the second is left out",
                w[0].rank, w[0].path, w[1].path
            ));
        }
    }
    dumps.dedup_by_key(|d| d.rank);
    report.ranks = dumps.iter().map(|d| summarise(d)).collect();
    for d in &dumps {
        for e in d.entries.iter().filter(|e| e.is_p2p && e.state != strobe_model::flight_recorder::FrState::Completed) {
            report.pending_p2p.push(PendingP2p {
                rank: d.rank,
                entry: entry_ref(e),
                sizes: format!("in {:?} out {:?}", e.input_sizes, e.output_sizes),
            });
        }
    }
    let groups = groups::find(&dumps, &mut report.notes);
    let open: Vec<u32> = dumps.iter().map(|d| d.rank).collect();
    let mut missing: Vec<u32> = groups.iter().flat_map(|g| g.members.iter().copied()).collect();
    if let Some(&max) = open.last() {
        missing.extend(0..max);
    }
    missing.sort_unstable();
    missing.dedup();
    missing.retain(|r| !open.contains(r));
    report.missing_dumps = missing;
    for g in &groups {
        matching::match_group(g, &dumps, &mut report);
    }
    p2p::match_p2p(&dumps, &groups, &mut report);
    report.groups = groups;
    report
}

fn entry_ref(e: &strobe_model::flight_recorder::FrEntry) -> EntryRef {
    EntryRef {
        group: e.group.clone(),
        seq: if e.is_p2p { e.p2p_seq_id } else { e.collective_seq_id },
        p2p: e.is_p2p,
        op: e.op().to_string(),
        state: e.state.as_str().to_string(),
        record_id: e.record_id,
    }
}

fn summarise(d: &FrDump) -> RankSummary {
    let last = d.entries.iter().max_by_key(|e| e.record_id).map(entry_ref);
    RankSummary {
        rank: d.rank,
        path: d.path.clone(),
        version: d.version.clone(),
        form: d.form.clone(),
        entries: d.entries.len(),
        collectives: d.entries.iter().filter(|e| !e.is_p2p).count(),
        p2p: d.entries.iter().filter(|e| e.is_p2p).count(),
        last,
        notes: d.notes.clone(),
    }
}

#[cfg(test)]
mod tests;
