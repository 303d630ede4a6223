//! One compact struct per activity table, the columns each reads, and the reader thread that
//! streams a table's rows in batches over a bounded channel (so memory stays bounded: no
//! table is ever held whole). A table is read page by page from the file (`sqlite_file`)
//! when its layout allows, else through SQLite; both give the converters the same values.

use super::schema::{first_name, int, name_ref, open, split_global, Cells, Direct, DirectRow, NameRef, Schema};
use crate::sqlite_file::{Scratch, SqliteFile};
use std::path::Path;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};

pub const BATCH: usize = 4096;

/// A batch of converted rows and how many rows were unusable (no start time).
pub struct Batch<R> {
    pub rows: Vec<R>,
    pub bad: u64,
}

pub type Msg<R> = Result<Batch<R>, String>;

/// A table's row struct, built from a row's values (None = unusable row).
pub trait FromCells: Sized + Send + 'static {
    fn from_cells(r: &impl Cells) -> Option<Self>;
}

/// How one table is read: the SQL of [`Schema::select`] and, where the file's layout
/// allows, its page-by-page equivalent; optionally only some processes' rows, each sent on
/// to the reader of its own process.
pub struct TableRead {
    pub sql: String,
    pub direct: Option<Direct>,
    /// (position of the `globalPid`/`globalTid` column among the selected ones, the
    /// processes wanted): a row of `pids[k]` goes to destination `k`, a row of any other
    /// process (or of none) is skipped before it is converted.
    pub pids: Option<(usize, Vec<u32>)>,
}

impl TableRead {
    /// Reading `cols` (specs as for [`Schema::col`]) of `table`. `STROBE_NSYS_SQL=1` in the
    /// environment reads every table through SQLite (to compare the two paths). With
    /// `only_pids`, the rows of those processes alone, each to its place in the list.
    pub fn new(s: &Schema, table: &'static str, cols: &[&str], only_pids: Option<&[u32]>) -> TableRead {
        // the process column: its position among `cols` (page reads) and its name (SQL)
        let pid_col = only_pids.and_then(|ps| {
            let i = cols.iter().position(|c| c.trim_start_matches('?').starts_with("global"))?;
            s.col(table, cols[i]).map(|name| (i, name, ps))
        });
        let filter = pid_col.map(|(_, name, ps)| pid_clause(name, ps)).unwrap_or_default();
        let pids = pid_col.map(|(i, _, ps)| (i, ps.to_vec()));
        let sql = s.select(table, cols, &filter);
        let direct = if std::env::var_os("STROBE_NSYS_SQL").is_none() { s.direct(table, cols) } else { None };
        TableRead { sql, direct, pids }
    }

    /// Where a row goes: 0 when every row is read, else the place of its process among the
    /// wanted ones (None: skipped).
    fn destination(&self, row: &impl Cells) -> Option<usize> {
        match &self.pids {
            None => Some(0),
            Some((i, ps)) => {
                let pid = split_global(int(row, *i)?).0;
                ps.iter().position(|&p| p == pid)
            }
        }
    }

    /// Each row of the table, in rowid order, converted, to `each` with its destination
    /// (None: an unusable row); stops when `each` returns false. The readers find the
    /// pages once and call `scan_from`; the tests and the small tables read on one thread
    /// (GPU metrics) read a table through this.
    pub fn scan<R: FromCells>(&self, path: &Path, each: impl FnMut(usize, Option<R>) -> bool) -> Result<(), String> {
        self.scan_from(path, self.pages(path), each)
    }

    /// `scan` with the table's pages already found by `pages` (None: through SQLite).
    fn scan_from<R: FromCells>(
        &self,
        path: &Path,
        pages: Option<(SqliteFile, Vec<u32>)>,
        mut each: impl FnMut(usize, Option<R>) -> bool,
    ) -> Result<(), String> {
        // A file the page reader refuses before any row is read (UTF-16 text, no mmap, a
        // malformed b-tree) goes through SQLite. A damaged leaf met mid-scan is an error, as
        // SQLite's "malformed" would be: falling back after rows were sent would send them twice.
        if let (Some(d), Some((file, leaves))) = (self.direct.as_ref(), pages) {
            return self.scan_leaves(d, &file, &leaves, each).map(|_| ());
        }
        let mut run = || -> rusqlite::Result<()> {
            let conn = open(path)?;
            let mut st = conn.prepare(&self.sql)?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                let Some(k) = self.destination(r) else { continue };
                if !each(k, R::from_cells(r)) {
                    break;
                }
            }
            Ok(())
        };
        run().map_err(|e| e.to_string())
    }

    /// The table's rows folded by `threads` threads at once, each over a contiguous run of
    /// its leaf pages (`fold(acc, destination, row)` into an accumulator of its own, made by
    /// `init`); the accumulators in leaf order. A table read through SQLite is one fold.
    pub fn fold_parallel<R: FromCells, A: Send>(
        &self,
        path: &Path,
        threads: usize,
        init: impl Fn() -> A + Sync,
        fold: impl Fn(&mut A, usize, Option<R>) + Sync,
    ) -> Result<Vec<A>, String> {
        let (Some(d), Some((file, leaves))) = (self.direct.as_ref(), self.pages(path)) else {
            let mut acc = init();
            self.scan_from(path, None, |k, r| {
                fold(&mut acc, k, r);
                true
            })?;
            return Ok(vec![acc]);
        };
        let per = leaves.len().div_ceil(threads.max(1)).max(1);
        let (file, init, fold) = (&file, &init, &fold);
        std::thread::scope(|s| {
            let handles: Vec<_> = leaves
                .chunks(per)
                .map(|part| {
                    s.spawn(move || {
                        let mut acc = init();
                        self.scan_leaves(d, file, part, |k, r| {
                            fold(&mut acc, k, r);
                            true
                        })
                        .map(|_| acc)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("reader thread panicked".into()))).collect()
        })
    }

    /// The table's file and its leaf pages in rowid order, where it is read page by page.
    fn pages(&self, path: &Path) -> Option<(SqliteFile, Vec<u32>)> {
        let d = self.direct.as_ref()?;
        let file = SqliteFile::open(path).ok()?;
        let leaves = file.table_leaves(d.root).ok()?;
        Some((file, leaves))
    }

    /// The rows of `leaves` (some of the table's, in order) to `each`; false when `each`
    /// asked to stop.
    fn scan_leaves<R: FromCells>(
        &self,
        d: &Direct,
        file: &SqliteFile,
        leaves: &[u32],
        mut each: impl FnMut(usize, Option<R>) -> bool,
    ) -> Result<bool, String> {
        let mut scratch = Scratch::default();
        for &leaf in leaves {
            let go = file.scan_leaf(leaf, d.upto, &mut scratch, |_, rec| {
                let row = DirectRow { rec, src: &d.src };
                match self.destination(&row) {
                    None => true,
                    Some(k) => each(k, R::from_cells(&row)),
                }
            })?;
            if !go {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// A table's rows for one destination: batches in rowid order, read by one or two
/// threads (`spawn_readers`).
pub struct Rows<R> {
    /// The segments not begun, in order.
    segments: std::vec::IntoIter<Receiver<Msg<R>>>,
    current: Option<Receiver<Msg<R>>>,
    at: usize,
    dest: usize,
    gate: Arc<Gate>,
}

impl<R> Iterator for Rows<R> {
    type Item = Msg<R>;
    fn next(&mut self) -> Option<Msg<R>> {
        loop {
            if let Some(m) = self.current.as_ref().and_then(|rx| rx.recv().ok()) {
                return Some(m);
            }
            // this segment is all read: the next one, and its reader may begin the one after
            self.current = self.segments.next();
            self.current.as_ref()?;
            self.at += 1;
            self.gate.reached(self.dest, self.at);
        }
    }
}

impl<R> Drop for Rows<R> {
    fn drop(&mut self) {
        // a destination gone (done, or stopped on an error) holds no reader back
        self.gate.reached(self.dest, usize::MAX);
    }
}

/// How far each destination has read a table, in segments: a reader begins segment `j`
/// only once every destination reads segment `j - SEGMENTS_AHEAD` or later, so a bounded
/// number of segments' rows (~1 MB of pages each) wait in memory while the converters work.
struct Gate {
    at: Mutex<Vec<usize>>,
    moved: Condvar,
}

impl Gate {
    fn reached(&self, dest: usize, seg: usize) {
        let mut at = self.at.lock().unwrap_or_else(|p| p.into_inner());
        at[dest] = at[dest].max(seg);
        self.moved.notify_all();
    }

    fn wait_to_begin(&self, seg: usize) {
        let mut at = self.at.lock().unwrap_or_else(|p| p.into_inner());
        while at.iter().copied().min().unwrap_or(usize::MAX).saturating_add(SEGMENTS_AHEAD) < seg {
            at = self.moved.wait(at).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// A segment's channels, one per destination.
type SegmentSenders<R> = Vec<Sender<Msg<R>>>;

/// Leaf pages per segment of a table read by two threads; tables with fewer than two
/// segments' worth are read by one.
const SEGMENT_LEAVES: usize = 256;
/// How many segments a reader may run ahead of the slowest destination. One kept the
/// converters waiting on the readers' turns (an nsys export's import used 1.66 of 2 cores);
/// four keep both cores busy (1.83–1.90, the import 8 % sooner) and add nothing to the
/// report's peak memory, which comes later.
const SEGMENTS_AHEAD: usize = 4;

/// Starts the reader(s) of `read` in `s`: `ways` destinations, each given its rows in
/// rowid order. A big table read page by page is cut into segments of leaf pages, read by
/// two threads in turn (segment 0, 2, 4 … and 1, 3, 5 …): one thread decoding every row
/// (of every process, in a several-rank import) was slower than the converters it feeds.
/// The destinations must be drained at once (a thread each, as the converters are): a
/// reader waits for the slowest of them before it runs more than a segment ahead.
pub fn spawn_readers<'s, R: FromCells>(
    s: &'s std::thread::Scope<'s, '_>,
    path: &'s Path,
    read: TableRead,
    ways: usize,
) -> Vec<Rows<R>> {
    spawn_readers_in(s, path, read, ways, SEGMENT_LEAVES)
}

/// `spawn_readers` with segments of `segment_leaves` leaf pages (tests cut small tables).
fn spawn_readers_in<'s, R: FromCells>(
    s: &'s std::thread::Scope<'s, '_>,
    path: &'s Path,
    read: TableRead,
    ways: usize,
    segment_leaves: usize,
) -> Vec<Rows<R>> {
    let segment_leaves = segment_leaves.max(1);
    let pages = read.pages(path);
    let leaf_count = pages.as_ref().map_or(0, |p| p.1.len());
    let segments = if leaf_count >= 2 * segment_leaves { leaf_count.div_ceil(segment_leaves) } else { 1 };
    let gate = Arc::new(Gate { at: Mutex::new(vec![0; ways]), moved: Condvar::new() });
    // channels[seg][dest]: unbounded, since the gate bounds what waits in them
    let mut txs: Vec<Vec<Sender<Msg<R>>>> = Vec::with_capacity(segments);
    let mut rxs: Vec<Vec<Receiver<Msg<R>>>> = (0..ways).map(|_| Vec::with_capacity(segments)).collect();
    for _ in 0..segments {
        let mut row = Vec::with_capacity(ways);
        for r in rxs.iter_mut() {
            let (tx, rx) = channel();
            row.push(tx);
            r.push(rx);
        }
        txs.push(row);
    }
    let read = Arc::new(read);
    match pages {
        Some((file, leaves)) if segments > 1 => {
            let (file, leaves) = (Arc::new(file), Arc::new(leaves));
            let mut per_thread: [Vec<(usize, SegmentSenders<R>)>; 2] = [Vec::new(), Vec::new()];
            for (seg, t) in txs.into_iter().enumerate() {
                per_thread[seg % 2].push((seg, t));
            }
            for mine in per_thread {
                let (read, file, leaves, gate) = (read.clone(), file.clone(), leaves.clone(), gate.clone());
                s.spawn(move || {
                    for (seg, t) in mine {
                        gate.wait_to_begin(seg);
                        let part = &leaves
                            [(seg * segment_leaves).min(leaves.len())..((seg + 1) * segment_leaves).min(leaves.len())];
                        let d = read.direct.as_ref().expect("a table read by pages has its layout");
                        if !send_rows(t, |each| read.scan_leaves(d, &file, part, each)) {
                            return;
                        }
                    }
                });
            }
        }
        // one reader, over the pages found above (a table's file is mapped and its b-tree
        // walked once)
        pages => {
            let t = txs.pop().unwrap_or_default();
            s.spawn(move || send_rows(t, |each| read.scan_from(path, pages, each).map(|_| true)));
        }
    }
    rxs.into_iter()
        .enumerate()
        .map(|(dest, segs)| {
            let mut segments = segs.into_iter();
            let current = segments.next();
            Rows { segments, current, at: 0, dest, gate: gate.clone() }
        })
        .collect()
}

/// Runs `scan` and sends its rows in batches, each to its destination's channel (`txs[k]`
/// for destination `k`). A destination whose receiver is gone gets no more; the scan stops
/// quietly when every one is gone. False: stopped (every destination gone, or an error).
fn send_rows<R: FromCells>(
    txs: Vec<Sender<Msg<R>>>,
    scan: impl FnOnce(&mut dyn FnMut(usize, Option<R>) -> bool) -> Result<bool, String>,
) -> bool {
    let fresh = || Batch { rows: Vec::with_capacity(BATCH), bad: 0 };
    let mut out: Vec<(Sender<Msg<R>>, Batch<R>, bool)> = txs.into_iter().map(|t| (t, fresh(), false)).collect();
    let mut open = out.len();
    let r = scan(&mut |k, row: Option<R>| {
        let Some((tx, batch, gone)) = out.get_mut(k) else { return true };
        if *gone {
            return true;
        }
        match row {
            Some(x) => batch.rows.push(x),
            None => batch.bad += 1,
        }
        if batch.rows.len() + batch.bad as usize >= BATCH {
            let full = std::mem::replace(batch, fresh());
            if tx.send(Ok(full)).is_err() {
                *gone = true;
                open -= 1;
            }
        }
        open > 0
    });
    let go = matches!(r, Ok(true)) && open > 0;
    for (tx, batch, gone) in out {
        match &r {
            Err(e) => {
                let _ = tx.send(Err(e.clone()));
            }
            Ok(_) if !gone && (!batch.rows.is_empty() || batch.bad > 0) => {
                let _ = tx.send(Ok(batch));
            }
            Ok(_) => {}
        }
    }
    go
}

pub const KERNEL: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
pub const MEMCPY: &str = "CUPTI_ACTIVITY_KIND_MEMCPY";
pub const MEMSET: &str = "CUPTI_ACTIVITY_KIND_MEMSET";
pub const RUNTIME: &str = "CUPTI_ACTIVITY_KIND_RUNTIME";
pub const SYNC: &str = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
pub const NVTX: &str = "NVTX_EVENTS";
pub const OSRT: &str = "OSRT_API";
pub const MEM_USAGE: &str = "CUDA_GPU_MEMORY_USAGE_EVENTS";

/// Fields shared by kernels, memcpy and memset rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuCommon {
    pub start: i64,
    pub end: i64,
    pub device: i64,
    pub stream: i64,
    pub context: Option<i64>,
    /// CUDA correlation id (0 = none).
    pub corr: u32,
    pub pid: u32,
}

fn gpu_common(r: &impl Cells) -> Option<GpuCommon> {
    Some(GpuCommon {
        start: int(r, 0)?,
        end: int(r, 1).unwrap_or(i64::MIN),
        device: int(r, 2).unwrap_or(0),
        stream: int(r, 3).unwrap_or(0),
        corr: int(r, 4).unwrap_or(0) as u32,
        pid: int(r, 5).map(|g| split_global(g).0).unwrap_or(0),
        context: int(r, 6),
    })
}

/// Columns of each activity table, in the order its row struct reads them. `"a|b"`: `a`,
/// else `b` (older or newer schemas); `?`: optional, read as NULL without a note.
/// `globalTid` carries the pid in the same bits as `globalPid`.
const GPU_COMMON_COLS: [&str; 7] =
    ["start", "end", "deviceId", "streamId", "correlationId", "globalPid|globalTid", "?contextId"];

/// The columns read from activity `table`.
pub fn cols(table: &str) -> Vec<&'static str> {
    let gpu = |rest: &[&'static str]| GPU_COMMON_COLS.iter().chain(rest).copied().collect();
    match table {
        KERNEL => gpu(&[
            "?demangledName",
            "?shortName",
            "?mangledName",
            "?name",
            "gridX",
            "gridY",
            "gridZ",
            "blockX",
            "blockY",
            "blockZ",
            "registersPerThread",
            "staticSharedMemory",
            "dynamicSharedMemory",
            "?graphNodeId",
            "?graphId",
        ]),
        MEMCPY => gpu(&[
            "bytes",
            "copyKind",
            "srcKind",
            "dstKind",
            "?srcDeviceId",
            "?dstDeviceId",
            "?graphNodeId",
            "?graphId",
        ]),
        MEMSET => gpu(&["bytes", "value", "memKind", "?graphNodeId", "?graphId"]),
        SYNC => gpu(&["syncType", "?eventId"]),
        RUNTIME => vec![
            "start",
            "end",
            "globalTid|globalPid",
            "correlationId",
            "?eventClass",
            "?nameId",
            "?name",
            "?returnValue",
        ],
        NVTX => vec![
            "start",
            "end",
            "eventType",
            "?text",
            "?textId",
            "globalTid",
            "?domainId",
            "?category",
            "?int64Value",
            "?uint64Value",
            "?int32Value",
            "?uint32Value",
            "?doubleValue",
            "?floatValue",
            "?jsonText",
        ],
        OSRT => vec!["start", "end", "globalTid", "nameId|name", "?returnValue"],
        MEM_USAGE => vec!["start", "globalPid|globalTid", "deviceId", "bytes", "?memKind", "memoryOperationType"],
        _ => Vec::new(),
    }
}

/// Tables whose rows are named by one of several optional columns: (table, columns).
pub const NAME_COLS: [(&str, &[&str]); 3] = [
    (KERNEL, &["demangledName", "shortName", "mangledName", "name"]),
    (RUNTIME, &["nameId", "name"]),
    (NVTX, &["text", "textId"]),
];

#[derive(Debug, PartialEq)]
pub struct KernelRow {
    pub c: GpuCommon,
    pub name: NameRef,
    pub grid: [i32; 3],
    pub block: [i32; 3],
    pub regs: i32,
    pub smem_static: i64,
    pub smem_dynamic: i64,
    pub graph: GraphIds,
}

/// The CUDA graph node (and graph, where the schema has it) that ran a GPU activity.
#[derive(Debug, PartialEq, Default, Clone, Copy)]
pub struct GraphIds {
    pub node: Option<i64>,
    pub graph: Option<i64>,
}

fn graph_ids(r: &impl Cells, first: usize) -> GraphIds {
    GraphIds { node: int(r, first), graph: int(r, first + 1) }
}

impl FromCells for KernelRow {
    fn from_cells(r: &impl Cells) -> Option<KernelRow> {
        let g = |i| int(r, i).unwrap_or(0) as i32;
        Some(KernelRow {
            c: gpu_common(r)?,
            name: first_name(r, &[7, 8, 9, 10]),
            grid: [g(11), g(12), g(13)],
            block: [g(14), g(15), g(16)],
            regs: g(17),
            smem_static: int(r, 18).unwrap_or(0),
            smem_dynamic: int(r, 19).unwrap_or(0),
            graph: graph_ids(r, 20),
        })
    }
}

#[derive(Debug, PartialEq)]
pub struct MemcpyRow {
    pub c: GpuCommon,
    pub bytes: i64,
    pub copy_kind: i64,
    pub src_kind: i64,
    pub dst_kind: i64,
    pub src_device: Option<i64>,
    pub dst_device: Option<i64>,
    pub graph: GraphIds,
}

impl FromCells for MemcpyRow {
    fn from_cells(r: &impl Cells) -> Option<MemcpyRow> {
        Some(MemcpyRow {
            c: gpu_common(r)?,
            bytes: int(r, 7).unwrap_or(0),
            copy_kind: int(r, 8).unwrap_or(0),
            src_kind: int(r, 9).unwrap_or(-1),
            dst_kind: int(r, 10).unwrap_or(-1),
            src_device: int(r, 11),
            dst_device: int(r, 12),
            graph: graph_ids(r, 13),
        })
    }
}

#[derive(Debug, PartialEq)]
pub struct MemsetRow {
    pub c: GpuCommon,
    pub bytes: i64,
    pub value: i64,
    pub mem_kind: i64,
    pub graph: GraphIds,
}

impl FromCells for MemsetRow {
    fn from_cells(r: &impl Cells) -> Option<MemsetRow> {
        Some(MemsetRow {
            c: gpu_common(r)?,
            bytes: int(r, 7).unwrap_or(0),
            value: int(r, 8).unwrap_or(0),
            mem_kind: int(r, 9).unwrap_or(-1),
            graph: graph_ids(r, 10),
        })
    }
}

#[derive(Debug, PartialEq)]
pub struct RuntimeRow {
    pub start: i64,
    pub end: i64,
    pub pid: u32,
    pub tid: u32,
    pub corr: u32,
    pub class: i64,
    pub name: NameRef,
    pub ret: Option<i64>,
}

impl FromCells for RuntimeRow {
    fn from_cells(r: &impl Cells) -> Option<RuntimeRow> {
        let (pid, tid) = split_global(int(r, 2).unwrap_or(0));
        Some(RuntimeRow {
            start: int(r, 0)?,
            end: int(r, 1).unwrap_or(i64::MIN),
            pid,
            tid,
            corr: int(r, 3).unwrap_or(0) as u32,
            class: int(r, 4).unwrap_or(0),
            name: first_name(r, &[5, 6]),
            ret: int(r, 7),
        })
    }
}

#[derive(Debug, PartialEq)]
pub struct SyncRow {
    pub c: GpuCommon,
    pub sync_type: i64,
    pub event: Option<i64>,
}

impl FromCells for SyncRow {
    fn from_cells(r: &impl Cells) -> Option<SyncRow> {
        Some(SyncRow { c: gpu_common(r)?, sync_type: int(r, 7).unwrap_or(0), event: int(r, 8) })
    }
}

#[derive(Debug, PartialEq)]
pub struct NvtxRow {
    pub start: i64,
    pub end: Option<i64>,
    pub event_type: i64,
    pub text: NameRef,
    pub pid: u32,
    pub tid: u32,
    pub domain: i64,
    pub category: Option<i64>,
    pub payload: Option<f64>,
    pub payload_int: Option<i64>,
    /// The payload as JSON (`nsys export --include-json=true`).
    pub json: Option<String>,
}

impl FromCells for NvtxRow {
    fn from_cells(r: &impl Cells) -> Option<NvtxRow> {
        let (pid, tid) = split_global(int(r, 5).unwrap_or(0));
        let text = match name_ref(r, 3) {
            NameRef::None => name_ref(r, 4),
            t => t,
        };
        let payload_int = [8, 9, 10, 11].iter().find_map(|&i| int(r, i));
        let payload = if payload_int.is_some() {
            None
        } else {
            [12, 13].iter().find_map(|&i| match r.cell(i) {
                rusqlite::types::ValueRef::Real(f) => Some(f),
                _ => None,
            })
        };
        Some(NvtxRow {
            start: int(r, 0)?,
            end: int(r, 1),
            event_type: int(r, 2).unwrap_or(-1),
            text,
            pid,
            tid,
            domain: int(r, 6).unwrap_or(0),
            category: int(r, 7),
            payload,
            payload_int,
            json: match r.cell(14) {
                rusqlite::types::ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
                _ => None,
            },
        })
    }
}

#[derive(Debug, PartialEq)]
pub struct OsrtRow {
    pub start: i64,
    pub end: i64,
    pub pid: u32,
    pub tid: u32,
    pub name: NameRef,
    pub ret: Option<i64>,
}

impl FromCells for OsrtRow {
    fn from_cells(r: &impl Cells) -> Option<OsrtRow> {
        let (pid, tid) = split_global(int(r, 2).unwrap_or(0));
        Some(OsrtRow {
            start: int(r, 0)?,
            end: int(r, 1).unwrap_or(i64::MIN),
            pid,
            tid,
            name: name_ref(r, 3),
            ret: int(r, 4),
        })
    }
}

/// A `WHERE` keeping one process's rows by column `col`, a `globalPid`/`globalTid` (the pid
/// sits in bits 24..48). Tables read page by page apply the same test per row. One rank of a
/// several-process report is read this way: SQLite skips the other processes' rows before
/// any column of them is fetched, instead of every rank reading the whole table.
fn pid_clause(col: &str, pids: &[u32]) -> String {
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    format!("WHERE (({} >> 24) & 16777215) IN ({})", super::schema::quote(col), list.join(","))
}

/// The process a row belongs to, for importing one process of a report as one rank.
pub trait RowPid {
    fn pid(&self) -> u32;
}

macro_rules! gpu_row_pid {
    ($($t:ty),*) => {$(impl RowPid for $t { fn pid(&self) -> u32 { self.c.pid } })*};
}
gpu_row_pid!(KernelRow, MemcpyRow, MemsetRow, SyncRow);

macro_rules! cpu_row_pid {
    ($($t:ty),*) => {$(impl RowPid for $t { fn pid(&self) -> u32 { self.pid } })*};
}
cpu_row_pid!(RuntimeRow, NvtxRow, OsrtRow);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nsys_sqlite::WANTED;

    /// Every activity table of every bundled export converts to the same rows page by page
    /// as through SQLite (old and new schemas, renamed tables, inline names, bad times).
    #[test]
    fn page_reads_match_sqlite_on_the_bundled_exports() {
        let mut direct_tables = 0;
        for path in crate::nsys_sqlite::tests::bundled_exports() {
            let conn = open(&path).unwrap();
            let s = Schema::probe(&conn, WANTED).unwrap();
            fn both<R: FromCells + PartialEq + std::fmt::Debug>(path: &Path, t: &str, mut read: TableRead) -> bool {
                let mut a: Vec<(usize, Option<R>)> = Vec::new();
                read.scan(path, |k, r| {
                    a.push((k, r));
                    true
                })
                .unwrap();
                let direct = read.direct.take().is_some();
                let mut b: Vec<(usize, Option<R>)> = Vec::new();
                read.scan(path, |k, r| {
                    b.push((k, r));
                    true
                })
                .unwrap();
                assert_eq!(a, b, "{}: {t}", path.display());
                direct
            }
            // every row, and the rows of the GPU processes routed in reverse order (the
            // destination of a row is its process's place in the list asked for)
            let mut procs: Vec<u32> = crate::nsys_sqlite::gpu_processes(&path).unwrap().iter().map(|p| p.pid).collect();
            procs.reverse();
            for (t, only) in [KERNEL, MEMCPY, MEMSET, RUNTIME, SYNC, NVTX, OSRT]
                .into_iter()
                .flat_map(|t| [(t, None), (t, Some(procs.as_slice()))])
            {
                if !s.has(t) {
                    continue;
                }
                let read = TableRead::new(&s, t, &cols(t), only);
                let direct = match t {
                    KERNEL => both::<KernelRow>(&path, t, read),
                    MEMCPY => both::<MemcpyRow>(&path, t, read),
                    MEMSET => both::<MemsetRow>(&path, t, read),
                    RUNTIME => both::<RuntimeRow>(&path, t, read),
                    SYNC => both::<SyncRow>(&path, t, read),
                    NVTX => both::<NvtxRow>(&path, t, read),
                    _ => both::<OsrtRow>(&path, t, read),
                };
                direct_tables += direct as usize;
            }
        }
        assert!(direct_tables >= 40, "most bundled tables are read page by page: {direct_tables}");
    }

    /// A table cut into segments of 1, 2 or 3 leaf pages, read by two threads and handed to
    /// one or two destinations, gives each destination exactly the rows, in the order, that
    /// one scan of the table gives it: the segments are read out of order, delivered in order.
    #[test]
    fn segmented_reads_deliver_each_destination_its_rows_in_order() {
        let mut segmented = 0;
        for path in crate::nsys_sqlite::tests::bundled_exports() {
            let conn = open(&path).unwrap();
            let s = Schema::probe(&conn, WANTED).unwrap();
            let mut procs: Vec<u32> = crate::nsys_sqlite::gpu_processes(&path).unwrap().iter().map(|p| p.pid).collect();
            procs.reverse();
            fn check<R: FromCells + PartialEq + std::fmt::Debug>(
                path: &Path,
                read: impl Fn() -> TableRead,
                ways: usize,
            ) -> bool {
                let mut want: Vec<Vec<Option<R>>> = (0..ways).map(|_| Vec::new()).collect();
                read()
                    .scan(path, |k, r| {
                        want[k].push(r);
                        true
                    })
                    .unwrap();
                let leaves = read().pages(path).map_or(0, |p| p.1.len());
                for seg in [1, 2, 3] {
                    // each destination drained on a thread of its own, as the converters are:
                    // a reader runs at most a segment ahead of the slowest destination
                    let got: Vec<Vec<Option<R>>> = std::thread::scope(|s| {
                        let drains: Vec<_> = spawn_readers_in::<R>(s, path, read(), ways, seg)
                            .into_iter()
                            .map(|rows| {
                                s.spawn(move || {
                                    rows.flat_map(|m| {
                                        let b = m.unwrap();
                                        b.rows.into_iter().map(Some).chain((0..b.bad).map(|_| None)).collect::<Vec<_>>()
                                    })
                                    .collect::<Vec<_>>()
                                })
                            })
                            .collect();
                        drains.into_iter().map(|h| h.join().unwrap()).collect()
                    });
                    // a batch lists its unusable rows after its rows: compare usable rows in
                    // order and the count of unusable ones
                    for (g, w) in got.iter().zip(&want) {
                        fn keep<R>(v: &[Option<R>]) -> Vec<&R> {
                            v.iter().flatten().collect()
                        }
                        assert_eq!(keep(g), keep(w), "{}: segments of {seg}", path.display());
                        assert_eq!(g.len(), w.len());
                    }
                }
                leaves >= 2
            }
            for (t, only) in [KERNEL, RUNTIME, NVTX].into_iter().flat_map(|t| [(t, None), (t, Some(procs.as_slice()))])
            {
                if !s.has(t) {
                    continue;
                }
                let ways = only.map_or(1, |p| p.len());
                let read = || TableRead::new(&s, t, &cols(t), only);
                segmented += match t {
                    KERNEL => check::<KernelRow>(&path, read, ways),
                    RUNTIME => check::<RuntimeRow>(&path, read, ways),
                    _ => check::<NvtxRow>(&path, read, ways),
                } as usize;
            }
        }
        assert!(segmented >= 10, "tables of several leaves were cut: {segmented}");
    }
}
