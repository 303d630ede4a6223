//! Collects what an importer found and writes the store. Importers push spans in any order;
//! `finish` groups them by lane, sorts, assigns depth, builds the interval index and the
//! level-of-detail pyramid per lane (in parallel), resolves flows and writes every section.
//! The staging of the columns is in `stage`, flows in `flows`, the level of detail's finest
//! level in `lane_lod` and the writing of a section in `sections`.

mod bucket;
mod flows;
mod lane_lod;
mod sections;
mod stage;

pub(crate) use lane_lod::build_lane_lod;
pub(crate) use sections::{put_section, put_section_parts};

use crate::format::*;
use crate::output::{Built, Output};
use crate::scratch::{Scratch, ScratchDir};
use crate::strings::Interner;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use strobe_model::{CopyDir, IdKey, LaneKind, SpanKind, TraceMeta};

const ARGS_DEDUP_MAX_LEN: usize = 512;
const ARGS_DEDUP_MAX_TEXTS: usize = 1 << 16;
/// Up to this many ascending runs a lane's spans are merged rather than sorted: a heap of
/// 1024 runs is 10 levels deep, against the 21 of a sort of 2 M spans.
const MAX_MERGED_RUNS: usize = 1024;

/// A span as an importer hands it over.
pub struct SpanInput<'a> {
    pub lane: u32,
    pub start: i64,
    pub end: i64,
    pub name: u32,
    pub cat: u32,
    pub kind: SpanKind,
    pub flags: u16,
    /// The span's args as one JSON object's text (empty when none).
    pub args: &'a [u8],
    /// CUDA correlation id, unique within the importer's scope; 0 when none. A CPU launch
    /// (runtime/driver) and the GPU work sharing one become a flow.
    pub correlation: i64,
    /// Copy direction for memcpy/memset spans: puts them on a copy-engine lane too.
    pub copy_dir: Option<CopyDir>,
}

/// Where one end of a flow binds.
#[derive(Clone, Copy, Debug)]
pub enum FlowEnd {
    /// A span by the id `push_span` returned.
    Span(u64),
    /// The deepest span of `lane` enclosing `ts`.
    Enclosing { lane: u32, ts: i64 },
    /// The first span of `lane` starting at or after `ts`.
    Next { lane: u32, ts: i64 },
}

#[derive(Clone, Copy, Debug)]
pub struct FlowInput {
    pub from: FlowEnd,
    pub to: FlowEnd,
    pub id: u64,
    pub cat: u32,
    pub name: u32,
    pub from_ts: i64,
    pub to_ts: i64,
}

/// One step (`s`, `t` or `f`) of a v1 flow chain; see `push_flow_step`.
#[derive(Clone, Copy, Debug)]
struct ChainStep {
    cat: u32,
    id: u64,
    name: u32,
    ph: u8,
    end: FlowEnd,
    ts: i64,
}

/// The spans pushed so far, in push order, one array per field: `finish` turns each into its
/// column and frees it at once, so the staged spans and their columns are never all in memory
/// together (a 1 GB Kineto trace's build peaked there, 158 MB staged beside 136 MB of columns).
/// Each array is a `Scratch`: in the pages of a file in the cache dir once it is big (see
/// `scratch`), so that a build does not need RAM for every span several times over.
#[derive(Default)]
struct Staged {
    start: Scratch<i64>,
    end: Scratch<i64>,
    args: Scratch<ArgsRef>,
    correlation: Scratch<i64>,
    meta: Scratch<StagedMeta>,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct StagedMeta {
    name: u32,
    cat: u32,
    lane: u32,
    flags: u16,
    kind: u8,
    copy_dir: u8, // 255 = none
}

impl Staged {
    fn new(dir: &ScratchDir) -> Staged {
        Staged {
            start: dir.new_array(),
            end: dir.new_array(),
            args: dir.new_array(),
            correlation: dir.new_array(),
            meta: dir.new_array(),
        }
    }

    fn len(&self) -> usize {
        self.start.len()
    }

    fn reserve(&mut self, n: usize) {
        self.start.reserve(n);
        self.end.reserve(n);
        self.args.reserve(n);
        self.correlation.reserve(n);
        self.meta.reserve(n);
    }
}

pub struct StoreBuilder {
    pub strings: Interner,
    lanes: Vec<LaneDesc>,
    lane_map: FxHashMap<LaneKind, u32>,
    spans: Staged,
    flows: Vec<FlowInput>,
    chain_steps: Vec<ChainStep>,
    counters: BTreeMap<CounterKey, Vec<(i64, f64)>>,
    pub names: Names,
    out: Output,
    args_len: u64,
    /// Args texts already written, by text (offset in the ARGS section): bounded by
    /// `ARGS_DEDUP_MAX_TEXTS` of at most `ARGS_DEDUP_MAX_LEN` bytes.
    args_seen: FxHashMap<Box<[u8]>, u64>,
    /// Off once the texts are seen not to repeat (`args_seen_at`).
    args_dedup: bool,
    args_lookups: u64,
    args_hits: u64,
    /// When set, args lying inside this buffer (the mapped, unchanging source file) are stored
    /// as references into the source instead of being copied: (base address, length, path).
    args_source: Option<(usize, usize, String)>,
    /// Flow endpoints that could not be bound (no span there): counted in the load summary.
    pub unbound_flows: u64,
    /// `t`/`f` steps with no open chain (Kineto writes `f` without `s` for some syncs).
    pub orphan_flow_steps: u64,
    /// Lane names an importer gave (`name_lane`), in place of the ones made from the kind.
    lane_names: FxHashMap<u32, String>,
    /// Freed memory goes back to the OS within 10 ms while this builder lives (see `purge`).
    _purge: crate::purge::PromptPurge,
}

/// A counter series' identity: (the GPU it measures, if any; recording pid; name; series).
type CounterKey = (Option<i64>, IdKey, String, String);

/// What `StoreBuilder::stage` makes: the columns in memory, the output with the args and span
/// args written and their sections' entries, and the builder's purge guard.
type Stage = (crate::deferred::Columns, Output, Vec<SectionEntry>, crate::purge::PromptPurge);

impl StoreBuilder {
    /// A builder writing to `out` (a temp file in the cache dir, or memory).
    pub fn new(out: Output) -> std::io::Result<StoreBuilder> {
        let mut out = out;
        out.write_all(&[0u8; HEADER_LEN])?;
        let scratch = out.scratch_dir();
        Ok(StoreBuilder {
            strings: Interner::default(),
            lanes: Vec::new(),
            lane_map: FxHashMap::default(),
            spans: Staged::new(&scratch),
            flows: Vec::new(),
            chain_steps: Vec::new(),
            counters: BTreeMap::new(),
            names: Names::default(),
            out,
            args_len: 0,
            args_seen: FxHashMap::default(),
            args_dedup: true,
            args_lookups: 0,
            args_hits: 0,
            args_source: None,
            unbound_flows: 0,
            orphan_flow_steps: 0,
            lane_names: FxHashMap::default(),
            _purge: crate::purge::PromptPurge::start(),
        })
    }

    pub fn in_memory() -> StoreBuilder {
        StoreBuilder::new(Output::memory()).expect("memory output cannot fail")
    }

    pub fn intern(&mut self, s: &str) -> u32 {
        self.strings.intern(s)
    }

    /// The lane for `kind`, created on first use.
    pub fn lane(&mut self, kind: LaneKind) -> u32 {
        if let Some(&id) = self.lane_map.get(&kind) {
            return id;
        }
        let id = self.lanes.len() as u32;
        self.lanes.push(LaneDesc { kind: kind.clone(), name: String::new(), sort: 0 });
        self.lane_map.insert(kind, id);
        id
    }

    /// Shows `lane` as `name` rather than the name its kind and the metadata give (a
    /// format that names its own streams, as XLA's `Stream #14(Compute,Memset)`).
    pub fn name_lane(&mut self, lane: u32, name: String) {
        self.lane_names.insert(lane, name);
    }

    pub fn lane_count(&self) -> usize {
        self.lanes.len()
    }

    /// Write the store's sections compressed (`codec`): for an importer whose source is
    /// more compact than the store's columns (an Nsight Systems export).
    pub fn compress_sections(&mut self) {
        self.out.compress_sections();
    }

    /// Keep the build's big arrays in files once big, whatever the memory
    /// (`scratch::FilePolicy::WhenBig`): for an importer whose build holds more than its
    /// source (an Nsight Systems export). Asked before the first span, it covers every array.
    pub fn arrays_in_files(&mut self) {
        self.out.arrays_in_files();
        if self.spans.len() == 0 {
            self.spans = Staged::new(&self.out.scratch_dir());
        }
    }

    pub fn span_count(&self) -> usize {
        self.spans.len()
    }

    pub fn reserve_spans(&mut self, n: usize) {
        self.spans.reserve(n);
    }

    /// Flow steps pushed so far (`push_flow_step`).
    pub fn flow_step_count(&self) -> usize {
        self.chain_steps.len()
    }

    /// Room for `n` more flow steps: a guess of the whole file's, made once, so the steps are
    /// not copied into fresh pages at every doubling.
    pub fn reserve_flow_steps(&mut self, n: usize) {
        self.chain_steps.reserve_exact(n);
    }

    /// Adds a span; returns its builder id (for flows).
    pub fn push_span(&mut self, s: SpanInput<'_>) -> std::io::Result<u64> {
        self.push_span_correlated(s, 0)
    }

    /// `push_span` whose args are `{"correlation":args_correlation,` then the members of
    /// `s.args` (0: just `s.args`). Args written into the store that repeat exactly (as an
    /// nsys kernel's do once the correlation id is apart) are stored once.
    pub fn push_span_correlated(&mut self, s: SpanInput<'_>, args_correlation: u32) -> std::io::Result<u64> {
        let in_source = self.args_source.as_ref().and_then(|(base, len, _)| {
            let p = s.args.as_ptr() as usize;
            (p >= *base && p + s.args.len() <= base + len).then(|| (p - base) as u64)
        });
        // a longer text than a 31-bit length holds is not stored (no real args are 2 GB)
        let fits = s.args.len() < ARGS_IN_SOURCE as usize;
        let args = if s.args.is_empty() || !fits {
            ArgsRef { offset: 0, len: 0, correlation: args_correlation }
        } else if let Some(off) = in_source {
            ArgsRef { offset: off, len: s.args.len() as u32 | ARGS_IN_SOURCE, correlation: args_correlation }
        } else if let Some(offset) = self.args_seen_at(s.args) {
            ArgsRef { offset, len: s.args.len() as u32, correlation: args_correlation }
        } else {
            let r = ArgsRef { offset: self.args_len, len: s.args.len() as u32, correlation: args_correlation };
            self.out.write_all(s.args)?;
            self.args_len += s.args.len() as u64;
            // short texts only, and a bounded number: most args of a trace either repeat a
            // few shapes or never repeat at all (payloads, bandwidths)
            if self.args_dedup && s.args.len() <= ARGS_DEDUP_MAX_LEN && self.args_seen.len() < ARGS_DEDUP_MAX_TEXTS {
                self.args_seen.insert(s.args.into(), r.offset);
            }
            r
        };
        let id = self.spans.len() as u64;
        let st = &mut self.spans;
        st.start.push(s.start);
        st.end.push(s.end.max(s.start));
        st.args.push(args);
        st.correlation.push(s.correlation);
        st.meta.push(StagedMeta {
            name: s.name,
            cat: s.cat,
            lane: s.lane,
            flags: s.flags,
            kind: s.kind as u8,
            copy_dir: s.copy_dir.map(|d| d as u8).unwrap_or(255),
        });
        Ok(id)
    }

    /// Where `args` was written already, if it was seen. Once the seen set is full and less
    /// than one lookup in eight found a text, the texts are taken not to repeat (a Kineto
    /// trace's args hold per-event ids) and no more are hashed.
    fn args_seen_at(&mut self, args: &[u8]) -> Option<u64> {
        if !self.args_dedup || args.len() > ARGS_DEDUP_MAX_LEN {
            return None;
        }
        self.args_lookups += 1;
        let found = self.args_seen.get(args).copied();
        if found.is_some() {
            self.args_hits += 1;
        } else if self.args_seen.len() >= ARGS_DEDUP_MAX_TEXTS && self.args_hits * 8 < self.args_lookups {
            self.args_dedup = false;
            self.args_seen = FxHashMap::default();
        }
        found
    }

    /// Args found inside `source` (the mapped bytes of the file at `path`, which the cache
    /// key pins) are referenced, not copied: a store a third the size, written much faster.
    /// `path` should be absolute so the store opens from any working directory.
    pub fn args_in_source(&mut self, source: &[u8], path: &str) {
        self.args_source = Some((source.as_ptr() as usize, source.len(), path.to_string()));
    }

    pub fn push_flow(&mut self, f: FlowInput) {
        self.flows.push(f);
    }

    /// A step of a trace-event-format v1 flow chain. Steps of one chain (same `cat`, `id`)
    /// must come consecutively and in time order. Chain rules (catapult's): an `s` opens a
    /// chain only if it binds to a slice, and is ignored while one is open; `t` extends it;
    /// `f` ends it; `t`/`f` with no open chain are dropped.
    pub fn push_flow_step(&mut self, cat: u32, id: u64, name: u32, ph: u8, end: FlowEnd, ts: i64) {
        self.chain_steps.push(ChainStep { cat, id, name, ph, end, ts });
    }

    pub fn push_counter(&mut self, pid: IdKey, name: &str, series: &str, ts: i64, value: f64) {
        self.counters.entry((None, pid, name.to_string(), series.to_string())).or_default().push((ts, value));
    }

    /// Many points of one counter series of process `pid` at once (one key made, not one per
    /// point).
    pub fn extend_counter(&mut self, pid: IdKey, name: &str, series: &str, pts: Vec<(i64, f64)>) {
        self.counters.entry((None, pid, name.to_string(), series.to_string())).or_default().extend(pts);
    }

    /// A point of a series that measures GPU `device` (e.g. `strobe_model::gpu_memory`), as
    /// recorded by process `pid`.
    pub fn push_device_counter(&mut self, device: i64, pid: IdKey, name: &str, series: &str, ts: i64, value: f64) {
        self.counters.entry((Some(device), pid, name.to_string(), series.to_string())).or_default().push((ts, value));
    }

    /// Many points of a series that measures GPU `device` at once (a sampled metric's
    /// thousands of points: one key made, not one per point).
    pub fn extend_device_counter(&mut self, device: i64, pid: IdKey, name: &str, series: &str, pts: Vec<(i64, f64)>) {
        self.counters.entry((Some(device), pid, name.to_string(), series.to_string())).or_default().extend(pts);
    }

    /// Writes the store. `meta` goes in as given (its load summary should be complete).
    pub fn finish(self, meta: &TraceMeta) -> std::io::Result<Built> {
        let _t = crate::timing::Phase::start("store finish (total)");
        // freed memory goes back promptly until the store is written, as while it was built
        let (columns, out, table, _purge) = self.stage(meta, false)?;
        crate::deferred::write_rest(out, table, &columns.view())
    }

    /// The store ready for queries before its file is written: what `finish` makes but the
    /// level of detail, held in memory (the args already in the file, mapped from it).
    /// `Store::write_pending` then builds the level of detail and writes the store into the
    /// cache, byte for byte what `finish` writes; a store dropped before that leaves no file.
    /// For an answer that needs no level of detail (`strobe report`): it is given before
    /// the store's last third is built and written. A builder writing to memory finishes
    /// at once.
    pub fn finish_deferred(self, meta: &TraceMeta) -> std::io::Result<crate::reader::Store> {
        self.finish_pending(meta, false)
    }

    /// The finished store, level of detail and all, before its file is written when writing
    /// takes long (a compressed store, `compress_sections`: ~0.3 s of a 250 MB export's on 2
    /// cores), so that a window draws it at once; `Store::write_pending` then writes it, on a
    /// thread of the caller's, byte for byte what `finish` writes, and a store dropped before
    /// that leaves no file. Any other store is finished and opened as `finish` does.
    pub fn finish_write_behind(self, meta: &TraceMeta) -> std::io::Result<crate::reader::Store> {
        if !self.out.compresses() {
            return self.finish(meta)?.into_store().map_err(std::io::Error::other);
        }
        self.finish_pending(meta, true)
    }

    /// `finish_deferred`'s and `finish_write_behind`'s build: the store in memory, with its
    /// level of detail when `with_lod`, and its file to write.
    fn finish_pending(self, meta: &TraceMeta, with_lod: bool) -> std::io::Result<crate::reader::Store> {
        let _t = crate::timing::Phase::start("store finish (total)");
        let (columns, mut out, table, purge) = self.stage(meta, true)?;
        let lod = with_lod.then(|| {
            crate::purge::collect_now();
            crate::deferred::build_lod(&columns.view(), &out.scratch_dir())
        });
        // the answer's analyses keep the allocator's usual purge delay (`write_pending` takes
        // the prompt one again)
        drop(purge);
        match out.map_written()? {
            Some(map) => crate::deferred::pending_store(columns, lod, map, out, table),
            None => {
                let built = crate::deferred::write_rest(out, table, &columns.view())?;
                built.into_store().map_err(std::io::Error::other)
            }
        }
    }

    fn name_lanes(&mut self) {
        let procs: FxHashMap<IdKey, String> = self.names.processes.iter().cloned().collect();
        let threads: FxHashMap<(IdKey, IdKey), String> = self.names.threads.iter().cloned().collect();
        let psort: FxHashMap<IdKey, i64> = self.names.process_sort.iter().cloned().collect();
        let tsort: FxHashMap<(IdKey, IdKey), i64> = self.names.thread_sort.iter().cloned().collect();
        for (i, d) in self.lanes.iter_mut().enumerate() {
            d.name = match self.lane_names.get(&(i as u32)) {
                Some(n) => n.clone(),
                None => crate::names::lane_display_name(&d.kind, &procs, &threads),
            };
            d.sort = crate::names::lane_sort_key(&d.kind, &psort, &tsort);
        }
    }
}
