//! Planes → lanes and spans: a GPU device plane's streams, the host's threads; the rest
//! noted. Each plane's lines are decoded and turned into spans in parallel, then pushed
//! in line order, so the store is the same on every run.

use super::messages::{text, Event, EventData, EventMetadata, Line, PlaneHead, Stat, StatValue};
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

/// One line, decoded and mapped (or why it could not be).
struct PrepLine {
    id: i64,
    name: String,
    events: Vec<Prep>,
    /// Every event's args, one after another (one buffer a line, not a string an event).
    args: String,
    aggregated: u64,
    /// XProf's `Steps` line of a device plane: XLA's step markers, one event per step.
    steps_line: bool,
}

pub fn map_planes(
    path: &Path,
    planes: &[&[u8]],
    b: &mut StoreBuilder,
    meta: &mut TraceMeta,
) -> Result<(), ImportError> {
    let mut decoded = 0usize;
    for (k, bytes) in planes.iter().enumerate() {
        let head = match PlaneHead::decode(*bytes) {
            Ok(h) => h,
            Err(e) => {
                meta.load.notes.push(format!("plane {k} does not decode ({e}): left out"));
                continue;
            }
        };
        decoded += 1;
        let name = text(&head.name);
        let kind = match (gpu_ordinal(&name), name.as_str()) {
            (Some(n), _) => PlaneKind::Gpu(n),
            (None, "/host:CPU") => PlaneKind::Host,
            _ => PlaneKind::Other,
        };
        let stat_names: FxHashMap<i64, String> =
            head.stat_metadata.iter().map(|(&id, m)| (id, text(&m.name))).collect();
        let names = StatNames::new(stat_names);
        match kind {
            PlaneKind::Other => {
                other_plane(&name, &head, &names, meta);
                continue;
            }
            PlaneKind::Gpu(n) => {
                if let Some(d) = device_info(n, &head.stats, &names) {
                    meta.devices.push(d);
                }
            }
            PlaneKind::Host => {}
        }
        // the planes after this one, in bytes: room for their spans is guessed from this
        // plane's density, so the span table is not copied into fresh pages plane by plane
        let rest: usize = planes[k + 1..].iter().map(|p| p.len()).sum();
        map_plane(path, (k, bytes.len(), rest), &name, kind, &head, &names, b, meta)?;
    }
    if decoded == 0 {
        return Err(ImportError::bad(path, "no plane of the XSpace decodes: not a readable profile"));
    }
    meta.devices.sort_by_key(|d| d.id);
    Ok(())
}

/// A plane that holds no timeline Strobe draws: its name and size in the notes; the session
/// start of `Task Environment` as the trace's wall-clock zero.
fn other_plane(name: &str, head: &PlaneHead, names: &StatNames, meta: &mut TraceMeta) {
    if name == "Task Environment" {
        for s in &head.stats {
            if names.name(s.metadata_id) == Some("profile_start_time") {
                meta.base_time_ns = int_value(&s.value);
            }
        }
        return;
    }
    let events: usize = head.lines.len();
    if name == "/host:metadata" {
        // XLA's module protos: read by XProf's HLO tools, not a timeline
        return;
    }
    meta.load.notes.push(format!(
        "plane {name:?} ({events} line(s), {} event name(s)) is not a GPU or host timeline: not shown",
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
    (k, plane_bytes, rest_bytes): (usize, usize, usize),
    plane_name: &str,
    kind: PlaneKind,
    head: &PlaneHead,
    names: &StatNames,
    b: &mut StoreBuilder,
    meta: &mut TraceMeta,
) -> Result<(), ImportError> {
    let md: &std::collections::HashMap<i64, EventMetadata> = &head.event_metadata;
    let lines: Vec<Result<PrepLine, String>> = {
        let infos = md_infos(md);
        head.lines.par_iter().map(|bytes| prep_line(bytes, kind, &infos, names)).collect()
    };
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
    // the plane's spans at once, and room for the planes after it at this plane's spans per
    // byte (an over-guess costs address space, not pages): growing the span table by
    // doublings copies it into fresh pages
    let here: usize = lines.iter().map(|l| l.as_ref().map_or(0, |l| l.events.len())).sum();
    // (at most one span per 4 bytes: an XEvent on the wire takes its tag, its length and a
    // metadata id at least)
    let after = ((here as f64 * rest_bytes as f64 / plane_bytes.max(1) as f64) as usize).min(rest_bytes / 4);
    b.reserve_spans(here.saturating_add(after).min(1 << 31));
    let mut interned: FxHashMap<i64, u32> = FxHashMap::default();
    let cat = b.intern(plane_name);
    let mut derived = 0i64;
    for (li, line) in lines.into_iter().enumerate() {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                meta.load.notes.push(format!("plane {k} ({plane_name}), line {li}: does not decode ({e}): left out"));
                continue;
            }
        };
        if line.aggregated > 0 {
            *meta.load.skipped.entry("aggregated XSpace event (a count, no time)".into()).or_default() +=
                line.aggregated;
        }
        if line.events.is_empty() {
            continue;
        }
        meta.load.events += line.events.len() as u64;
        let lane = match kind {
            PlaneKind::Gpu(device) => {
                let (lk, label) = match stream_number(&line.name) {
                    Some(stream) => (LaneKind::GpuStream { device, stream }, line.name.clone()),
                    None => {
                        derived += 1;
                        let stream = DERIVED_STREAM_BASE + derived;
                        (LaneKind::GpuAnnotation { device, stream }, line.name.clone())
                    }
                };
                let lane = b.lane(lk);
                b.name_lane(lane, format!("GPU {device} · {label}"));
                lane
            }
            _ => {
                let tid = IdKey::Num(line.id);
                if !line.name.is_empty() {
                    b.names.threads.push(((pid.clone(), tid.clone()), line.name.clone()));
                }
                b.lane(LaneKind::CpuThread { pid: pid.clone(), tid })
            }
        };
        *meta.load.by_category.entry(plane_name.to_string()).or_default() += line.events.len() as u64;
        let step_name = line.steps_line.then(|| b.intern("step"));
        for e in &line.events {
            let name = match (step_name, interned.get(&e.md)) {
                (Some(n), _) | (None, Some(&n)) => n,
                (None, None) => {
                    let n = md.get(&e.md).map(event_name).unwrap_or_else(|| format!("event {}", e.md));
                    let id = b.intern(&n);
                    interned.insert(e.md, id);
                    id
                }
            };
            b.push_span(SpanInput {
                lane,
                start: e.start,
                end: e.end,
                name,
                cat,
                kind: e.kind,
                flags: if e.instant { flags::INSTANT } else { 0 },
                args: &line.args.as_bytes()[e.args.clone()],
                correlation: e.correlation,
                copy_dir: e.copy_dir,
            })
            .map_err(|err| ImportError::io(path, err))?;
        }
    }
    Ok(())
}

fn event_name(m: &EventMetadata) -> String {
    if m.name.is_empty() {
        text(&m.display_name)
    } else {
        text(&m.name)
    }
}

/// Decodes one line and maps its events (on a worker thread).
fn prep_line(
    bytes: &[u8],
    kind: PlaneKind,
    md: &FxHashMap<i64, MdInfo<'_>>,
    names: &StatNames,
) -> Result<PrepLine, String> {
    let line = Line::decode(bytes).map_err(|e| e.to_string())?;
    let name = if line.display_name.is_empty() { text(&line.name) } else { text(&line.display_name) };
    let derived = matches!(kind, PlaneKind::Gpu(_)) && is_derived_line(&name);
    let steps_line = matches!(kind, PlaneKind::Gpu(_)) && name == STEP_LINE;
    let base_ps = line.timestamp_ns as i128 * 1000;
    let mut out = PrepLine {
        id: line.id,
        name,
        events: Vec::with_capacity(line.events.len()),
        // args take about as many bytes as the line's encoding (names resolved, refs inlined)
        args: String::with_capacity(bytes.len() + bytes.len() / 2),
        aggregated: 0,
        steps_line,
    };
    let mut seen = Vec::new();
    let no_stats: Vec<Stat> = Vec::new();
    for e in &line.events {
        let Event { metadata_id, data, duration_ps, stats } = e;
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
    Ok(out)
}
