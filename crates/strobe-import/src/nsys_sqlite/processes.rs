//! The processes of an export that ran GPU work: each is one rank when a report holds several
//! (`nsys profile torchrun …` traces every worker in one report).
//!
//! Rank numbers (docs/ranks.md, "Ranks from Nsight Systems"): an export keeps neither the
//! workers' environment (`RANK`) nor, unless NCCL's NVTX domain was traced with payloads, their
//! communicator rank, so the rank is the **CUDA device order** when every process drove one
//! device of its own (torchrun's `LOCAL_RANK` → `cuda:LOCAL_RANK`, the usual single-node
//! layout), else the **process order** (ascending pid: launch order).

use super::rows::{FromCells, TableRead, KERNEL, MEMCPY, MEMSET, NVTX, OSRT};
use super::schema::{self, Cells, Schema, Wanted};
use crate::ImportError;
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuProcess {
    pub pid: u32,
    pub devices: Vec<i64>,
    /// GPU rows (kernels, copies, memsets) of the process.
    pub gpu_rows: u64,
    pub rank: i64,
    /// `"device order"` or `"process order"`.
    pub rank_from: &'static str,
}

/// A CPU row's process (from its thread's global id).
struct Pid(u32);

impl FromCells for Pid {
    fn from_cells(r: &impl Cells) -> Option<Pid> {
        Some(Pid(schema::split_global(schema::int(r, 0)?).0))
    }
}

/// The processes of the export at `path` with NVTX ranges or OS runtime calls but no GPU work
/// of their own (not in `gpu`): a data loader's workers, a launcher. A rank view, which keeps
/// each GPU process's rows, would leave them out. Ascending.
pub fn cpu_only_processes(path: &Path, gpu: &[GpuProcess]) -> Result<Vec<u32>, ImportError> {
    let err = |e: rusqlite::Error| ImportError::bad(path, format!("listing its processes: {e}"));
    let conn = schema::open(path).map_err(err)?;
    const T: [Wanted; 2] = [Wanted { name: NVTX, aliases: &[] }, Wanted { name: OSRT, aliases: &[] }];
    let schema = Schema::probe(&conn, &T).map_err(err)?;
    let mut out: BTreeSet<u32> = BTreeSet::new();
    for t in [NVTX, OSRT] {
        if !schema.has(t) || schema.col(t, "globalTid").is_none() {
            continue;
        }
        let read = TableRead::new(&schema, t, &["globalTid"], None);
        let parts = read
            .fold_parallel(path, 2, BTreeSet::<u32>::new, |pids, _, r: Option<Pid>| {
                if let Some(Pid(p)) = r {
                    pids.insert(p);
                }
            })
            .map_err(|e| ImportError::bad(path, format!("listing its processes: table {t}: {e}")))?;
        out.extend(parts.into_iter().flatten());
    }
    out.retain(|p| !gpu.iter().any(|g| g.pid == *p));
    Ok(out.into_iter().collect())
}

/// The processes with GPU work in the export at `path`, in rank order.
pub fn gpu_processes(path: &Path) -> Result<Vec<GpuProcess>, ImportError> {
    let err = |e: rusqlite::Error| ImportError::bad(path, format!("listing its processes: {e}"));
    let conn = schema::open(path).map_err(err)?;
    const T: [Wanted; 3] = [
        Wanted { name: KERNEL, aliases: &[] },
        Wanted { name: MEMCPY, aliases: &[] },
        Wanted { name: MEMSET, aliases: &[] },
    ];
    let schema = Schema::probe(&conn, &T).map_err(err)?;
    let mut per: BTreeMap<u32, (BTreeSet<i64>, u64)> = BTreeMap::new();
    for t in [KERNEL, MEMCPY, MEMSET] {
        if !schema.has(t) || schema.col(t, "globalPid|globalTid").is_none() {
            continue;
        }
        // Counted here rather than by `GROUP BY`: SQLite would sort a million rows for it.
        // Both halves of the table at once: nothing else runs while the ranks are listed.
        let read = TableRead::new(&schema, t, &["globalPid|globalTid", "deviceId"], None);
        let parts = read
            .fold_parallel(path, 2, FxHashMap::<(u32, Option<i64>), u64>::default, |counts, _, r: Option<PidDevice>| {
                if let Some(r) = r {
                    *counts.entry((r.pid, r.device)).or_default() += 1;
                }
            })
            .map_err(|e| ImportError::bad(path, format!("listing its processes: table {t}: {e}")))?;
        let mut counts: FxHashMap<(u32, Option<i64>), u64> = FxHashMap::default();
        for part in parts {
            for (k, n) in part {
                *counts.entry(k).or_default() += n;
            }
        }
        for ((pid, device), n) in counts {
            let e = per.entry(pid).or_default();
            e.0.extend(device);
            e.1 += n;
        }
    }
    let mut out: Vec<GpuProcess> = per
        .into_iter()
        .map(|(pid, (d, n))| GpuProcess { pid, devices: d.into_iter().collect(), gpu_rows: n, rank: 0, rank_from: "" })
        .collect();
    let one_each = out.iter().all(|p| p.devices.len() == 1)
        && out.iter().map(|p| p.devices[0]).collect::<BTreeSet<_>>().len() == out.len();
    if one_each {
        out.sort_by_key(|p| (p.devices[0], p.pid));
    }
    for (i, p) in out.iter_mut().enumerate() {
        p.rank = i as i64;
        p.rank_from = if one_each { "device order" } else { "process order" };
    }
    Ok(out)
}

/// A GPU row's process and device (a row without a process is not counted).
struct PidDevice {
    pid: u32,
    device: Option<i64>,
}

impl FromCells for PidDevice {
    fn from_cells(r: &impl Cells) -> Option<PidDevice> {
        Some(PidDevice { pid: schema::split_global(schema::int(r, 0)?).0, device: schema::int(r, 1) })
    }
}
