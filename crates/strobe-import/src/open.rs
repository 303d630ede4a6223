//! From a path to what it holds: detect the format once, then either a timeline store (a
//! valid cached store reused, or an import into a new one: a temp file renamed into the cache
//! dir, or memory when that fails) or the model value of a format that is not a timeline.

use crate::{
    chrome_json, describe, detect, flight_recorder, gunzip_copy, memory_snapshot, ncu_csv, ncu_rep, nsys_sqlite,
    perfetto_pb, xspace, Format, ImportError, Progress,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use strobe_model::flight_recorder::FrDump;
use strobe_model::memory::{MemorySnapshot, MemoryStats};
use strobe_model::ncu::NcuReport;
use strobe_store::{cache, Store, StoreBuilder};

#[derive(Clone, Default)]
pub struct LoadOptions {
    /// `--cache-dir`; falls back to `STROBE_CACHE_DIR`, then the platform cache dir.
    pub cache_dir: Option<PathBuf>,
    /// Build in memory only, writing no cache.
    pub no_cache: bool,
    pub progress: Option<Arc<Progress>>,
    /// A store built now comes back before its level of detail and file are made
    /// (`StoreBuilder::finish_deferred`): for an answer that needs neither (`strobe report`),
    /// whose caller then calls `Store::write_pending` to cache it.
    pub defer_write: bool,
    /// A store built now whose file takes long to write (a compressed one: an Nsight Systems
    /// export's) comes back before the file is written, level of detail and all
    /// (`StoreBuilder::finish_write_behind`): for a window that draws it at once, whose
    /// caller then calls `Store::write_pending` on a thread of its own to cache it.
    pub write_behind: bool,
}

impl LoadOptions {
    /// Built stores cached in `dir`, nothing else asked for.
    pub fn cached_in(dir: impl Into<PathBuf>) -> LoadOptions {
        LoadOptions { cache_dir: Some(dir.into()), ..Default::default() }
    }

    /// Built in memory, no cache read or written.
    pub fn in_memory() -> LoadOptions {
        LoadOptions { no_cache: true, ..Default::default() }
    }
}

/// What a file holds, by the kind of value it becomes.
// one value per opened file, moved once: its size does not matter
#[allow(clippy::large_enum_variant)]
pub enum Source {
    /// A timeline (Chrome/Kineto JSON, Nsight Systems SQLite or report); boxed, being by far
    /// the largest arm.
    Trace(Box<Store>),
    /// `torch.cuda.memory._dump_snapshot` pickle.
    MemorySnapshot(MemorySnapshot),
    /// `torch.cuda.memory_stats()` JSON dump.
    MemoryStats(MemoryStats),
    /// Nsight Compute CSV export or `.ncu-rep` report.
    Ncu(NcuReport),
    /// One rank's PyTorch flight-recorder dump.
    FlightRecorder(FrDump),
}

/// Opens any file Strobe reads: the format is detected here, once.
pub fn open(path: &Path, opts: &LoadOptions) -> Result<Source, ImportError> {
    let fmt = detect(path).map_err(|e| ImportError::io(path, e))?.ok_or_else(|| {
        unknown(
            path,
            "a chrome/Kineto .json[.gz] trace, a Perfetto .pftrace, an Nsight Systems .sqlite export, an XSpace \
             .xplane.pb, a memory snapshot pickle, a flight-recorder dump or an Nsight Compute export",
        )
    })?;
    let progress = opts.progress.clone().unwrap_or_default();
    Ok(match fmt {
        Format::MemorySnapshot => Source::MemorySnapshot(memory_snapshot::import_with(path, &progress)?),
        Format::MemoryStats => Source::MemoryStats(memory_snapshot::import_stats(path)?),
        Format::NcuCsv => Source::Ncu(ncu_csv::import(path)?),
        Format::NcuRep => Source::Ncu(ncu_rep::import(path)?),
        Format::FlightRecorder => Source::FlightRecorder(flight_recorder::import(path)?),
        Format::ChromeJson
        | Format::NsysSqlite
        | Format::NsysRep
        | Format::XSpace
        | Format::Perfetto
        | Format::GzippedSqlite => Source::Trace(Box::new(load_trace(path, fmt, opts)?)),
    })
}

/// Opens a timeline trace; any other kind of file is refused, saying what it is instead.
/// Only the format is read before refusing (not the whole file).
pub fn load(path: &Path, opts: &LoadOptions) -> Result<Store, ImportError> {
    match detect(path).map_err(|e| ImportError::io(path, e))? {
        Some(fmt) if fmt.is_trace() => load_trace(path, fmt, opts),
        Some(Format::NcuCsv | Format::NcuRep) => Err(ImportError::bad(
            path,
            "an Nsight Compute export (per-kernel metrics, not a timeline trace): use `strobe report FILE` or open it in the kernel pane",
        )),
        Some(Format::FlightRecorder) => Err(ImportError::bad(
            path,
            "a flight-recorder dump, not a timeline: use `strobe report` on the ranks' dumps or open them in the window",
        )),
        Some(fmt @ (Format::MemorySnapshot | Format::MemoryStats)) => {
            let what = if fmt == Format::MemorySnapshot { "a memory snapshot" } else { "a torch.cuda.memory_stats() dump" };
            Err(ImportError::bad(path, format!("{what}, not a timeline: use `strobe report FILE` or the memory pane")))
        }
        _ => Err(unknown(
            path,
            "a chrome/Kineto .json[.gz] trace, a Perfetto .pftrace, an Nsight Systems .sqlite export or an XSpace .xplane.pb",
        )),
    }
}

/// The refusal of a file of no format Strobe reads: what the file is, where that can be
/// told, and what was expected.
fn unknown(path: &Path, expected: &str) -> ImportError {
    match describe::what_it_is(path) {
        Some(what) => ImportError::bad(path, format!("{what}, which Strobe does not read (expected {expected})")),
        None => ImportError::bad(path, format!("unknown format (expected {expected})")),
    }
}

/// The processes of an Nsight Systems export in which two or more ran GPU work, one rank
/// each (`nsys_sqlite::gpu_processes`, in rank order); None for any other file, or one that
/// cannot be listed (it then opens whole).
pub fn nsys_ranks(path: &Path, opts: &LoadOptions) -> Option<Vec<nsys_sqlite::GpuProcess>> {
    nsys_listed(path, opts).map(|l| l.gpu).filter(|p| p.len() > 1)
}

/// `nsys_ranks` for a window, which shows every row of the file: None as well when a process
/// without GPU work has rows (`nsys_sqlite::cpu_only_processes`), since a rank view would leave
/// them out. Such an export opens whole.
pub fn nsys_window_ranks(path: &Path, opts: &LoadOptions) -> Option<Vec<nsys_sqlite::GpuProcess>> {
    nsys_listed(path, opts).filter(|l| l.gpu.len() > 1 && l.cpu_only.is_empty()).map(|l| l.gpu)
}

/// An export's processes: those with GPU work, and those with CPU rows only.
#[derive(Debug, PartialEq)]
struct Listed {
    gpu: Vec<nsys_sqlite::GpuProcess>,
    cpu_only: Vec<u32>,
}

/// The export's processes. Listing them scans its tables, so the list is kept in the cache
/// dir beside the stores, under the export's key.
fn nsys_listed(path: &Path, opts: &LoadOptions) -> Option<Listed> {
    if !matches!(detect(path), Ok(Some(Format::NsysSqlite))) {
        return None;
    }
    let key = cache::source_key(path).ok()?;
    let dir = if opts.no_cache { None } else { cache::resolve_cache_dir(opts.cache_dir.as_deref()) };
    let memo = dir.as_deref().map(|d| cache::memo_path(d, &key, "ranks"));
    if let Some(l) = memo.as_deref().and_then(|m| std::fs::read_to_string(m).ok()).and_then(|t| listed_from_text(&t)) {
        return Some(l);
    }
    let _t = strobe_store::timing::Phase::start("nsys: its GPU processes");
    let gpu = nsys_sqlite::gpu_processes(path).ok()?;
    let cpu_only = if gpu.len() > 1 { nsys_sqlite::cpu_only_processes(path, &gpu).ok()? } else { Vec::new() };
    let l = Listed { gpu, cpu_only };
    if let Some(d) = &dir {
        // a cache that cannot be written only means listing again next time
        let _ = cache::write_memo(d, &key, "ranks", listed_to_text(&l).as_bytes());
    }
    Some(l)
}

/// The CPU-only pids on a line (`-` for none), then a GPU process per line: pid, rank, how
/// the rank was found (`d` device order, `p` process order), GPU rows, devices
/// (comma-separated, `-` for none).
fn listed_to_text(l: &Listed) -> String {
    let list = |v: Vec<String>| if v.is_empty() { "-".to_string() } else { v.join(",") };
    let mut out = format!("strobe-ranks 2\ncpu-only {}\n", list(l.cpu_only.iter().map(|p| p.to_string()).collect()));
    for p in &l.gpu {
        let from = if p.rank_from == "device order" { "d" } else { "p" };
        let devs = list(p.devices.iter().map(|d| d.to_string()).collect());
        out.push_str(&format!("{} {} {from} {} {devs}\n", p.pid, p.rank, p.gpu_rows));
    }
    out
}

/// `listed_to_text`'s list back; None for anything else (a damaged or older memo is listed
/// afresh).
fn listed_from_text(text: &str) -> Option<Listed> {
    fn list<T: std::str::FromStr>(s: &str) -> Option<Vec<T>> {
        match s {
            "-" => Some(Vec::new()),
            s => s.split(',').map(|x| x.parse().ok()).collect(),
        }
    }
    let mut lines = text.lines();
    if lines.next()? != "strobe-ranks 2" {
        return None;
    }
    let cpu_only = list(lines.next()?.strip_prefix("cpu-only ")?)?;
    let gpu = lines
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let [pid, rank, from, rows, devs] = f[..] else { return None };
            Some(nsys_sqlite::GpuProcess {
                pid: pid.parse().ok()?,
                devices: list(devs)?,
                gpu_rows: rows.parse().ok()?,
                rank: rank.parse().ok()?,
                rank_from: match from {
                    "d" => "device order",
                    "p" => "process order",
                    _ => return None,
                },
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Listed { gpu, cpu_only })
}

/// One process of a several-process Nsight Systems export (`nsys_sqlite::gpu_processes`) as
/// its own store: the rank view of that process, cached apart from the whole report's.
pub fn load_nsys_process(path: &Path, p: &nsys_sqlite::GpuProcess, opts: &LoadOptions) -> Result<Store, ImportError> {
    let mut out = load_nsys_processes(path, std::slice::from_ref(p), opts)?;
    out.pop().unwrap_or_else(|| Err(ImportError::bad(path, "no process loaded")))
}

/// Every process in `procs` as `load_nsys_process` loads it, in order: those not cached are
/// imported together in one pass over the export (`nsys_sqlite::import_processes`), and
/// their stores finished each on a thread of its own. The outer error is one that stops
/// them all.
pub fn load_nsys_processes(
    path: &Path,
    procs: &[nsys_sqlite::GpuProcess],
    opts: &LoadOptions,
) -> Result<Vec<Result<Store, ImportError>>, ImportError> {
    let progress = opts.progress.clone().unwrap_or_default();
    let source = cache::source_key(path).map_err(|e| ImportError::io(path, e))?;
    let dir = if opts.no_cache { None } else { cache::resolve_cache_dir(opts.cache_dir.as_deref()) };
    let mut out: Vec<Option<Result<Store, ImportError>>> = Vec::with_capacity(procs.len());
    let mut todo: Vec<(usize, StoreBuilder)> = Vec::new();
    for (i, p) in procs.iter().enumerate() {
        let mut key = source;
        // a key of its own per process (and per rank numbering), never the whole report's
        key[2] ^= 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(p.pid as u64 + 1);
        key[3] ^= (p.rank as u64) << 32 | 0x5354_4550;
        if let Some(s) = dir.as_deref().and_then(|d| cache::open_cached(d, &key)) {
            out.push(Some(Ok(s)));
            continue;
        }
        match StoreBuilder::new(cache::output_for(dir.as_deref(), key)) {
            Ok(b) => {
                out.push(None);
                todo.push((i, b));
            }
            Err(e) => out.push(Some(Err(ImportError::io(path, e)))),
        }
    }
    if !todo.is_empty() {
        let pids: Vec<u32> = todo.iter().map(|(i, _)| procs[*i].pid).collect();
        let metas = nsys_sqlite::import_processes(path, &pids, todo.iter_mut().map(|(_, b)| b).collect(), &progress)?;
        let built: Vec<(usize, Result<Store, ImportError>)> = std::thread::scope(|s| {
            let handles: Vec<_> = todo
                .into_iter()
                .zip(metas)
                .map(|((i, b), meta)| {
                    let p = &procs[i];
                    let h = s.spawn(move || -> Result<Store, ImportError> {
                        let mut meta = meta?;
                        meta.distributed =
                            Some(strobe_model::DistributedInfo { rank: Some(p.rank), ..Default::default() });
                        meta.extra.insert("rank_from".into(), serde_json::Value::from(p.rank_from));
                        finish_store(b, &meta, opts, path)
                    });
                    (i, h)
                })
                .collect();
            handles
                .into_iter()
                .map(|(i, h)| {
                    (i, h.join().unwrap_or_else(|_| Err(ImportError::bad(path, "store builder thread panicked"))))
                })
                .collect()
        });
        for (i, r) in built {
            out[i] = Some(r);
        }
    }
    Ok(out.into_iter().map(|r| r.unwrap_or_else(|| Err(ImportError::bad(path, "process not loaded")))).collect())
}

/// A trace format into a store, through the cache.
fn load_trace(path: &Path, fmt: Format, opts: &LoadOptions) -> Result<Store, ImportError> {
    let progress = opts.progress.clone().unwrap_or_default();
    let key = cache::source_key(path).map_err(|e| ImportError::io(path, e))?;
    let dir = if opts.no_cache { None } else { cache::resolve_cache_dir(opts.cache_dir.as_deref()) };
    if let Some(d) = &dir {
        if let Some(s) = cache::open_cached(d, &key) {
            return Ok(s);
        }
    }
    let out = cache::output_for(dir.as_deref(), key);
    let mut b = StoreBuilder::new(out).map_err(|e| ImportError::io(path, e))?;
    let meta = match fmt {
        Format::ChromeJson => chrome_json::import(path, &mut b, &progress)?,
        Format::XSpace => xspace::import(path, &mut b, &progress)?,
        Format::NsysSqlite => nsys_sqlite::import(path, &mut b, &progress)?,
        Format::Perfetto => perfetto_pb::import(path, &mut b, &progress)?,
        Format::GzippedSqlite => {
            let copy = gunzip_copy::inflated_copy(path, dir.as_deref(), "sqlite")?;
            nsys_sqlite::import_as(&copy, path, &mut b, &progress).map_err(|e| match e {
                // named by the user's file, not by the copy in the cache
                ImportError::Bad { what, .. } => ImportError::bad(path, format!("a gzipped SQLite database: {what}")),
                ImportError::Io { source, .. } => ImportError::bad(
                    path,
                    format!("a gzipped SQLite database (inflated to {}): {source}", copy.display()),
                ),
                e => e,
            })?
        }
        Format::NsysRep => {
            nsys_sqlite::import_as(&nsys_sqlite::export_rep(path, dir.as_deref())?, path, &mut b, &progress)?
        }
        _ => return Err(ImportError::bad(path, "not a timeline trace")),
    };
    finish_store(b, &meta, opts, path)
}

/// The builder's store, finished (or ready for queries with its file to come: `defer_write`,
/// `write_behind`).
fn finish_store(
    b: StoreBuilder,
    meta: &strobe_model::TraceMeta,
    opts: &LoadOptions,
    path: &Path,
) -> Result<Store, ImportError> {
    if opts.defer_write {
        return b.finish_deferred(meta).map_err(|e| ImportError::io(path, e));
    }
    if opts.write_behind {
        return b.finish_write_behind(meta).map_err(|e| ImportError::io(path, e));
    }
    let built = b.finish(meta).map_err(|e| ImportError::io(path, e))?;
    cache::open_built(built).map_err(|e| ImportError::bad(path, e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces").join(name)
    }

    #[test]
    fn an_exports_ranks_are_listed_once_then_read_from_the_cache() {
        let file = sample("nsys_ddp_2proc.sqlite");
        let dir = tempfile::tempdir().unwrap();
        let opts = LoadOptions::cached_in(dir.path());
        let listed = nsys_sqlite::gpu_processes(&file).unwrap();
        assert_eq!(nsys_ranks(&file, &opts).as_ref(), Some(&listed));
        let memos: Vec<PathBuf> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "ranks"))
            .collect();
        assert_eq!(memos.len(), 1, "one memo: {memos:?}");
        let temps = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".tmp"));
        assert_eq!(temps.count(), 0, "no temp file left");
        // read back from the memo: the same list
        let memo = listed_from_text(&std::fs::read_to_string(&memos[0]).unwrap()).unwrap();
        assert_eq!((&memo.gpu, memo.cpu_only.len()), (&listed, 0));
        assert_eq!(nsys_ranks(&file, &opts).as_ref(), Some(&listed));
        // a damaged memo is listed afresh and mended
        for bad in [
            "",
            "strobe-ranks 2\ncpu-only -\n520 0 x 1 0\n",
            "strobe-ranks 2\ncpu-only -\n520 zero d 1 0\n",
            "strobe-ranks 2\n520 0 p 1 0\n",
            "strobe-ranks 1\n520 0 p 1 0\n",
            "other\n",
        ] {
            std::fs::write(&memos[0], bad).unwrap();
            assert_eq!(nsys_ranks(&file, &opts).as_ref(), Some(&listed), "{bad:?}");
        }
        // the window splits it too: every process with rows ran GPU work
        assert_eq!(nsys_window_ranks(&file, &opts).as_ref(), Some(&listed));
        // one GPU process, or not an export: opened whole
        assert_eq!(nsys_ranks(&sample("nsys_gpt_single.sqlite"), &opts), None);
        assert_eq!(nsys_ranks(&sample("gpt_train.json.gz"), &opts), None);
    }

    #[test]
    fn an_export_with_a_cpu_only_process_opens_whole_in_the_window() {
        // the 2-process export with an NVTX range added on a third process (a data loader's
        // worker, say): the report still reads two ranks; the window keeps every row
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("with_worker.sqlite");
        std::fs::copy(sample("nsys_ddp_2proc.sqlite"), &file).unwrap();
        let c = rusqlite::Connection::open(&file).unwrap();
        c.execute_batch(
            "CREATE TEMP TABLE one AS SELECT * FROM NVTX_EVENTS LIMIT 1;
             UPDATE one SET globalTid = (globalTid & ~(16777215 << 24)) | (999 << 24);
             INSERT INTO NVTX_EVENTS SELECT * FROM one;",
        )
        .unwrap();
        drop(c);
        let opts = LoadOptions::cached_in(dir.path().join("cache"));
        let gpu = nsys_sqlite::gpu_processes(&file).unwrap();
        assert_eq!(gpu.len(), 2);
        assert_eq!(nsys_sqlite::cpu_only_processes(&file, &gpu).unwrap(), vec![999]);
        for _ in 0..2 {
            // listed, then from the memo
            assert_eq!(nsys_ranks(&file, &opts).as_ref(), Some(&gpu));
            assert_eq!(nsys_window_ranks(&file, &opts), None);
        }
    }
}
