//! A dump's fields, from the JSON value either form becomes. Versions 2.x add fields over
//! time (`is_p2p`, `thread_name`, `retired`, `comm_lib_version` …) and rename few: what is
//! absent stays `None`; an unknown field is ignored and named in a note; an entry without
//! the fields every version has is left out with a note saying which and where.

use serde_json::Value;
use strobe_model::flight_recorder::{FrDump, FrEntry, FrFrame, FrGroup, FrGroupStatus, FrState};

const TOP_KNOWN: &[&str] = &[
    "version",
    "pg_config",
    "pg_status",
    "entries",
    "comm_lib_version",
    "nccl_version",
    "nccl_comm_state",
    "comm_state",
    "rank",
];

const ENTRY_KNOWN: &[&str] = &[
    "record_id",
    "pg_id",
    "process_group",
    "collective_seq_id",
    "seq_id",
    "p2p_seq_id",
    "op_id",
    "profiling_name",
    "time_created_ns",
    "duration_ms",
    "input_sizes",
    "input_dtypes",
    "output_sizes",
    "output_dtypes",
    "state",
    "time_discovered_started_ns",
    "time_discovered_completed_ns",
    "retired",
    "timeout_ms",
    "is_p2p",
    "frames",
    "thread_name",
    "thread_id",
];

/// Highest major version whose layout is known.
const KNOWN_MAJOR: u32 = 2;

pub fn read(root: &Value) -> Result<FrDump, String> {
    let obj = root.as_object().ok_or("not a flight-recorder dump: the top level is not a dict")?;
    let version = match obj.get("version") {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => return Err("not a flight-recorder dump: no `version` field".into()),
    };
    let mut dump = FrDump { version, ..Default::default() };
    let major = dump.version.split('.').next().and_then(|m| m.trim().parse::<u32>().ok());
    if major != Some(KNOWN_MAJOR) {
        dump.notes.push(format!(
            "dump version {:?} is not a 2.x layout: read by the 2.x field names; check what is missing",
            dump.version
        ));
    }
    let as_rank = |v: &Value| match v {
        Value::Number(_) | Value::String(_) => int(v).and_then(|r| u32::try_from(r).ok()),
        _ => None,
    };
    match obj.get("rank").map(as_rank) {
        Some(Some(r)) => {
            dump.rank = r;
            dump.rank_from = "dump".into();
        }
        Some(None) => dump.notes.push("the dump's `rank` is not a rank number: the file name's is used".into()),
        None => {}
    }
    dump.comm_lib_version = obj.get("comm_lib_version").or(obj.get("nccl_version")).and_then(text);
    let unknown: Vec<&str> = obj.keys().map(String::as_str).filter(|k| !TOP_KNOWN.contains(k)).collect();
    if !unknown.is_empty() {
        dump.notes.push(format!("unknown top-level fields ignored: {}", unknown.join(", ")));
    }
    if let Some(cfg) = obj.get("pg_config") {
        read_groups(cfg, &mut dump);
    }
    if let Some(Value::Object(status)) = obj.get("pg_status") {
        for (id, s) in status {
            dump.group_status.push(FrGroupStatus {
                pg_id: id.clone(),
                last_enqueued: s.get("last_enqueued_collective").and_then(int),
                last_started: s.get("last_started_collective").and_then(int),
                last_completed: s.get("last_completed_collective").and_then(int),
            });
        }
    }
    match obj.get("entries") {
        // the JSON form leaves the key out when the buffer is empty
        None | Some(Value::Null) => {}
        Some(Value::Array(entries)) => {
            let mut unknown_fields: Vec<String> = Vec::new();
            let mut left_out = 0usize;
            for (i, e) in entries.iter().enumerate() {
                match read_entry(e, &mut unknown_fields) {
                    Ok(entry) => dump.entries.push(entry),
                    Err(what) => {
                        left_out += 1;
                        if left_out <= 5 {
                            dump.notes.push(format!("entry {i} left out: {what}"));
                        }
                    }
                }
            }
            if left_out > 5 {
                dump.notes.push(format!("{left_out} entries left out in all"));
            }
            if !unknown_fields.is_empty() {
                dump.notes.push(format!("unknown entry fields ignored: {}", unknown_fields.join(", ")));
            }
        }
        Some(_) => return Err("`entries` is not a list".into()),
    }
    Ok(dump)
}

fn read_groups(cfg: &Value, dump: &mut FrDump) {
    let Some(cfg) = cfg.as_object() else {
        dump.notes.push("`pg_config` is not a dict: process groups unknown".into());
        return;
    };
    for (key, g) in cfg {
        let name = g.get("name").and_then(text).unwrap_or_else(|| key.clone());
        let desc = g.get("desc").and_then(text).unwrap_or_default();
        let ranks = match g.get("ranks") {
            Some(Value::String(s)) => parse_rank_list(s),
            Some(Value::Array(a)) => a.iter().map(|r| int(r).and_then(|r| u32::try_from(r).ok())).collect(),
            _ => None,
        };
        let ranks = ranks.unwrap_or_else(|| {
            dump.notes.push(format!("group {name:?}: ranks {:?} not a list of ranks; left empty", g.get("ranks")));
            Vec::new()
        });
        dump.groups.push(FrGroup { name, desc, ranks });
    }
}

/// `"[0, 1, 2]"` (how the recorder writes a group's ranks).
fn parse_rank_list(s: &str) -> Option<Vec<u32>> {
    let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?;
    if inner.trim().is_empty() {
        return Some(Vec::new());
    }
    inner.split(',').map(|r| r.trim().parse::<u32>().ok()).collect()
}

fn read_entry(e: &Value, unknown: &mut Vec<String>) -> Result<FrEntry, String> {
    let o = e.as_object().ok_or("not a dict")?;
    for k in o.keys() {
        if !ENTRY_KNOWN.contains(&k.as_str()) && !unknown.contains(k) && unknown.len() < 20 {
            unknown.push(k.clone());
        }
    }
    let need_int = |k: &str| o.get(k).and_then(int).ok_or_else(|| format!("no integer `{k}`"));
    let (group, group_desc) = match o.get("process_group") {
        Some(Value::Array(a)) => {
            (a.first().and_then(text).unwrap_or_default(), a.get(1).and_then(text).unwrap_or_default())
        }
        Some(v) => (text(v).unwrap_or_default(), String::new()),
        None => return Err("no `process_group`".into()),
    };
    let profiling_name = o.get("profiling_name").and_then(text).ok_or("no `profiling_name`")?;
    let collective_seq_id =
        o.get("collective_seq_id").or(o.get("seq_id")).and_then(int).ok_or("no `collective_seq_id`")?;
    let state = match o.get("state").and_then(Value::as_str) {
        Some("completed") => FrState::Completed,
        Some("started") => FrState::Started,
        Some("scheduled") => FrState::Scheduled,
        other => return Err(format!("state {other:?} is none of scheduled, started, completed")),
    };
    // the JSON form writes 0 for a time not yet seen
    let time = |k: &str| o.get(k).and_then(int).filter(|&t| t != 0);
    let is_p2p = match o.get("is_p2p").and_then(Value::as_bool) {
        Some(b) => b,
        None => {
            let op = profiling_name.rsplit(':').next().unwrap_or("");
            op.starts_with("send") || op.starts_with("recv")
        }
    };
    Ok(FrEntry {
        record_id: need_int("record_id")?,
        pg_id: o.get("pg_id").and_then(int).unwrap_or(-1),
        group,
        group_desc,
        collective_seq_id,
        p2p_seq_id: o.get("p2p_seq_id").and_then(int).unwrap_or(0),
        op_id: o.get("op_id").and_then(int).unwrap_or(0),
        profiling_name,
        is_p2p,
        input_sizes: sizes(o.get("input_sizes")),
        input_dtypes: strings(o.get("input_dtypes")),
        output_sizes: sizes(o.get("output_sizes")),
        output_dtypes: strings(o.get("output_dtypes")),
        state,
        time_created_ns: o.get("time_created_ns").and_then(int).unwrap_or(0),
        time_started_ns: time("time_discovered_started_ns"),
        time_completed_ns: time("time_discovered_completed_ns"),
        duration_ms: o.get("duration_ms").and_then(Value::as_f64),
        timeout_ms: o.get("timeout_ms").and_then(int),
        retired: o.get("retired").and_then(Value::as_bool),
        thread_name: o.get("thread_name").and_then(text),
        thread_id: o.get("thread_id").and_then(text),
        frames: frames(o.get("frames")),
    })
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        Value::Bool(b) => Some(*b as i64),
        _ => None,
    }
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn sizes(v: Option<&Value>) -> Vec<Vec<i64>> {
    let Some(Value::Array(a)) = v else { return Vec::new() };
    a.iter()
        .map(|t| match t {
            Value::Array(dims) => dims.iter().map(|d| int(d).unwrap_or(-1)).collect(),
            _ => Vec::new(),
        })
        .collect()
}

fn strings(v: Option<&Value>) -> Vec<String> {
    let Some(Value::Array(a)) = v else { return Vec::new() };
    a.iter().map(|s| text(s).unwrap_or_default()).collect()
}

fn frames(v: Option<&Value>) -> Vec<FrFrame> {
    let Some(Value::Array(a)) = v else { return Vec::new() };
    a.iter()
        .filter_map(|f| {
            Some(FrFrame {
                name: f.get("name").and_then(text)?,
                filename: f.get("filename").and_then(text).unwrap_or_default(),
                line: f.get("line").and_then(int).unwrap_or(0),
            })
        })
        .collect()
}
