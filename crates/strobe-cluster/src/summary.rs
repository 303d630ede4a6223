//! A rank's summary on disk: its digest (`strobe_analysis::ranks::digest`) as six Parquet
//! tables, `PREFIX.rank.parquet`, `.steps`, `.collectives`, `.kernels`, `.compute`, `.comm_ops`
//! (docs/cluster.md gives the schema). Reading them back gives the digest exactly, so the merge (`merge_digests`)
//! computes from summaries what it computes from the traces.

use crate::table::{Rows, Table};
use anyhow::{anyhow, bail, Context, Result};
use std::path::{Path, PathBuf};
use strobe_analysis::ranks::breakdown::KernelTotal;
use strobe_analysis::ranks::collectives::CommKernel;
use strobe_analysis::ranks::comm_ops::CommRecords;
use strobe_analysis::ranks::digest::{RankClaim, RankDigest, StepFigures};
use strobe_analysis::ranks::straggler::BeforeWindow;
use strobe_analysis::steps::Step;

/// Bumped whenever a table's columns or a figure's definition change: a summary of another
/// version is refused rather than merged into wrong figures.
pub const SCHEMA_VERSION: i64 = 3;

const TABLES: [&str; 6] = ["rank", "steps", "collectives", "kernels", "compute", "comm_ops"];

fn table_path(dir: &Path, prefix: &str, table: &str) -> PathBuf {
    dir.join(format!("{prefix}.{table}.parquet"))
}

/// The file prefix of rank `d`'s summary: `rank00012-STEM-HASH` where the trace names its rank
/// (metadata or file name), else `STEM-HASH`; the hash of the source path keeps two traces of
/// the same rank number or file name (separate `summarize` runs on a cluster) apart.
pub fn prefix_of(d: &RankDigest, named: bool) -> String {
    let name = d.source.rsplit(['/', '\\']).next().unwrap_or(&d.source);
    let stem = name.split('.').next().unwrap_or(name);
    let clean: String =
        stem.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    let tail = format!("{clean}-{:08x}", fnv(d.source.as_bytes()) as u32);
    if named {
        format!("rank{:05}-{tail}", d.rank)
    } else {
        tail
    }
}

fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf29ce484222325u64, |h, &x| (h ^ x as u64).wrapping_mul(0x100000001b3))
}

/// Each breakdown's MFU and model FLOPs as their bit patterns (integers read back exactly).
fn float_bits(b: &[strobe_analysis::attribution::StepBreakdown]) -> Vec<(Option<u64>, u64)> {
    b.iter().map(|x| (x.details.mfu.map(f64::to_bits), x.details.model_flops.to_bits())).collect()
}

fn with_float_bits(
    mut b: Vec<strobe_analysis::attribution::StepBreakdown>,
    bits: Vec<(Option<u64>, u64)>,
) -> Vec<strobe_analysis::attribution::StepBreakdown> {
    for (x, (mfu, flops)) in b.iter_mut().zip(bits) {
        x.details.mfu = mfu.map(f64::from_bits);
        x.details.model_flops = f64::from_bits(flops);
    }
    b
}

fn json<T: serde::Serialize>(v: &T) -> Option<String> {
    serde_json::to_string(v).ok()
}

/// Writes `d`'s four tables into `dir` under `prefix`; returns the paths written.
pub fn write_summary(dir: &Path, prefix: &str, d: &RankDigest) -> Result<Vec<PathBuf>> {
    let r = Some(d.rank);
    let devices = d.devices.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",");
    let rank = Table::default()
        .i64("schema_version", [Some(SCHEMA_VERSION)])
        .i64("rank", [r])
        .str("source", [Some(d.source.clone())])
        .i64("meta_rank", [d.claim.meta_rank])
        .str("rank_split", [d.claim.split.clone()])
        .i64("pid", [d.pid])
        .str("devices", [Some(devices)])
        .i64("base_time_ns", [d.base_time_ns])
        .str("gpus_json", [json(&d.gpus)])
        .str("launch_json", [json(&d.launch)])
        .str("step_anomalies_json", [json(&d.step_anomalies)])
        // each step's attribution as this rank alone gives it, and its stretches without GPU
        // work: the merge moves their time to comm wait and bubble where other ranks say so
        .str("step_breakdown_json", [json(&d.step_breakdown)])
        .str("step_stretches_json", [json(&d.step_stretches)])
        // the breakdowns' floats as bits: JSON text does not read back to the same f64
        .str("step_float_bits_json", [json(&float_bits(&d.step_breakdown))])
        .str("process_groups_json", [json(&d.comm_records.groups)])
        .str("comm_notes_json", [json(&d.comm_records.notes)])
        .str("device_name", [d.comm_records.device.clone()])
        .str("backend", [d.comm_records.backend.clone()]);
    let n = d.steps.len();
    let f = |i: usize| d.step_figures.get(i).copied().unwrap_or_default();
    let steps = Table::default()
        .i64("rank", (0..n).map(|_| r))
        .i64("step", (0..n).map(|i| Some(i as i64)))
        .str("name", d.steps.iter().map(|s| Some(s.name.clone())))
        .str("source", d.steps.iter().map(|s| Some(s.source.as_str().to_string())))
        .i64("start_ns", d.steps.iter().map(|s| Some(s.start_ns)))
        .i64("dur_ns", d.steps.iter().map(|s| Some(s.dur_ns)))
        .i64("compute_ns", (0..n).map(|i| Some(f(i).compute_ns)))
        .i64("comm_ns", (0..n).map(|i| Some(f(i).comm_ns)))
        .i64("exposed_comm_ns", (0..n).map(|i| Some(f(i).exposed_comm_ns)))
        .i64("idle_ns", (0..n).map(|i| Some(f(i).idle_ns)));
    let c = &d.comm;
    let mut seen: std::collections::HashMap<&str, i64> = Default::default();
    let occurrence: Vec<Option<i64>> = c
        .iter()
        .map(|k| {
            let e = seen.entry(k.name.as_str()).or_insert(0);
            *e += 1;
            Some(*e - 1)
        })
        .collect();
    let own_step = |k: &CommKernel| strobe_analysis::ranks::step_at(&d.steps, k.launch_ns).map(|s| s.name.clone());
    let b = |k: &CommKernel| k.before.clone();
    let collectives = Table::default()
        .i64("rank", c.iter().map(|_| r))
        .i64("index", (0..c.len()).map(|i| Some(i as i64)))
        .str("name", c.iter().map(|k| Some(k.name.clone())))
        .i64("k", occurrence)
        .str("step", c.iter().map(own_step))
        .i64("start_ns", c.iter().map(|k| Some(k.start)))
        .i64("end_ns", c.iter().map(|k| Some(k.end)))
        .i64("launch_ns", c.iter().map(|k| Some(k.launch_ns)))
        .i64("span", c.iter().map(|k| Some(k.span as i64)))
        .i64("bytes", c.iter().map(|_| None))
        .i64("before_start_ns", c.iter().map(|k| b(k).map(|w| w.window_start_ns)))
        .i64("before_compute_ns", c.iter().map(|k| b(k).map(|w| w.compute_ns)))
        .i64("before_gpu_idle_ns", c.iter().map(|k| b(k).map(|w| w.gpu_idle_ns)))
        .str("before_top_kernels_json", c.iter().map(|k| b(k).and_then(|w| json(&w.top_kernels))));
    let compute = Table::default()
        .i64("rank", d.compute.iter().map(|_| r))
        .i64("start_ns", d.compute.iter().map(|x| Some(x.0)))
        .i64("end_ns", d.compute.iter().map(|x| Some(x.1)));
    let k = &d.kernels;
    let kernels = Table::default()
        .i64("rank", k.iter().map(|_| r))
        .str("kind", k.iter().map(|x| Some(x.kind.clone())))
        .str("name", k.iter().map(|x| Some(x.name.clone())))
        .i64("count", k.iter().map(|x| Some(x.count as i64)))
        .i64("total_ns", k.iter().map(|x| Some(x.total_ns)))
        .i64("min_ns", k.iter().map(|x| Some(x.min_ns)))
        .i64("max_ns", k.iter().map(|x| Some(x.max_ns)));
    let mut out = Vec::new();
    let comm_ops = crate::comm_ops_table::write_table(r, &d.comm_records.ops);
    for (name, t) in TABLES.iter().zip([rank, steps, collectives, kernels, compute, comm_ops]) {
        let p = table_path(dir, prefix, name);
        t.write(&p)?;
        out.push(p);
    }
    Ok(out)
}

fn parse_json<T: serde::de::DeserializeOwned>(path: &str, col: &str, s: Option<String>) -> Result<T> {
    let s = s.ok_or_else(|| anyhow!("{path}: column {col} is null"))?;
    serde_json::from_str(&s).with_context(|| format!("{path}: column {col}"))
}

/// Reads the summary `prefix` of `dir` back into the digest it was written from.
pub fn read_summary(dir: &Path, prefix: &str) -> Result<RankDigest> {
    let rank = Rows::read(&table_path(dir, prefix, "rank"))?;
    if rank.len != 1 {
        bail!("{}: {} rows, a rank table has one", rank.path, rank.len);
    }
    let version = rank.req_i64s("schema_version")?[0];
    if version != SCHEMA_VERSION {
        bail!("{}: summary schema version {version}, this strobe reads {SCHEMA_VERSION}: summarize again", rank.path);
    }
    let p = rank.path.clone();
    let one_str = |c: &str| rank.strs(c).map(|v| v.into_iter().next().flatten());
    let one_i64 = |c: &str| rank.i64s(c).map(|v| v.into_iter().next().flatten());
    let devices: Vec<i64> = one_str("devices")?
        .unwrap_or_default()
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<i64>().with_context(|| format!("{p}: devices: {s:?} is not a device number")))
        .collect::<Result<_>>()?;

    let st = Rows::read(&table_path(dir, prefix, "steps"))?;
    let sources: Vec<strobe_analysis::steps::StepSource> = st
        .req_strs("source")?
        .into_iter()
        .map(|s| {
            serde_json::from_value(serde_json::Value::String(s.clone())).map_err(|_| {
                anyhow!("{}: step source {s:?} is none of profiler_step, nvtx, annotation, inferred", st.path)
            })
        })
        .collect::<Result<_>>()?;
    let (names, starts, durs) = (st.req_strs("name")?, st.req_i64s("start_ns")?, st.req_i64s("dur_ns")?);
    let steps: Vec<Step> = names
        .into_iter()
        .zip(starts)
        .zip(durs)
        .zip(sources)
        .map(|(((name, start_ns), dur_ns), source)| Step { name, start_ns, dur_ns, source })
        .collect();
    let (comp, comm, exp, idle) =
        (st.req_i64s("compute_ns")?, st.req_i64s("comm_ns")?, st.req_i64s("exposed_comm_ns")?, st.req_i64s("idle_ns")?);
    let step_figures = (0..steps.len())
        .map(|i| StepFigures { compute_ns: comp[i], comm_ns: comm[i], exposed_comm_ns: exp[i], idle_ns: idle[i] })
        .collect();

    let co = Rows::read(&table_path(dir, prefix, "collectives"))?;
    let (names, starts, ends, launches, spans) = (
        co.req_strs("name")?,
        co.req_i64s("start_ns")?,
        co.req_i64s("end_ns")?,
        co.req_i64s("launch_ns")?,
        co.req_i64s("span")?,
    );
    let (b_start, b_comp, b_idle, b_top) = (
        co.i64s("before_start_ns")?,
        co.i64s("before_compute_ns")?,
        co.i64s("before_gpu_idle_ns")?,
        co.strs("before_top_kernels_json")?,
    );
    let mut comm_kernels = Vec::with_capacity(names.len());
    for (i, name) in names.into_iter().enumerate() {
        let before = match (b_start[i], b_comp[i], b_idle[i]) {
            (Some(window_start_ns), Some(compute_ns), Some(gpu_idle_ns)) => Some(BeforeWindow {
                window_start_ns,
                window_end_ns: starts[i],
                compute_ns,
                gpu_idle_ns,
                top_kernels: parse_json(&co.path, "before_top_kernels_json", b_top[i].clone())?,
            }),
            _ => None,
        };
        comm_kernels.push(CommKernel {
            name,
            start: starts[i],
            end: ends[i],
            span: u32::try_from(spans[i])
                .map_err(|_| anyhow!("{}: row {i}: span {} out of range", co.path, spans[i]))?,
            launch_ns: launches[i],
            before,
        });
    }

    let ke = Rows::read(&table_path(dir, prefix, "kernels"))?;
    let (kinds, names, counts, totals, mins, maxs) = (
        ke.req_strs("kind")?,
        ke.req_strs("name")?,
        ke.req_i64s("count")?,
        ke.req_i64s("total_ns")?,
        ke.req_i64s("min_ns")?,
        ke.req_i64s("max_ns")?,
    );
    let kernels = (0..kinds.len())
        .map(|i| KernelTotal {
            kind: kinds[i].clone(),
            name: names[i].clone(),
            count: counts[i].max(0) as u64,
            total_ns: totals[i],
            min_ns: mins[i],
            max_ns: maxs[i],
        })
        .collect();

    let cu = Rows::read(&table_path(dir, prefix, "compute"))?;
    let compute: Vec<(i64, i64)> = cu.req_i64s("start_ns")?.into_iter().zip(cu.req_i64s("end_ns")?).collect();
    if compute.windows(2).any(|w| w[1].0 < w[0].1) || compute.iter().any(|c| c.1 < c.0) {
        bail!("{}: the compute union is not sorted and disjoint", cu.path);
    }

    Ok(RankDigest {
        rank: one_i64("rank")?.unwrap_or(0),
        source: one_str("source")?.ok_or_else(|| anyhow!("{p}: source is null"))?,
        claim: RankClaim { meta_rank: one_i64("meta_rank")?, split: one_str("rank_split")? },
        pid: one_i64("pid")?,
        devices,
        base_time_ns: one_i64("base_time_ns")?,
        gpus: parse_json(&p, "gpus_json", one_str("gpus_json")?)?,
        steps,
        step_figures,
        comm: comm_kernels,
        compute,
        kernels,
        step_anomalies: parse_json(&p, "step_anomalies_json", one_str("step_anomalies_json")?)?,
        launch: parse_json(&p, "launch_json", one_str("launch_json")?)?,
        step_breakdown: with_float_bits(
            parse_json(&p, "step_breakdown_json", one_str("step_breakdown_json")?)?,
            parse_json(&p, "step_float_bits_json", one_str("step_float_bits_json")?)?,
        ),
        step_stretches: parse_json(&p, "step_stretches_json", one_str("step_stretches_json")?)?,
        comm_records: CommRecords {
            ops: crate::comm_ops_table::read_table(&Rows::read(&table_path(dir, prefix, "comm_ops"))?)?,
            groups: parse_json(&p, "process_groups_json", one_str("process_groups_json")?)?,
            notes: parse_json(&p, "comm_notes_json", one_str("comm_notes_json")?)?,
            device: one_str("device_name")?,
            backend: one_str("backend")?,
        },
    })
}

/// The summary prefixes in `dir` (each `PREFIX.rank.parquet`), sorted.
pub fn summaries_in(dir: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let name = e?.file_name().to_string_lossy().to_string();
        if let Some(p) = name.strip_suffix(".rank.parquet") {
            out.push(p.to_string());
        }
    }
    out.sort();
    Ok(out)
}

/// Whether `dir` holds summaries (a folder given to `strobe report` or opened in the GUI).
pub fn is_summary_dir(dir: &Path) -> bool {
    dir.is_dir() && summaries_in(dir).is_ok_and(|v| !v.is_empty())
}

/// Every summary of `dir`, read in parallel; the first failure names its file.
pub fn read_summaries(dir: &Path) -> Result<Vec<RankDigest>> {
    use rayon::prelude::*;
    let prefixes = summaries_in(dir)?;
    if prefixes.is_empty() {
        bail!("{}: no summaries (*.rank.parquet) in this folder", dir.display());
    }
    prefixes.par_iter().map(|p| read_summary(dir, p)).collect()
}
