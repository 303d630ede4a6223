//! `strobe bench scanners FILE`: Strobe's event scanner beside two maintained SIMD JSON
//! parsers on the same bytes, one thread each, so that a faster crate would show. Each reads
//! the trace's event array and takes from every event what the ingest takes: phase, name,
//! category, `ts` and `dur` as numbers, pid, tid, id and the args' text.
//!
//! - Strobe: the scanner every ingest chunk runs (`parse_chunk`), which also turns times into
//!   integer nanoseconds, interns names and reads a GPU event's device, stream and correlation
//!   from its args: more than the others are asked to do.
//! - sonic-rs: serde into a borrowed struct, the args kept as a `LazyValue` (unparsed text).
//! - simd-json: its borrowed DOM of the array (`to_borrowed_value`, on a copy: it parses in
//!   place), then the same fields read from each event. The copy is timed apart.

use serde::Deserialize;
use std::borrow::Cow;
use std::path::Path;
use std::time::Instant;

#[derive(Deserialize)]
struct SonicEvent<'a> {
    #[serde(borrow)]
    ph: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    cat: Option<Cow<'a, str>>,
    ts: Option<f64>,
    dur: Option<f64>,
    #[serde(borrow)]
    pid: Option<sonic_rs::LazyValue<'a>>,
    #[serde(borrow)]
    tid: Option<sonic_rs::LazyValue<'a>>,
    #[serde(borrow)]
    id: Option<sonic_rs::LazyValue<'a>>,
    #[serde(borrow)]
    args: Option<sonic_rs::LazyValue<'a>>,
}

/// What every contender hands back, so that no work is optimised away: events, and a sum
/// over the fields read.
#[derive(Default, PartialEq, Debug)]
struct Tally {
    events: u64,
    check: u64,
}

/// The sum of `xs`, wrapping: the tally only has to depend on every value read (a negative
/// pid read as u64 is huge).
fn wrapping_sum(xs: &[u64]) -> u64 {
    xs.iter().fold(0, |a, &x| a.wrapping_add(x))
}

fn sonic(array: &str) -> Result<Tally, String> {
    let evs: Vec<SonicEvent> = sonic_rs::from_str(array).map_err(|e| e.to_string())?;
    let mut t = Tally::default();
    for e in &evs {
        t.events += 1;
        t.check = t.check.wrapping_add(wrapping_sum(&[
            e.ph.as_deref().map_or(0, str::len) as u64,
            e.name.as_deref().map_or(0, str::len) as u64,
            e.cat.as_deref().map_or(0, str::len) as u64,
            e.ts.map_or(0, |x| x as u64),
            e.dur.map_or(0, |x| x as u64),
            e.pid.as_ref().map_or(0, |v| v.as_raw_str().len()) as u64,
            e.tid.as_ref().map_or(0, |v| v.as_raw_str().len()) as u64,
            e.id.as_ref().map_or(0, |v| v.as_raw_str().len()) as u64,
            e.args.as_ref().map_or(0, |v| v.as_raw_str().len()) as u64,
        ]));
    }
    Ok(t)
}

fn simd(bytes: &mut [u8]) -> Result<Tally, String> {
    use simd_json::prelude::*;
    let v = simd_json::to_borrowed_value(bytes).map_err(|e| e.to_string())?;
    let arr = v.as_array().ok_or("not an array")?;
    let mut t = Tally::default();
    let len = |x: Option<&str>| x.map_or(0, str::len) as u64;
    for e in arr {
        t.events += 1;
        let Some(o) = e.as_object() else { continue };
        let args = o.get("args").map_or(0, |a| a.as_object().map_or(0, |m| m.len())) as u64;
        t.check = t.check.wrapping_add(wrapping_sum(&[
            len(o.get("ph").and_then(|x| x.as_str())),
            len(o.get("name").and_then(|x| x.as_str())),
            len(o.get("cat").and_then(|x| x.as_str())),
            o.get("ts").and_then(|x| x.as_f64()).map_or(0, |x| x as u64),
            o.get("dur").and_then(|x| x.as_f64()).map_or(0, |x| x as u64),
            o.get("pid").map_or(0, |x| x.as_i64().unwrap_or(1) as u64),
            o.get("tid").map_or(0, |x| x.as_i64().unwrap_or(1) as u64),
            o.get("id").map_or(0, |x| x.as_u64().unwrap_or(1)),
            args,
        ]));
    }
    Ok(t)
}

/// The text of FILE (inflated when gzipped) and the byte range of its event array, `[` to `]`.
fn event_array(file: &Path) -> anyhow::Result<(String, std::ops::Range<usize>)> {
    let raw = crate::scale::read_text(file)?;
    let text = String::from_utf8(raw).map_err(|e| anyhow::anyhow!("{}: not UTF-8: {e}", file.display()))?;
    let open = match text.trim_start().as_bytes().first() {
        Some(b'[') => text.len() - text.trim_start().len(),
        _ => {
            let key = text.find("\"traceEvents\"").ok_or_else(|| anyhow::anyhow!("no traceEvents array"))?;
            key + text[key..].find('[').ok_or_else(|| anyhow::anyhow!("no traceEvents array"))?
        }
    };
    let (_, end, err) = strobe_import::chrome_json::scan_events_on_one_thread(&text, open + 1);
    if let Some(e) = err {
        anyhow::bail!("{}: {e}", file.display());
    }
    anyhow::ensure!(text.as_bytes().get(end - 1) == Some(&b']'), "the event array does not close");
    Ok((text, open..end))
}

pub fn run(file: &Path, runs: usize) -> anyhow::Result<()> {
    let (text, range) = event_array(file)?;
    let array = &text[range.clone()];
    let mb = array.len() as f64 / 1e6;
    let mut secs: [Vec<f64>; 4] = Default::default();
    let mut events = [0u64; 3];
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let (n, _, _) = strobe_import::chrome_json::scan_events_on_one_thread(&text, range.start + 1);
        secs[0].push(t.elapsed().as_secs_f64());
        events[0] = n;

        let t = Instant::now();
        let tally = sonic(array).map_err(|e| anyhow::anyhow!("sonic-rs: {e}"))?;
        secs[1].push(t.elapsed().as_secs_f64());
        events[1] = std::hint::black_box(tally).events;

        let t = Instant::now();
        let mut copy = array.as_bytes().to_vec();
        secs[3].push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let tally = simd(&mut copy).map_err(|e| anyhow::anyhow!("simd-json: {e}"))?;
        secs[2].push(t.elapsed().as_secs_f64());
        events[2] = std::hint::black_box(tally).events;
        drop(copy);
    }
    let med: Vec<f64> = secs.iter().map(|v| crate::bench::median(v)).collect();
    println!(
        "event array of {}: {mb:.1} MB, one thread each, medians of {} runs alternated",
        file.display(),
        runs.max(1)
    );
    println!("  {:<34} {:>8} {:>8} {:>10} {:>10}", "scanner", "s", "MB/s", "events", "× Strobe");
    for (i, name) in
        ["Strobe (the ingest's chunk scanner)", "sonic-rs 0.5 (serde, lazy args)", "simd-json 0.19 (borrowed DOM)"]
            .iter()
            .enumerate()
    {
        println!("  {:<34} {:>8.3} {:>8.0} {:>10} {:>10.2}", name, med[i], mb / med[i], events[i], med[i] / med[0]);
    }
    println!("  (simd-json parses in place: copying the array for it took {:.3} s more)", med[3]);
    Ok(())
}
