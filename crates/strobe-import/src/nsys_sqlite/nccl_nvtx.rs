//! NCCL's own NVTX ranges (domain `NCCL`, on unless `NCCL_NVTX_DISABLE`): one push/pop range
//! per API call (`ncclAllReduce`, `ncclAllGather`, …) on the calling thread, whose kernels it
//! launches. NCCL 2.19+ attaches a payload (`NCCL communicator ID`, `Message size [bytes]`,
//! `Reduction operation`, `Root`); `ncclCommInitRank*` ranges carry `No. of ranks`. An nsys
//! SQLite export holds the payload values only when made with `--include-json=true`
//! (`NVTX_EVENTS.jsonText`); the default export has the schemas alone.
//!
//! A collective range becomes a record in `record_param_comms`' words (`Collective name`,
//! `Process Group Name` = the communicator, `Group size`, `In/Out msg nelems` counted in bytes
//! with `dtype` `Byte`), so the collective analysis reads it as it reads Kineto's record.
//! NCCL's message size is per rank: all-gather's send buffer, reduce-scatter's receive
//! buffer, the buffer of the others; all-gather's output and reduce-scatter's input are that
//! times the communicator's ranks.

use rustc_hash::FxHashMap;
use std::fmt::Write;

/// `record_param_comms`' collective name for an NCCL API range, or None for other ranges.
pub fn collective(text: &str) -> Option<&'static str> {
    Some(match text {
        "ncclAllReduce" => "allreduce",
        "ncclAllGather" => "allgather",
        "ncclReduceScatter" => "reduce_scatter",
        "ncclBroadcast" | "ncclBcast" => "broadcast",
        "ncclReduce" => "reduce",
        "ncclSend" => "send",
        "ncclRecv" => "recv",
        "ncclAlltoAll" | "ncclAllToAll" => "all_to_all",
        "ncclGather" => "gather",
        "ncclScatter" => "scatter",
        _ => return None,
    })
}

/// Communicator id → its rank count, from the payloads of `ncclCommInitRank*` ranges.
pub fn comm_sizes<'a>(payloads: impl Iterator<Item = &'a str>) -> FxHashMap<String, u64> {
    let mut out = FxHashMap::default();
    for p in payloads {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(p) else { continue };
        if let (Some(id), Some(n)) = (comm_id(&v), v.get("No. of ranks").and_then(|n| n.as_u64()).filter(|n| *n > 0)) {
            out.insert(id, n);
        }
    }
    out
}

fn comm_id(v: &serde_json::Value) -> Option<String> {
    let c = v.get("NCCL communicator ID")?;
    c.as_u64().map(|n| n.to_string()).or_else(|| c.as_str().map(String::from))
}

/// What a collective range's payload gave.
#[derive(Debug, PartialEq)]
pub enum Sized {
    /// Message size read (bytes per rank).
    Known,
    /// No payload values in the export.
    NoPayload,
    /// A payload that could not be read: why.
    Bad(String),
}

/// Appends the record args (without braces, after `sep`) of collective `coll` whose payload
/// is `json`, given the communicators' sizes; says what the payload gave.
pub fn record_args(coll: &str, json: Option<&str>, sizes: &FxHashMap<String, u64>, out: &mut String) -> Sized {
    let _ = write!(out, "\"Collective name\":{}", serde_json::Value::String(coll.into()));
    let Some(json) = json.filter(|j| !j.trim().is_empty()) else {
        out.push_str(
            ",\"Size unknown\":\"the export has no NCCL payload values: export with nsys export --include-json=true\"",
        );
        return Sized::NoPayload;
    };
    let v: serde_json::Value = match serde_json::from_str(json) {
        Ok(v @ serde_json::Value::Object(_)) => v,
        _ => {
            let why = format!("payload is not a JSON object: {:?}", json.chars().take(80).collect::<String>());
            return unknown(why, out);
        }
    };
    let ranks = comm_id(&v).map(|id| {
        let _ = write!(out, ",\"Process Group Name\":{}", serde_json::Value::String(id.clone()));
        out.push_str(",\"Process Group Description\":\"NCCL communicator\"");
        sizes.get(&id).copied()
    });
    let ranks = ranks.flatten();
    if let Some(n) = ranks {
        let _ = write!(out, ",\"Group size\":{n}");
    }
    for k in ["Reduction operation", "Root"] {
        if let Some(x) = v.get(k) {
            let _ = write!(out, ",{}:{x}", serde_json::Value::String(k.into()));
        }
    }
    let size = match v.get("Message size [bytes]") {
        None => return unknown("no \"Message size [bytes]\" in the payload".into(), out),
        Some(s) => match s.as_u64() {
            Some(m) => m,
            None => return unknown(format!("\"Message size [bytes]\" is {s}, not a byte count"), out),
        },
    };
    let _ = write!(out, ",\"NCCL message size [bytes]\":{size},\"dtype\":\"Byte\"");
    // per-rank message → the input and output buffers
    let times_ranks = ranks.and_then(|n| size.checked_mul(n));
    let (input, output) = match coll {
        "allgather" => (Some(size), times_ranks),
        "reduce_scatter" => (times_ranks, Some(size)),
        "all_to_all" => (times_ranks, times_ranks),
        _ => (Some(size), Some(size)),
    };
    if let Some(i) = input {
        let _ = write!(out, ",\"In msg nelems\":{i}");
    }
    if let Some(o) = output {
        let _ = write!(out, ",\"Out msg nelems\":{o}");
    }
    Sized::Known
}

/// A payload that gives no size: why, in the args (`Size unknown`) and to the caller.
fn unknown(why: String, out: &mut String) -> Sized {
    let _ = write!(out, ",\"Size unknown\":{}", serde_json::Value::String(why.clone()));
    Sized::Bad(why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(coll: &str, json: Option<&str>) -> (serde_json::Value, Sized) {
        let sizes = comm_sizes(std::iter::once(r#"{"NCCL communicator ID":7,"No. of ranks":4,"Rank":0}"#));
        let mut s = String::from("{");
        let r = record_args(coll, json, &sizes, &mut s);
        s.push('}');
        (serde_json::from_str(&s).unwrap(), r)
    }

    #[test]
    fn per_rank_message_to_buffers() {
        let (a, r) = args("allgather", Some(r#"{"NCCL communicator ID":7,"Message size [bytes]":100}"#));
        assert_eq!(r, Sized::Known);
        assert_eq!((a["In msg nelems"].as_u64(), a["Out msg nelems"].as_u64()), (Some(100), Some(400)));
        assert_eq!(a["Group size"], 4);
        assert_eq!(a["Process Group Name"], "7");
        let (a, _) = args("reduce_scatter", Some(r#"{"NCCL communicator ID":7,"Message size [bytes]":100}"#));
        assert_eq!((a["In msg nelems"].as_u64(), a["Out msg nelems"].as_u64()), (Some(400), Some(100)));
        let (a, _) = args(
            "allreduce",
            Some(r#"{"NCCL communicator ID":7,"Message size [bytes]":100,"Reduction operation":"Sum"}"#),
        );
        assert_eq!((a["In msg nelems"].as_u64(), a["Reduction operation"].as_str()), (Some(100), Some("Sum")));
        // an unknown communicator: all-gather's output unknown, its input still read
        let (a, _) = args("allgather", Some(r#"{"NCCL communicator ID":8,"Message size [bytes]":100}"#));
        assert_eq!(
            (a["In msg nelems"].as_u64(), a.get("Out msg nelems"), a.get("Group size")),
            (Some(100), None, None)
        );
    }

    #[test]
    fn bad_payloads() {
        assert_eq!(args("allreduce", None).1, Sized::NoPayload);
        assert!(matches!(args("allreduce", Some("not json")).1, Sized::Bad(_)));
        assert!(matches!(args("allreduce", Some("[1]")).1, Sized::Bad(_)));
        assert!(matches!(args("allreduce", Some(r#"{"NCCL communicator ID":7}"#)).1, Sized::Bad(_)));
        let (a, r) = args("allreduce", Some(r#"{"Message size [bytes]":-5}"#));
        assert!(matches!(r, Sized::Bad(_)));
        assert!(a.get("In msg nelems").is_none());
        assert!(a["Size unknown"].as_str().unwrap().contains("not a byte count"));
        assert_eq!(collective("ncclCommInitRankConfig"), None);
    }
}
