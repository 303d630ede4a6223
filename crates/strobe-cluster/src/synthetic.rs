//! A synthetic job of many ranks for the scale test and benchmark: every
//! rank's digest is one real rank's digest (the template, e.g. from a trace of sample-traces)
//! scaled to `steps` steps by repeating its steps in turn, with a clock offset per rank, a small
//! arrival jitter at every collective, and — on one planted rank — a slow kernel before the
//! last collective of some steps. Summaries are written with `summary::write_summary`, the
//! writer of `strobe summarize`.
//!
//! What a collective does across ranks is kept physical: a collective ends at the same moment
//! on every rank (the last arrival plus its transfer), so a late rank lengthens every other
//! rank's kernel, and everything after the collective moves later on every rank. The steps'
//! figures are computed from the generated intervals with the definitions of `digest`.

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};
use strobe_analysis::intervals::total_within;
use strobe_analysis::intervals::{intersect, total, union};
use strobe_analysis::ranks::collectives::CommKernel;
use strobe_analysis::ranks::digest::{RankClaim, RankDigest, StepFigures};
use strobe_analysis::ranks::straggler::KernelInWindow;
use strobe_analysis::steps::Step;

/// The planted straggler: `rank` runs a kernel `extra_ns` longer before the last collective of
/// every step in `steps` (indices).
#[derive(Clone, Debug)]
pub struct Planted {
    pub rank: i64,
    pub steps: std::ops::RangeInclusive<usize>,
    pub extra_ns: i64,
}

#[derive(Clone, Debug)]
pub struct Job {
    pub ranks: usize,
    pub steps: usize,
    pub planted: Option<Planted>,
    /// Clock offsets are uniform in ±this (host clocks disagree; collective alignment fixes it).
    pub clock_spread_ns: i64,
    pub seed: u64,
}

impl Job {
    /// `ranks` × `steps` with one planted straggler: rank ranks/3 slow on
    /// steps 40–60 by a fifth of the template's step.
    pub fn with_straggler(ranks: usize, steps: usize, template: &RankDigest) -> Job {
        let step = template.steps.iter().map(|s| s.dur_ns).max().unwrap_or(0);
        Job {
            ranks,
            steps,
            planted: Some(Planted {
                rank: (ranks / 3) as i64,
                steps: 40.min(steps.saturating_sub(1))..=60.min(steps.saturating_sub(1)),
                extra_ns: step / 5,
            }),
            clock_spread_ns: 5_000_000,
            seed: 0x5eed,
        }
    }
}

/// splitmix64: a reproducible per-(rank, step, collective) draw without a generator's state.
fn draw(seed: u64, a: u64, b: u64, c: u64) -> u64 {
    let mut z = seed
        ^ a.wrapping_mul(0x9E3779B97F4A7C15)
        ^ b.wrapping_mul(0xBF58476D1CE4E5B9)
        ^ c.wrapping_mul(0x94D049BB133111EB);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
    z ^ (z >> 31)
}

/// One template step: its range and what starts in its slot (up to the next step's start),
/// relative to the step's start.
struct Slot {
    name_prefix: String,
    dur_ns: i64,
    len_ns: i64,
    comm: Vec<CommKernel>,
    compute: Vec<(i64, i64)>,
}

fn slots(t: &RankDigest) -> Result<Vec<Slot>> {
    if t.steps.is_empty() || t.comm.is_empty() {
        bail!("{}: the template rank needs steps and collectives", t.source);
    }
    let mut out = Vec::new();
    for (i, s) in t.steps.iter().enumerate() {
        let a = s.start_ns;
        let end_of_work = |b: i64| {
            let c = t.comm.iter().filter(|k| (a..b).contains(&k.launch_ns)).map(|k| k.end).max().unwrap_or(b);
            c.max(s.start_ns + s.dur_ns)
        };
        let b = match t.steps.get(i + 1) {
            Some(n) => n.start_ns,
            None => end_of_work(i64::MAX),
        };
        let rel = |x: i64| x - a;
        let comm: Vec<CommKernel> = t
            .comm
            .iter()
            .filter(|k| (a..b).contains(&k.launch_ns))
            .map(|k| {
                let mut k = k.clone();
                k.start = rel(k.start);
                k.end = rel(k.end);
                k.launch_ns = rel(k.launch_ns);
                if let Some(w) = &mut k.before {
                    w.window_start_ns = rel(w.window_start_ns);
                    w.window_end_ns = rel(w.window_end_ns);
                }
                k
            })
            .collect();
        if comm.is_empty() {
            continue;
        }
        let compute = t.compute.iter().filter(|c| (a..b).contains(&c.0)).map(|&(x, y)| (rel(x), rel(y))).collect();
        let name_prefix = s.name.trim_end_matches(|c: char| c.is_ascii_digit()).to_string();
        out.push(Slot { name_prefix, dur_ns: s.dur_ns, len_ns: (b - a).max(end_of_work(b) - a), comm, compute });
    }
    if out.is_empty() {
        bail!("{}: no step of the template rank launches a collective", t.source);
    }
    Ok(out)
}

/// The digest of rank `rank` of `job`, scaled from `template`.
pub fn rank_digest(template: &RankDigest, job: &Job, rank: usize) -> Result<RankDigest> {
    let slots = slots(template)?;
    let seed = job.seed;
    let r = rank as u64;
    let spread = job.clock_spread_ns.max(0);
    let clock = (draw(seed, r, 0, 0) % (2 * spread as u64 + 1)) as i64 - spread;
    let planted_here = |k: usize| job.planted.as_ref().filter(|p| p.steps.contains(&k));
    let mut steps = Vec::with_capacity(job.steps);
    let mut comm = Vec::new();
    let mut compute = Vec::new();
    let mut t0 = template.steps[0].start_ns;
    let slow_kernel = template
        .kernels
        .iter()
        .filter(|k| k.kind == "compute")
        .max_by_key(|k| k.total_ns)
        .map(|k| k.name.clone())
        .unwrap_or_else(|| "slow_kernel".to_string());
    for k in 0..job.steps {
        let s = &slots[k % slots.len()];
        let g = t0 + clock; // the step's start in this rank's clock
        let last = s.comm.iter().map(|c| c.start).max().unwrap_or(0);
        // where the planted delay begins on this rank (relative; what lies at or after it
        // moves later): on the straggler the end of its last compute before the last
        // collective (that kernel runs long; the earlier collectives are not touched), on the
        // others just past the last collective's start (they wait in it)
        let (cut, extra, slow) = match planted_here(k) {
            Some(p) if p.rank == rank as i64 => {
                let i = s.compute.partition_point(|c| c.0 < last).saturating_sub(1);
                let prev_comm = s.comm.iter().filter(|c| c.start < last).map(|c| c.end).max().unwrap_or(0);
                let slow_end = s.compute.get(i).map(|c| c.1.min(last)).unwrap_or(last);
                (slow_end.max(prev_comm).min(last), p.extra_ns, Some(i))
            }
            Some(p) => (last + 1, p.extra_ns, None),
            None => (i64::MAX, 0, None),
        };
        let at = |x: i64| g + x + if x >= cut { extra } else { 0 };
        for (i, c) in s.compute.iter().enumerate() {
            let end = if slow == Some(i) { at(c.1) + extra } else { at(c.1) };
            compute.push((at(c.0), end.max(at(c.0))));
        }
        for (j, c) in s.comm.iter().enumerate() {
            // arrival jitter within a quarter of the kernel (it still ends with the others)
            let room = ((c.end - c.start) / 4).max(1) as u64;
            // (none on the straggler's slow steps: it is on time until its slow kernel, so its
            // first late collective is the one the kernel delays)
            let jitter = if slow.is_some() { 0 } else { (draw(seed, r, k as u64, j as u64 + 1) % room) as i64 };
            let is_last = c.start == last;
            let mut c2 = c.clone();
            c2.start = at(c.start) + jitter;
            // a collective ends when the last rank has joined: the same on every rank
            c2.end = (g + c.end + if is_last { extra } else { 0 }).max(c2.start);
            c2.launch_ns = at(c.launch_ns);
            c2.span = comm.len() as u32 + 1;
            if let Some(w) = &mut c2.before {
                // the window before the delayed collective starts before the delay
                let start = if slow.is_some() && is_last { g + w.window_start_ns } else { at(w.window_start_ns) };
                w.window_start_ns = start.min(c2.start);
                w.window_end_ns = c2.start;
                if slow.is_some() && is_last {
                    // the slow kernel: the rank's busiest compute kernel, `extra` longer
                    w.compute_ns += extra;
                    let name = slow_kernel.clone();
                    match w.top_kernels.iter_mut().find(|t| t.name == name) {
                        Some(t) => {
                            t.total_ns += extra;
                            t.max_ns += extra;
                        }
                        None => w.top_kernels.push(KernelInWindow { name, count: 1, total_ns: extra, max_ns: extra }),
                    }
                    w.top_kernels.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then_with(|| a.name.cmp(&b.name)));
                }
            }
            comm.push(c2);
        }
        let dur = s.dur_ns + extra;
        steps.push(Step {
            name: format!("{}{}", s.name_prefix, k),
            start_ns: g,
            dur_ns: dur,
            source: template.steps[0].source,
        });
        t0 += s.len_ns + extra;
    }
    comm.sort_by_key(|c| (c.start, c.end));
    let compute = union(compute);
    let comm_union = union(comm.iter().map(|c| (c.start, c.end)).collect());
    let overlapped = intersect(&comm_union, &compute);
    let busy = union(compute.iter().chain(&comm_union).copied().collect());
    let step_figures = steps
        .iter()
        .map(|s| {
            let (a, b) = (s.start_ns, s.start_ns + s.dur_ns);
            let comm_ns = total_within(&comm_union, a, b);
            StepFigures {
                compute_ns: total_within(&compute, a, b),
                comm_ns,
                exposed_comm_ns: comm_ns - total_within(&overlapped, a, b),
                idle_ns: s.dur_ns - total_within(&busy, a, b),
            }
        })
        .collect();
    // whole-trace counts scale with the number of steps
    let scale = job.steps as f64 / template.steps.len().max(1) as f64;
    let sc = |x: i64| (x as f64 * scale).round() as i64;
    let kernels = template
        .kernels
        .iter()
        .map(|k| {
            let mut k = k.clone();
            k.count = (k.count as f64 * scale).round() as u64;
            k.total_ns = sc(k.total_ns);
            k
        })
        .collect();
    let (lo, hi) = (steps.first().map(|s| s.start_ns).unwrap_or(0), t0 + clock);
    let gpus = template
        .gpus
        .iter()
        .map(|g| {
            let mut g = g.clone();
            g.start_ns = lo;
            g.end_ns = hi;
            g.window_ns = hi - lo;
            g.compute_ns = total(&compute);
            g.comm_ns = total(&comm_union);
            g.comm_overlapped_ns = total(&overlapped);
            g.busy_ns = total(&busy).max(g.compute_ns);
            g.idle_ns = g.window_ns - g.busy_ns;
            g.idle_pct = 100.0 * g.idle_ns as f64 / g.window_ns.max(1) as f64;
            g.overlap_pct = 100.0 * g.comm_overlapped_ns as f64 / g.comm_ns.max(1) as f64;
            g.kernels = (g.kernels as f64 * scale).round() as u64;
            g.memory = None;
            g
        })
        .collect();
    let mut launch = template.launch.clone();
    launch.rank = rank as i64;
    Ok(RankDigest {
        rank: rank as i64,
        source: format!("synthetic/rank{rank:05}.json.gz"),
        claim: RankClaim { meta_rank: Some(rank as i64), split: None },
        pid: template.pid,
        devices: template.devices.clone(),
        base_time_ns: template.base_time_ns,
        gpus,
        steps,
        step_figures,
        comm,
        compute,
        kernels,
        step_anomalies: Vec::new(),
        launch,
        // a synthetic rank has no spans to attribute
        step_breakdown: Vec::new(),
        step_stretches: Vec::new(),
        comm_records: Default::default(),
    })
}

/// Writes the summaries of every rank of `job` into `dir` (in parallel); returns the files.
pub fn write_job(template: &RankDigest, job: &Job, dir: &Path) -> Result<Vec<PathBuf>> {
    use rayon::prelude::*;
    std::fs::create_dir_all(dir)?;
    let per: Vec<Vec<PathBuf>> = (0..job.ranks)
        .into_par_iter()
        .map(|r| {
            let d = rank_digest(template, job, r)?;
            crate::summary::write_summary(dir, &crate::summary::prefix_of(&d, true), &d)
        })
        .collect::<Result<_>>()?;
    Ok(per.into_iter().flatten().collect())
}
