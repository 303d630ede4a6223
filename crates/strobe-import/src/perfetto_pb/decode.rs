//! Reads a trace's packets into a `Decoded`: sequences' incremental state, clocks, tracks,
//! slices paired begin to end per track, instants, counters, flows, GPU render stages and
//! GPU counters. Anything that cannot be placed is counted by reason, never fatal; only a
//! trace whose framing breaks stops the walk there (reported with its byte offset).

use super::messages::{self as m, text};
use super::model::*;
use super::packets::{Broken, Packets};
use super::sequence::{CounterSpecs, Sequence};
use prost::Message;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Uuid space of the thread tracks implied by legacy `ThreadDescriptor` packets (their
/// events name no track): kept apart from producers' uuids by the top bits.
const LEGACY_THREAD_TRACK: u64 = 0xfeed_0000_0000_0000;

/// Most bytes one `compressed_packets` bundle may inflate to.
const MAX_BUNDLE: u64 = 256 << 20;

pub struct Decoder {
    pub out: Decoded,
    seqs: FxHashMap<u32, Sequence>,
    /// Per (sequence for sequence-scoped clocks, clock id): the clock's reading in ns and
    /// BOOTTIME's at the last snapshot.
    clocks: FxHashMap<(u32, u32), (i64, i64)>,
    open: FxHashMap<u64, Vec<usize>>,
    skipped: BTreeMap<String, u64>,
    /// Incremental counter tracks' running totals.
    counter_totals: FxHashMap<u64, f64>,
    max_ts: i64,
    realtime_seen: bool,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder {
            out: Decoded::default(),
            seqs: FxHashMap::default(),
            clocks: FxHashMap::default(),
            open: FxHashMap::default(),
            skipped: BTreeMap::new(),
            counter_totals: FxHashMap::default(),
            max_ts: i64::MIN,
            realtime_seen: false,
        }
    }
}

impl Decoder {
    fn skip(&mut self, why: &str) {
        *self.skipped.entry(why.to_string()).or_default() += 1;
    }

    /// Reads every packet of `buf` (a whole `Trace`). Returns where the framing broke, if
    /// it did: what came before is kept.
    pub fn read_trace(&mut self, buf: &[u8], base: usize, depth: u32) -> Option<Broken> {
        let mut walk = Packets::new(buf);
        for (off, bytes) in walk.by_ref() {
            match m::TracePacket::decode(bytes) {
                Ok(p) => self.packet(p, base + off, depth),
                Err(e) => {
                    self.skip("packet that does not decode");
                    if self.out.notes.len() < 8 {
                        self.out.notes.push(format!("packet at byte {} does not decode: {e}", base + off));
                    }
                }
            }
        }
        walk.broken.map(|b| Broken { offset: base + b.offset, what: b.what })
    }

    fn packet(&mut self, p: m::TracePacket, offset: usize, depth: u32) {
        self.out.packets += 1;
        if let Some(c) = &p.compressed_packets {
            self.compressed(c, offset, depth);
            return;
        }
        let seq_id = p.trusted_packet_sequence_id.unwrap_or(0);
        let flags = p.sequence_flags.unwrap_or(0);
        let seq = self.seqs.entry(seq_id).or_default();
        if flags & m::SEQ_INCREMENTAL_STATE_CLEARED != 0 || p.incremental_state_cleared == Some(true) {
            seq.clear();
        }
        if let Some(d) = p.trace_packet_defaults {
            seq.default_clock = d.timestamp_clock_id;
            let te = d.track_event_defaults.unwrap_or_default();
            seq.default_track = te.track_uuid;
            seq.default_extra_counters = te.extra_counter_track_uuids;
            seq.default_extra_double_counters = te.extra_double_counter_track_uuids;
        }
        if let Some(t) = p.thread_descriptor {
            let (pid, tid) = (t.pid.unwrap_or(0), t.tid.unwrap_or(0));
            seq.thread = Some((pid, tid));
            seq.legacy_us = t.reference_timestamp_us;
            let uuid = LEGACY_THREAD_TRACK ^ ((pid as u32 as u64) << 24) ^ (tid as u64 & 0xff_ffff);
            let name = t.thread_name.map(|n| text(&n)).unwrap_or_default();
            self.out.tracks.entry(uuid).or_insert(Track { name, pid: Some(pid), tid: Some(tid), ..Default::default() });
        }
        if let Some(pd) = p.process_descriptor {
            self.process_track(pd);
        }
        let needs = flags & m::SEQ_NEEDS_INCREMENTAL_STATE != 0;
        if needs && !self.seqs.get(&seq_id).is_some_and(|s| s.valid) {
            // interned ids of a state never sent (the trace began mid-sequence): nothing
            // this packet names can be read
            self.skip("packet needing incremental state its sequence never set");
            return;
        }
        if let Some(d) = p.interned_data {
            self.seqs.entry(seq_id).or_default().intern(d);
        }
        if let Some(cs) = &p.clock_snapshot {
            self.snapshot(seq_id, cs);
        }
        if let Some(td) = p.track_descriptor {
            self.track_descriptor(td);
        }
        let ts = self.packet_ts(seq_id, p.timestamp, p.timestamp_clock_id);
        if let Some(te) = p.track_event {
            self.track_event(seq_id, ts, te);
        }
        if let Some(g) = p.gpu_render_stage_event {
            match ts {
                Some(ts) => self.render_stage(seq_id, ts, g),
                None => self.skip("GPU render stage without a timestamp"),
            }
        }
        if let Some(g) = p.gpu_counter_event {
            match ts {
                Some(ts) => self.gpu_counter(seq_id, ts, g),
                None => self.skip("GPU counter without a timestamp"),
            }
        }
    }

    /// Packets the tracing service deflated: a zlib stream of more `Trace` bytes.
    fn compressed(&mut self, c: &[u8], offset: usize, depth: u32) {
        // the tracing service compresses plain packets, never compressed ones
        if depth > 0 {
            self.skip("compressed packets inside compressed packets");
            return;
        }
        let mut inflated = Vec::new();
        let r = std::io::Read::read_to_end(
            &mut std::io::Read::take(flate2::read::ZlibDecoder::new(c), MAX_BUNDLE + 1),
            &mut inflated,
        );
        if r.is_err() {
            self.skip("compressed packets that do not inflate");
            return;
        }
        if inflated.len() as u64 > MAX_BUNDLE {
            // the service writes bundles of well under a megabyte: this is not one
            self.skip("compressed packets inflating past 256 MiB (left out)");
            return;
        }
        if let Some(b) = self.read_trace(&inflated, 0, depth + 1) {
            self.out.notes.push(format!(
                "compressed packets at byte {offset}: {} at byte {} of their inflated bytes",
                b.what, b.offset
            ));
        }
    }

    fn process_track(&mut self, pd: m::ProcessDescriptor) -> u64 {
        let pid = pd.pid.unwrap_or(0);
        let uuid = LEGACY_THREAD_TRACK ^ 0x00ff_0000_0000_0000 ^ pid as u32 as u64;
        let name = pd.process_name.map(|n| text(&n)).unwrap_or_default();
        let t = self.out.tracks.entry(uuid).or_insert(Track { pid: Some(pid), is_process: true, ..Default::default() });
        if t.name.is_empty() {
            t.name = name;
        }
        uuid
    }

    fn snapshot(&mut self, seq_id: u32, cs: &m::ClockSnapshot) {
        let primary = cs.primary_trace_clock.unwrap_or(m::CLOCK_BOOTTIME);
        let in_ns = |c: &m::Clock| {
            (c.timestamp.unwrap_or(0) as i64).wrapping_mul(c.unit_multiplier_ns.unwrap_or(1).max(1) as i64)
        };
        let Some(boot) = cs.clocks.iter().find(|c| c.clock_id == Some(primary)).map(in_ns) else {
            self.skip("clock snapshot without the trace clock");
            return;
        };
        for c in &cs.clocks {
            let id = c.clock_id.unwrap_or(0);
            let key = (if id >= 64 { seq_id } else { 0 }, id);
            self.clocks.insert(key, (in_ns(c), boot));
            if c.is_incremental == Some(true) {
                let seq = self.seqs.entry(seq_id).or_default();
                seq.incremental.insert(id, (c.timestamp.unwrap_or(0), c.unit_multiplier_ns.unwrap_or(1).max(1)));
            }
            if id == 1 && !self.realtime_seen {
                // REALTIME at the snapshot: the wall clock of trace time `boot`
                self.realtime_seen = true;
                self.out.realtime_offset = Some(in_ns(c).wrapping_sub(boot));
            }
        }
    }

    /// A packet's timestamp on the trace clock (BOOTTIME unless a snapshot says otherwise).
    fn packet_ts(&mut self, seq_id: u32, raw: Option<u64>, clock: Option<u32>) -> Option<i64> {
        let raw = raw?;
        let seq = self.seqs.entry(seq_id).or_default();
        let clock = clock.or(seq.default_clock).unwrap_or(m::CLOCK_BOOTTIME);
        let ns = match seq.incremental.get_mut(&clock) {
            Some((last, unit)) => {
                *last = last.wrapping_add(raw);
                (*last as i64).wrapping_mul(*unit as i64)
            }
            None => raw as i64,
        };
        if clock == m::CLOCK_BOOTTIME {
            return Some(ns);
        }
        let key = (if clock >= 64 { seq_id } else { 0 }, clock);
        match self.clocks.get(&key) {
            Some(&(at, boot)) => Some(boot.wrapping_add(ns.wrapping_sub(at))),
            None => {
                self.skip("timestamp in a clock no snapshot relates to the trace clock (read as it is)");
                Some(ns)
            }
        }
    }

    fn track_descriptor(&mut self, td: m::TrackDescriptor) {
        let Some(uuid) = td.uuid else {
            self.skip("track descriptor without a uuid");
            return;
        };
        let mut t = Track { parent: td.parent_uuid, ..Default::default() };
        if let Some(p) = &td.process {
            t.pid = p.pid;
            t.is_process = true;
            t.name = p.process_name.as_deref().map(text).unwrap_or_default();
        }
        if let Some(th) = &td.thread {
            t.pid = th.pid;
            t.tid = th.tid;
            t.name = th.thread_name.as_deref().map(text).unwrap_or_default();
        }
        if let Some(c) = &td.counter {
            let mult = c.unit_multiplier.filter(|&m| m != 0).unwrap_or(1) as f64;
            t.counter = Some((mult, c.is_incremental == Some(true)));
            t.unit = c.unit_name.as_deref().map(text).or(match c.unit {
                Some(1) => Some("ns".into()),
                Some(3) => Some("bytes".into()),
                _ => None,
            });
        }
        if let Some(n) = td.name.or(td.static_name) {
            // an explicit track name beats a descriptor's process or thread name
            t.name = text(&n);
        }
        // a later descriptor of the same track updates it (a thread renamed, say)
        self.out.tracks.insert(uuid, t);
    }

    fn track_event(&mut self, seq_id: u32, ts: Option<i64>, te: m::TrackEvent) {
        let seq = self.seqs.entry(seq_id).or_default();
        let ts = match (ts, te.timestamp_absolute_us, te.timestamp_delta_us) {
            (Some(t), _, _) => t,
            (None, Some(us), _) => {
                seq.legacy_us = Some(us);
                us.saturating_mul(1000)
            }
            (None, None, Some(d)) if seq.legacy_us.is_some() => {
                let us = seq.legacy_us.unwrap_or(0).saturating_add(d);
                seq.legacy_us = Some(us);
                us.saturating_mul(1000)
            }
            _ => {
                self.skip("track event without a timestamp");
                return;
            }
        };
        let track = match te.track_uuid.or(seq.default_track) {
            Some(u) => u,
            None => match seq.thread {
                Some((pid, tid)) => LEGACY_THREAD_TRACK ^ ((pid as u32 as u64) << 24) ^ (tid as u64 & 0xff_ffff),
                None => 0,
            },
        };
        // a legacy (Chrome JSON) event: its phase says what it is; a complete event ('X')
        // carries its duration
        let legacy = te.legacy_event.clone().unwrap_or_default();
        let mut complete_ns = None;
        let kind = match (te.r#type.unwrap_or(0), legacy.phase.map(|p| p as u8)) {
            (0, Some(b'B')) => m::TYPE_SLICE_BEGIN,
            (0, Some(b'E')) => m::TYPE_SLICE_END,
            (0, Some(b'X')) => {
                complete_ns = Some(legacy.duration_us.unwrap_or(0).max(0).saturating_mul(1000));
                m::TYPE_SLICE_BEGIN
            }
            (0, Some(b'I' | b'i' | b'R' | b'n')) => m::TYPE_INSTANT,
            (0, Some(p)) => {
                self.skip(&format!("legacy event of phase '{}' (not shown)", p as char));
                return;
            }
            (t, _) => t,
        };
        self.max_ts = self.max_ts.max(ts);
        if kind == m::TYPE_SLICE_END {
            match self.open.get_mut(&track).and_then(|s| s.pop()) {
                Some(i) => {
                    let s = &mut self.out.slices[i];
                    s.end = ts.max(s.ts);
                    s.flows.extend(te.flow_ids.iter().chain(&te.flow_ids_old));
                    s.terminating_flows.extend(te.terminating_flow_ids.iter().chain(&te.terminating_flow_ids_old));
                }
                None => self.skip("slice end without a begin on its track"),
            }
            return;
        }
        let seq = &self.seqs[&seq_id];
        let name = match (&te.name, te.name_iid.or(legacy.name_iid)) {
            (Some(n), _) => Some(text(n)),
            (None, Some(iid)) => seq.event_names.get(&iid).cloned(),
            (None, None) => Some(String::new()),
        };
        let mut missing_name = false;
        let name = name.unwrap_or_else(|| {
            missing_name = true;
            format!("(name {} not interned)", te.name_iid.or(legacy.name_iid).unwrap_or(0))
        });
        let mut cats: Vec<String> = te.categories.iter().map(|c| text(c)).collect();
        let mut missing_cat = false;
        for iid in &te.category_iids {
            match seq.categories.get(iid) {
                Some(c) => cats.push(c.clone()),
                None => missing_cat = true,
            }
        }
        let args = annotations_json(seq, &te.debug_annotations);
        if missing_name {
            self.skip("event name id not interned on its sequence (named by its id)");
        }
        if missing_cat {
            self.skip("category id not interned on its sequence (left out)");
        }
        if kind == m::TYPE_COUNTER {
            self.counter_point(track, ts, te.double_counter_value.or(te.counter_value.map(|v| v as f64)));
            return;
        }
        let (ints, doubles) =
            if te.extra_counter_track_uuids.is_empty() && te.extra_double_counter_track_uuids.is_empty() {
                let seq = &self.seqs[&seq_id];
                (seq.default_extra_counters.clone(), seq.default_extra_double_counters.clone())
            } else {
                (te.extra_counter_track_uuids.clone(), te.extra_double_counter_track_uuids.clone())
            };
        for (u, v) in ints.iter().zip(&te.extra_counter_values) {
            self.counter_point(*u, ts, Some(*v as f64));
        }
        for (u, v) in doubles.iter().zip(&te.extra_double_counter_values) {
            self.counter_point(*u, ts, Some(*v));
        }
        let name = self.out.pool.id(&name);
        let cat = self.out.pool.id(&cats.join(","));
        match kind {
            m::TYPE_SLICE_BEGIN | m::TYPE_INSTANT => {
                let instant = kind == m::TYPE_INSTANT;
                let complete_ns = if instant { Some(0) } else { complete_ns };
                let i = self.out.slices.len();
                let gpu = te.gpu_correlation.clone().unwrap_or_default();
                let mut flows: Vec<u64> = te.flow_ids.clone();
                flows.extend(&te.flow_ids_old);
                let mut terminating: Vec<u64> = te.terminating_flow_ids.clone();
                terminating.extend(&te.terminating_flow_ids_old);
                self.out.slices.push(Slice {
                    track,
                    ts,
                    end: complete_ns.map_or(i64::MIN, |d| ts.saturating_add(d)),
                    name,
                    cat,
                    args,
                    flows,
                    terminating_flows: terminating,
                    launches: gpu.render_stage_submission_event_ids,
                    waits_on: gpu.render_stage_wait_event_ids,
                    instant,
                });
                match complete_ns {
                    Some(d) => self.max_ts = self.max_ts.max(ts.saturating_add(d)),
                    None => self.open.entry(track).or_default().push(i),
                }
            }
            _ => self.skip("track event of an unknown type"),
        }
    }

    fn counter_point(&mut self, track: u64, ts: i64, value: Option<f64>) {
        let Some(v) = value.filter(|v| v.is_finite()) else {
            self.skip("counter event without a value");
            return;
        };
        let (mult, incremental) = self.out.tracks.get(&track).and_then(|t| t.counter).unwrap_or((1.0, false));
        let v = if incremental {
            let total = self.counter_totals.entry(track).or_insert(0.0);
            *total += v;
            *total
        } else {
            v
        };
        self.max_ts = self.max_ts.max(ts);
        self.out.counters.push(CounterPoint { track, ts, value: v * mult });
    }

    fn render_stage(&mut self, seq_id: u32, ts: i64, g: m::GpuRenderStageEvent) {
        let seq = &self.seqs[&seq_id];
        let queue = g.hw_queue_iid.and_then(|i| seq.gpu_specs.get(&i)).map(|(n, _)| n.clone());
        let stage = g.stage_iid.and_then(|i| seq.gpu_specs.get(&i)).cloned();
        let kernel = g.kernel_iid.and_then(|i| seq.kernels.get(&i)).cloned();
        let event_name = g.name_iid.and_then(|i| seq.event_names.get(&i)).cloned();
        let stage_name = stage.as_ref().map(|(n, _)| n.clone()).unwrap_or_default();
        let name = g.name.as_deref().map(text).or(event_name).or(kernel).unwrap_or_else(|| stage_name.clone());
        let cat = stage_category(&stage_name, stage.as_ref().map(|s| s.1).unwrap_or(0));
        let queue_name = queue.unwrap_or_else(|| match (g.hw_queue_iid, g.hw_queue_id) {
            (Some(i), _) => format!("queue {i}"),
            (None, Some(i)) => format!("queue {i}"),
            _ => "queue 0".into(),
        });
        let stream =
            stream_number(&queue_name).unwrap_or(g.hw_queue_iid.unwrap_or(g.hw_queue_id.unwrap_or(0) as u64) as i64);
        let gpu = g.gpu_id.unwrap_or(0) as i64;
        let mut args = String::from("{");
        let _ = write!(args, "\"device\":{gpu},\"stream\":{stream}");
        if let Some(l) = &g.launch {
            let dim = |d: &Option<m::Dim3>| {
                d.as_ref().map(|d| format!("[{},{},{}]", d.x.unwrap_or(1), d.y.unwrap_or(1), d.z.unwrap_or(1)))
            };
            if let Some(v) = dim(&l.grid_size) {
                let _ = write!(args, ",\"grid\":{v}");
            }
            if let Some(v) = dim(&l.workgroup_size) {
                let _ = write!(args, ",\"block\":{v}");
            }
            for a in &l.args {
                let name =
                    a.name.as_deref().map(text).or_else(|| a.name_iid.and_then(|i| seq.arg_names.get(&i).cloned()));
                let Some(name) = name else { continue };
                // Kineto's names for the launch figures Strobe reads
                let key = match name.as_str() {
                    "registers_per_thread" => "registers per thread",
                    "shared_mem_dynamic" => "shared memory",
                    n => n,
                };
                let v = match (a.int_value, a.uint_value, a.double_value, &a.string_value) {
                    (Some(i), ..) => i.to_string(),
                    (_, Some(u), ..) => u.to_string(),
                    (_, _, Some(d), _) if d.is_finite() => d.to_string(),
                    (.., Some(s)) => json_str(&text(s)),
                    _ => continue,
                };
                let _ = write!(args, ",{}:{v}", json_str(key));
            }
        }
        for e in &g.extra_data {
            let key = text(e.name.as_deref().unwrap_or(b""));
            let val = text(e.value.as_deref().unwrap_or(b""));
            let key = match key.as_str() {
                // already written from the event's own fields
                "device id" | "stream id" => continue,
                "context id" => "context",
                k => k,
            };
            let v = match val.parse::<i64>() {
                Ok(n) => n.to_string(),
                Err(_) => json_str(&val),
            };
            let _ = write!(args, ",{}:{v}", json_str(key));
        }
        args.push('}');
        let dur = g.duration.unwrap_or(0).min(i64::MAX as u64) as i64;
        self.max_ts = self.max_ts.max(ts.saturating_add(dur));
        let op = GpuOp {
            event_id: g.event_id.unwrap_or(0),
            ts,
            dur,
            gpu,
            stream,
            queue: self.out.pool.id(&queue_name),
            name: self.out.pool.id(&name),
            cat: self.out.pool.id(cat),
            args,
            waits: g.event_wait_ids,
        };
        self.out.gpu_ops.push(op);
    }

    fn gpu_counter(&mut self, seq_id: u32, ts: i64, g: m::GpuCounterEvent) {
        let specs = match (&g.counter_descriptor, g.counter_descriptor_iid) {
            (Some(d), _) => Some(CounterSpecs::from(d, None)),
            (None, Some(iid)) => self.seqs[&seq_id].counter_specs.get(&iid).cloned(),
            (None, None) => None,
        };
        if specs.is_none() && g.counter_descriptor_iid.is_some() {
            self.skip("GPU counter descriptor id not interned (counters named by id)");
        }
        let specs = specs.unwrap_or_default();
        let gpu = g.gpu_id.or(specs.gpu).unwrap_or(0) as i64;
        for c in &g.counters {
            let id = c.counter_id.unwrap_or(0);
            let Some(v) = c.double_value.or(c.int_value.map(|v| v as f64)).filter(|v| v.is_finite()) else {
                self.skip("GPU counter without a value");
                continue;
            };
            let name = match specs.names.get(&id) {
                Some(n) => self.out.pool.id(n),
                None => self.out.pool.id(&format!("counter {id}")),
            };
            self.out.gpu_samples.push(GpuSample { gpu, name, ts, value: v });
        }
        self.max_ts = self.max_ts.max(ts);
    }

    /// Closes what is still open at the trace's last timestamp and hands the result over.
    pub fn finish(mut self) -> Decoded {
        let mut unclosed = 0u64;
        for (_, stack) in self.open.drain() {
            for i in stack {
                let s = &mut self.out.slices[i];
                s.end = self.max_ts.max(s.ts);
                unclosed += 1;
            }
        }
        if unclosed > 0 {
            self.out.notes.push(format!("{unclosed} slices had no end: drawn to the trace's last timestamp"));
        }
        self.out.skipped = self.skipped.into_iter().collect();
        self.out
    }
}

/// A render stage's Kineto category, from its stage's name and `RenderStageCategory`.
fn stage_category(stage: &str, category: i32) -> &'static str {
    let s = stage.to_ascii_lowercase();
    if s.contains("memcpy") || s.contains("copy") {
        "gpu_memcpy"
    } else if s.contains("memset") {
        "gpu_memset"
    } else if s.contains("annotation") {
        "gpu_user_annotation"
    } else if category == m::STAGE_COMPUTE || s.contains("kernel") || s.contains("dispatch") || s.is_empty() {
        "kernel"
    } else {
        // CUDA-graph event-record and host nodes, graphics stages: on their stream's lane
        // as kernels are (they are GPU work of that queue)
        "kernel"
    }
}

/// The stream of a queue named like `[007] stream 7` (the bracketed lane number PyTorch
/// writes first), `stream 7`, `Stream #7` or `STREAM [7]`.
pub fn stream_number(name: &str) -> Option<i64> {
    if let Some(rest) = name.strip_prefix('[') {
        if let Some(n) = rest.split(']').next().and_then(|d| d.trim().parse().ok()) {
            return Some(n);
        }
    }
    let digits: Vec<&str> = name.split(|c: char| !c.is_ascii_digit()).filter(|d| !d.is_empty()).collect();
    digits.last().and_then(|d| d.parse().ok())
}

/// A JSON string literal.
pub fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// Debug annotations as a JSON object's text, names and interned strings resolved.
fn annotations_json(seq: &Sequence, anns: &[m::DebugAnnotation]) -> String {
    if anns.is_empty() {
        return "{}".into();
    }
    let mut s = String::from("{");
    for (i, a) in anns.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let name = match (&a.name, a.name_iid) {
            (Some(n), _) => text(n),
            (None, Some(iid)) => seq.annotation_names.get(&iid).cloned().unwrap_or_else(|| format!("arg {iid}")),
            _ => format!("arg {i}"),
        };
        s.push_str(&json_str(&name));
        s.push(':');
        annotation_value(seq, a, &mut s, 0);
    }
    s.push('}');
    s
}

fn annotation_value(seq: &Sequence, a: &m::DebugAnnotation, s: &mut String, depth: u32) {
    if depth > 32 {
        s.push_str("null");
        return;
    }
    if let Some(v) = a.bool_value {
        let _ = write!(s, "{v}");
    } else if let Some(v) = a.uint_value {
        let _ = write!(s, "{v}");
    } else if let Some(v) = a.int_value {
        let _ = write!(s, "{v}");
    } else if let Some(v) = a.double_value {
        if v.is_finite() {
            let _ = write!(s, "{v}");
        } else {
            s.push_str(&json_str(&v.to_string()));
        }
    } else if let Some(v) = a.pointer_value {
        s.push_str(&json_str(&format!("0x{v:x}")));
    } else if let Some(v) = &a.string_value {
        s.push_str(&json_str(&text(v)));
    } else if let Some(iid) = a.string_value_iid {
        let v = seq.annotation_strings.get(&iid).cloned().unwrap_or_default();
        s.push_str(&json_str(&v));
    } else if let Some(v) = &a.legacy_json_value {
        // kept as text: it is the producer's JSON, not checked here
        s.push_str(&json_str(&text(v)));
    } else if !a.dict_entries.is_empty() {
        s.push_str(&annotations_json_nested(seq, &a.dict_entries, depth + 1));
    } else if !a.array_values.is_empty() {
        s.push('[');
        for (i, v) in a.array_values.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            annotation_value(seq, v, s, depth + 1);
        }
        s.push(']');
    } else {
        s.push_str("null");
    }
}

fn annotations_json_nested(seq: &Sequence, anns: &[m::DebugAnnotation], depth: u32) -> String {
    let mut s = String::from("{");
    for (i, a) in anns.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let name = a.name.as_deref().map(text).unwrap_or_else(|| format!("arg {i}"));
        s.push_str(&json_str(&name));
        s.push(':');
        annotation_value(seq, a, &mut s, depth);
    }
    s.push('}');
    s
}
