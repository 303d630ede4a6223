//! Every collective a rank issued, with what its record says: the group, the sizes, the
//! dtype, and when it ran. PyTorch records each c10d call as a `record_param_comms` op whose
//! args name the collective (`Collective name`), its group (`Process Group Name`,
//! `Process Group Description`, `Process Group Ranks`, `Group size`), the element counts
//! (`In msg nelems`, `Out msg nelems`, `In split size`, `Out split size`) and `dtype`; NCCL
//! kernels repeat those args. When it ran:
//! - with a kernel that carried it (NCCL): the kernel, whose start is the rank's arrival;
//! - else the backend's work record (`gloo:all_reduce`, …), from the post to the completion;
//! - else the call itself.
//!
//! An nsys export's NCCL NVTX ranges (`ncclAllReduce`, … with their payload) are records too.
//!
//! A kernel with those args and no record above it (a trace without CPU ops) is an op of its
//! own. Records without a collective name (older traces) are not ops: their kernels still
//! match by name (`collectives`).

use super::groups::parse_ranks;
use crate::gpu_time::{Classifier, GpuClass};
use serde::{Deserialize, Serialize};
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimedBy {
    Kernel,
    Work,
    Call,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CommOp {
    /// The collective as recorded (`allreduce`, `_allgather_base`, `send`, …).
    pub name: String,
    pub group: Option<String>,
    pub group_desc: Option<String>,
    /// The group's global ranks as the record lists them (empty where not recorded).
    pub group_ranks: Vec<i64>,
    pub group_size: Option<i64>,
    pub in_nelems: Option<u64>,
    pub out_nelems: Option<u64>,
    pub dtype: Option<String>,
    pub in_split: Vec<i64>,
    pub out_split: Vec<i64>,
    /// When the rank issued it (the record's start): the order of a group's collectives.
    pub issued_ns: i64,
    /// Arrival and end (see `timed_by`), in the rank's own clock.
    pub start_ns: i64,
    pub end_ns: i64,
    pub timed_by: TimedBy,
    /// The record (or kernel) span in the rank's store.
    pub span: u32,
    /// The lane of the span: with gloo, each process group runs its collectives on worker
    /// threads of its own, so ops of one lane share a group.
    #[serde(default)]
    pub lane: u32,
}

fn get_str(a: &serde_json::Value, k: &str) -> Option<String> {
    let v = a.get(k)?;
    v.as_str().map(String::from).or_else(|| v.as_i64().map(|n| n.to_string()))
}

fn get_u64(a: &serde_json::Value, k: &str) -> Option<u64> {
    let v = a.get(k)?;
    v.as_u64().or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
}

/// The op a record's (or kernel's) args describe, or None where they name no collective.
pub fn op_from_args(args: &str, span: u32, (start, end): (i64, i64), timed_by: TimedBy) -> Option<CommOp> {
    let a: serde_json::Value = serde_json::from_str(args).ok()?;
    let name = get_str(&a, "Collective name")?;
    Some(CommOp {
        name,
        group: get_str(&a, "Process Group Name"),
        group_desc: get_str(&a, "Process Group Description"),
        group_ranks: a.get("Process Group Ranks").and_then(parse_ranks).unwrap_or_default(),
        group_size: a.get("Group size").and_then(|v| v.as_i64()),
        in_nelems: get_u64(&a, "In msg nelems"),
        out_nelems: get_u64(&a, "Out msg nelems"),
        dtype: get_str(&a, "dtype"),
        in_split: a.get("In split size").and_then(parse_ranks).unwrap_or_default(),
        out_split: a.get("Out split size").and_then(parse_ranks).unwrap_or_default(),
        issued_ns: start,
        start_ns: start,
        end_ns: end,
        timed_by,
        span,
        lane: 0,
    })
}

/// A collective's record: PyTorch's `record_param_comms`, or NCCL's own NVTX range for the
/// call (`ncclAllReduce`, …) as an nsys import gives it, with the same args.
pub fn is_record(name: &str) -> bool {
    name == "record_param_comms"
        || matches!(
            name,
            "ncclAllReduce"
                | "ncclAllGather"
                | "ncclReduceScatter"
                | "ncclBroadcast"
                | "ncclBcast"
                | "ncclReduce"
                | "ncclSend"
                | "ncclRecv"
                | "ncclAlltoAll"
                | "ncclAllToAll"
                | "ncclGather"
                | "ncclScatter"
        )
}

/// A backend's work record: `gloo:all_reduce`, `nccl:all_gather`, …
fn is_work_record(name: &str) -> bool {
    name.starts_with("gloo:") || name.starts_with("nccl:")
}

/// Every collective record of `store`, by issue time.
pub fn comm_ops(store: &Store) -> Vec<CommOp> {
    let mut out: Vec<CommOp> = Vec::new();
    let mut unrecorded: Vec<CommOp> = Vec::new();
    // each name judged once, not once per span: an nsys export's CPU threads hold millions
    // of runtime calls, and comparing each one's name took most of a rank's digest
    const OTHER: u8 = 0;
    const RECORD: u8 = 1;
    const WORK_RECORD: u8 = 2;
    let name_kind: Vec<u8> = (0..store.string_count() as u32)
        .map(|i| {
            let n = store.string(i);
            if is_record(n) {
                RECORD
            } else if is_work_record(n) {
                WORK_RECORD
            } else {
                OTHER
            }
        })
        .collect();
    // a trace that names no record at all (most nsys exports, a single-GPU run) skips the
    // walk over its CPU threads' millions of calls
    let has_records = name_kind.iter().any(|&k| k != OTHER);
    for (lane, desc) in store.lanes.iter().enumerate() {
        if !has_records || !matches!(desc.kind, LaneKind::CpuThread { .. }) {
            continue;
        }
        let v = store.lane_spans(lane as u32);
        // the latest record of this lane whose work record is still to come
        let mut open: Option<(usize, i64)> = None;
        for (k, &sid) in v.span.iter().enumerate() {
            let kind = name_kind.get(store.span_meta(sid).name as usize).copied().unwrap_or(OTHER);
            if kind == OTHER {
                continue;
            }
            let name = store.span_name(sid);
            let (s, e) = (v.starts[k], v.ends[k]);
            if kind == RECORD {
                open = None;
                if let Some(mut op) = op_from_args(&store.span_args(sid), sid, (s, e), TimedBy::Call) {
                    op.lane = lane as u32;
                    // its work record starts inside the c10d op that holds the record
                    let limit = store.enclosing_stack(sid).last().map(|&p| store.span_end(p)).unwrap_or(e).max(e);
                    out.push(op);
                    open = Some((out.len() - 1, limit));
                }
            } else {
                let claimed = match open.take() {
                    Some((i, limit)) if s >= out[i].issued_ns && s <= limit => {
                        out[i].start_ns = s;
                        out[i].end_ns = e.max(s);
                        out[i].timed_by = TimedBy::Work;
                        true
                    }
                    _ => false,
                };
                if !claimed {
                    if let Some(mut op) = op_from_work_record(name, &store.span_args(sid), sid, (s, e)) {
                        op.lane = lane as u32;
                        unrecorded.push(op);
                    }
                }
            }
        }
    }
    attach_kernels(store, &mut out);
    out.extend(unrecorded);
    out.sort_by_key(|o| (o.issued_ns, o.span));
    out
}

/// A collective known only by its backend's work record (gloo records no `record_param_comms`
/// for collectives, and runs them on worker threads): its kind from the name, its size from
/// the record's one tensor, no group. Point-to-point records are the pipeline's.
pub fn op_from_work_record(name: &str, args: &str, span: u32, (start, end): (i64, i64)) -> Option<CommOp> {
    let coll = name.split_once(':')?.1;
    if matches!(kind_of(coll).as_str(), "send" | "recv") {
        return None;
    }
    let a: serde_json::Value = serde_json::from_str(args).unwrap_or_default();
    let dims = a.get("Input Dims").and_then(|d| d.as_array()).and_then(|d| d.first()).and_then(|d| d.as_array());
    let nelems = dims.and_then(|d| d.iter().try_fold(1u64, |n, x| n.checked_mul(x.as_u64()?)));
    let dtype = a.get("Input type").and_then(|t| t.as_array()).and_then(|t| t.first()).and_then(|t| t.as_str());
    Some(CommOp {
        name: coll.to_string(),
        group: None,
        group_desc: None,
        group_ranks: Vec::new(),
        group_size: None,
        in_nelems: nelems,
        out_nelems: None,
        dtype: dtype.map(String::from),
        in_split: Vec::new(),
        out_split: Vec::new(),
        issued_ns: start,
        start_ns: start,
        end_ns: end.max(start),
        timed_by: TimedBy::Work,
        span,
        lane: 0,
    })
}

/// Each comm kernel to the record whose call launched it; a kernel whose own args name a
/// collective and that no record claims becomes an op of its own.
fn attach_kernels(store: &Store, ops: &mut Vec<CommOp>) {
    let by_span: rustc_hash::FxHashMap<u32, usize> = ops.iter().enumerate().map(|(i, o)| (o.span, i)).collect();
    let mut claimed = vec![false; ops.len()];
    let mut own: Vec<CommOp> = Vec::new();
    // each kernel name judged once, not at each of a million launches
    let mut classes = Classifier::new(store);
    for (lane, desc) in store.lanes.iter().enumerate() {
        if !matches!(desc.kind, LaneKind::GpuStream { .. }) {
            continue;
        }
        let v = store.lane_spans(lane as u32);
        for (k, &sid) in v.span.iter().enumerate() {
            let m = store.span_meta(sid);
            if classes.class(SpanKind::from_u8(m.kind), m.name) != Some(GpuClass::Comm) {
                continue;
            }
            let (s, e) = (v.starts[k], v.ends[k]);
            let owner = store
                .launch_of(sid)
                .and_then(|l| store.enclosing_stack(l).iter().find_map(|p| by_span.get(p)).copied());
            match owner {
                Some(i) if !claimed[i] => {
                    claimed[i] = true;
                    ops[i].start_ns = s;
                    ops[i].end_ns = e;
                    ops[i].timed_by = TimedBy::Kernel;
                }
                Some(_) => {}
                None => {
                    if let Some(op) = op_from_args(&store.span_args(sid), sid, (s, e), TimedBy::Kernel) {
                        own.push(op);
                    }
                }
            }
        }
    }
    ops.extend(own);
}

/// What a rank's digest keeps of its communication: its collective records, the groups it
/// declares (with a note per declaration not read), its GPU's name and its backend (for the
/// link's expected speed).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CommRecords {
    pub ops: Vec<CommOp>,
    pub groups: Vec<super::groups::ProcessGroup>,
    pub notes: Vec<String>,
    pub device: Option<String>,
    pub backend: Option<String>,
}

/// `store`'s `CommRecords`.
pub fn comm_records(store: &Store) -> CommRecords {
    let (groups, notes) = super::groups::declared_groups(store);
    CommRecords {
        ops: comm_ops(store),
        groups,
        notes,
        device: store.meta.devices.first().map(|d| d.name.clone()).filter(|n| !n.is_empty()),
        backend: store.meta.distributed.as_ref().and_then(|d| d.backend.clone()),
    }
}

/// The collective family of a recorded name: `all_reduce`, `all_gather`, `reduce_scatter`,
/// `all_to_all`, `broadcast`, `reduce`, `send`, `recv`, `barrier`, `gather`, `scatter`; other
/// names as they are.
pub fn kind_of(name: &str) -> String {
    let n = name.trim_start_matches('_').to_ascii_lowercase();
    let n = n.replace("_into_tensor", "").replace("_coalesced", "").replace("_base", "").replace("_tensor", "");
    let squashed: String = n.chars().filter(|c| *c != '_').collect();
    match squashed.as_str() {
        "allreduce" => "all_reduce",
        "allgather" => "all_gather",
        "reducescatter" => "reduce_scatter",
        "alltoall" | "alltoallv" => "all_to_all",
        "broadcast" => "broadcast",
        "reduce" => "reduce",
        "send" => "send",
        "recv" | "recvanysource" => "recv",
        "barrier" => "barrier",
        "gather" => "gather",
        "scatter" => "scatter",
        _ => return n,
    }
    .to_string()
}

/// Bytes of one element of a recorded dtype: `record_param_comms`' names (`Float`,
/// `BFloat16`, …) or a tensor's C++ type as `Input type` gives it (`float`, `c10::Half`, …).
pub fn dtype_bytes(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "double" | "long int" | "long" | "int64_t" | "c10::complex<float>" => 8,
        "float" | "int" | "unsigned int" => 4,
        "c10::Half" | "c10::BFloat16" | "short" => 2,
        "bool" | "signed char" | "unsigned char" | "c10::Float8_e4m3fn" | "c10::Float8_e5m2" => 1,
        "Double" | "Long" | "ComplexFloat" | "UInt64" => 8,
        "Float" | "Int" | "UInt32" => 4,
        "Half" | "BFloat16" | "Short" | "UInt16" => 2,
        "Byte" | "Char" | "Bool" | "Float8_e4m3fn" | "Float8_e5m2" | "Float8_e4m3fnuz" | "Float8_e5m2fnuz" => 1,
        "ComplexDouble" => 16,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        for (n, k) in [
            ("allreduce", "all_reduce"),
            ("_allgather_base", "all_gather"),
            ("allgather_into_tensor_coalesced", "all_gather"),
            ("_reduce_scatter_base", "reduce_scatter"),
            ("reduce_scatter_tensor_coalesced", "reduce_scatter"),
            ("all_to_allv", "all_to_all"),
            ("alltoall_base", "all_to_all"),
            ("broadcast", "broadcast"),
            ("recv", "recv"),
            ("weird_op", "weird_op"),
        ] {
            assert_eq!(kind_of(n), k, "{n}");
        }
    }

    #[test]
    fn args_of_a_record() {
        let a = r#"{"Collective name": "allreduce", "Process Group Name": "0", "Process Group Description": "default_pg",
            "Process Group Ranks": "[0, 1]", "Group size": 2, "In msg nelems": 8391680, "Out msg nelems": 8391680,
            "dtype": "Float", "In split size": "[]", "Out split size": "[]"}"#;
        let op = op_from_args(a, 3, (10, 20), TimedBy::Call).unwrap();
        assert_eq!(op.group.as_deref(), Some("0"));
        assert_eq!(op.group_ranks, vec![0, 1]);
        assert_eq!(op.in_nelems, Some(8391680));
        assert!(op_from_args("{}", 0, (0, 1), TimedBy::Call).is_none());
        assert!(op_from_args("not json", 0, (0, 1), TimedBy::Call).is_none());
        // a size of the wrong type is unknown, not a failure
        let b = r#"{"Collective name": "allreduce", "In msg nelems": [1], "Process Group Ranks": 7}"#;
        let op = op_from_args(b, 0, (0, 1), TimedBy::Call).unwrap();
        assert_eq!(op.in_nelems, None);
        assert!(op.group_ranks.is_empty());
    }
}
