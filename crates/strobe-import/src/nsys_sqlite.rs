//! Nsight Systems SQLite exports (schema 2.9 through 3.2x) → lanes, spans, flows, counters.
//!
//! - `CUPTI_ACTIVITY_KIND_KERNEL`, `_MEMCPY`, `_MEMSET` → GPU stream lanes (memcpy/memset also
//!   on copy-engine lanes), named and argued as Kineto does (`Memcpy HtoD (Pinned -> Device)`,
//!   `grid`, `block`, `registers per thread`, `shared memory`, `memory bandwidth (GB/s)`).
//! - `CUPTI_ACTIVITY_KIND_RUNTIME` (runtime and driver API) and `_SYNCHRONIZATION` → CPU thread
//!   lanes (`globalTid` → pid, tid); launches → GPU work become flows by correlation id, made
//!   unique per process (`pid << 32 | correlationId`) since nsys numbers them per process.
//! - `NVTX_EVENTS` → NVTX lanes per thread: push/pop and start/end ranges, marks as instants;
//!   domains as an arg; ranges never closed kept with `UNCLOSED`.
//! - `OSRT_API` → CPU thread lanes (`OsRuntime`).
//! - `TARGET_INFO_GPU` → devices; `TARGET_INFO_SESSION_START_TIME` → `base_time_ns`;
//!   `CUDA_GPU_MEMORY_USAGE_EVENTS` → a memory counter per process, device and memory kind.
//!
//! Each activity table is read on its own thread through its own read-only connection and
//! streamed in bounded batches; the calling thread turns rows into spans table by table, in
//! a fixed order, so the store is the same on every run.
//!
//! Schema drift (docs/nsys.md has the table): tables are found by name, under `_V<n>`
//! variants or old names (`StringTable`) too, and columns by name (`PRAGMA table_info`),
//! with alternatives (`globalPid|globalTid`, `id|deviceId`); what is absent is read as NULL
//! and noted in the load summary. Only an export with nothing to show is an error.

mod diagnostics;
mod emit_nvtx;
mod gpu_metrics;
mod graph_nodes;
mod nccl_nvtx;
mod processes;
mod rep;
mod rows;
mod schema;
mod target;

pub use processes::{cpu_only_processes, gpu_processes, GpuProcess};
pub use rep::export_rep;

use crate::{ImportError, Progress};
use rows::*;
use rustc_hash::{FxHashMap, FxHashSet};
use schema::{NameRef, Schema, Wanted};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::Ordering;
use strobe_model::{flags, CopyDir, IdKey, LaneKind, LoadSummary, SourceFormat, SpanKind, TraceMeta};

/// Every SQLite database opens with this (`detect` sniffs it).
pub const MAGIC: &[u8] = b"SQLite format 3\0";
use strobe_store::timing::Phase;
use strobe_store::{SpanInput, StoreBuilder};

const STRING_IDS: &str = "StringIds";
const GPU_INFO: &str = "TARGET_INFO_GPU";
const CUDA_DEVICE: &str = "TARGET_INFO_CUDA_DEVICE";
const SESSION_START: &str = "TARGET_INFO_SESSION_START_TIME";
const ENUMS: [&str; 3] = ["ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND", "ENUM_CUPTI_SYNC_TYPE"];
/// The newest export schema this importer was tested on (docs/nsys.md has the table).
const NEWEST_TESTED: (u32, u32) = (3, 20);

/// Tables holding rows shown on the timeline, in the order they are read.
const ACTIVITY: [&str; 8] = [KERNEL, MEMCPY, MEMSET, RUNTIME, SYNC, NVTX, OSRT, MEM_USAGE];

const fn w(name: &'static str) -> Wanted {
    Wanted { name, aliases: &[] }
}

pub(crate) const WANTED: &[Wanted] = &[
    w(KERNEL),
    w(MEMCPY),
    w(MEMSET),
    w(RUNTIME),
    w(SYNC),
    w(NVTX),
    w(OSRT),
    w(MEM_USAGE),
    // nvprof-era and the earliest nsys exports named the string table `StringTable`.
    Wanted { name: STRING_IDS, aliases: &["StringTable"] },
    w("ThreadNames"),
    w("PROCESSES"),
    w(GPU_INFO),
    w(CUDA_DEVICE),
    w(SESSION_START),
    w("META_DATA_EXPORT"),
    w("EXPORT_META_DATA"),
    w(ENUMS[0]),
    w(ENUMS[1]),
    w(ENUMS[2]),
    w(diagnostics::TABLE),
    w(diagnostics::SEVERITY),
    w(gpu_metrics::TABLE),
    w(gpu_metrics::NAMES),
];

/// Imports the export at `path`.
pub fn import(path: &Path, b: &mut StoreBuilder, progress: &Progress) -> Result<TraceMeta, ImportError> {
    import_as(path, path, b, progress)
}

/// Imports only process `pid` of the export at `path` (one rank of a report that holds
/// several: `processes::gpu_processes`): rows of other processes are left out, and
/// `meta.extra["rank_pid"]` says which process this is.
pub fn import_process(
    path: &Path,
    pid: u32,
    b: &mut StoreBuilder,
    progress: &Progress,
) -> Result<TraceMeta, ImportError> {
    let mut out = import_processes(path, &[pid], vec![b], progress)?;
    out.pop().unwrap_or_else(|| Err(ImportError::bad(path, "no process imported")))
}

/// Imports processes `pids` of the export at `path`, process `pids[k]` into `builders[k]`,
/// as `import_process` does each, in one pass: every table is read once and each row goes
/// to its own process's builder (reading a table per process decoded every row of the file
/// once per rank). The outer error is one that stops every process (the file cannot be
/// read); each process has its own result besides.
pub fn import_processes(
    path: &Path,
    pids: &[u32],
    builders: Vec<&mut StoreBuilder>,
    progress: &Progress,
) -> Result<Vec<Result<TraceMeta, ImportError>>, ImportError> {
    if pids.len() != builders.len() {
        return Err(ImportError::bad(path, "one builder per process is needed"));
    }
    let out = import_group(path, path, Some(pids), builders, progress)?;
    Ok(out
        .into_iter()
        .zip(pids)
        .map(|(r, &pid)| {
            let mut meta = r?;
            meta.extra.insert("rank_pid".into(), serde_json::Value::from(pid));
            meta.load.notes.push(format!("process {pid} only: the rows of the report's other processes are left out"));
            Ok(meta)
        })
        .collect())
}

/// Imports the export at `path` into memory and opens the result: the whole importer on one
/// file, with no cache and nothing written (what a fuzz target calls on a mutated file).
pub fn import_to_memory(path: &Path) -> Result<strobe_store::Store, ImportError> {
    let mut b =
        StoreBuilder::new(strobe_store::Output::memory_with_key([0; 4])).map_err(|e| ImportError::io(path, e))?;
    let meta = import(path, &mut b, &Progress::default())?;
    let built = b.finish(&meta).map_err(|e| ImportError::io(path, e))?;
    strobe_store::cache::open_built(built).map_err(|e| ImportError::bad(path, e.to_string()))
}

/// Imports the export at `path`, recording `source` as the trace's source (the `.nsys-rep`
/// the export was made from, where there is one).
pub fn import_as(
    path: &Path,
    source: &Path,
    b: &mut StoreBuilder,
    progress: &Progress,
) -> Result<TraceMeta, ImportError> {
    let mut out = import_group(path, source, None, vec![b], progress)?;
    out.pop().unwrap_or_else(|| Err(ImportError::bad(path, "nothing imported")))
}

/// What every process of one import shares: read once from the export's small tables.
struct Shared {
    meta: TraceMeta,
    notes: Vec<String>,
    strings: FxHashMap<i64, Box<str>>,
    enums: [FxHashMap<i64, (String, String)>; 3],
    nvtx_domains: FxHashMap<i64, String>,
    nccl_comm_sizes: FxHashMap<String, u64>,
    corr_pid: bool,
    usable: Vec<&'static str>,
}

/// The import proper: every row (`pids` None) into `builders[0]`, or the rows of process
/// `pids[k]` into `builders[k]`. One reader thread per activity table streams its rows,
/// each to its process's channel; one thread per builder turns them into spans.
fn import_group(
    path: &Path,
    source: &Path,
    pids: Option<&[u32]>,
    mut builders: Vec<&mut StoreBuilder>,
    progress: &Progress,
) -> Result<Vec<Result<TraceMeta, ImportError>>, ImportError> {
    let sql_err =
        |e: rusqlite::Error| ImportError::bad(path, format!("cannot read it as an Nsight Systems SQLite export: {e}"));
    if let Ok(md) = std::fs::metadata(path) {
        progress.bytes_total.store(md.len(), Ordering::Relaxed);
    }
    let _t_all = Phase::start("nsys import (total)");
    // an export holds ~48 bytes a row, the store's columns ~94: compressed, the cache is
    // smaller than the export (`strobe_store::codec`). The build holds more still (staged
    // rows, columns, links: 2.4× the export on the heap): its big arrays go to file pages,
    // so that an export opens in less than half its size of RAM (+12–15 % to the first
    // answer; `STROBE_SCRATCH=heap` for the heap)
    for b in builders.iter_mut() {
        b.compress_sections();
        b.arrays_in_files();
    }
    let t = Phase::start("nsys: open, schema, targets");
    let conn = schema::open(path).map_err(sql_err)?;
    let schema = Schema::probe(&conn, WANTED).map_err(sql_err)?;
    let mut notes: Vec<String> = Vec::new();
    let usable = check_schema(path, &schema, &mut notes)?;
    let shown = |t: &str| usable.contains(&t);

    let mut meta = TraceMeta::new(SourceFormat::Nsys, source.to_string_lossy());
    let export = target::export_meta(&conn, &schema).map_err(sql_err)?;
    for (k, key) in [("EXPORT_PRODUCT_VERSION", "nsys_version"), ("EXPORT_SCHEMA_VERSION", "nsys_schema_version")] {
        if let Some(v) = export.get(k) {
            meta.extra.insert(key.into(), v.clone());
        }
    }
    version_notes(&export, &mut notes);
    if !export.is_empty() {
        meta.extra.insert("nsys_export_meta".into(), serde_json::Value::Object(export));
    }
    meta.devices = target::devices(&conn, &schema, &mut notes).map_err(sql_err)?;
    meta.base_time_ns = target::session_start(&conn, &schema, &mut notes).map_err(sql_err)?;

    drop(t);
    // Correlation ids are per process; key them by pid unless a table lacks its pid column.
    let corr_pid =
        [KERNEL, MEMCPY, MEMSET, SYNC].iter().all(|t| !shown(t) || schema.col(t, "globalPid|globalTid").is_some())
            && (!shown(RUNTIME) || schema.col(RUNTIME, "globalTid|globalPid").is_some());
    let ways = builders.len();

    std::thread::scope(|s| -> Result<Vec<Result<TraceMeta, ImportError>>, ImportError> {
        // Readers start now and fill their channels while the small tables load here: one
        // per table, sending each row to its process's receiver.
        fn reader<'s, R: rows::FromCells>(
            s: &'s std::thread::Scope<'s, '_>,
            path: &'s Path,
            read: Option<TableRead>,
            ways: usize,
        ) -> Vec<Option<Rows<R>>> {
            let Some(read) = read else { return (0..ways).map(|_| None).collect() };
            spawn_readers(s, path, read, ways).into_iter().map(Some).collect()
        }
        let plan = |t: &'static str| shown(t).then(|| TableRead::new(&schema, t, &cols(t), pids));
        let sync_rx = reader::<SyncRow>(s, path, plan(SYNC), ways);
        let kernel_rx = reader::<KernelRow>(s, path, plan(KERNEL), ways);
        let memcpy_rx = reader::<MemcpyRow>(s, path, plan(MEMCPY), ways);
        let memset_rx = reader::<MemsetRow>(s, path, plan(MEMSET), ways);
        let runtime_rx = reader::<RuntimeRow>(s, path, plan(RUNTIME), ways);
        let nvtx_rx = reader::<NvtxRow>(s, path, plan(NVTX), ways);
        let osrt_rx = reader::<OsrtRow>(s, path, plan(OSRT), ways);

        let t_small = Phase::start("nsys: strings, enums");
        // Room for every span up front: no regrowth copies of the builder's span list. The
        // rowids are only an estimate, and a damaged file's can be anything: no row takes
        // less than 8 bytes of the file (cell pointer, size, rowid, record header, a value).
        // Several processes share the rows, unevenly, so each is given room for all of them:
        // room is address space, and pages past the last span pushed are never touched,
        // where a process outgrowing an even share copied its spans into fresh pages.
        let estimate: u64 = ACTIVITY[..7].iter().filter(|t| shown(t)).map(|t| schema.row_estimate(&conn, t)).sum();
        let file_len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        for b in builders.iter_mut() {
            b.reserve_spans(estimate.min(file_len / 8).min(1 << 28) as usize);
        }
        let strings = target::string_ids(&conn, &schema).map_err(sql_err)?;
        let enums = [
            target::enum_table(&conn, &schema, ENUMS[0]).map_err(sql_err)?,
            target::enum_table(&conn, &schema, ENUMS[1]).map_err(sql_err)?,
            target::enum_table(&conn, &schema, ENUMS[2]).map_err(sql_err)?,
        ];
        let nvtx_domains =
            if shown(NVTX) { nvtx_domains(&conn, &schema, &strings).map_err(sql_err)? } else { FxHashMap::default() };
        let nccl_comm_sizes =
            if shown(NVTX) { nccl_comm_sizes(&conn, &schema).map_err(sql_err)? } else { FxHashMap::default() };
        let mut notes = notes;
        diagnostics::notes(&conn, &schema, &strings, &mut notes);
        drop(t_small);
        drop(conn);
        let shared =
            Shared { meta, notes, strings, enums, nvtx_domains, nccl_comm_sizes, corr_pid, usable: usable.clone() };

        // one converter per process; the first on this thread
        let mut rxs = (sync_rx, kernel_rx, memcpy_rx, memset_rx, runtime_rx, nvtx_rx, osrt_rx);
        let mut jobs = Vec::with_capacity(ways);
        for (k, b) in builders.into_iter().enumerate() {
            let rx = Receivers {
                sync: rxs.0[k].take(),
                kernel: rxs.1[k].take(),
                memcpy: rxs.2[k].take(),
                memset: rxs.3[k].take(),
                runtime: rxs.4[k].take(),
                nvtx: rxs.5[k].take(),
                osrt: rxs.6[k].take(),
            };
            jobs.push((pids.map(|p| p[k]), b, rx));
        }
        let (shared, schema) = (&shared, &schema);
        // a scope of their own: they borrow what was read here, which the readers' scope
        // outlives
        Ok(std::thread::scope(|c| {
            let mut jobs = jobs.into_iter();
            let first = jobs.next();
            let others: Vec<_> =
                jobs.map(|(pid, b, rx)| c.spawn(move || convert(path, shared, schema, pid, b, rx, progress))).collect();
            let mut out = Vec::with_capacity(ways);
            if let Some((pid, b, rx)) = first {
                out.push(convert(path, shared, schema, pid, b, rx, progress));
            }
            for h in others {
                out.push(h.join().unwrap_or_else(|_| Err(ImportError::bad(path, "nsys converter thread panicked"))));
            }
            out
        }))
    })
}

/// One process's receivers, a table each (None: the table is not read).
struct Receivers {
    sync: Option<Rows<SyncRow>>,
    kernel: Option<Rows<KernelRow>>,
    memcpy: Option<Rows<MemcpyRow>>,
    memset: Option<Rows<MemsetRow>>,
    runtime: Option<Rows<RuntimeRow>>,
    nvtx: Option<Rows<NvtxRow>>,
    osrt: Option<Rows<OsrtRow>>,
}

/// Turns one process's rows (all rows when `only_pid` is None) into spans on `b`, table by
/// table in a fixed order, so the store is the same on every run.
fn convert(
    path: &Path,
    shared: &Shared,
    schema: &Schema,
    only_pid: Option<u32>,
    b: &mut StoreBuilder,
    rx: Receivers,
    progress: &Progress,
) -> Result<TraceMeta, ImportError> {
    let sql_err =
        |e: rusqlite::Error| ImportError::bad(path, format!("cannot read it as an Nsight Systems SQLite export: {e}"));
    let shown = |t: &str| shared.usable.contains(&t);
    let mut cx = Ctx::new(path, b, progress, &shared.strings, shared.corr_pid);
    cx.only_pid = only_pid;
    cx.memcpy_enum = shared.enums[0].clone();
    cx.mem_kind_enum = shared.enums[1].clone();
    cx.sync_enum = shared.enums[2].clone();
    cx.nvtx_domains = shared.nvtx_domains.clone();
    cx.nccl_comm_sizes = shared.nccl_comm_sizes.clone();

    // Synchronization rows carry no thread: they go on the thread of the runtime call
    // with their correlation id, so they are held (compactly) until the runtime is read.
    let t = Phase::start("nsys: syncs");
    let mut syncs: Vec<SyncRow> = Vec::new();
    cx.drain(SYNC, rx.sync, |cx, r: SyncRow| {
        cx.sync_wanted.insert(cx.corr_key(r.c.pid, r.c.corr), u32::MAX);
        syncs.push(r);
        Ok(())
    })?;
    drop(t);
    let t = Phase::start("nsys: kernels (read + add)");
    cx.drain(KERNEL, rx.kernel, Ctx::kernel)?;
    drop(t);
    let t = Phase::start("nsys: memcpy, memset");
    cx.drain(MEMCPY, rx.memcpy, Ctx::memcpy)?;
    cx.drain(MEMSET, rx.memset, Ctx::memset)?;
    drop(t);
    let t = Phase::start("nsys: runtime calls, syncs");
    cx.drain(RUNTIME, rx.runtime, Ctx::runtime)?;
    for r in syncs {
        cx.sync(r).map_err(|e| ImportError::io(path, e))?;
    }
    drop(t);
    let t = Phase::start("nsys: NVTX, OS runtime");
    cx.drain(NVTX, rx.nvtx, Ctx::nvtx)?;
    cx.drain(OSRT, rx.osrt, Ctx::osrt)?;
    cx.finish_unclosed().map_err(|e| ImportError::io(path, e))?;
    drop(t);
    let t = Phase::start("nsys: memory usage, names");
    // a connection of this converter's own: a connection is not shared between threads
    let conn = schema::open(path).map_err(sql_err)?;
    if shown(MEM_USAGE) {
        cx.memory_usage(&conn, schema).map_err(sql_err)?;
    }
    cx.gpu_metrics(&conn, schema, &shared.meta.devices);
    cx.graph_node_events(&conn)?;
    cx.names(&conn, schema).map_err(sql_err)?;
    drop(t);

    let mut meta = shared.meta.clone();
    let mut load = std::mem::take(&mut cx.load);
    load.notes.extend(shared.notes.iter().cloned());
    table_notes(schema, &shared.usable, &load.by_category.clone(), &mut load);
    if cx.emit_nvtx_ops > 0 {
        load.notes.push(format!(
            "{} NVTX ranges are PyTorch ops (emit_nvtx): shown as CPU ops on their threads, with their recorded input shapes",
            cx.emit_nvtx_ops
        ));
    }
    if cx.emit_nvtx_bad > 0 {
        load.notes.push(format!(
            "{} op ranges (emit_nvtx) had text that could not all be read: what could not be read (shapes or ids) is left out, the op kept; first: {}",
            cx.emit_nvtx_bad, cx.emit_nvtx_first_problem
        ));
    }
    nccl_notes(&cx, &mut load.notes);
    if cx.no_end > 0 {
        load.notes.push(format!("{} GPU or API rows had no end time: kept with zero duration", cx.no_end));
    }
    let bad: Vec<String> = load
        .skipped
        .iter()
        .filter(|(k, _)| k.ends_with(BAD_START) || k.ends_with(END_BEFORE_START))
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    if !bad.is_empty() {
        load.notes.push(format!("rows skipped for unusable times: {}", bad.join("; ")));
    }
    meta.load = load;
    progress.bytes_done.store(progress.bytes_total.load(Ordering::Relaxed), Ordering::Relaxed);
    Ok(meta)
}

/// Refuses files that are not nsys exports, or that hold nothing to show; returns the
/// activity tables that can be read (a table without its `start`/`end` columns cannot:
/// it is noted and left out).
fn check_schema(path: &Path, schema: &Schema, notes: &mut Vec<String>) -> Result<Vec<&'static str>, ImportError> {
    let their_tables = || {
        let some: Vec<&str> = schema.all_tables.iter().take(8).map(|s| s.as_str()).collect();
        let more = if schema.all_tables.len() > 8 { ", …" } else { "" };
        format!("[{}{more}]", some.join(", "))
    };
    if !WANTED.iter().any(|t| schema.has(t.name)) {
        return Err(ImportError::bad(
            path,
            format!(
                "an SQLite database, but not an Nsight Systems export: it has none of the tables nsys writes \
                 (StringIds, CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS, TARGET_INFO_*, …); its tables: {}",
                their_tables()
            ),
        ));
    }
    let mut usable = Vec::new();
    for t in ACTIVITY {
        if !schema.has(t) {
            continue;
        }
        let need: &[&str] = if t == MEM_USAGE { &["start"] } else { &["start", "end"] };
        let lacking = schema.missing(t, need);
        if lacking.is_empty() {
            usable.push(t);
        } else {
            notes.push(format!(
                "{} has no `{}` column: its rows are not shown (not a known nsys layout)",
                schema.name(t),
                lacking.join("`, `")
            ));
        }
    }
    if usable.is_empty() {
        return Err(ImportError::bad(
            path,
            format!(
                "an Nsight Systems export with nothing to show: none of {} is present{}; \
                 re-export with `nsys export --type sqlite` from a report that traced CUDA, NVTX or OS runtime. Its tables: {}",
                ACTIVITY.join(", "),
                if notes.is_empty() { String::new() } else { format!(" with its times ({})", notes.join("; ")) },
                their_tables()
            ),
        ));
    }
    Ok(usable)
}

/// Notes on the export's version: which it is, or that it is unknown or newer than tested.
fn version_notes(export: &serde_json::Map<String, serde_json::Value>, notes: &mut Vec<String>) {
    let get = |k: &str| export.get(k).and_then(|v| v.as_str());
    let Some(schema) = get("EXPORT_SCHEMA_VERSION") else {
        notes.push(
            "no META_DATA_EXPORT / EXPORT_META_DATA table (or no EXPORT_SCHEMA_VERSION in it): \
             the export's nsys version is unknown; tables and columns were matched by name"
                .to_string(),
        );
        return;
    };
    notes.push(format!(
        "Nsight Systems {} export, schema {schema}",
        get("EXPORT_PRODUCT_VERSION").unwrap_or("(version unknown)")
    ));
    let mut parts = schema.split('.').map(|p| p.trim().parse::<u32>().ok());
    if let (Some(Some(major)), Some(Some(minor))) = (parts.next(), parts.next()) {
        if (major, minor) > NEWEST_TESTED {
            notes.push(format!(
                "schema {schema} is newer than the newest tested ({}.{}): tables and columns were matched by name",
                NEWEST_TESTED.0, NEWEST_TESTED.1
            ));
        }
    }
}

/// Notes on what the export lacks: absent tables, tables under other names, columns read
/// as empty because this schema has none of them.
fn table_notes(schema: &Schema, usable: &[&str], counts: &BTreeMap<String, u64>, load: &mut LoadSummary) {
    if !schema.has(KERNEL) {
        load.notes.push(format!("no {KERNEL} table: CPU-only capture (no GPU kernels were traced)"));
    } else if usable.contains(&KERNEL) && counts.get(KERNEL).copied().unwrap_or(0) == 0 {
        load.notes.push(format!("{KERNEL} is empty: no GPU kernels were captured"));
    }
    let absent: Vec<&str> =
        [MEMCPY, MEMSET, RUNTIME, SYNC, NVTX, OSRT, MEM_USAGE, "ThreadNames", GPU_INFO, SESSION_START]
            .into_iter()
            .filter(|t| !schema.has(t))
            .collect();
    if !absent.is_empty() {
        load.notes.push(format!("tables absent (nothing of that kind was captured): {}", absent.join(", ")));
    }
    for (canonical, found) in schema.renamed() {
        load.notes.push(format!("{canonical} read from table {found}"));
    }
    for &t in usable {
        let missing = schema.missing(t, &cols(t));
        if !missing.is_empty() {
            load.notes.push(format!("{t} has no column {}: read as empty", missing.join(", ")));
        }
    }
    for (t, names) in NAME_COLS {
        if usable.contains(&t) && !names.iter().any(|c| schema.has_col(t, c)) {
            load.notes.push(format!("{t} has none of the name columns {}: its rows are unnamed", names.join(", ")));
        }
    }
    let names_by_id = usable.iter().any(|t| [KERNEL, RUNTIME, OSRT, NVTX].contains(t));
    if !schema.has(STRING_IDS) && names_by_id {
        load.notes.push(format!(
            "no {STRING_IDS} table: names stored as string ids show as <string N> (the export is incomplete; re-run `nsys export --type sqlite`)"
        ));
    }
    let enum_users = usable.iter().any(|t| [MEMCPY, MEMSET, SYNC, MEM_USAGE].contains(t));
    let no_enums: Vec<&str> = ENUMS.into_iter().filter(|t| !schema.has(t)).collect();
    if enum_users && !no_enums.is_empty() {
        load.notes.push(format!(
            "no {} table (exports of schema 2.x have none): copy kinds, memory kinds and sync types named by nsys's documented numbering",
            no_enums.join(", ")
        ));
    }
}

/// `domainId` → `"domain":"name"` (JSON fragment), from the domain-create rows (event type
/// 75), named inline (`text`) or through `StringIds` (`textId`).
fn nvtx_domains(
    conn: &rusqlite::Connection,
    schema: &Schema,
    strings: &FxHashMap<i64, Box<str>>,
) -> rusqlite::Result<FxHashMap<i64, String>> {
    let mut out = FxHashMap::default();
    if !(schema.has_col(NVTX, "domainId") && schema.has_col(NVTX, "eventType")) {
        return Ok(out);
    }
    let mut st = conn.prepare(&schema.select(NVTX, &["domainId", "?text", "?textId"], "WHERE eventType = 75"))?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let name =
            schema::text(r, 1).or_else(|| schema::int(r, 2).and_then(|id| strings.get(&id)).map(|s| s.to_string()));
        if let (Some(id), Some(t)) = (schema::int(r, 0), name) {
            out.insert(id, format!("\"domain\":{}", serde_json::Value::String(t)));
        }
    }
    Ok(out)
}

/// Communicator id → rank count, from the `ncclCommInitRank*` payloads (exported with
/// `--include-json=true`): all-gather's output and reduce-scatter's input need it.
fn nccl_comm_sizes(conn: &rusqlite::Connection, schema: &Schema) -> rusqlite::Result<FxHashMap<String, u64>> {
    if !schema.has_col(NVTX, "jsonText") {
        return Ok(FxHashMap::default());
    }
    let mut st = conn.prepare(&schema.select(NVTX, &["jsonText"], "WHERE jsonText LIKE '%\"No. of ranks\"%'"))?;
    let mut rows = st.query([])?;
    let mut payloads = Vec::new();
    while let Some(r) = rows.next()? {
        if let Some(t) = schema::text(r, 0) {
            payloads.push(t);
        }
    }
    Ok(nccl_nvtx::comm_sizes(payloads.iter().map(String::as_str)))
}

/// What the NCCL ranges gave: how many collectives, and why sizes are unknown where they are.
fn nccl_notes(cx: &Ctx, notes: &mut Vec<String>) {
    if cx.nccl_ops > 0 {
        notes.push(format!(
            "{} NCCL collective ranges (NCCL's NVTX): shown as collective records on their threads, their kernels their own",
            cx.nccl_ops
        ));
    }
    if cx.nccl_no_payload > 0 {
        notes.push(format!(
            "{} NCCL collective ranges carry no payload values (this export has the payload schemas only): their sizes are unknown; export with `nsys export --type sqlite --include-json=true` to read them",
            cx.nccl_no_payload
        ));
    }
    if cx.nccl_bad > 0 {
        notes.push(format!(
            "{} NCCL collective ranges had a payload that could not be read: their sizes are unknown; first: {}",
            cx.nccl_bad, cx.nccl_first_problem
        ));
    }
}

/// Skip reasons for rows whose times cannot be placed (also summed in one note).
const BAD_START: &str = "row without a usable start time";
const END_BEFORE_START: &str = "row ending before it starts";

struct Cats {
    kernel: u32,
    memcpy: u32,
    memset: u32,
    runtime: u32,
    driver: u32,
    sync: u32,
    nvtx: u32,
    osrt: u32,
    cpu_op: u32,
}

struct Unclosed {
    lane: u32,
    start: i64,
    name: u32,
    args: String,
}

/// The consuming side: turns rows into spans on the builder.
struct Ctx<'a> {
    path: &'a Path,
    b: &'a mut StoreBuilder,
    progress: &'a Progress,
    strings: &'a FxHashMap<i64, Box<str>>,
    interned: FxHashMap<i64, u32>,
    runtime_names: FxHashMap<i64, (u32, SpanKind)>,
    copy_names: FxHashMap<(i64, i64, i64), (u32, CopyDir)>,
    memset_names: FxHashMap<i64, u32>,
    stream_lanes: FxHashMap<(i64, i64), u32>,
    thread_lanes: FxHashMap<(u32, u32), u32>,
    nvtx_lanes: FxHashMap<(u32, u32), u32>,
    memcpy_enum: FxHashMap<i64, (String, String)>,
    mem_kind_enum: FxHashMap<i64, (String, String)>,
    sync_enum: FxHashMap<i64, (String, String)>,
    nvtx_domains: FxHashMap<i64, String>,
    nvtx_thread_names: FxHashMap<(u32, u32), String>,
    /// Correlation key of each synchronization row → tid of its runtime call (MAX = unseen).
    sync_wanted: FxHashMap<i64, u32>,
    pids: FxHashSet<u32>,
    /// Import only this process's rows (one rank of a several-process report).
    only_pid: Option<u32>,
    cats: Cats,
    corr_pid: bool,
    args: String,
    /// The correlation id shown first in `args` without being in its text (0: none): the
    /// store keeps it apart, so the rest of the text repeats and is stored once.
    args_corr: u32,
    max_end: i64,
    no_end: u64,
    /// NVTX ranges read as ops (`emit_nvtx`).
    emit_nvtx_ops: u64,
    /// Of those, how many had text that could not all be read, and the first one's problem.
    emit_nvtx_bad: u64,
    emit_nvtx_first_problem: String,
    nccl_comm_sizes: FxHashMap<String, u64>,
    /// NCCL collective ranges read as records; of those, how many had no payload values, how
    /// many a payload that could not be read (and the first one's problem).
    nccl_ops: u64,
    nccl_no_payload: u64,
    nccl_bad: u64,
    nccl_first_problem: String,
    unclosed: Vec<Unclosed>,
    load: LoadSummary,
}

impl<'a> Ctx<'a> {
    fn new(
        path: &'a Path,
        b: &'a mut StoreBuilder,
        progress: &'a Progress,
        strings: &'a FxHashMap<i64, Box<str>>,
        corr_pid: bool,
    ) -> Self {
        let cats = Cats {
            kernel: b.intern("kernel"),
            memcpy: b.intern("gpu_memcpy"),
            memset: b.intern("gpu_memset"),
            runtime: b.intern("cuda_runtime"),
            driver: b.intern("cuda_driver"),
            sync: b.intern("cuda_sync"),
            nvtx: b.intern("nvtx"),
            osrt: b.intern("os_runtime"),
            cpu_op: b.intern("cpu_op"),
        };
        Ctx {
            path,
            b,
            progress,
            strings,
            interned: FxHashMap::default(),
            runtime_names: FxHashMap::default(),
            copy_names: FxHashMap::default(),
            memset_names: FxHashMap::default(),
            stream_lanes: FxHashMap::default(),
            thread_lanes: FxHashMap::default(),
            nvtx_lanes: FxHashMap::default(),
            memcpy_enum: FxHashMap::default(),
            mem_kind_enum: FxHashMap::default(),
            sync_enum: FxHashMap::default(),
            nvtx_domains: FxHashMap::default(),
            nvtx_thread_names: FxHashMap::default(),
            sync_wanted: FxHashMap::default(),
            pids: FxHashSet::default(),
            only_pid: None,
            cats,
            corr_pid,
            args: String::with_capacity(256),
            args_corr: 0,
            max_end: i64::MIN,
            no_end: 0,
            emit_nvtx_ops: 0,
            emit_nvtx_bad: 0,
            emit_nvtx_first_problem: String::new(),
            nccl_comm_sizes: FxHashMap::default(),
            nccl_ops: 0,
            nccl_no_payload: 0,
            nccl_bad: 0,
            nccl_first_problem: String::new(),
            unclosed: Vec::new(),
            load: LoadSummary::default(),
        }
    }

    /// Receives a table's batches and hands each row to `f`; counts rows per table.
    fn drain<R: RowPid>(
        &mut self,
        table: &str,
        rx: Option<Rows<R>>,
        mut f: impl FnMut(&mut Self, R) -> std::io::Result<()>,
    ) -> Result<(), ImportError> {
        let Some(rx) = rx else { return Ok(()) };
        let (mut n, mut bad) = (0u64, 0u64);
        for msg in rx {
            if self.progress.cancelled() {
                return Err(ImportError::Cancelled { path: self.path.to_path_buf() });
            }
            let batch = msg.map_err(|e| ImportError::bad(self.path, format!("reading table {table}: {e}")))?;
            let k = batch.rows.len() as u64 + batch.bad;
            n += k;
            bad += batch.bad;
            self.progress.add_events(k);
            for r in batch.rows {
                if self.only_pid.is_some_and(|p| p != r.pid()) {
                    continue;
                }
                f(self, r).map_err(|e| ImportError::io(self.path, e))?;
            }
        }
        if self.progress.cancelled() {
            return Err(ImportError::Cancelled { path: self.path.to_path_buf() });
        }
        *self.load.by_category.entry(table.to_string()).or_default() += n;
        self.load.events += n;
        if bad > 0 {
            *self.load.skipped.entry(format!("{table}: {BAD_START}")).or_default() += bad;
        }
        Ok(())
    }

    fn corr_key(&self, pid: u32, corr: u32) -> i64 {
        if corr == 0 {
            0
        } else if self.corr_pid {
            ((pid as i64) << 32) | corr as i64
        } else {
            corr as i64
        }
    }

    /// The end of a GPU or API row: its start when it has none (counted), None (skipped,
    /// counted) when it ends before it starts.
    fn end_of(&mut self, table: &str, start: i64, end: i64) -> Option<i64> {
        if end == i64::MIN {
            self.no_end += 1;
            Some(start)
        } else if end < start {
            self.load.skip(&format!("{table}: {END_BEFORE_START}"));
            None
        } else {
            Some(end)
        }
    }

    fn string(&mut self, n: &NameRef, fallback: &str) -> u32 {
        match n {
            NameRef::Id(id) => {
                if let Some(&s) = self.interned.get(id) {
                    return s;
                }
                let s = match self.strings.get(id) {
                    Some(t) => self.b.intern(t),
                    None => self.b.intern(&format!("<string {id}>")),
                };
                self.interned.insert(*id, s);
                s
            }
            NameRef::Text(t) => self.b.intern(t),
            NameRef::None => self.b.intern(fallback),
        }
    }

    fn stream_lane(&mut self, device: i64, stream: i64) -> u32 {
        if let Some(&l) = self.stream_lanes.get(&(device, stream)) {
            return l;
        }
        let l = self.b.lane(LaneKind::GpuStream { device, stream });
        self.stream_lanes.insert((device, stream), l);
        l
    }

    fn thread_lane(&mut self, pid: u32, tid: u32) -> u32 {
        if let Some(&l) = self.thread_lanes.get(&(pid, tid)) {
            return l;
        }
        let l = self.b.lane(LaneKind::CpuThread { pid: IdKey::Num(pid as i64), tid: IdKey::Num(tid as i64) });
        self.thread_lanes.insert((pid, tid), l);
        self.pids.insert(pid);
        l
    }

    fn nvtx_lane(&mut self, pid: u32, tid: u32) -> u32 {
        if let Some(&l) = self.nvtx_lanes.get(&(pid, tid)) {
            return l;
        }
        let l = self.b.lane(LaneKind::Nvtx { pid: IdKey::Num(pid as i64), tid: IdKey::Num(tid as i64) });
        self.nvtx_lanes.insert((pid, tid), l);
        self.pids.insert(pid);
        l
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        lane: u32,
        start: i64,
        end: i64,
        name: u32,
        cat: u32,
        kind: SpanKind,
        flags: u16,
        correlation: i64,
        copy_dir: Option<CopyDir>,
    ) -> std::io::Result<()> {
        self.max_end = self.max_end.max(end);
        let args_corr = std::mem::take(&mut self.args_corr);
        self.b.push_span_correlated(
            SpanInput { lane, start, end, name, cat, kind, flags, args: self.args.as_bytes(), correlation, copy_dir },
            args_corr,
        )?;
        Ok(())
    }

    fn gpu_args(&mut self, c: &GpuCommon) {
        self.args.clear();
        self.args_corr = c.corr;
        let a = &mut self.args;
        put_int(a, "{\"device\":", c.device);
        put_int(a, ",\"stream\":", c.stream);
        if let Some(ctx) = c.context {
            put_int(a, ",\"context\":", ctx);
        }
        put_int(a, ",\"pid\":", c.pid);
    }

    fn kernel(&mut self, k: KernelRow) -> std::io::Result<()> {
        let Some(end) = self.end_of(KERNEL, k.c.start, k.c.end) else { return Ok(()) };
        let lane = self.stream_lane(k.c.device, k.c.stream);
        let name = self.string(&k.name, "<unnamed kernel>");
        self.gpu_args(&k.c);
        let a = &mut self.args;
        put_int(a, ",\"grid\":[", k.grid[0]);
        put_int(a, ",", k.grid[1]);
        put_int(a, ",", k.grid[2]);
        put_int(a, "],\"block\":[", k.block[0]);
        put_int(a, ",", k.block[1]);
        put_int(a, ",", k.block[2]);
        put_int(a, "],\"registers per thread\":", k.regs);
        put_int(a, ",\"shared memory\":", k.smem_static.wrapping_add(k.smem_dynamic));
        put_int(a, ",\"static shared memory\":", k.smem_static);
        put_int(a, ",\"dynamic shared memory\":", k.smem_dynamic);
        graph_nodes::put_graph_ids(a, &k.graph);
        a.push('}');
        self.pids.insert(k.c.pid);
        let corr = self.corr_key(k.c.pid, k.c.corr);
        self.push(lane, k.c.start, end, name, self.cats.kernel, SpanKind::Kernel, 0, corr, None)
    }

    fn mem_kind(&self, k: i64) -> String {
        if let Some((_, label)) = self.mem_kind_enum.get(&k) {
            return label.clone();
        }
        // nsys's own numbering (ENUM_CUDA_MEM_KIND), also used by exports without enum tables.
        const KINDS: [&str; 8] =
            ["Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static", "Unknown"];
        KINDS.get(k as usize).copied().unwrap_or("Unknown").to_string()
    }

    /// Copy kind → (`HtoD`-style label, direction): from `ENUM_CUDA_MEMCPY_OPER` where the
    /// export has it, else CUPTI's documented numbering (1 HtoD, 2 DtoH, 8 DtoD, 10 PtoP, …).
    fn copy_kind(&self, k: i64) -> (String, CopyDir) {
        let code: String = match self.memcpy_enum.get(&k) {
            Some((name, _)) => {
                let s = name.rsplit_once("KIND_").map(|x| x.1).unwrap_or(name);
                s.strip_prefix("UVM_").unwrap_or(s).to_string()
            }
            None => match k {
                1 | 11 => "HTOD",
                2 | 12 => "DTOH",
                3 => "HTOA",
                4 => "ATOH",
                5 => "ATOA",
                6 => "ATOD",
                7 => "DTOA",
                8 | 13 => "DTOD",
                9 => "HTOH",
                10 => "PTOP",
                _ => "UNKNOWN",
            }
            .to_string(),
        };
        match code.split_once("TO") {
            Some((a, b)) if a.len() == 1 && b.len() == 1 => {
                let dir = match (a, b) {
                    ("H", "D") => CopyDir::HtoD,
                    ("D", "H") => CopyDir::DtoH,
                    ("D", "D") => CopyDir::DtoD,
                    ("P", "P") => CopyDir::PtoP,
                    _ => CopyDir::Other,
                };
                (format!("{a}to{b}"), dir)
            }
            _ => ("Unknown".to_string(), CopyDir::Other),
        }
    }

    fn memcpy(&mut self, m: MemcpyRow) -> std::io::Result<()> {
        let Some(end) = self.end_of(MEMCPY, m.c.start, m.c.end) else { return Ok(()) };
        let lane = self.stream_lane(m.c.device, m.c.stream);
        let key = (m.copy_kind, m.src_kind, m.dst_kind);
        let (name, dir) = match self.copy_names.get(&key) {
            Some(&v) => v,
            None => {
                let (label, dir) = self.copy_kind(m.copy_kind);
                let text = format!("Memcpy {label} ({} -> {})", self.mem_kind(m.src_kind), self.mem_kind(m.dst_kind));
                let v = (self.b.intern(&text), dir);
                self.copy_names.insert(key, v);
                v
            }
        };
        self.gpu_args(&m.c);
        let _ = write!(
            self.args,
            ",\"bytes\":{},\"memory bandwidth (GB/s)\":{}",
            m.bytes,
            bandwidth(m.bytes, end - m.c.start)
        );
        if dir == CopyDir::PtoP {
            if let (Some(s), Some(d)) = (m.src_device, m.dst_device) {
                let _ = write!(self.args, ",\"src device\":{s},\"dst device\":{d}");
            }
        }
        graph_nodes::put_graph_ids(&mut self.args, &m.graph);
        self.args.push('}');
        self.pids.insert(m.c.pid);
        let corr = self.corr_key(m.c.pid, m.c.corr);
        self.push(lane, m.c.start, end, name, self.cats.memcpy, SpanKind::Memcpy, 0, corr, Some(dir))
    }

    fn memset(&mut self, m: MemsetRow) -> std::io::Result<()> {
        let Some(end) = self.end_of(MEMSET, m.c.start, m.c.end) else { return Ok(()) };
        let lane = self.stream_lane(m.c.device, m.c.stream);
        let name = match self.memset_names.get(&m.mem_kind) {
            Some(&v) => v,
            None => {
                let text = format!("Memset ({})", self.mem_kind(m.mem_kind));
                let v = self.b.intern(&text);
                self.memset_names.insert(m.mem_kind, v);
                v
            }
        };
        self.gpu_args(&m.c);
        let _ = write!(
            self.args,
            ",\"bytes\":{},\"value\":{},\"memory bandwidth (GB/s)\":{}",
            m.bytes,
            m.value,
            bandwidth(m.bytes, end - m.c.start)
        );
        graph_nodes::put_graph_ids(&mut self.args, &m.graph);
        self.args.push('}');
        self.pids.insert(m.c.pid);
        let corr = self.corr_key(m.c.pid, m.c.corr);
        self.push(lane, m.c.start, end, name, self.cats.memset, SpanKind::Memset, 0, corr, Some(CopyDir::Memset))
    }

    /// Runtime/driver API name without its ABI suffix (`cudaLaunchKernel_v7000` →
    /// `cudaLaunchKernel`, as `nsys stats` and Kineto show it), and its kind.
    fn runtime_name(&mut self, n: &NameRef, class: i64) -> (u32, SpanKind) {
        if let NameRef::Id(id) = n {
            if let Some(&v) = self.runtime_names.get(id) {
                return v;
            }
        }
        let raw: String = match n {
            NameRef::Id(id) => self.strings.get(id).map(|s| s.to_string()).unwrap_or_else(|| format!("<string {id}>")),
            NameRef::Text(t) => t.to_string(),
            NameRef::None => "<unnamed API call>".to_string(),
        };
        let base = strip_version(&raw);
        let kind = if base.starts_with("cuda") {
            SpanKind::CudaRuntime
        } else if base.starts_with("cu") || class == 1 {
            SpanKind::CudaDriver
        } else {
            SpanKind::CudaRuntime
        };
        let v = (self.b.intern(base), kind);
        if let NameRef::Id(id) = n {
            self.runtime_names.insert(*id, v);
        }
        v
    }

    fn runtime(&mut self, r: RuntimeRow) -> std::io::Result<()> {
        let Some(end) = self.end_of(RUNTIME, r.start, r.end) else { return Ok(()) };
        let lane = self.thread_lane(r.pid, r.tid);
        let (name, kind) = self.runtime_name(&r.name, r.class);
        let corr = self.corr_key(r.pid, r.corr);
        if corr != 0 {
            if let Some(t) = self.sync_wanted.get_mut(&corr) {
                *t = r.tid;
            }
        }
        self.args.clear();
        self.args_corr = r.corr;
        if let Some(v) = r.ret.filter(|v| *v != 0) {
            put_int(&mut self.args, "{\"return\":", v);
            self.args.push('}');
        }
        let cat = if kind == SpanKind::CudaDriver { self.cats.driver } else { self.cats.runtime };
        self.push(lane, r.start, end, name, cat, kind, 0, corr, None)
    }

    fn sync(&mut self, r: SyncRow) -> std::io::Result<()> {
        let Some(end) = self.end_of(SYNC, r.c.start, r.c.end) else { return Ok(()) };
        let key = self.corr_key(r.c.pid, r.c.corr);
        let tid = self.sync_wanted.get(&key).copied().unwrap_or(u32::MAX);
        if tid == u32::MAX {
            self.load.skip(&format!("{SYNC}: no runtime call with its correlation id (no thread to put it on)"));
            return Ok(());
        }
        let lane = self.thread_lane(r.c.pid, tid);
        // Kineto's names for the CUPTI synchronization types.
        let label = match r.sync_type {
            1 => "Event Sync".to_string(),
            2 => "Stream Wait Event".to_string(),
            3 => "Stream Sync".to_string(),
            4 => "Context Sync".to_string(),
            t => self.sync_enum.get(&t).map(|x| x.1.clone()).unwrap_or_else(|| "Unknown Sync".to_string()),
        };
        let name = self.b.intern(&label);
        self.gpu_args(&r.c);
        if let Some(e) = r.event {
            let _ = write!(self.args, ",\"event\":{e}");
        }
        self.args.push('}');
        self.push(lane, r.c.start, end, name, self.cats.sync, SpanKind::Other, 0, 0, None)
    }

    fn nvtx(&mut self, r: NvtxRow) -> std::io::Result<()> {
        if r.end.is_some_and(|e| e < r.start) {
            self.load.skip(&format!("{NVTX}: {END_BEFORE_START}"));
            return Ok(());
        }
        match r.event_type {
            59 | 60 | 34 => {}
            75 => {
                self.load.skip("NVTX_EVENTS: domain create (used as the domain arg)");
                return Ok(());
            }
            39 => {
                if let NameRef::Text(t) = &r.text {
                    self.nvtx_thread_names.insert((r.pid, r.tid), t.to_string());
                }
                self.load.skip("NVTX_EVENTS: thread name (used as the thread's name)");
                return Ok(());
            }
            t => {
                self.load.skip(&format!("NVTX_EVENTS: event type {t} (not a range or mark)"));
                return Ok(());
            }
        }
        if let (59, Some(end)) = (r.event_type, r.end) {
            if self.emit_nvtx_op(&r, end)? || self.nccl_collective(&r, end)? {
                return Ok(());
            }
        }
        let lane = self.nvtx_lane(r.pid, r.tid);
        let name = self.string(&r.text, "<unnamed NVTX range>");
        self.args.clear();
        let mut sep = '{';
        if let Some(d) = self.nvtx_domains.get(&r.domain) {
            self.args.push(sep);
            self.args.push_str(d);
            sep = ',';
        }
        if let Some(c) = r.category.filter(|c| *c != 0) {
            let _ = write!(self.args, "{sep}\"category\":{c}");
            sep = ',';
        }
        if let Some(v) = r.payload_int {
            let _ = write!(self.args, "{sep}\"payload\":{v}");
            sep = ',';
        } else if let Some(v) = r.payload.filter(|v| v.is_finite()) {
            let _ = write!(self.args, "{sep}\"payload\":{v}");
            sep = ',';
        }
        if sep == ',' {
            self.args.push('}');
        }
        if r.event_type == 34 {
            return self.push(lane, r.start, r.start, name, self.cats.nvtx, SpanKind::Instant, flags::INSTANT, 0, None);
        }
        match r.end {
            Some(end) => self.push(lane, r.start, end, name, self.cats.nvtx, SpanKind::Nvtx, 0, 0, None),
            None => {
                self.unclosed.push(Unclosed { lane, start: r.start, name, args: self.args.clone() });
                Ok(())
            }
        }
    }

    /// A push/pop range PyTorch's `emit_nvtx` pushed for an op (`aten::mm, seq = 12, op_id
    /// = 40, sizes = [[8192, 2048], [2048, 5632]]`): a CPU op on its thread's lane, beside
    /// the runtime calls it made (so its launches, and through them its kernels, are its
    /// own), named by the op and argued as Kineto argues one. False: not an op range.
    fn emit_nvtx_op(&mut self, r: &NvtxRow, end: i64) -> std::io::Result<bool> {
        let Some(text) = r.text.text(self.strings) else { return Ok(false) };
        let Some(op) = emit_nvtx::parse(text) else { return Ok(false) };
        if let Some(p) = &op.problem {
            self.emit_nvtx_bad += 1;
            if self.emit_nvtx_bad == 1 {
                self.emit_nvtx_first_problem = format!("{p} in {:?}", text.chars().take(160).collect::<String>());
            }
        }
        emit_nvtx::kineto_args(&op, &mut self.args);
        self.emit_nvtx_ops += 1;
        let name = self.b.intern(op.name);
        let lane = self.thread_lane(r.pid, r.tid);
        self.push(lane, r.start, end, name, self.cats.cpu_op, SpanKind::CpuOp, 0, 0, None)?;
        Ok(true)
    }

    /// A push/pop range NCCL pushed for a collective call (`ncclAllReduce`, domain `NCCL`): a
    /// record of the collective on its thread's lane, beside the runtime calls it made (so
    /// the kernels it launched are its own), with its size from the payload. False: not one.
    fn nccl_collective(&mut self, r: &NvtxRow, end: i64) -> std::io::Result<bool> {
        if self.nvtx_domains.get(&r.domain).map(String::as_str) != Some("\"domain\":\"NCCL\"") {
            return Ok(false);
        }
        let Some(text) = r.text.text(self.strings) else { return Ok(false) };
        let Some(coll) = nccl_nvtx::collective(text) else { return Ok(false) };
        let name = self.b.intern(text);
        self.args.clear();
        self.args.push_str("{\"domain\":\"NCCL\",");
        match nccl_nvtx::record_args(coll, r.json.as_deref(), &self.nccl_comm_sizes, &mut self.args) {
            nccl_nvtx::Sized::Known => {}
            nccl_nvtx::Sized::NoPayload => self.nccl_no_payload += 1,
            nccl_nvtx::Sized::Bad(why) => {
                self.nccl_bad += 1;
                if self.nccl_bad == 1 {
                    self.nccl_first_problem = format!("{why} (range {text} at {} ns)", r.start);
                }
            }
        }
        self.args.push('}');
        self.nccl_ops += 1;
        let lane = self.thread_lane(r.pid, r.tid);
        self.push(lane, r.start, end, name, self.cats.cpu_op, SpanKind::CpuOp, 0, 0, None)?;
        Ok(true)
    }

    /// Ranges never closed end where the trace ends, flagged `UNCLOSED`.
    fn finish_unclosed(&mut self) -> std::io::Result<()> {
        for u in std::mem::take(&mut self.unclosed) {
            let end = self.max_end.max(u.start);
            self.args = u.args;
            self.push(u.lane, u.start, end, u.name, self.cats.nvtx, SpanKind::Nvtx, flags::UNCLOSED, 0, None)?;
        }
        Ok(())
    }

    fn osrt(&mut self, r: OsrtRow) -> std::io::Result<()> {
        let Some(end) = self.end_of(OSRT, r.start, r.end) else { return Ok(()) };
        let lane = self.thread_lane(r.pid, r.tid);
        let name = self.string(&r.name, "<unnamed OS call>");
        self.args.clear();
        if let Some(v) = r.ret {
            let _ = write!(self.args, "{{\"return\":{v}}}");
        }
        self.push(lane, r.start, end, name, self.cats.osrt, SpanKind::OsRuntime, 0, 0, None)
    }

    /// `CUDA_GPU_MEMORY_USAGE_EVENTS` → running total of allocated bytes per process, device
    /// and memory kind (allocation +bytes, deallocation −bytes). Device memory (`cudaMalloc`:
    /// what a caching allocator reserves) is the device's water level, the reserved series of
    /// `strobe_model::gpu_memory` in its GPU group; other kinds (pinned, managed, …) stay
    /// counters of the process.
    fn memory_usage(&mut self, conn: &rusqlite::Connection, schema: &Schema) -> rusqlite::Result<()> {
        let missing = schema.missing(MEM_USAGE, &["bytes", "memoryOperationType"]);
        if !missing.is_empty() {
            self.load.notes.push(format!("{MEM_USAGE} has no column {}: no memory counters", missing.join(", ")));
            return Ok(());
        }
        let sql = schema.select(MEM_USAGE, &cols(MEM_USAGE), "ORDER BY start");
        let mut st = conn.prepare(&sql)?;
        let mut rows = st.query([])?;
        let mut totals: FxHashMap<(u32, i64, i64), i64> = FxHashMap::default();
        let mut names: FxHashMap<(i64, i64), (String, String)> = FxHashMap::default();
        let (mut n, mut skipped) = (0u64, 0u64);
        while let Some(r) = rows.next()? {
            n += 1;
            let (Some(ts), Some(bytes)) = (schema::int(r, 0), schema::int(r, 3)) else {
                skipped += 1;
                continue;
            };
            let pid = schema::int(r, 1).map(|g| schema::split_global(g).0).unwrap_or(0);
            if self.only_pid.is_some_and(|p| p != pid) {
                continue;
            }
            let dev = schema::int(r, 2).unwrap_or(0);
            let kind = schema::int(r, 4).unwrap_or(-1);
            let sign = match schema::int(r, 5) {
                Some(0) => 1,
                Some(1) => -1,
                _ => {
                    skipped += 1;
                    continue;
                }
            };
            let total = totals.entry((pid, dev, kind)).or_default();
            *total += sign * bytes;
            let v = *total as f64;
            let (cn, series) =
                names.entry((dev, kind)).or_insert_with(|| (format!("GPU {dev} memory"), self.mem_kind(kind)));
            if series == "Device" {
                let (name, reserved) = (strobe_model::gpu_memory::NAME, strobe_model::gpu_memory::RESERVED);
                self.b.push_device_counter(dev, IdKey::Num(pid as i64), name, reserved, ts, v);
            } else {
                self.b.push_counter(IdKey::Num(pid as i64), cn, series, ts, v);
            }
            self.pids.insert(pid);
        }
        *self.load.by_category.entry(MEM_USAGE.to_string()).or_default() += n;
        self.load.events += n;
        if skipped > 0 {
            *self
                .load
                .skipped
                .entry(format!("{MEM_USAGE}: no time/bytes or an operation other than alloc/free"))
                .or_default() += skipped;
        }
        Ok(())
    }

    /// Names of the processes and threads that have lanes.
    fn names(&mut self, conn: &rusqlite::Connection, schema: &Schema) -> rusqlite::Result<()> {
        let threads = target::thread_names(conn, schema, self.strings)?;
        let procs = target::process_names(conn, schema)?;
        let mut pids: Vec<u32> = self.pids.iter().copied().collect();
        pids.sort_unstable();
        for pid in pids {
            if let Some(n) = procs.get(&pid) {
                self.b.names.processes.push((IdKey::Num(pid as i64), n.clone()));
            }
        }
        let mut tids: Vec<(u32, u32)> = self.thread_lanes.keys().chain(self.nvtx_lanes.keys()).copied().collect();
        tids.sort_unstable();
        tids.dedup();
        for (pid, tid) in tids {
            let name = threads.get(&(pid, tid)).or_else(|| self.nvtx_thread_names.get(&(pid, tid)));
            if let Some(n) = name {
                self.b.names.threads.push(((IdKey::Num(pid as i64), IdKey::Num(tid as i64)), n.clone()));
            }
        }
        Ok(())
    }
}

/// bytes per ns = GB/s; 0 for zero-length copies. Written with up to 6 decimals.
/// Appends `key` and the integer `v` to args text (itoa: `write!` costs several times more,
/// and nsys writes a dozen integers per kernel for millions of kernels).
fn put_int(a: &mut String, key: &str, v: impl itoa::Integer) {
    a.push_str(key);
    a.push_str(itoa::Buffer::new().format(v));
}

fn bandwidth(bytes: i64, dur: i64) -> String {
    if dur <= 0 || bytes <= 0 {
        return "0".to_string();
    }
    let v = bytes as f64 / dur as f64;
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// `cudaLaunchKernel_v7000` → `cudaLaunchKernel`; `cuGetProcAddress_v2` → `cuGetProcAddress`.
fn strip_version(s: &str) -> &str {
    if let Some(i) = s.rfind("_v") {
        let tail = &s[i + 2..];
        if !tail.is_empty() && tail.bytes().all(|c| c.is_ascii_digit()) {
            return &s[..i];
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built(b: StoreBuilder, meta: &TraceMeta) -> Vec<u8> {
        match b.finish(meta).unwrap() {
            strobe_store::Built::Memory(v) => v,
            strobe_store::Built::File(p) => panic!("a memory build wrote {}", p.display()),
        }
    }

    /// The bundled Nsight Systems exports (`sample-traces/*.sqlite`).
    pub(crate) fn bundled_exports() -> Vec<std::path::PathBuf> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces");
        let mut out: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "sqlite"))
            .collect();
        out.sort();
        out
    }

    /// Several processes imported in one pass (in either order) give each process the very
    /// store that importing it alone gives.
    #[test]
    fn one_pass_over_several_processes_builds_each_alone_s_store() {
        let mut several = 0;
        for path in bundled_exports() {
            let pids: Vec<u32> = gpu_processes(&path).unwrap().iter().map(|p| p.pid).collect();
            let alone: Vec<Vec<u8>> = pids
                .iter()
                .map(|&pid| {
                    let mut b = StoreBuilder::new(strobe_store::Output::memory_with_key([0; 4])).unwrap();
                    let meta = import_process(&path, pid, &mut b, &Progress::default()).unwrap();
                    built(b, &meta)
                })
                .collect();
            for order in [pids.clone(), pids.iter().rev().copied().collect()] {
                let mut bs: Vec<StoreBuilder> = order
                    .iter()
                    .map(|_| StoreBuilder::new(strobe_store::Output::memory_with_key([0; 4])).unwrap())
                    .collect();
                let metas = import_processes(&path, &order, bs.iter_mut().collect(), &Progress::default()).unwrap();
                for ((b, meta), pid) in bs.into_iter().zip(metas).zip(&order) {
                    let k = pids.iter().position(|p| p == pid).unwrap();
                    assert!(built(b, &meta.unwrap()) == alone[k], "{}: process {pid}", path.display());
                }
            }
            several += (pids.len() > 1) as usize;
        }
        assert!(several >= 1, "an export of several GPU processes was read");
    }
    #[test]
    fn versions() {
        assert_eq!(strip_version("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
        assert_eq!(strip_version("cuGetProcAddress_v2"), "cuGetProcAddress");
        assert_eq!(strip_version("cudaMalloc"), "cudaMalloc");
        assert_eq!(strip_version("foo_vx"), "foo_vx");
        assert_eq!(bandwidth(1000, 100), "10");
        assert_eq!(bandwidth(1, 3), "0.333333");
        assert_eq!(bandwidth(5, 0), "0");
    }
    #[test]
    fn uri_escapes() {
        assert_eq!(schema::uri(Path::new("/a b/c?.sqlite")), "file:/a%20b/c%3F.sqlite?mode=ro&immutable=1");
    }
}
