//! One compact struct per activity table, the columns each reads, and the reader thread that
//! streams a table's rows in batches over a bounded channel (so memory stays bounded: no
//! table is ever held whole). A table is read page by page from the file (`sqlite_file`)
//! when its layout allows, else through SQLite; both give the converters the same values.

use super::schema::{first_name, int, name_ref, open, split_global, Cells, Direct, DirectRow, NameRef, Schema};
use crate::sqlite_file::{Scratch, SqliteFile};
use std::path::Path;
use std::sync::mpsc::SyncSender;

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
/// allows, its page-by-page equivalent; optionally only one process's rows.
pub struct TableRead {
    pub sql: String,
    pub direct: Option<Direct>,
    /// (position of the `globalPid`/`globalTid` column among the selected ones, pid).
    pub only_pid: Option<(usize, u32)>,
}

impl TableRead {
    /// Reading `cols` (specs as for [`Schema::col`]) of `table`. `STROBE_NSYS_SQL=1` in the
    /// environment reads every table through SQLite (to compare the two paths).
    pub fn new(s: &Schema, table: &'static str, cols: &[&str], only_pid: Option<u32>) -> TableRead {
        // the process column: its position among `cols` (page reads) and its name (SQL)
        let pid_col = only_pid.and_then(|p| {
            let i = cols.iter().position(|c| c.trim_start_matches('?').starts_with("global"))?;
            s.col(table, cols[i]).map(|name| (i, name, p))
        });
        let filter = pid_col.map(|(_, name, p)| pid_clause(name, p)).unwrap_or_default();
        let only_pid = pid_col.map(|(i, _, p)| (i, p));
        let sql = s.select(table, cols, &filter);
        let direct = if std::env::var_os("STROBE_NSYS_SQL").is_none() { s.direct(table, cols) } else { None };
        TableRead { sql, direct, only_pid }
    }

    /// Each row of the table, in rowid order, converted, to `each` (None: an unusable
    /// row); stops when `each` returns false.
    pub fn scan<R: FromCells>(&self, path: &Path, mut each: impl FnMut(Option<R>) -> bool) -> Result<(), String> {
        // A file the page reader refuses before any row is read (UTF-16 text, no mmap, a
        // malformed b-tree) goes through SQLite. A damaged leaf met mid-scan is an error, as
        // SQLite's "malformed" would be: falling back after rows were sent would send them twice.
        let pages = self.direct.as_ref().and_then(|d| {
            let file = SqliteFile::open(path).ok()?;
            let leaves = file.table_leaves(d.root).ok()?;
            Some((d, file, leaves))
        });
        if let Some((d, file, leaves)) = pages {
            let mut scratch = Scratch::default();
            for leaf in leaves {
                let go = file.scan_leaf(leaf, d.upto, &mut scratch, |_, rec| {
                    let row = DirectRow { rec, src: &d.src };
                    match self.only_pid {
                        Some((i, p)) if int(&row, i).is_none_or(|g| split_global(g).0 != p) => true,
                        _ => each(R::from_cells(&row)),
                    }
                })?;
                if !go {
                    break;
                }
            }
            return Ok(());
        }
        let mut run = || -> rusqlite::Result<()> {
            let conn = open(path)?;
            let mut st = conn.prepare(&self.sql)?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                if !each(R::from_cells(r)) {
                    break;
                }
            }
            Ok(())
        };
        run().map_err(|e| e.to_string())
    }
}

/// Runs `read` and sends its rows in batches. Stops quietly when the receiver is gone.
pub fn read_table<R: FromCells>(path: &Path, read: &TableRead, tx: SyncSender<Msg<R>>) {
    let mut batch = Batch { rows: Vec::with_capacity(BATCH), bad: 0 };
    let mut gone = false;
    let r = read.scan(path, |row: Option<R>| {
        match row {
            Some(x) => batch.rows.push(x),
            None => batch.bad += 1,
        }
        if batch.rows.len() + batch.bad as usize >= BATCH {
            let full = std::mem::replace(&mut batch, Batch { rows: Vec::with_capacity(BATCH), bad: 0 });
            gone = tx.send(Ok(full)).is_err();
        }
        !gone
    });
    match r {
        Err(e) => {
            let _ = tx.send(Err(e));
        }
        Ok(()) if !gone && (!batch.rows.is_empty() || batch.bad > 0) => {
            let _ = tx.send(Ok(batch));
        }
        Ok(()) => {}
    }
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
        ]),
        MEMCPY => gpu(&["bytes", "copyKind", "srcKind", "dstKind", "?srcDeviceId", "?dstDeviceId"]),
        MEMSET => gpu(&["bytes", "value", "memKind"]),
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
        })
    }
}

#[derive(Debug, PartialEq)]
pub struct MemsetRow {
    pub c: GpuCommon,
    pub bytes: i64,
    pub value: i64,
    pub mem_kind: i64,
}

impl FromCells for MemsetRow {
    fn from_cells(r: &impl Cells) -> Option<MemsetRow> {
        Some(MemsetRow {
            c: gpu_common(r)?,
            bytes: int(r, 7).unwrap_or(0),
            value: int(r, 8).unwrap_or(0),
            mem_kind: int(r, 9).unwrap_or(-1),
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
fn pid_clause(col: &str, pid: u32) -> String {
    format!("WHERE (({} >> 24) & 16777215) = {pid}", super::schema::quote(col))
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
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces");
        let mut direct_tables = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "sqlite") {
                continue;
            }
            let conn = open(&path).unwrap();
            let s = Schema::probe(&conn, WANTED).unwrap();
            fn both<R: FromCells + PartialEq + std::fmt::Debug>(path: &Path, t: &str, mut read: TableRead) -> bool {
                let mut a: Vec<Option<R>> = Vec::new();
                read.scan(path, |r| {
                    a.push(r);
                    true
                })
                .unwrap();
                let direct = read.direct.take().is_some();
                let mut b: Vec<Option<R>> = Vec::new();
                read.scan(path, |r| {
                    b.push(r);
                    true
                })
                .unwrap();
                assert_eq!(a, b, "{}: {t}", path.display());
                direct
            }
            for t in [KERNEL, MEMCPY, MEMSET, RUNTIME, SYNC, NVTX, OSRT] {
                if !s.has(t) {
                    continue;
                }
                let read = TableRead::new(&s, t, &cols(t), None);
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
        assert!(direct_tables >= 20, "most bundled tables are read page by page: {direct_tables}");
    }
}
