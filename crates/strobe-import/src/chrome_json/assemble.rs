//! Turns parsed chunks, in file order, into lanes, spans, flows and counters. Complete (`X`)
//! and instant events go to the builder at once; `B`/`E` pairs, async events and flow steps
//! need their thread's whole history, so they wait here (compactly) until `finish`.

use super::chunks::ChunkOut;
use super::event::{CEv, Key};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use strobe_model::{flags, CopyDir, IdKey, LaneKind, LoadSummary, SpanKind, TraceMeta};
use strobe_store::{FlowEnd, FlowInput, SpanInput, StoreBuilder};

struct Thread {
    pid: IdKey,
    tid: IdKey,
    cpu_lane: Option<u32>,
    /// The lane its slices went to, for binding flow steps (GPU stream beats CPU lane).
    bind_lane: Option<(u8, u32)>,
    be: Vec<Be>,
}

#[derive(Clone, Copy)]
struct Be {
    ts: i64,
    seq: u64,
    name: u32,
    cat: u32,
    args_off: u64,
    args_len: u32,
    begin: bool,
}

#[derive(Clone, Copy)]
struct FlowStep {
    cat: u32,
    id: u64,
    ts: i64,
    seq: u64,
    thread: u32,
    ph: u8,
    bp_enclosing: bool,
    name: u32,
}

#[derive(Clone, Copy)]
struct AsyncEv {
    pid_thread: u32,
    cat: u32,
    id: u64,
    name: u32,
    ts: i64,
    seq: u64,
    ph: u8,
    args_off: u64,
    args_len: u32,
}

pub struct Assembler<'a> {
    buf: &'a [u8],
    /// The args of B/E slices and async events, copied out of the text when the text is a
    /// window whose earlier pages are reused (a `.json.gz`, see `text`): they are read at
    /// `finish`, long after their wave. None when the whole text stays readable.
    kept_args: Option<Vec<u8>>,
    threads: Vec<Thread>,
    thread_ids: FxHashMap<(IdKey, IdKey), u32>,
    gpu_lanes: FxHashMap<(u8, i64, i64), u32>,
    flow_steps: Vec<FlowStep>,
    /// (bind_id, span, ts, seq, flow_in, flow_out) for v2 flows.
    v2: Vec<(u64, u64, i64, u64, bool, bool)>,
    asyncs: Vec<AsyncEv>,
    pub events: u64,
    /// Time spent in the pipelined parse and assembly (for STROBE_TIMING).
    pub parse_ns: u64,
    /// Of that, the time the serial assembly took (the rest of each wave waited on the parse).
    pub assemble_ns: u64,
    seq: u64,
    max_ts: i64,
    pub kineto: bool,
    /// Where the input was cut short, and how (set by the parse; see `Truncation`).
    pub cut: Option<(u64, String)>,
    /// `[memory]` events with only the change (`Bytes`), no totals (PyTorch < 1.10).
    memory_without_totals: u64,
    /// `[memory]` events whose args can't be read or name no device: kept as instants only.
    memory_unplaced: u64,
    /// Their levels, in file order, put into series at `finish`.
    memory_points: Vec<MemoryPoint>,
    /// Counts by phase and category, and what was skipped: handed to the trace's summary.
    load: LoadSummary,
    open_array: bool,
    unclosed: u64,
    /// XLA's device processes (`/device:GPU:N`, a JAX profile's Chrome JSON): pid → N.
    xla_devices: FxHashMap<IdKey, i64>,
    /// Their threads' names (`Stream #14(Compute,Memset)`, `XLA Ops`).
    xla_lines: FxHashMap<(IdKey, IdKey), String>,
}

impl<'a> Assembler<'a> {
    /// `keep_args`: the text below a finished wave is given back (see `text::Text::release`),
    /// so args read at `finish` are copied out when their event is seen.
    pub fn new(buf: &'a [u8], keep_args: bool) -> Assembler<'a> {
        Assembler {
            buf,
            kept_args: keep_args.then(Vec::new),
            threads: Vec::new(),
            thread_ids: FxHashMap::default(),
            gpu_lanes: FxHashMap::default(),
            flow_steps: Vec::new(),
            v2: Vec::new(),
            asyncs: Vec::new(),
            events: 0,
            parse_ns: 0,
            assemble_ns: 0,
            seq: 0,
            max_ts: i64::MIN,
            kineto: false,
            load: LoadSummary::default(),
            open_array: false,
            unclosed: 0,
            cut: None,
            memory_without_totals: 0,
            memory_unplaced: 0,
            memory_points: Vec::new(),
            xla_devices: FxHashMap::default(),
            xla_lines: FxHashMap::default(),
        }
    }

    /// The input as far as it has arrived: every args range handed to the assembler so far
    /// lies inside it (the text only grows; see `text`).
    pub fn set_text(&mut self, buf: &'a [u8]) {
        self.buf = buf;
    }

    pub fn note_open_array(&mut self) {
        self.open_array = true;
    }

    /// The args of an event of the chunk being added (its text is there).
    fn args(&self, off: u64, len: u32) -> &'a [u8] {
        if len == 0 {
            return &[];
        }
        &self.buf[off as usize..off as usize + len as usize]
    }

    /// Where the args of an event held until `finish` will be found then: the same range of
    /// the text, or (`KEPT` set) a range of `kept_args` they are copied into now.
    fn keep_args(&mut self, off: u64, len: u32) -> u64 {
        let text = self.args(off, len);
        let Some(kept) = self.kept_args.as_mut() else { return off };
        if len == 0 {
            return off;
        }
        let at = kept.len() as u64;
        kept.extend_from_slice(text);
        KEPT | at
    }

    /// The args of an event held until `finish` (see `keep_args`).
    fn held_args(&self, off: u64, len: u32) -> &[u8] {
        match &self.kept_args {
            Some(kept) if off & KEPT != 0 && len > 0 => {
                let at = (off & !KEPT) as usize;
                &kept[at..at + len as usize]
            }
            _ => self.args(off, len),
        }
    }

    /// Pushes a span that has no launch correlation and no copy direction: B/E slices,
    /// instants and async slices, whose args are a range of the input.
    #[allow(clippy::too_many_arguments)]
    fn push_plain(
        &self,
        b: &mut StoreBuilder,
        lane: u32,
        start: i64,
        end: i64,
        name: u32,
        cat: u32,
        kind: SpanKind,
        flags: u16,
        args_off: u64,
        args_len: u32,
    ) -> std::io::Result<u64> {
        b.push_span(SpanInput {
            lane,
            start,
            end,
            name,
            cat,
            kind,
            flags,
            args: self.held_args(args_off, args_len),
            correlation: 0,
            copy_dir: None,
        })
    }

    pub fn add_chunk(&mut self, c: &ChunkOut<'_>, b: &mut StoreBuilder) -> std::io::Result<()> {
        self.events += c.events;
        let names: Vec<u32> = c.strings.iter().map(|s| b.intern(s)).collect();
        let kinds: Vec<SpanKind> = c.strings.iter().map(|s| SpanKind::from_chrome_category(s)).collect();
        for (ph, &v) in c.by_phase.iter().enumerate() {
            if v > 0 {
                *self.load.by_phase.entry((ph as u8 as char).to_string()).or_default() += v;
            }
        }
        for (&k, &v) in &c.by_cat {
            *self.load.by_category.entry(c.strings[k as usize].to_string()).or_default() += v;
            if kinds[k as usize] != SpanKind::Other {
                self.kineto = true;
            }
        }
        for (k, v) in &c.skipped {
            *self.load.skipped.entry(k.to_string()).or_default() += v;
        }
        let threads: Vec<u32> = c.threads.iter().map(|(p, t)| self.thread(p, t)).collect();
        for ev in &c.evs {
            self.seq += 1;
            if ev.ph != b'M' {
                self.max_ts = self.max_ts.max(ev.ts.saturating_add(ev.dur.max(0)));
            }
            let th = threads[ev.thread as usize];
            let name = names[ev.name as usize];
            let cat = names[ev.cat as usize];
            match ev.ph {
                b'X' => {
                    let kind = kinds[ev.cat as usize];
                    let id = self.push_x(b, ev, th, kind, name, cat, &c.strings[ev.name as usize])?;
                    if ev.has_id && (ev.flow_in || ev.flow_out) {
                        self.v2.push((ev.id, id, ev.ts, self.seq, ev.flow_in, ev.flow_out));
                    }
                }
                b'B' | b'E' => {
                    let seq = self.seq;
                    let begin = ev.ph == b'B';
                    // an E's args are never shown (the B's describe the slice)
                    let args_len = if begin { ev.args_len } else { 0 };
                    let args_off = self.keep_args(ev.args_off, args_len);
                    self.threads[th as usize].be.push(Be { ts: ev.ts, seq, name, cat, args_off, args_len, begin });
                }
                b'i' | b'I' => {
                    if c.strings[ev.name as usize] == MEMORY_EVENT {
                        self.memory_level(ev, th);
                    }
                    let lane = self.cpu_lane(b, th);
                    self.push_plain(
                        b,
                        lane,
                        ev.ts,
                        ev.ts,
                        name,
                        cat,
                        SpanKind::Instant,
                        flags::INSTANT,
                        ev.args_off,
                        ev.args_len,
                    )?;
                }
                b'C' => self.counter(b, ev, th, &c.strings[ev.name as usize]),
                b's' | b't' | b'f' => {
                    if !ev.has_id {
                        self.load.skip("flow event without id");
                        continue;
                    }
                    let seq = self.seq;
                    self.flow_steps.push(FlowStep {
                        cat,
                        id: ev.id,
                        ts: ev.ts,
                        seq,
                        thread: th,
                        ph: ev.ph,
                        bp_enclosing: ev.bp_enclosing,
                        name,
                    });
                }
                b'b' | b'e' | b'n' | b'S' | b'F' => {
                    if !ev.has_id {
                        self.load.skip("async event without id");
                        continue;
                    }
                    let ph = match ev.ph {
                        b'S' => b'b',
                        b'F' => b'e',
                        p => p,
                    };
                    let seq = self.seq;
                    // an end's args are never shown (its begin's describe the slice)
                    let args_len = if ph == b'e' { 0 } else { ev.args_len };
                    let args_off = self.keep_args(ev.args_off, args_len);
                    self.asyncs.push(AsyncEv {
                        pid_thread: th,
                        cat,
                        id: ev.id,
                        name,
                        ts: ev.ts,
                        seq,
                        ph,
                        args_off,
                        args_len,
                    });
                }
                b'M' => self.metadata(b, ev, th, &c.strings[ev.name as usize]),
                other => {
                    let why = format!("phase '{}' is not shown", other as char);
                    self.load.skip(&why);
                }
            }
        }
        Ok(())
    }

    fn thread(&mut self, p: &Key<'_>, t: &Key<'_>) -> u32 {
        let key = (p.to_id(), t.to_id());
        if let Some(&i) = self.thread_ids.get(&key) {
            return i;
        }
        let i = self.threads.len() as u32;
        self.threads.push(Thread {
            pid: key.0.clone(),
            tid: key.1.clone(),
            cpu_lane: None,
            bind_lane: None,
            be: Vec::new(),
        });
        self.thread_ids.insert(key, i);
        i
    }

    /// The GPU stream lane (or annotation lane) of `device`/`stream`, made on first use and
    /// then named by `name` where the producer names its streams (asked only for a new lane:
    /// this runs once per GPU event).
    fn gpu_lane(
        &mut self,
        b: &mut StoreBuilder,
        annotation: bool,
        device: i64,
        stream: i64,
        name: impl FnOnce() -> Option<String>,
    ) -> u32 {
        let key = (annotation as u8, device, stream);
        if let Some(&l) = self.gpu_lanes.get(&key) {
            return l;
        }
        let l = b.lane(if annotation {
            LaneKind::GpuAnnotation { device, stream }
        } else {
            LaneKind::GpuStream { device, stream }
        });
        if let Some(n) = name() {
            b.name_lane(l, n);
        }
        self.gpu_lanes.insert(key, l);
        l
    }

    fn cpu_lane(&mut self, b: &mut StoreBuilder, th: u32) -> u32 {
        let t = &mut self.threads[th as usize];
        if let Some(l) = t.cpu_lane {
            return l;
        }
        let l = b.lane(LaneKind::CpuThread { pid: t.pid.clone(), tid: t.tid.clone() });
        t.cpu_lane = Some(l);
        l
    }

    fn note_bind_lane(&mut self, th: u32, rank: u8, lane: u32) {
        let t = &mut self.threads[th as usize];
        if t.bind_lane.map(|(r, _)| rank > r).unwrap_or(true) {
            t.bind_lane = Some((rank, lane));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn push_x(
        &mut self,
        b: &mut StoreBuilder,
        ev: &CEv,
        th: u32,
        kind: SpanKind,
        name: u32,
        cat: u32,
        name_text: &str,
    ) -> std::io::Result<u64> {
        let mut kind = kind;
        let mut xla = None;
        if kind == SpanKind::Other && !self.xla_devices.is_empty() {
            if let Some((k, dir, lane)) = self.xla_device_work(b, th, name_text) {
                kind = k;
                xla = Some((lane, dir));
                self.note_bind_lane(th, if k == SpanKind::GpuAnnotation { 1 } else { 3 }, lane);
            }
        }
        if kind == SpanKind::Other && ev.correlation != 0 {
            // a cat-less event with a launch's correlation id: XLA's host side of a launch
            kind = crate::xla_names::launch_kind(name_text);
        }
        let (lane, copy_dir) = match kind {
            _ if xla.is_some() => xla.unwrap_or_default(),
            SpanKind::Kernel | SpanKind::Memcpy | SpanKind::Memset | SpanKind::GpuAnnotation => {
                let t = &self.threads[th as usize];
                let device = if ev.has_device { ev.device } else { t.pid.as_num().unwrap_or(0) };
                let stream = if ev.has_stream { ev.stream } else { t.tid.as_num().unwrap_or(0) };
                let annotation = kind == SpanKind::GpuAnnotation;
                let lane = self.gpu_lane(b, annotation, device, stream, || None);
                self.note_bind_lane(th, if annotation { 1 } else { 3 }, lane);
                let dir = match kind {
                    SpanKind::Memcpy => Some(CopyDir::from_memcpy_name(name_text)),
                    SpanKind::Memset => Some(CopyDir::Memset),
                    _ => None,
                };
                (lane, dir)
            }
            _ => {
                let l = self.cpu_lane(b, th);
                self.note_bind_lane(th, 2, l);
                (l, None)
            }
        };
        b.push_span(SpanInput {
            lane,
            start: ev.ts,
            end: ev.ts.saturating_add(ev.dur),
            name,
            cat,
            kind,
            flags: 0,
            args: self.args(ev.args_off, ev.args_len),
            correlation: ev.correlation,
            copy_dir,
        })
    }

    /// An event of an XLA device process: its kind and copy direction, its lane made
    /// (device N's stream, or an annotation row for XProf's derived lines) and named as XLA
    /// names it. None when the process is not an XLA device.
    fn xla_device_work(
        &mut self,
        b: &mut StoreBuilder,
        th: u32,
        name_text: &str,
    ) -> Option<(SpanKind, Option<CopyDir>, u32)> {
        let t = &self.threads[th as usize];
        let device = *self.xla_devices.get(&t.pid)?;
        let line = self.xla_lines.get(&(t.pid.clone(), t.tid.clone())).cloned().unwrap_or_default();
        let tid = t.tid.as_num().unwrap_or(0);
        let (kind, dir, stream) = match crate::xla_names::stream_number(&line) {
            Some(s) => {
                let (k, d) = crate::xla_names::device_event_kind(name_text);
                (k, d, s)
            }
            None if line.is_empty() => {
                let (k, d) = crate::xla_names::device_event_kind(name_text);
                (k, d, tid)
            }
            None => (SpanKind::GpuAnnotation, None, tid),
        };
        let annotation = kind == SpanKind::GpuAnnotation;
        let name = || (!line.is_empty()).then(|| format!("GPU {device} · {line}"));
        let lane = self.gpu_lane(b, annotation, device, stream, name);
        Some((kind, dir, lane))
    }

    /// A Kineto `[memory]` instant (`profile_memory=True`): the allocator's totals right after
    /// one allocation or free, per device. GPU devices get the water-level series of
    /// `strobe_model::gpu_memory` in their group; host memory (`Device Type` 0) is a counter
    /// of the recording process. The instant itself stays on its thread.
    fn memory_level(&mut self, ev: &CEv, th: u32) {
        let args = self.args(ev.args_off, ev.args_len);
        let Some(m) = std::str::from_utf8(args).ok().and_then(MemoryArgs::scan) else {
            self.memory_unplaced += 1;
            return;
        };
        if m.allocated.is_none() && m.reserved.is_none() {
            // PyTorch before 1.10 wrote only the change (`Bytes`): no level to draw
            self.memory_without_totals += 1;
            return;
        }
        // c10::DeviceType::CPU is 0; CUDA (ROCm reports CUDA too), XPU, … are devices
        let device = match (m.device_type, m.device) {
            (Some(0), _) => None,
            (Some(_), Some(d)) if d >= 0 => Some(d),
            _ => {
                self.memory_unplaced += 1;
                return;
            }
        };
        for (series, v) in [(0u8, m.allocated), (1u8, m.reserved)] {
            if let Some(v) = v.filter(|v| v.is_finite()) {
                self.memory_points.push(MemoryPoint { th, device, series, ts: ev.ts, value: v });
            }
        }
    }

    /// The `[memory]` levels into their series, each in file order: one key made per series,
    /// not one per point (a `profile_memory` trace has one such event per allocation).
    fn flush_memory_levels(&mut self, b: &mut StoreBuilder) {
        let points = std::mem::take(&mut self.memory_points);
        // (device, pid, series) and its points
        type Series = ((Option<i64>, IdKey, u8), Vec<(i64, f64)>);
        let mut series: Vec<Series> = Vec::new();
        for p in points {
            let pid = &self.threads[p.th as usize].pid;
            let i = match series.iter().position(|((d, k, s), _)| *d == p.device && k == pid && *s == p.series) {
                Some(i) => i,
                None => {
                    series.push(((p.device, pid.clone(), p.series), Vec::new()));
                    series.len() - 1
                }
            };
            series[i].1.push((p.ts, p.value));
        }
        for ((device, pid, s), pts) in series {
            let name = [strobe_model::gpu_memory::ALLOCATED, strobe_model::gpu_memory::RESERVED][s as usize];
            match device {
                None => b.extend_counter(pid, "CPU memory", name, pts),
                Some(d) => b.extend_device_counter(d, pid, strobe_model::gpu_memory::NAME, name, pts),
            }
        }
    }

    fn counter(&mut self, b: &mut StoreBuilder, ev: &CEv, th: u32, name: &str) {
        let args = self.args(ev.args_off, ev.args_len);
        let Ok(map) = serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(args) else {
            self.load.skip("counter without an args object");
            return;
        };
        let pid = self.threads[th as usize].pid.clone();
        let full = if ev.has_id { format!("{name} {}", ev.id) } else { name.to_string() };
        for (k, v) in map {
            match v.as_f64() {
                Some(x) if x.is_finite() => b.push_counter(pid.clone(), &full, &k, ev.ts, x),
                _ => self.load.skip("counter value not a number"),
            }
        }
    }

    fn metadata(&mut self, b: &mut StoreBuilder, ev: &CEv, th: u32, name: &str) {
        let args = self.args(ev.args_off, ev.args_len);
        let v: serde_json::Value = serde_json::from_slice(args).unwrap_or(serde_json::Value::Null);
        let t = &self.threads[th as usize];
        let (pid, tid) = (t.pid.clone(), t.tid.clone());
        match name {
            "process_name" => match v.get("name").and_then(|x| x.as_str()) {
                Some(n) => {
                    if let Some(d) = crate::xla_names::gpu_ordinal(n) {
                        self.xla_devices.insert(pid.clone(), d);
                    }
                    b.names.processes.push((pid, n.to_string()))
                }
                None => self.load.skip("process_name without a name"),
            },
            "thread_name" => match v.get("name").and_then(|x| x.as_str()) {
                Some(n) => {
                    if self.xla_devices.contains_key(&pid) {
                        self.xla_lines.insert((pid.clone(), tid.clone()), n.to_string());
                    }
                    b.names.threads.push(((pid, tid), n.to_string()))
                }
                None => self.load.skip("thread_name without a name"),
            },
            "process_sort_index" => match v.get("sort_index").and_then(|x| x.as_i64()) {
                Some(n) => b.names.process_sort.push((pid, n)),
                None => self.load.skip("sort index not an integer"),
            },
            "thread_sort_index" => match v.get("sort_index").and_then(|x| x.as_i64()) {
                Some(n) => b.names.thread_sort.push(((pid, tid), n)),
                None => self.load.skip("sort index not an integer"),
            },
            // labels and other metadata carry nothing Strobe draws
            _ => {}
        }
    }

    /// Matches B/E per thread, binds flows, pairs async events, fills the load summary.
    pub fn finish(&mut self, b: &mut StoreBuilder, meta: &mut TraceMeta) -> std::io::Result<()> {
        if std::env::var_os("STROBE_TIMING").is_some() {
            eprintln!("[timing] {:<28} {:8.1} ms", "parse+assemble (pipelined)", self.parse_ns as f64 / 1e6);
            eprintln!("[timing] {:<28} {:8.1} ms", "  of which assembling", self.assemble_ns as f64 / 1e6);
        }
        let trace_end = if self.max_ts == i64::MIN { 0 } else { self.max_ts };
        self.flush_memory_levels(b);
        // B/E
        for th in 0..self.threads.len() {
            let mut be = std::mem::take(&mut self.threads[th].be);
            if be.is_empty() {
                continue;
            }
            be.sort_by_key(|e| (e.ts, e.seq));
            let lane = self.cpu_lane(b, th as u32);
            self.note_bind_lane(th as u32, 2, lane);
            let mut stack: Vec<Be> = Vec::new();
            for e in be {
                if e.begin {
                    stack.push(e);
                } else if let Some(open) = stack.pop() {
                    // E may carry args too; the B's args describe the slice
                    self.push_plain(
                        b,
                        lane,
                        open.ts,
                        e.ts,
                        open.name,
                        open.cat,
                        SpanKind::Other,
                        0,
                        open.args_off,
                        open.args_len,
                    )?;
                } else {
                    self.load.skip("E without a matching B");
                }
            }
            for open in stack {
                self.push_plain(
                    b,
                    lane,
                    open.ts,
                    open_end(trace_end, open.ts),
                    open.name,
                    open.cat,
                    SpanKind::Other,
                    flags::UNCLOSED,
                    open.args_off,
                    open.args_len,
                )?;
                self.unclosed += 1;
            }
        }
        self.finish_async(b, trace_end)?;
        self.finish_flows(b);
        self.load.events = self.events;
        meta.load.merge(&self.load);
        if self.memory_without_totals > 0 {
            meta.load.notes.push(format!(
                "{} [memory] event(s) carry only the change in bytes, no allocator totals (PyTorch before 1.10): \
                 no memory water level",
                self.memory_without_totals
            ));
        }
        if self.memory_unplaced > 0 {
            meta.load.notes.push(format!(
                "{} [memory] event(s) without readable totals or a device: kept as instants, not on a water level",
                self.memory_unplaced
            ));
        }
        if self.unclosed > 0 {
            meta.load.notes.push(format!("{} B event(s) without E: kept, marked unclosed", self.unclosed));
        }
        if self.open_array {
            meta.load.notes.push("event array has no closing ']' (allowed by the format)".into());
        }
        Ok(())
    }

    fn finish_async(&mut self, b: &mut StoreBuilder, trace_end: i64) -> std::io::Result<()> {
        let mut evs = std::mem::take(&mut self.asyncs);
        evs.sort_by_key(|e| (self.threads[e.pid_thread as usize].pid.clone(), e.cat, e.id, e.ts, e.seq));
        let mut i = 0;
        while i < evs.len() {
            let pid = self.threads[evs[i].pid_thread as usize].pid.clone();
            let (cat, id) = (evs[i].cat, evs[i].id);
            let mut j = i;
            while j < evs.len()
                && evs[j].cat == cat
                && evs[j].id == id
                && self.threads[evs[j].pid_thread as usize].pid == pid
            {
                j += 1;
            }
            let track = {
                let c = b.strings.get(cat).to_string();
                if c.is_empty() {
                    "async".to_string()
                } else {
                    c
                }
            };
            let lane = b.lane(LaneKind::Async { pid: pid.clone(), track });
            let mut stack: Vec<AsyncEv> = Vec::new();
            for e in &evs[i..j] {
                match e.ph {
                    b'b' => stack.push(*e),
                    b'e' => {
                        let pos = stack.iter().rposition(|o| o.name == e.name).or(if stack.is_empty() {
                            None
                        } else {
                            Some(stack.len() - 1)
                        });
                        match pos {
                            Some(p) => {
                                let o = stack.remove(p);
                                self.push_plain(
                                    b,
                                    lane,
                                    o.ts,
                                    e.ts.max(o.ts),
                                    o.name,
                                    o.cat,
                                    SpanKind::Async,
                                    0,
                                    o.args_off,
                                    o.args_len,
                                )?;
                            }
                            None => self.load.skip("async end without a begin"),
                        }
                    }
                    _ => {
                        self.push_plain(
                            b,
                            lane,
                            e.ts,
                            e.ts,
                            e.name,
                            e.cat,
                            SpanKind::Async,
                            flags::INSTANT,
                            e.args_off,
                            e.args_len,
                        )?;
                    }
                }
            }
            for o in stack {
                self.push_plain(
                    b,
                    lane,
                    o.ts,
                    open_end(trace_end, o.ts),
                    o.name,
                    o.cat,
                    SpanKind::Async,
                    flags::UNCLOSED,
                    o.args_off,
                    o.args_len,
                )?;
            }
            i = j;
        }
        Ok(())
    }

    fn finish_flows(&mut self, b: &mut StoreBuilder) {
        // v1 steps: chains per (cat, id), in time order; the builder binds them and applies
        // the chain rules (it knows the slices).
        let mut steps = std::mem::take(&mut self.flow_steps);
        // `seq` is unique (one a event): an unstable sort orders as a stable one, and on all
        // cores (a Kineto trace has two steps a kernel launch, 1.5 M in a 1 GB trace)
        steps.par_sort_unstable_by_key(|s| (s.cat, s.id, s.ts, s.seq));
        for s in &steps {
            let lane = match self.threads[s.thread as usize].bind_lane {
                Some((_, l)) => l,
                None => self.cpu_lane(b, s.thread),
            };
            let end = if s.ph == b'f' && !s.bp_enclosing {
                FlowEnd::Next { lane, ts: s.ts }
            } else {
                FlowEnd::Enclosing { lane, ts: s.ts }
            };
            b.push_flow_step(s.cat, s.id, s.name, s.ph, end, s.ts);
        }
        // v2: each flow_out slice links to the next flow_in slice with its bind id
        let mut v2 = std::mem::take(&mut self.v2);
        v2.par_sort_unstable_by_key(|x| (x.0, x.2, x.3));
        let cat = b.intern("flow_v2");
        let mut i = 0;
        while i < v2.len() {
            let mut j = i;
            while j < v2.len() && v2[j].0 == v2[i].0 {
                j += 1;
            }
            let mut from: Option<(u64, i64)> = None;
            for x in &v2[i..j] {
                if x.4 {
                    if let Some((f, fts)) = from {
                        b.push_flow(FlowInput {
                            from: FlowEnd::Span(f),
                            to: FlowEnd::Span(x.1),
                            id: x.0,
                            cat,
                            name: cat,
                            from_ts: fts,
                            to_ts: x.2,
                        });
                    }
                    from = None;
                }
                if x.5 {
                    from = Some((x.1, x.2));
                }
            }
            i = j;
        }
    }
}

/// Marks an args offset as one into `Assembler::kept_args` (text offsets stay below 2⁶³).
const KEPT: u64 = 1 << 63;

/// Where a slice that never closed ends: past every start in the trace, so a slice begun at the
/// trace's last timestamp still nests inside it (as Perfetto and catapult nest it).
fn open_end(trace_end: i64, start: i64) -> i64 {
    trace_end.max(start).saturating_add(1)
}

/// The name of Kineto's memory instants (`profile_memory=True`).
const MEMORY_EVENT: &str = "[memory]";

/// One `[memory]` level: series 0 is the allocated total, 1 the reserved; device None is the
/// host's.
struct MemoryPoint {
    th: u32,
    device: Option<i64>,
    series: u8,
    ts: i64,
    value: f64,
}

/// The args of a Kineto `[memory]` instant that give the allocator's totals. Read with the
/// event scanner: a `profile_memory` trace has one such event per allocation and free, and
/// reading them with serde took a third of a GPT trace's serial assembly.
#[derive(Default)]
struct MemoryArgs {
    allocated: Option<f64>,
    reserved: Option<f64>,
    device: Option<i64>,
    device_type: Option<i64>,
}

impl MemoryArgs {
    /// None when the args are not an object, or a field the reading needs is not a number of
    /// its kind (as serde would refuse it).
    fn scan(args: &str) -> Option<MemoryArgs> {
        // a JSON number's text (null reads as absent); anything else refuses the args
        fn read<T: std::str::FromStr>(v: &str, ok: &mut bool) -> Option<T> {
            match v.as_bytes().first() {
                Some(b'-' | b'0'..=b'9') => v.parse().map_err(|_| *ok = false).ok(),
                _ => {
                    *ok &= v == "null";
                    None
                }
            }
        }
        let mut m = MemoryArgs::default();
        let mut ok = true;
        let mut set = |k: &str, v: &str| match k {
            "Total Allocated" => m.allocated = read(v, &mut ok),
            "Total Reserved" => m.reserved = read(v, &mut ok),
            "Device Id" => m.device = read(v, &mut ok),
            "Device Type" => m.device_type = read(v, &mut ok),
            _ => {}
        };
        if super::object_blocks::scan_object(args, 0, &mut set).is_none() {
            super::scan::scan_object(args, 0, set).ok()?;
        }
        ok.then_some(m)
    }
}

#[cfg(test)]
mod memory_args_tests {
    use super::MemoryArgs;

    #[test]
    fn memory_args_read_as_serde_would() {
        let m = MemoryArgs::scan(
            r#"{"Addr": 1, "Bytes": 512, "Total Allocated": 2048, "Total Reserved": 4.5e3, "Device Id": 0, "Device Type": 1}"#,
        )
        .unwrap();
        assert_eq!((m.allocated, m.reserved, m.device, m.device_type), (Some(2048.0), Some(4500.0), Some(0), Some(1)));
        // null is absent; a string or a float where an integer belongs refuses the args
        let m = MemoryArgs::scan(r#"{"Total Allocated": null, "Device Type": 0}"#).unwrap();
        assert_eq!((m.allocated, m.device_type), (None, Some(0)));
        assert!(MemoryArgs::scan(r#"{"Total Allocated": "2048"}"#).is_none());
        assert!(MemoryArgs::scan(r#"{"Device Id": 1.5}"#).is_none());
        assert!(MemoryArgs::scan(r#"{"Total Allocated": NaN}"#).is_none());
        assert!(MemoryArgs::scan("[1, 2]").is_none());
        assert!(MemoryArgs::scan("").is_none());
    }
}
