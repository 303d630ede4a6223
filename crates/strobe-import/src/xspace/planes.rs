//! Planes → lanes and spans: a GPU device plane's streams, the host's threads; the rest
//! noted. A plane's lines are cut into runs of events (`lines`); a window of runs at a
//! time is decoded and turned into spans in parallel, then pushed in line order, so the
//! store is the same on every run and a plane's events are never all held at once.

use super::lines::{self, LineHead};
use super::messages::{text, Event, EventData, EventMetadata, PlaneHead, Stat, StatValue};
use super::stats::{int_value, write_args, StatNames};
use crate::xla_names::{device_event_kind, gpu_ordinal, is_derived_line, launch_kind, stream_number};
use crate::ImportError;
use prost::Message;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::path::Path;
use strobe_model::{flags, CopyDir, DeviceInfo, IdKey, LaneKind, SpanKind, TraceMeta};
use strobe_store::{SpanInput, StoreBuilder};

/// What a plane is, by its name.
#[derive(Clone, Copy, PartialEq)]
enum PlaneKind {
    Gpu(i64),
    Host,
    Other,
}

/// Lines of a device plane that are not streams get stream numbers from here up, so they
/// sort after the streams and never meet a real one.
const DERIVED_STREAM_BASE: i64 = 900_000;

/// XProf's name for a device plane's line of step markers (`kStepLineName`).
const STEP_LINE: &str = "Steps";

/// One event ready to push.
struct Prep {
    start: i64,
    end: i64,
    md: i64,
    kind: SpanKind,
    copy_dir: Option<CopyDir>,
    instant: bool,
    correlation: i64,
    /// The args' text in the line's `args` buffer.
    args: std::ops::Range<usize>,
}

/// What an event's metadata says of every event naming it, worked out once per plane.
struct MdInfo<'a> {
    md: &'a EventMetadata,
    name: String,
    /// Its kind and copy direction on a device stream (by name, as XLA names its work).
    device: (SpanKind, Option<CopyDir>),
    /// Its kind as a host call that launched device work.
    launch: SpanKind,
}

fn md_infos(md: &std::collections::HashMap<i64, EventMetadata>) -> FxHashMap<i64, MdInfo<'_>> {
    md.iter()
        .map(|(&id, m)| {
            let name = String::from_utf8_lossy(if m.name.is_empty() { &m.display_name } else { &m.name }).into_owned();
            let info = MdInfo { md: m, device: device_event_kind(&name), launch: launch_kind(&name), name };
            (id, info)
        })
        .collect()
}

/// The runs pushed at once: about this many bytes of the file (a few runs per worker, and
/// what they become is a few tens of MB, not a plane's worth).
const WINDOW_BYTES: usize = 32 * lines::RUN_BYTES;

/// What a run's events need to know of their line.
#[derive(Clone, Copy)]
struct LineCtx {
    base_ps: i128,
    /// A device plane's derived line (XProf's `XLA Ops`, …): annotations, not work.
    derived: bool,
    /// XProf's `Steps` line of a device plane: XLA's step markers, one event per step.
    steps_line: bool,
}

/// A run of one line's events, decoded and mapped.
struct PrepRun {
    events: Vec<Prep>,
    /// Every event's args, one after another (one buffer a run, not a string an event).
    args: String,
    aggregated: u64,
    /// Events whose bytes do not decode (left out).
    bad: u64,
}

pub fn map_planes(
    path: &Path,
    planes: &[&[u8]],
    b: &mut StoreBuilder,
    meta: &mut TraceMeta,
) -> Result<(), ImportError> {
    // every plane's head first, and its lines walked where it is a timeline: the span table
    // gets its room once, for all of them (grown plane by plane, it was copied into fresh
    // pages at each doubling)
    let mut heads = Vec::with_capacity(planes.len());
    for (k, bytes) in planes.iter().enumerate() {
        match PlaneHead::decode(*bytes) {
            Ok(h) => {
                let name = text(&h.name);
                let kind = match (gpu_ordinal(&name), name.as_str()) {
                    (Some(n), _) => PlaneKind::Gpu(n),
                    (None, "/host:CPU") => PlaneKind::Host,
                    _ => PlaneKind::Other,
                };
                let lines: Vec<Result<LineHead, String>> = match kind {
                    PlaneKind::Other => Vec::new(),
                    _ => lines::plane_lines(bytes).par_iter().map(|l| lines::head(l)).collect(),
                };
                heads.push(Some((h, name, kind, lines)));
            }
            Err(e) => {
                meta.load.notes.push(format!("plane {k} does not decode ({e}): left out"));
                heads.push(None);
            }
        }
    }
    let decoded = heads.iter().flatten().count();
    let events: usize = heads.iter().flatten().flat_map(|p| &p.3).map(|l| l.as_ref().map_or(0, |l| l.events)).sum();
    b.reserve_spans(events.min(1 << 31));
    for (k, plane) in heads.into_iter().enumerate() {
        let Some((head, name, kind, lines)) = plane else { continue };
        let stat_names: FxHashMap<i64, String> =
            head.stat_metadata.iter().map(|(&id, m)| (id, text(&m.name))).collect();
        let names = StatNames::new(stat_names);
        match kind {
            PlaneKind::Other => {
                other_plane(&name, &head, lines::plane_lines(planes[k]).len(), &names, meta);
                continue;
            }
            PlaneKind::Gpu(n) => {
                if let Some(d) = device_info(n, &head.stats, &names) {
                    meta.devices.push(d);
                }
            }
            PlaneKind::Host => {}
        }
        map_plane(path, k, &name, kind, &head, lines, &names, b, meta)?;
    }
    if decoded == 0 {
        return Err(ImportError::bad(path, "no plane of the XSpace decodes: not a readable profile"));
    }
    meta.devices.sort_by_key(|d| d.id);
    Ok(())
}

/// A plane that holds no timeline Strobe draws: its name and size in the notes; the session
/// start of `Task Environment` as the trace's wall-clock zero.
fn other_plane(name: &str, head: &PlaneHead, line_count: usize, names: &StatNames, meta: &mut TraceMeta) {
    if name == "Task Environment" {
        for s in &head.stats {
            if names.name(s.metadata_id) == Some("profile_start_time") {
                meta.base_time_ns = int_value(&s.value);
            }
        }
        return;
    }
    if name == "/host:metadata" {
        // XLA's module protos: read by XProf's HLO tools, not a timeline
        return;
    }
    meta.load.notes.push(format!(
        "plane {name:?} ({line_count} line(s), {} event name(s)) is not a GPU or host timeline: not shown",
        head.event_metadata.len()
    ));
}

/// A GPU plane's stats as the device's description.
fn device_info(n: i64, stats: &[Stat], names: &StatNames) -> Option<DeviceInfo> {
    let mut d = DeviceInfo { id: n, ..Default::default() };
    let (mut major, mut minor) = (None, None);
    let mut vendor = String::new();
    for s in stats {
        let Some(name) = names.name(s.metadata_id) else { continue };
        let v = match &s.value {
            Some(StatValue::Str(b)) | Some(StatValue::Bytes(b)) => serde_json::Value::from(text(b)),
            Some(StatValue::Double(x)) => serde_json::Value::from(*x),
            Some(StatValue::Uint64(x)) => serde_json::Value::from(*x),
            Some(StatValue::Int64(x)) => serde_json::Value::from(*x),
            _ => continue,
        };
        match name {
            "device_vendor" => vendor = v.as_str().unwrap_or("").to_string(),
            "memory_size" => d.total_memory_bytes = v.as_u64(),
            "core_count" => d.sm_count = v.as_u64().and_then(|x| u32::try_from(x).ok()),
            "compute_cap_major" => major = v.as_i64(),
            "compute_cap_minor" => minor = v.as_i64(),
            "device_name" | "device_type_string" if d.name.is_empty() => {
                d.name = v.as_str().unwrap_or("").to_string();
            }
            _ => {}
        }
        d.extra.insert(name.to_string(), v);
    }
    if let (Some(a), Some(b)) = (major, minor) {
        d.compute_capability = Some(format!("{a}.{b}"));
    }
    if d.name.is_empty() {
        d.name = if vendor.is_empty() { format!("GPU {n}") } else { format!("{vendor} GPU {n}") };
    }
    Some(d)
}

#[allow(clippy::too_many_arguments)]
fn map_plane(
    path: &Path,
    k: usize,
    plane_name: &str,
    kind: PlaneKind,
    head: &PlaneHead,
    heads: Vec<Result<LineHead, String>>,
    names: &StatNames,
    b: &mut StoreBuilder,
    meta: &mut TraceMeta,
) -> Result<(), ImportError> {
    let md: &std::collections::HashMap<i64, EventMetadata> = &head.event_metadata;
    let infos = md_infos(md);
    let pid = match kind {
        PlaneKind::Host => IdKey::Num(
            head.stats
                .iter()
                .find(|s| Some(s.metadata_id) == names.process_id)
                .and_then(|s| int_value(&s.value))
                .unwrap_or(0),
        ),
        _ => IdKey::Num(0),
    };
    if kind == PlaneKind::Host {
        b.names.processes.push((pid.clone(), plane_name.to_string()));
    }
    // every run of every line that could be walked, with what its events need of the line
    let mut work: Vec<(usize, &LineHead, LineCtx, &[u8])> = Vec::new();
    for (li, h) in heads.iter().enumerate() {
        let line = match h {
            Ok(h) => h,
            Err(e) => {
                meta.load.notes.push(format!("plane {k} ({plane_name}), line {li}: does not decode ({e}): left out"));
                continue;
            }
        };
        let gpu = matches!(kind, PlaneKind::Gpu(_));
        let ctx = LineCtx {
            base_ps: line.timestamp_ns as i128 * 1000,
            derived: gpu && is_derived_line(&line.name),
            steps_line: gpu && line.name == STEP_LINE,
        };
        work.extend(line.runs.iter().map(|r| (li, line, ctx, *r)));
    }
    let mut push = PlanePush {
        path,
        plane_name,
        kind,
        pid,
        md,
        cat: b.intern(plane_name),
        interned: FxHashMap::default(),
        derived: 0,
        lanes: vec![None; heads.len()],
        bad: 0,
    };
    let mut at = 0;
    while at < work.len() {
        // a window of runs: decoded in parallel, pushed in order (decoding the next window
        // while this one is pushed measured no faster)
        let (mut end, mut bytes) = (at, 0);
        while end < work.len() && (end == at || bytes + work[end].3.len() <= WINDOW_BYTES) {
            bytes += work[end].3.len();
            end += 1;
        }
        let window = &work[at..end];
        let runs: Vec<PrepRun> =
            window.par_iter().map(|&(_, _, ctx, run)| prep_run(run, ctx, kind, &infos, names)).collect();
        for (&(li, line, ctx, _), run) in window.iter().zip(runs) {
            push.run(li, line, ctx, run, b, meta)?;
        }
        at = end;
    }
    if push.bad > 0 {
        *meta.load.skipped.entry("XSpace event that does not decode".into()).or_default() += push.bad;
    }
    Ok(())
}

/// What pushing a plane's runs keeps from one run to the next.
struct PlanePush<'a> {
    path: &'a Path,
    plane_name: &'a str,
    kind: PlaneKind,
    pid: IdKey,
    md: &'a std::collections::HashMap<i64, EventMetadata>,
    cat: u32,
    /// Event names by metadata id, interned once per plane.
    interned: FxHashMap<i64, u32>,
    /// How many derived lines have a lane so far.
    derived: i64,
    /// Each line's lane, made when its first event is pushed.
    lanes: Vec<Option<u32>>,
    bad: u64,
}

impl PlanePush<'_> {
    fn run(
        &mut self,
        li: usize,
        line: &LineHead,
        ctx: LineCtx,
        run: PrepRun,
        b: &mut StoreBuilder,
        meta: &mut TraceMeta,
    ) -> Result<(), ImportError> {
        self.bad += run.bad;
        if run.aggregated > 0 {
            *meta.load.skipped.entry("aggregated XSpace event (a count, no time)".into()).or_default() +=
                run.aggregated;
        }
        if run.events.is_empty() {
            return Ok(());
        }
        meta.load.events += run.events.len() as u64;
        let lane = match self.lanes[li] {
            Some(l) => l,
            None => {
                let l = self.lane(line, b);
                self.lanes[li] = Some(l);
                l
            }
        };
        *meta.load.by_category.entry(self.plane_name.to_string()).or_default() += run.events.len() as u64;
        let step_name = ctx.steps_line.then(|| b.intern("step"));
        for e in &run.events {
            let name = match (step_name, self.interned.get(&e.md)) {
                (Some(n), _) | (None, Some(&n)) => n,
                (None, None) => {
                    let n = self.md.get(&e.md).map(event_name).unwrap_or_else(|| format!("event {}", e.md));
                    let id = b.intern(&n);
                    self.interned.insert(e.md, id);
                    id
                }
            };
            b.push_span(SpanInput {
                lane,
                start: e.start,
                end: e.end,
                name,
                cat: self.cat,
                kind: e.kind,
                flags: if e.instant { flags::INSTANT } else { 0 },
                args: &run.args.as_bytes()[e.args.clone()],
                correlation: e.correlation,
                copy_dir: e.copy_dir,
            })
            .map_err(|err| ImportError::io(self.path, err))?;
        }
        Ok(())
    }

    /// The lane of `line`, made now (its first event is being pushed).
    fn lane(&mut self, line: &LineHead, b: &mut StoreBuilder) -> u32 {
        match self.kind {
            PlaneKind::Gpu(device) => {
                let lk = match stream_number(&line.name) {
                    Some(stream) => LaneKind::GpuStream { device, stream },
                    None => {
                        self.derived += 1;
                        LaneKind::GpuAnnotation { device, stream: DERIVED_STREAM_BASE + self.derived }
                    }
                };
                let lane = b.lane(lk);
                b.name_lane(lane, format!("GPU {device} · {}", line.name));
                lane
            }
            _ => {
                let tid = IdKey::Num(line.id);
                if !line.name.is_empty() {
                    b.names.threads.push(((self.pid.clone(), tid.clone()), line.name.clone()));
                }
                b.lane(LaneKind::CpuThread { pid: self.pid.clone(), tid })
            }
        }
    }
}

fn event_name(m: &EventMetadata) -> String {
    if m.name.is_empty() {
        text(&m.display_name)
    } else {
        text(&m.name)
    }
}

/// Decodes a run of one line's events and maps them (on a worker thread).
fn prep_run(run: &[u8], line: LineCtx, kind: PlaneKind, md: &FxHashMap<i64, MdInfo<'_>>, names: &StatNames) -> PrepRun {
    let LineCtx { base_ps, derived, steps_line } = line;
    let mut out = PrepRun {
        // an event takes 20–40 bytes on the wire
        events: Vec::with_capacity(run.len() / 24),
        // args take about as many bytes as the run's encoding (names resolved, refs inlined)
        args: String::with_capacity(run.len() + run.len() / 2),
        aggregated: 0,
        bad: 0,
    };
    // one event decoded at a time, into the same message (its stats' room kept)
    let mut e = Event::default();
    let mut seen = Vec::new();
    let no_stats: Vec<Stat> = Vec::new();
    for bytes in lines::run_events(run) {
        e.clear();
        if e.merge(bytes).is_err() {
            out.bad += 1;
            continue;
        }
        let Event { metadata_id, data, duration_ps, stats } = &e;
        let offset = match data {
            Some(EventData::OffsetPs(o)) => *o,
            Some(EventData::NumOccurrences(_)) => {
                out.aggregated += 1;
                continue;
            }
            None => 0,
        };
        let m = md.get(metadata_id);
        let shared = m.map(|m| &m.md.stats).unwrap_or(&no_stats);
        // the args are written straight into the line's buffer
        let at = out.args.len();
        let found = write_args(stats, shared, names, &mut out.args, &mut seen);
        if steps_line && found.step_num.is_none() {
            // a step marker is its step group: numbered by it, as XProf numbers its steps
            if let Some(g) = found.group_id {
                if out.args.len() == at {
                    out.args.push('{');
                } else {
                    out.args.pop();
                    out.args.push(',');
                }
                let _ = std::fmt::Write::write_fmt(&mut out.args, format_args!("\"step_num\":{g}}}"));
            }
        }
        let start_ps = base_ps + offset as i128;
        let end_ps = start_ps + (*duration_ps).max(0) as i128;
        let ns = |ps: i128| (ps.div_euclid(1000)).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        let ev_name = m.map_or("", |m| m.name.as_str());
        let (kind, copy_dir) = match kind {
            PlaneKind::Gpu(_) if derived => (SpanKind::GpuAnnotation, None),
            PlaneKind::Gpu(_) => {
                let (k, d) = m.map_or_else(|| device_event_kind(""), |m| m.device);
                if found.has_memcpy_details && k == SpanKind::Kernel {
                    (SpanKind::Memcpy, Some(CopyDir::from_memcpy_name(ev_name)))
                } else {
                    (k, d)
                }
            }
            _ if found.correlation.is_some() => (m.map_or_else(|| launch_kind(""), |m| m.launch), None),
            _ if found.step_num.is_some() => (SpanKind::UserAnnotation, None),
            _ if ev_name.starts_with('$') => (SpanKind::PythonFunction, None),
            _ if found.has_hlo_op => (SpanKind::CpuOp, None),
            _ => (SpanKind::Other, None),
        };
        let instant = *duration_ps <= 0 && !matches!(kind, SpanKind::Kernel | SpanKind::Memcpy | SpanKind::Memset);
        out.events.push(Prep {
            start: ns(start_ps),
            end: ns(end_ps),
            md: *metadata_id,
            kind: if instant { SpanKind::Instant } else { kind },
            copy_dir,
            instant,
            correlation: found.correlation.unwrap_or(0),
            args: at..out.args.len(),
        });
    }
    out
}
