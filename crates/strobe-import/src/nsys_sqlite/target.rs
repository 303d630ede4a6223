//! The small tables read on the main connection: export metadata, target GPUs, session
//! start, enum tables, `StringIds`, thread and process names.

use super::schema::{int, text, Schema};
use super::{CUDA_DEVICE, GPU_INFO, SESSION_START, STRING_IDS};
use rusqlite::Connection;
use rustc_hash::FxHashMap;
use serde_json::{json, Map, Value};
use strobe_model::DeviceInfo;

/// `StringIds` (id → text); `StringTable` (`_id_`, `value`) in the oldest layouts.
pub fn string_ids(conn: &Connection, schema: &Schema) -> rusqlite::Result<FxHashMap<i64, Box<str>>> {
    let mut out = FxHashMap::default();
    if !schema.has(STRING_IDS) {
        return Ok(out);
    }
    let mut st = conn.prepare(&schema.select(STRING_IDS, &["id|_id_", "value"], ""))?;
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
/// integrated and render-only adapters on Windows; those are counted in a note, not listed).
/// A GPU's id is its `id` (2.9+), `deviceId` (older) or `cuDevice`; where
/// `TARGET_INFO_CUDA_DEVICE` maps that nsys GPU id to a CUDA device id (the `deviceId` of the
/// activity tables), the CUDA id is used, so devices and GPU lanes agree.
pub fn devices(conn: &Connection, schema: &Schema, notes: &mut Vec<String>) -> rusqlite::Result<Vec<DeviceInfo>> {
    const T: &str = GPU_INFO;
    let mut out: Vec<DeviceInfo> = Vec::new();
    if !schema.has(T) {
        return Ok(out);
    }
    let Some(id_col) = schema.col(T, "id|deviceId|cuDevice") else {
        notes.push(format!("{T} has no id, deviceId or cuDevice column: its GPUs are not listed as devices"));
        return Ok(out);
    };
    let cuda_ids = if id_col == "id" { cuda_device_ids(conn, schema, notes)? } else { FxHashMap::default() };
    let cols = [
        id_col,
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
    let mut st = conn.prepare(&schema.select(T, &cols, &format!("ORDER BY {}", super::schema::quote(id_col))))?;
    let mut rows = st.query([])?;
    let (mut non_cuda, mut clashes) = (0u64, 0u64);
    let mut gpu_ids: Vec<i64> = Vec::new();
    while let Some(r) = rows.next()? {
        let Some(gpu_id) = int(r, 0) else { continue };
        // A GPU may be listed more than once (one row per VM or context): the first row counts.
        if gpu_ids.contains(&gpu_id) {
            continue;
        }
        gpu_ids.push(gpu_id);
        let major = int(r, 4).unwrap_or(0);
        let sm = int(r, 3).unwrap_or(0);
        if major <= 0 && sm <= 0 && schema.has_col(T, "computeMajor") {
            non_cuda += 1;
            continue;
        }
        let id = cuda_ids.get(&gpu_id).copied().unwrap_or(gpu_id);
        if out.iter().any(|d| d.id == id) {
            clashes += 1;
            continue;
        }
        let mut extra = Map::new();
        if id != gpu_id {
            extra.insert("nsys_gpu_id".to_string(), json!(gpu_id));
        }
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
    out.sort_by_key(|d| d.id);
    if non_cuda > 0 {
        notes.push(format!("{T}: {non_cuda} adapter(s) without CUDA compute capability not listed as devices"));
    }
    if clashes > 0 {
        notes.push(format!("{T}: {clashes} GPU(s) share a CUDA device id with another: listed once"));
    }
    Ok(out)
}

/// `TARGET_INFO_CUDA_DEVICE` (3.x): nsys GPU id → CUDA device id, for GPUs every process
/// saw under the same CUDA id (a GPU seen under several is left under its nsys id, noted).
fn cuda_device_ids(
    conn: &Connection,
    schema: &Schema,
    notes: &mut Vec<String>,
) -> rusqlite::Result<FxHashMap<i64, i64>> {
    let mut seen: FxHashMap<i64, Vec<i64>> = FxHashMap::default();
    if !schema.has(CUDA_DEVICE) {
        return Ok(FxHashMap::default());
    }
    let missing = schema.missing(CUDA_DEVICE, &["gpuId", "cudaId"]);
    if !missing.is_empty() {
        notes.push(format!("{CUDA_DEVICE} has no {} column: GPUs keep their nsys ids", missing.join(", ")));
        return Ok(FxHashMap::default());
    }
    let mut st = conn.prepare(&schema.select(CUDA_DEVICE, &["gpuId", "cudaId"], ""))?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        if let (Some(g), Some(c)) = (int(r, 0), int(r, 1)) {
            let v = seen.entry(g).or_default();
            if !v.contains(&c) {
                v.push(c);
            }
        }
    }
    let ambiguous = seen.values().filter(|v| v.len() > 1).count();
    if ambiguous > 0 {
        notes.push(format!(
            "{CUDA_DEVICE}: {ambiguous} GPU(s) had different CUDA device ids in different processes: listed under their nsys ids"
        ));
    }
    Ok(seen.into_iter().filter(|(_, v)| v.len() == 1).map(|(g, v)| (g, v[0])).collect())
}

/// `TARGET_INFO_SESSION_START_TIME.utcEpochNs`: wall clock of the session's time zero.
pub fn session_start(conn: &Connection, schema: &Schema, notes: &mut Vec<String>) -> rusqlite::Result<Option<i64>> {
    const T: &str = SESSION_START;
    if !schema.has(T) {
        return Ok(None);
    }
    if !schema.has_col(T, "utcEpochNs") {
        notes.push(format!("{T} has no utcEpochNs column: times are shown from the session start only"));
        return Ok(None);
    }
    let mut st = conn.prepare(&schema.select(T, &["utcEpochNs"], "LIMIT 1"))?;
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
