//! The processes of an export that ran GPU work: each is one rank when a report holds several
//! (`nsys profile torchrun …` traces every worker in one report).
//!
//! Rank numbers (docs/ranks.md, "Ranks from Nsight Systems"): an export keeps neither the
//! workers' environment (`RANK`) nor, unless NCCL's NVTX domain was traced with payloads, their
//! communicator rank, so the rank is the **CUDA device order** when every process drove one
//! device of its own (torchrun's `LOCAL_RANK` → `cuda:LOCAL_RANK`, the usual single-node
//! layout), else the **process order** (ascending pid: launch order).

use super::rows::{KERNEL, MEMCPY, MEMSET};
use super::schema::{self, Schema, Wanted};
use crate::ImportError;
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
        let sql = schema.select(t, &["globalPid|globalTid", "deviceId", "count(*)"], "GROUP BY 1, 2");
        // `count(*)` is no column: select() would write NULL for it, so add it by hand
        let sql = sql.replacen(", NULL FROM", ", count(*) FROM", 1);
        let mut st = conn.prepare(&sql).map_err(err)?;
        let mut rows = st.query([]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let Some(g) = schema::int(r, 0) else { continue };
            let e = per.entry(schema::split_global(g).0).or_default();
            if let Some(d) = schema::int(r, 1) {
                e.0.insert(d);
            }
            e.1 += schema::int(r, 2).unwrap_or(0).max(0) as u64;
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
