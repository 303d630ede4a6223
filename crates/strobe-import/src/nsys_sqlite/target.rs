//! The small tables read on the main connection: export metadata, target GPUs, session
//! start, enum tables, `StringIds`, thread and process names.

use super::schema::{int, text, Schema};
use rusqlite::Connection;
use rustc_hash::FxHashMap;
use serde_json::{json, Map, Value};
use strobe_model::DeviceInfo;

/// `StringIds` (id → text).
pub fn string_ids(conn: &Connection) -> rusqlite::Result<FxHashMap<i64, Box<str>>> {
    let mut out = FxHashMap::default();
    let mut st = conn.prepare("SELECT id, value FROM StringIds")?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        if let Some(id) = int(r, 0) {
            out.insert(id, text(r, 1).unwrap_or_default().into_boxed_str());
        }
    }
    Ok(out)
}

/// `META_DATA_EXPORT` (new) or `EXPORT_META_DATA` (old): name → value, text decoded lossily
/// (old Windows exports hold non-UTF-8 bytes, e.g. in `EXPORT_USER`).
pub fn export_meta(conn: &Connection, schema: &Schema) -> rusqlite::Result<Map<String, Value>> {
    let mut m = Map::new();
    for t in ["META_DATA_EXPORT", "EXPORT_META_DATA"] {
        if !schema.has(t) {
            continue;
        }
        let mut st = conn.prepare(&schema.select(t, &["name", "value"], ""))?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            if let Some(k) = text(r, 0) {
                m.insert(k, Value::String(text(r, 1).unwrap_or_default()));
            }
        }
    }
    Ok(m)
}

/// `TARGET_INFO_GPU` → devices with CUDA compute capability (the table also lists
/// integrated and render-only adapters on Windows; those are counted, not listed).
pub fn devices(conn: &Connection, schema: &Schema) -> rusqlite::Result<(Vec<DeviceInfo>, u64)> {
    const T: &str = "TARGET_INFO_GPU";
    let mut out: Vec<DeviceInfo> = Vec::new();
    let mut non_cuda = 0;
    if !schema.has(T) {
        return Ok((out, 0));
    }
    let cols = [
        "id",
        "name",
        "totalMemory",
        "smCount",
        "computeMajor",
        "computeMinor",
        "memoryBandwidth",
        "clockRate",
        "busLocation",
        "uuid",
        "chipName",
        "l2CacheSize",
        "cuDevice",
    ];
    let mut st = conn.prepare(&schema.select(T, &cols, "ORDER BY id"))?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let Some(id) = int(r, 0) else { continue };
        let major = int(r, 4).unwrap_or(0);
        let sm = int(r, 3).unwrap_or(0);
        if major <= 0 && sm <= 0 && schema.has_col(T, "computeMajor") {
            non_cuda += 1;
            continue;
        }
        if out.iter().any(|d| d.id == id) {
            continue;
        }
        let mut extra = Map::new();
        let mut put_int = |k: &str, i: usize| {
            if let Some(v) = int(r, i).filter(|v| *v != 0) {
                extra.insert(k.to_string(), json!(v));
            }
        };
        put_int("memory_bandwidth_bytes_per_s", 6);
        put_int("clock_rate_hz", 7);
        put_int("l2_cache_bytes", 11);
        put_int("cuda_device", 12);
        for (k, i) in [("bus_location", 8), ("uuid", 9), ("chip", 10)] {
            if let Some(v) = text(r, i).filter(|s| !s.is_empty()) {
                extra.insert(k.to_string(), Value::String(v));
            }
        }
        out.push(DeviceInfo {
            id,
            name: text(r, 1).unwrap_or_default(),
            total_memory_bytes: int(r, 2).filter(|v| *v > 0).map(|v| v as u64),
            sm_count: (sm > 0).then_some(sm as u32),
            compute_capability: (major > 0).then(|| format!("{major}.{}", int(r, 5).unwrap_or(0))),
            extra,
        });
    }
    Ok((out, non_cuda))
}

/// `TARGET_INFO_SESSION_START_TIME.utcEpochNs`: wall clock of the session's time zero.
pub fn session_start(conn: &Connection, schema: &Schema) -> rusqlite::Result<Option<i64>> {
    const T: &str = "TARGET_INFO_SESSION_START_TIME";
    if !schema.has_col(T, "utcEpochNs") {
        return Ok(None);
    }
    let mut st = conn.prepare(&format!("SELECT utcEpochNs FROM {T} LIMIT 1"))?;
    let mut rows = st.query([])?;
    Ok(match rows.next()? {
        Some(r) => int(r, 0),
        None => None,
    })
}

/// An `ENUM_*` table as id → (name, label), or empty when the export has none (schema 2.9).
pub fn enum_table(conn: &Connection, schema: &Schema, t: &str) -> rusqlite::Result<FxHashMap<i64, (String, String)>> {
    let mut out = FxHashMap::default();
    if !schema.has(t) {
        return Ok(out);
    }
    let mut st = conn.prepare(&schema.select(t, &["id", "name", "label"], ""))?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        if let Some(id) = int(r, 0) {
            out.insert(id, (text(r, 1).unwrap_or_default(), text(r, 2).unwrap_or_default()));
        }
    }
    Ok(out)
}

/// `ThreadNames` → (pid, tid) → name (the highest priority wins), names through `StringIds`.
pub fn thread_names(
    conn: &Connection,
    schema: &Schema,
    strings: &FxHashMap<i64, Box<str>>,
) -> rusqlite::Result<FxHashMap<(u32, u32), String>> {
    let mut out = FxHashMap::default();
    const T: &str = "ThreadNames";
    if !schema.has(T) {
        return Ok(out);
    }
    let order = if schema.has_col(T, "priority") { "ORDER BY priority" } else { "" };
    let mut st = conn.prepare(&schema.select(T, &["globalTid", "nameId"], order))?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let (Some(g), Some(n)) = (int(r, 0), int(r, 1)) else { continue };
        if let Some(s) = strings.get(&n) {
            out.insert(super::schema::split_global(g), s.to_string());
        }
    }
    Ok(out)
}

/// `PROCESSES` → pid → name.
pub fn process_names(conn: &Connection, schema: &Schema) -> rusqlite::Result<FxHashMap<u32, String>> {
    let mut out = FxHashMap::default();
    const T: &str = "PROCESSES";
    if !schema.has(T) {
        return Ok(out);
    }
    let mut st = conn.prepare(&schema.select(T, &["globalPid", "pid", "name"], ""))?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let pid = match (int(r, 1), int(r, 0)) {
            (Some(p), _) => p as u32,
            (None, Some(g)) => super::schema::split_global(g).0,
            _ => continue,
        };
        if let Some(n) = text(r, 2).filter(|s| !s.is_empty()) {
            out.insert(pid, n);
        }
    }
    Ok(out)
}
