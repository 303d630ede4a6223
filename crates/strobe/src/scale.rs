//! Benchmark input generator: scales a real chrome/Kineto trace to a target size by
//! repeating its events, each copy shifted in time past the previous one (and with flow and
//! correlation ids shifted, so copies do not link to each other).

use anyhow::Context;
use serde_json::value::RawValue;
use std::io::{Read, Write};
use std::path::Path;

/// FILE's bytes, inflated when gzipped (every member).
pub(crate) fn read_text(path: &Path) -> anyhow::Result<Vec<u8>> {
    let raw = std::fs::read(path).with_context(|| path.display().to_string())?;
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..]).read_to_end(&mut out)?;
        return Ok(out);
    }
    Ok(raw)
}

/// Finds `"key":` at the event's top level (first occurrence; good enough for generated
/// benchmark input) and returns the byte range of its numeric value.
fn number_after(ev: &str, key: &str) -> Option<(usize, usize)> {
    let pat = format!("\"{key}\"");
    let i = ev.find(&pat)? + pat.len();
    let rest = &ev[i..];
    let colon = rest.find(':')?;
    let mut s = i + colon + 1;
    let b = ev.as_bytes();
    while s < b.len() && b[s].is_ascii_whitespace() {
        s += 1;
    }
    let mut e = s;
    while e < b.len() && (b[e].is_ascii_digit() || matches!(b[e], b'.' | b'-' | b'e' | b'E' | b'+')) {
        e += 1;
    }
    (e > s).then_some((s, e))
}

fn fmt_us(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

/// Where an event's shiftable numbers are: `ts` (range, ns), `dur` (ns), and the flow and
/// correlation ids (range, value).
struct EventPlan {
    ts: Option<(usize, usize, i64)>,
    dur: i64,
    ids: Vec<(usize, usize, i64)>,
    /// The per-event counters of Kineto's args (range, value): shifted with `distinct_args`.
    counters: Vec<(usize, usize, i64)>,
    /// The number N of a `ProfilerStep#N` name (range, value).
    step: Option<(usize, usize, i64)>,
}

impl EventPlan {
    fn read(s: &str) -> EventPlan {
        let micros = |key: &str| {
            number_after(s, key)
                .and_then(|(a, b)| strobe_import::time::decimal_to_ns(&s.as_bytes()[a..b], 1000).map(|v| (a, b, v)))
        };
        let integers = |keys: &[&str]| -> Vec<(usize, usize, i64)> {
            keys.iter()
                .filter_map(|k| number_after(s, k).and_then(|(a, b)| s[a..b].parse::<i64>().ok().map(|v| (a, b, v))))
                .collect()
        };
        let ids = integers(&["id", "correlation"]);
        let counters = integers(&KINETO_COUNTERS);
        const STEP: &str = "\"ProfilerStep#";
        let step = s.find(STEP).and_then(|i| {
            let a = i + STEP.len();
            let b = a + s[a..].bytes().take_while(u8::is_ascii_digit).count();
            s[a..b].parse::<i64>().ok().map(|n| (a, b, n))
        });
        EventPlan { ts: micros("ts"), dur: micros("dur").map(|d| d.2).unwrap_or(0), ids, counters, step }
    }
}

/// Args Kineto numbers per event or per op, which a longer recording never repeats (an op's
/// `External id` is also on its kernels: shifted alike, they stay linked within a copy).
const KINETO_COUNTERS: [&str; 6] =
    ["External id", "Record function id", "Sequence number", "Ev Idx", "Python id", "Python parent id"];

/// What `generate` changes beyond the times and ids; the default changes nothing else (its
/// output is what it always was).
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// `(rank, world_size)`: the output's `distributedInfo` (added when the source has none)
    /// says it is that rank of that many, its process groups that size, so a set of scaled
    /// files is told apart by metadata as a real multi-rank run is.
    pub rank: Option<(i64, i64)>,
    /// Number each copy's `ProfilerStep#N` past the previous copy's (N + copy × the source's
    /// step count), so the scaled trace has as many distinct steps as it has step ranges.
    pub renumber_steps: bool,
    /// Copy k starts k × this after the source (default: the source's time span + 1 ms). Give
    /// every rank of a set the same period, else their copies drift apart step by step.
    pub period_ns: Option<i64>,
    /// Shift Kineto's per-event counters in the args too (`KINETO_COUNTERS`), so no two copies
    /// of an event have the same args text, as in a real trace that long (without it the
    /// copies' args repeat byte for byte, which a store's args dedup then finds).
    pub distinct_args: bool,
}

/// The default copy period of `from`: its time span (first start to last end) + 1 ms.
pub fn period_ns(from: &Path) -> anyhow::Result<i64> {
    let text = read_text(from)?;
    #[derive(serde::Deserialize)]
    struct Doc<'a> {
        #[serde(borrow, rename = "traceEvents")]
        events: Vec<&'a RawValue>,
    }
    let d: Doc = serde_json::from_slice(&text).context("source must be an object-form chrome trace")?;
    let plans: Vec<EventPlan> = d.events.iter().map(|e| EventPlan::read(e.get())).collect();
    span_period(&plans).with_context(|| format!("no timestamps in {}", from.display()))
}

fn span_period(plans: &[EventPlan]) -> Option<i64> {
    let lo = plans.iter().filter_map(|p| p.ts.map(|t| t.2)).min()?;
    let hi = plans.iter().filter_map(|p| p.ts.map(|t| t.2 + p.dur)).max()?;
    Some(hi - lo + 1_000_000)
}

/// Writes the scaled trace; returns the number of events written.
pub fn generate(from: &Path, target_bytes: u64, out: &Path, o: Options) -> anyhow::Result<u64> {
    let rank = o.rank;
    let dist_owned: Box<RawValue>;
    let text = read_text(from)?;
    let mut rest: std::collections::BTreeMap<String, &RawValue> =
        serde_json::from_slice(&text).context("source must be an object-form chrome trace")?;
    if let Some((r, world)) = rank {
        let mut di: serde_json::Map<String, serde_json::Value> = match rest.get("distributedInfo") {
            Some(v) => serde_json::from_str(v.get()).context("distributedInfo must be an object")?,
            None => serde_json::Map::new(),
        };
        di.insert("rank".into(), r.into());
        di.insert("world_size".into(), world.into());
        // the process groups the source names are of its own world: say the new one's
        if let Some(serde_json::Value::Array(pgs)) = di.get_mut("pg_config") {
            for pg in pgs.iter_mut().filter_map(|p| p.as_object_mut()) {
                pg.insert("pg_size".into(), world.into());
                pg.insert("ranks".into(), (0..world).collect::<Vec<i64>>().into());
            }
        }
        dist_owned = serde_json::value::to_raw_value(&di)?;
        rest.insert("distributedInfo".into(), &dist_owned);
    }
    let events_raw = rest.remove("traceEvents").context("no traceEvents")?;
    let events: Vec<&RawValue> = serde_json::from_str(events_raw.get())?;
    // Read each event's numbers once; every copy then only formats shifted values.
    let plans: Vec<EventPlan> = events.iter().map(|e| EventPlan::read(e.get())).collect();
    let Some(own) = span_period(&plans) else { anyhow::bail!("no timestamps in {}", from.display()) };
    let period = o.period_ns.unwrap_or(own);
    let steps = plans.iter().filter_map(|p| p.step.map(|s| s.2));
    let step_stride = match (steps.clone().min(), steps.max()) {
        (Some(a), Some(b)) if o.renumber_steps => b - a + 1,
        _ => 0,
    };
    let per_copy: u64 = events.iter().map(|e| e.get().len() as u64 + 2).sum();
    let copies = (target_bytes / per_copy.max(1)).max(1);
    let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(out)?);
    w.write_all(b"{\n")?;
    for (k, v) in &rest {
        writeln!(w, "  {}: {},", serde_json::to_string(k)?, v.get())?;
    }
    w.write_all(b"  \"traceEvents\": [\n")?;
    let mut n = 0u64;
    for c in 0..copies as i64 {
        let shift = c * period;
        for (e, plan) in events.iter().zip(&plans) {
            let s = e.get().as_bytes();
            let mut edits: Vec<(usize, usize, String)> = Vec::new();
            if let Some((a, b, ts)) = plan.ts {
                edits.push((a, b, fmt_us(ts + shift)));
            }
            for &(a, b, v) in &plan.ids {
                edits.push((a, b, (v + c * 100_000_000).to_string()));
            }
            if o.distinct_args {
                for &(a, b, v) in &plan.counters {
                    edits.push((a, b, (v + c * 100_000_000).to_string()));
                }
            }
            if let (Some((a, b, n)), true) = (plan.step, step_stride > 0) {
                edits.push((a, b, (n + c * step_stride).to_string()));
            }
            edits.sort_by_key(|x| x.0);
            if n > 0 {
                w.write_all(b",\n")?;
            }
            let mut pos = 0;
            for (a, b, rep) in edits {
                if a < pos {
                    continue;
                }
                w.write_all(&s[pos..a])?;
                w.write_all(rep.as_bytes())?;
                pos = b;
            }
            w.write_all(&s[pos..])?;
            n += 1;
        }
    }
    w.write_all(b"\n  ]\n}\n")?;
    w.flush()?;
    Ok(n)
}
