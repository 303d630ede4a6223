//! Collects what an importer found and writes the store. Importers push spans in any order;
//! `finish` groups them by lane, sorts, assigns depth, builds the interval index and the
//! level-of-detail pyramid per lane (in parallel), resolves flows and writes every section.

use crate::format::*;
use crate::lod::{build_depth_levels, LodItem};
use crate::nesting::{assign_depth, Crossings};
use crate::output::Output;
use crate::scratch::{Scratch, ScratchDir};
use crate::strings::Interner;
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
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
    /// Freed memory goes back to the OS within 10 ms while this builder lives (see `purge`).
    _purge: crate::purge::PromptPurge,
}

/// A counter series' identity: (the GPU it measures, if any; recording pid; name; series).
type CounterKey = (Option<i64>, IdKey, String, String);

/// What `StoreBuilder::stage` makes: the columns in memory, the output with the args and span
/// args written and their sections' entries, and the builder's purge guard.
type Stage = (crate::deferred::Columns, Output, Vec<SectionEntry>, crate::purge::PromptPurge);

/// What `finish` produced: the bytes in memory, or the path of the written store file.
pub enum Built {
    File(std::path::PathBuf),
    Memory(Vec<u8>),
}

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

    /// A point of a series that measures GPU `device` (e.g. `strobe_model::gpu_memory`), as
    /// recorded by process `pid`.
    pub fn push_device_counter(&mut self, device: i64, pid: IdKey, name: &str, series: &str, ts: i64, value: f64) {
        self.counters.entry((Some(device), pid, name.to_string(), series.to_string())).or_default().push((ts, value));
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
            return crate::cache::open_built(self.finish(meta)?).map_err(std::io::Error::other);
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
                crate::cache::open_built(built).map_err(std::io::Error::other)
            }
        }
    }

    /// Everything `finish` makes before the level of detail: spans sorted into lanes, their
    /// columns, depths and interval index, flows, counters, strings and the JSON sections.
    /// The args are in the output already, and the span args are written there too unless
    /// `keep_span_args` or the sections are compressed (then they come back in memory, with
    /// the rest, and are written first after them). The last member is
    /// the builder's prompt purge (`purge`), for the caller to hold while the rest is built.
    fn stage(mut self, meta: &TraceMeta, keep_span_args: bool) -> std::io::Result<Stage> {
        self.args_seen = FxHashMap::default(); // no more args come
        let n = self.spans.len();
        if n > u32::MAX as usize - 1 {
            return Err(std::io::Error::other("more than 4 billion spans in one trace"));
        }
        // Copy-engine lanes: a second index over the copy spans.
        let mut copy_lane_of: FxHashMap<(i64, u8), u32> = FxHashMap::default();
        // members of the copy-engine lanes, appended to the member columns after the primaries:
        // room for them is reserved up front (growing 5 columns of n members copies them all
        // into fresh pages, 15 % of an nsys store's build)
        let mut copy_members = 0usize;
        for s in &self.spans.meta {
            if s.copy_dir != 255 {
                if let Some(dev) = self.lanes[s.lane as usize].kind.device() {
                    copy_lane_of.entry((dev, s.copy_dir)).or_insert(0);
                    copy_members += 1;
                }
            }
        }
        let members = n + copy_members;
        let mut keys: Vec<(i64, u8)> = copy_lane_of.keys().copied().collect();
        keys.sort();
        for k in keys {
            let id = self.lane(LaneKind::CopyEngine { device: k.0, dir: CopyDir::from_u8(k.1) });
            copy_lane_of.insert(k, id);
        }
        self.name_lanes();

        // Order spans by (lane, start, longer first); parents precede their children.
        let t_sort = crate::timing::Phase::start("store: sort spans");
        // Bucket by lane (stable, O(n)), then sort each lane only if the producer did not
        // already emit it in order (most do), lanes in parallel.
        let lane_count_now = self.lanes.len();
        let scratch = self.out.scratch_dir();
        let (counts, mut order) = bucket(lane_count_now, self.spans.meta.iter().map(|s| s.lane as usize), &scratch);
        {
            let (st_start, st_end): (&[i64], &[i64]) = (&self.spans.start, &self.spans.end);
            let key = |i: u32| (st_start[i as usize], std::cmp::Reverse(st_end[i as usize]), i);
            let mut parts: Vec<&mut [u32]> = Vec::with_capacity(lane_count_now);
            let mut rest: &mut [u32] = &mut order[..];
            for l in 0..lane_count_now {
                let (a, b) = std::mem::take(&mut rest).split_at_mut(counts[l + 1] - counts[l]);
                parts.push(a);
                rest = b;
            }
            parts.into_par_iter().for_each(|p| {
                // a lane out of order is nearly always a few ascending runs: merged, in one
                // u32 a span; a lane in any order is sorted on copied keys
                if !crate::runs::merge_runs(p, key, MAX_MERGED_RUNS) {
                    // sort compact keys (cache-friendly), not indices into the span array
                    let mut keyed: Vec<(i64, std::cmp::Reverse<i64>, u32)> = p.iter().map(|&i| key(i)).collect();
                    // one lane can hold most of a trace (a CPU thread's ops and Python frames):
                    // a big one is sorted on all cores
                    if keyed.len() > 1 << 16 {
                        keyed.par_sort();
                    } else {
                        keyed.sort();
                    }
                    for (slot, k) in p.iter_mut().zip(keyed) {
                        *slot = k.2;
                    }
                }
            });
        }
        drop(t_sort);
        let t_cols = crate::timing::Phase::start("store: columns");
        let lane_count = self.lanes.len();
        // Columns in the new order: member i of the primary block is span i. Gathers run on
        // all cores (they are random reads into the staged spans); the scatter of new ids and
        // the passes that need file order stay serial but read sequentially.
        // each staged field is freed as soon as its column is made
        let st_start = std::mem::take(&mut self.spans.start);
        let from: &[i64] = &st_start;
        let mut m_start = Scratch::par_collected(&scratch, members, order.par_iter().map(|&o| from[o as usize]));
        drop(st_start);
        let st_end = std::mem::take(&mut self.spans.end);
        let from: &[i64] = &st_end;
        let mut m_end = Scratch::par_collected(&scratch, members, order.par_iter().map(|&o| from[o as usize]));
        drop(st_end);
        let st_meta: &[StagedMeta] = &self.spans.meta;
        let mut span_meta = Scratch::par_collected(
            &scratch,
            n,
            order.par_iter().map(|&o| {
                let s = &st_meta[o as usize];
                SpanMeta { name: s.name, cat: s.cat, lane: s.lane, depth: 0, kind: s.kind, flags: s.flags as u8 }
            }),
        );
        // span args refs go straight to the output (they need nothing later): one column less
        // in memory at the peak. A deferred store keeps them (its answer comes before writes).
        let mut table: Vec<SectionEntry> = Vec::new();
        table.push(SectionEntry {
            id: sid::ARGS,
            codec: crate::codec::RAW,
            offset: HEADER_LEN as u64,
            len: self.args_len,
        });
        let st_args = std::mem::take(&mut self.spans.args);
        // (compressed, they are written with the other columns, in chunks of their own)
        let span_args = if keep_span_args || self.out.compresses() {
            let from: &[ArgsRef] = &st_args;
            Some(Scratch::par_collected(&scratch, n, order.par_iter().map(|&o| from[o as usize])))
        } else {
            let pos = self.out.position();
            let pad = (8 - (pos % 8)) % 8;
            self.out.write_all(&[0u8; 8][..pad as usize])?;
            table.push(SectionEntry {
                id: sid::SPAN_ARGS,
                codec: crate::codec::RAW,
                offset: pos + pad,
                len: (n * std::mem::size_of::<ArgsRef>()) as u64,
            });
            for chunk in order.chunks(1 << 16) {
                let refs: Vec<ArgsRef> = chunk.par_iter().map(|&o| st_args[o as usize]).collect();
                self.out.write_all(bytemuck::cast_slice(&refs))?;
            }
            None
        };
        drop(st_args);
        let mut new_id: Scratch<u32> = Scratch::zeroed(&scratch, n);
        let ids = new_id.as_mut_slice();
        for (pos, &old) in order.iter().enumerate() {
            ids[old as usize] = pos as u32;
        }
        // spans are bucketed by lane, so each lane's primary block is its bucket
        let primary_range: Vec<(usize, usize)> = (0..lane_count).map(|l| (counts[l], counts[l + 1])).collect();
        let mut secondary: Vec<Vec<u32>> = vec![Vec::new(); lane_count];
        // at most one per span; pages past the last one pushed are never touched
        let mut corr: Scratch<Corr> = scratch.with_capacity(n);
        for (old, (s, &c)) in self.spans.meta.iter().zip(self.spans.correlation.iter()).enumerate() {
            let pos = ids[old];
            if s.copy_dir != 255 {
                if let Some(dev) = self.lanes[s.lane as usize].kind.device() {
                    secondary[copy_lane_of[&(dev, s.copy_dir)] as usize].push(pos);
                }
            }
            if c != 0 {
                corr.push(Corr { id: c, pos, kind: s.kind as u32 });
            }
        }
        drop(order);
        // everything needed is in the columns now
        self.spans = Staged::default();
        let mut m_depth: Scratch<u32> = scratch.with_capacity(members);
        m_depth.resize_zeroed(n);
        let mut m_max: Scratch<i64> = scratch.with_capacity(members);
        m_max.resize_zeroed(n);
        let mut crossings = Crossings::default();
        let pack_lane: Vec<bool> = self
            .lanes
            .iter()
            .map(|d| matches!(d.kind, LaneKind::GpuStream { .. } | LaneKind::CopyEngine { .. }))
            .collect();
        // depth and interval index per primary lane, in parallel over disjoint slices
        {
            let mut primaries: Vec<usize> = (0..lane_count)
                .filter(|&l| secondary[l].is_empty() && primary_range[l].1 > primary_range[l].0)
                .collect();
            primaries.sort_by_key(|&l| primary_range[l].0);
            let mut jobs = Vec::new();
            let (mut dr, mut mr): (&mut [u32], &mut [i64]) = (&mut m_depth[..], &mut m_max[..]);
            let mut at = 0usize;
            for &l in &primaries {
                let (b, e) = primary_range[l];
                let (_, d1) = std::mem::take(&mut dr).split_at_mut(b - at);
                let (d, d2) = d1.split_at_mut(e - b);
                let (_, x1) = std::mem::take(&mut mr).split_at_mut(b - at);
                let (x, x2) = x1.split_at_mut(e - b);
                dr = d2;
                mr = x2;
                at = e;
                jobs.push((l, b, e, d, x));
            }
            let (ms, me, sm): (&[i64], &[i64], &[SpanMeta]) = (&m_start, &m_end, &span_meta);
            let found: Vec<(usize, Crossings)> = jobs
                .into_par_iter()
                .map(|(l, b, e, d, x)| {
                    let unclosed = |i: usize| sm[b + i].flags as u16 & strobe_model::flags::UNCLOSED != 0;
                    let c = assign_depth(&ms[b..e], &me[b..e], unclosed, d, pack_lane[l]);
                    crate::interval::build_max_end(&me[b..e], x);
                    (b, c)
                })
                .collect();
            for (b, c) in found {
                crossings.add(&Crossings { example: c.example.map(|(i, p)| (b as u32 + i, b as u32 + p)), ..c });
            }
        }
        let crossings_note = (crossings.clipped + crossings.reparented > 0)
            .then(|| crossings_note(&crossings, &self.strings, &span_meta, &m_start));
        for (m, &d) in span_meta.iter_mut().zip(m_depth.iter()) {
            m.depth = d.min(u16::MAX as u32) as u16;
        }
        let mut m_span = Scratch::par_collected(&scratch, members, (0..n as u32).into_par_iter());
        // secondary (copy-engine) lanes after the primaries
        let mut lane_ix = vec![LaneIndex::default(); lane_count];
        for l in 0..lane_count {
            if secondary[l].is_empty() {
                let (b, e) = primary_range[l];
                lane_ix[l].member_begin = b as u64;
                lane_ix[l].member_end = e as u64;
                continue;
            }
            let mut ids = std::mem::take(&mut secondary[l]);
            ids.sort_by_key(|&p| (m_start[p as usize], std::cmp::Reverse(m_end[p as usize]), p));
            let b = m_start.len();
            let st: Vec<i64> = ids.iter().map(|&p| m_start[p as usize]).collect();
            let en: Vec<i64> = ids.iter().map(|&p| m_end[p as usize]).collect();
            let mut d = vec![0u32; ids.len()];
            assign_depth(&st, &en, |_| false, &mut d, true);
            let mut x = vec![0i64; ids.len()];
            crate::interval::build_max_end(&en, &mut x);
            m_start.extend_from_slice(&st);
            m_end.extend_from_slice(&en);
            m_depth.extend_from_slice(&d);
            m_max.extend_from_slice(&x);
            m_span.extend_from_slice(&ids);
            lane_ix[l].member_begin = b as u64;
            lane_ix[l].member_end = m_start.len() as u64;
        }
        drop(t_cols);

        // each lane's extent and deepest nesting (the level ranges come with the level of detail)
        let mut lane_index = lane_ix;
        for li in &mut lane_index {
            let (b, e) = (li.member_begin as usize, li.member_end as usize);
            li.max_depth = m_depth[b..e].iter().copied().max().unwrap_or(0);
            li.min_start = m_start.get(b).copied().filter(|_| e > b).unwrap_or(0);
            li.max_end = m_end[b..e].iter().copied().max().unwrap_or(0);
        }
        let t_flows = crate::timing::Phase::start("store: flows");
        let mut flows = self.resolve_flows(&new_id, &lane_index, &m_start, &m_end, &m_max, &m_depth, &corr);
        drop((new_id, corr));
        self.flows = Vec::new();
        self.chain_steps = Vec::new();
        flows.par_sort_unstable_by_key(|f| (f.to, f.from, f.id));
        let mut flows_by_from = Scratch::par_collected(&scratch, flows.len(), (0..flows.len() as u32).into_par_iter());
        flows_by_from.par_sort_unstable_by_key(|&i| (flows[i as usize].from, flows[i as usize].to));
        drop(t_flows);
        // Counters.
        let mut counter_series = Vec::new();
        let mut counter_ts: Vec<i64> = Vec::new();
        let mut counter_val: Vec<f64> = Vec::new();
        for ((device, pid, name, series), mut pts) in std::mem::take(&mut self.counters) {
            pts.sort_by_key(|p| p.0);
            let b = counter_ts.len() as u64;
            for (t, v) in pts {
                counter_ts.push(t);
                counter_val.push(v);
            }
            counter_series.push(CounterSeries { pid, device, name, series, begin: b, end: counter_ts.len() as u64 });
        }
        let (string_offsets, string_bytes) = self.strings.to_columns();
        let mut meta = meta.clone();
        meta.load.notes.extend(crossings_note);
        if self.unbound_flows > 0 {
            *meta.load.skipped.entry("flow end with no span to bind to".into()).or_default() += self.unbound_flows;
        }
        if self.orphan_flow_steps > 0 {
            *meta.load.skipped.entry("flow step with no open flow (t/f without s)".into()).or_default() +=
                self.orphan_flow_steps;
        }
        let columns = crate::deferred::Columns {
            span_args,
            span_meta,
            m_start,
            m_end,
            m_max,
            m_span,
            m_depth,
            lane_index,
            string_offsets,
            string_bytes,
            lanes_json: serde_json::to_vec(&self.lanes).map_err(std::io::Error::other)?,
            flows,
            flows_by_from,
            counter_ts,
            counter_val,
            counters_json: serde_json::to_vec(&counter_series).map_err(std::io::Error::other)?,
            meta_json: serde_json::to_vec(&meta).map_err(std::io::Error::other)?,
            args_source: self.args_source.as_ref().map(|x| x.2.clone()).unwrap_or_default().into_bytes(),
            names_json: serde_json::to_vec(&self.names).map_err(std::io::Error::other)?,
        };
        let out = std::mem::replace(&mut self.out, Output::memory());
        Ok((columns, out, table, self._purge))
    }

    fn name_lanes(&mut self) {
        let procs: FxHashMap<IdKey, String> = self.names.processes.iter().cloned().collect();
        let threads: FxHashMap<(IdKey, IdKey), String> = self.names.threads.iter().cloned().collect();
        let psort: FxHashMap<IdKey, i64> = self.names.process_sort.iter().cloned().collect();
        let tsort: FxHashMap<(IdKey, IdKey), i64> = self.names.thread_sort.iter().cloned().collect();
        for d in &mut self.lanes {
            d.name = crate::names::lane_display_name(&d.kind, &procs, &threads);
            d.sort = crate::names::lane_sort_key(&d.kind, &psort, &tsort);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn resolve_flows(
        &mut self,
        new_id: &[u32],
        lanes: &[LaneIndex],
        m_start: &[i64],
        m_end: &[i64],
        m_max: &[i64],
        m_depth: &[u32],
        corr: &[Corr],
    ) -> Scratch<FlowRec> {
        let scratch = self.out.scratch_dir();
        let mut out: Scratch<FlowRec> = scratch.new_array();
        let mut linked = Linked::new(new_id.len(), scratch.clone());
        let resolve = |e: FlowEnd| -> Option<u32> {
            match e {
                FlowEnd::Span(id) => new_id.get(id as usize).copied(),
                FlowEnd::Enclosing { lane, ts } => {
                    let li = lanes.get(lane as usize)?;
                    crate::bind::enclosing(li, m_start, m_end, m_max, m_depth, ts)
                }
                FlowEnd::Next { lane, ts } => {
                    let li = lanes.get(lane as usize)?;
                    crate::bind::next_starting(li, m_start, m_depth, ts)
                }
            }
        };
        // binding is read-only: do it on all cores, then apply the chain rules in order
        let bound: Vec<(Option<u32>, Option<u32>)> =
            self.flows.par_iter().map(|f| (resolve(f.from), resolve(f.to))).collect();
        let chain_bound: Vec<Option<u32>> = self.chain_steps.par_iter().map(|st| resolve(st.end)).collect();
        for (f, b) in self.flows.iter().zip(bound) {
            match b {
                (Some(a), Some(b)) => {
                    linked.insert(a, b);
                    out.push(FlowRec {
                        from: a,
                        to: b,
                        id: f.id,
                        cat: f.cat,
                        name: f.name,
                        from_ts: f.from_ts,
                        to_ts: f.to_ts,
                        kind: FLOW_EXPLICIT,
                        _pad: 0,
                    });
                }
                _ => self.unbound_flows += 1,
            }
        }
        let mut open: Option<(u32, i64)> = None;
        let mut key: Option<(u32, u64)> = None;
        for (st, bound) in self.chain_steps.iter().zip(chain_bound) {
            if key != Some((st.cat, st.id)) {
                key = Some((st.cat, st.id));
                open = None;
            }
            match st.ph {
                b's' => {
                    if open.is_some() {
                        continue;
                    }
                    match bound {
                        Some(s) => open = Some((s, st.ts)),
                        None => self.unbound_flows += 1,
                    }
                }
                _ => {
                    let Some((from, from_ts)) = open else {
                        self.orphan_flow_steps += 1;
                        continue;
                    };
                    match bound {
                        Some(to) => {
                            linked.insert(from, to);
                            out.push(FlowRec {
                                from,
                                to,
                                id: st.id,
                                cat: st.cat,
                                name: st.name,
                                from_ts,
                                to_ts: st.ts,
                                kind: FLOW_EXPLICIT,
                                _pad: 0,
                            });
                            open = if st.ph == b'f' { None } else { Some((to, st.ts)) };
                        }
                        None => {
                            self.unbound_flows += 1;
                            if st.ph == b'f' {
                                open = None;
                            }
                        }
                    }
                }
            }
        }
        // correlation links. The launches and the flows are sized first: grown by doubling,
        // each rehash and copy lands in fresh pages (5 % of an nsys store's build went to
        // zeroing the rehashed tables of 3.6 M launches)
        let is_launch = |kind: u8| matches!(SpanKind::from_u8(kind), SpanKind::CudaRuntime | SpanKind::CudaDriver);
        let is_launched = |kind: u8| {
            let k = SpanKind::from_u8(kind);
            k.is_gpu_activity() || k == SpanKind::GpuAnnotation
        };
        let (launch_count, launched_count) = corr.iter().fold((0usize, 0usize), |(a, b), x| {
            (a + is_launch(x.kind as u8) as usize, b + is_launched(x.kind as u8) as usize)
        });
        let launches = LaunchMap::new(
            corr.iter().filter(|x| is_launch(x.kind as u8)).map(|x| (x.id, x.pos)),
            launch_count,
            &scratch,
        );
        out.reserve(launched_count);
        let corr_cat = self.strings.intern("correlation");
        let corr_name = self.strings.intern("launch");
        for &Corr { id: c, pos: to, kind } in corr {
            if !is_launched(kind as u8) {
                continue;
            }
            if let Some(from) = launches.get(c) {
                if linked.contains(from, to) {
                    continue;
                }
                out.push(FlowRec {
                    from,
                    to,
                    id: c as u64,
                    cat: corr_cat,
                    name: corr_name,
                    from_ts: m_start[from as usize],
                    to_ts: m_start[to as usize],
                    kind: FLOW_CORRELATION,
                    _pad: 0,
                });
            }
        }
        out
    }
}

/// A span with a correlation id: the id, the span's member position and its kind.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Corr {
    id: i64,
    pos: u32,
    kind: u32,
}

/// The explicit flows' (from, to) pairs, which the correlation links skip (a Kineto kernel has
/// both). The first `from` into each span sits in a flat array, written on first use (most
/// spans have at most one flow in); any further pair goes to a set. A hash set of all pairs
/// was a random probe per flow into a table of tens of MB, twice for each kernel.
struct Linked {
    spans: usize,
    first: Scratch<u32>,
    more: FxHashSet<(u32, u32)>,
    scratch: ScratchDir,
}

impl Linked {
    const NONE: u32 = u32::MAX;

    fn new(spans: usize, scratch: ScratchDir) -> Linked {
        Linked { spans, first: Scratch::default(), more: FxHashSet::default(), scratch }
    }

    fn insert(&mut self, from: u32, to: u32) {
        if self.first.is_empty() {
            self.first = self.scratch.with_capacity(self.spans);
            self.first.resize_zeroed(self.spans);
            self.first.fill(Self::NONE);
        }
        match self.first.get_mut(to as usize) {
            Some(slot) if *slot == Self::NONE => *slot = from,
            Some(slot) if *slot == from => {}
            _ => {
                self.more.insert((from, to));
            }
        }
    }

    fn contains(&self, from: u32, to: u32) -> bool {
        self.first.get(to as usize) == Some(&from) || (!self.more.is_empty() && self.more.contains(&(from, to)))
    }
}

/// Launch spans by correlation id (the last one wins, as a map insert would). Correlation ids
/// are counters: CUPTI's per process (an nsys importer makes them `pid << 32 | id`), Kineto's
/// per trace. When each high half's ids fill their range densely enough, flat arrays indexed
/// by `id - min` replace the hash map: 4 bytes a slot, written in order, and no hashing (an
/// nsys rank's 4 M launches cost 0.2–0.5 s of random probes into a 140 MB table). Sparse or
/// hand-made ids use the map.
enum LaunchMap {
    /// Per high 32 bits, sorted by them: (high bits, lowest id, slots from it).
    Dense(Vec<(i64, i64, Scratch<u32>)>),
    Sparse(FxHashMap<i64, u32>),
}

impl LaunchMap {
    const NONE: u32 = u32::MAX;
    /// More high halves than this (ids that are not counters) use the map.
    const MAX_GROUPS: usize = 64;

    fn new(launches: impl Iterator<Item = (i64, u32)> + Clone, count: usize, scratch: &ScratchDir) -> LaunchMap {
        let mut groups: Vec<(i64, i64, i64)> = Vec::new(); // (high bits, min, max)
        let mut last = usize::MAX;
        for (c, _) in launches.clone() {
            let hi = c >> 32;
            if last >= groups.len() || groups[last].0 != hi {
                last = match groups.iter().position(|g| g.0 == hi) {
                    Some(i) => i,
                    None if groups.len() < Self::MAX_GROUPS => {
                        groups.push((hi, c, c));
                        groups.len() - 1
                    }
                    None => return Self::sparse(launches, count),
                };
            }
            let g = &mut groups[last];
            g.1 = g.1.min(c);
            g.2 = g.2.max(c);
        }
        // within one high half, max − min < 2^32
        let slots: u64 = groups.iter().map(|g| (g.2 - g.1) as u64 + 1).sum();
        // at most 8 slots a launch: the arrays are then no larger than the map would be (16-byte
        // entries at its load factor). CUPTI numbers more than launches (the real 2-rank DDP
        // export: 4.5 ids per runtime call)
        if count == 0 || slots > 8 * count as u64 + 1024 {
            return Self::sparse(launches, count);
        }
        groups.sort_unstable();
        let mut dense: Vec<(i64, i64, Scratch<u32>)> = groups
            .iter()
            .map(|g| {
                let mut slots: Scratch<u32> = scratch.with_capacity((g.2 - g.1) as usize + 1);
                slots.resize_zeroed((g.2 - g.1) as usize + 1);
                slots.fill(Self::NONE);
                (g.0, g.1, slots)
            })
            .collect();
        let mut last = 0;
        for (c, pos) in launches {
            if dense[last].0 != c >> 32 {
                last = dense.partition_point(|g| g.0 < c >> 32);
            }
            let g = &mut dense[last];
            g.2[(c - g.1) as usize] = pos;
        }
        LaunchMap::Dense(dense)
    }

    fn sparse(launches: impl Iterator<Item = (i64, u32)>, count: usize) -> LaunchMap {
        let mut map: FxHashMap<i64, u32> = FxHashMap::default();
        map.reserve(count);
        map.extend(launches);
        LaunchMap::Sparse(map)
    }

    fn get(&self, c: i64) -> Option<u32> {
        match self {
            LaunchMap::Dense(groups) => {
                let g = groups.get(groups.partition_point(|g| g.0 < c >> 32)).filter(|g| g.0 == c >> 32)?;
                let pos = *g.2.get(usize::try_from(c - g.1).ok()?)?;
                (pos != Self::NONE).then_some(pos)
            }
            LaunchMap::Sparse(map) => map.get(&c).copied(),
        }
    }
}

pub(crate) struct LaneLod {
    /// Member indices grouped by depth (start order within a depth): the finest level.
    pub depth_members: Scratch<u32>,
    pub depth_ranges: Vec<(usize, usize)>,
    pub levels: Vec<(u32, u32, Scratch<LodItem>)>,
}

pub(crate) fn build_lane_lod(
    start: &[i64],
    end: &[i64],
    depth: &[u32],
    span: &[u32],
    metas: &[SpanMeta],
    scratch: &ScratchDir,
) -> LaneLod {
    let n = start.len();
    if n == 0 {
        return LaneLod { depth_members: Scratch::default(), depth_ranges: Vec::new(), levels: Vec::new() };
    }
    let max_depth = depth.iter().copied().max().unwrap_or(0) as usize;
    let (counts, depth_members) = bucket(max_depth + 1, depth.iter().map(|&d| d as usize), scratch);
    let depth_ranges: Vec<(usize, usize)> = (0..=max_depth).map(|d| (counts[d], counts[d + 1])).collect();
    let extent = end.iter().copied().max().unwrap_or(0) - start[0];
    // depths in parallel: most of a trace's spans can sit on one lane (a CPU thread's ops and
    // Python frames), whose depths are the only parallelism there is
    let per_depth: Vec<Vec<(u32, Scratch<LodItem>)>> = depth_ranges
        .par_iter()
        .map(|&(b, e)| {
            let members = &depth_members[b..e];
            build_depth_levels(
                || {
                    members.iter().map(|&m| {
                        let meta = metas[span[m as usize] as usize];
                        LodItem::single(start[m as usize], end[m as usize], m, meta.name, meta.kind)
                    })
                },
                || members.iter().map(|&m| (start[m as usize], end[m as usize])),
                members.len(),
                extent,
                scratch,
            )
        })
        .collect();
    let levels = per_depth
        .into_iter()
        .enumerate()
        .flat_map(|(d, ls)| ls.into_iter().map(move |(w, its)| (d as u32, w, its)))
        .collect();
    LaneLod { depth_members, depth_ranges, levels }
}

/// Appends one 8-aligned section made of `parts`, one after another, and records it:
/// compressed when the output asks for it (`Output::compress_sections`) and it is not tiny.
pub(crate) fn put_section_parts(
    out: &mut Output,
    table: &mut Vec<SectionEntry>,
    id: u32,
    parts: &[&[u8]],
) -> std::io::Result<()> {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let packed = if out.compresses() && total >= crate::codec::MIN_COMPRESSED {
        Some(crate::codec::encode(parts, delta_for(id))?)
    } else {
        None
    };
    let pos = out.position();
    let pad = (8 - (pos % 8)) % 8;
    out.write_all(&[0u8; 8][..pad as usize])?;
    let (codec, len) = match &packed {
        Some(p) => {
            out.write_all(p)?;
            (crate::codec::ZSTD_CHUNKS, p.len())
        }
        None => {
            for p in parts {
                out.write_all(p)?;
            }
            (crate::codec::RAW, total)
        }
    };
    table.push(SectionEntry { id, codec, offset: pos + pad, len: len as u64 });
    Ok(())
}

/// Appends one 8-aligned section to the output and records it in the table.
pub(crate) fn put_section(
    out: &mut Output,
    table: &mut Vec<SectionEntry>,
    id: u32,
    bytes: &[u8],
) -> std::io::Result<()> {
    put_section_parts(out, table, id, &[bytes])
}

/// A stable counting sort of indices `0..n` by a small key: returns the bucket offsets
/// (`n_buckets + 1` of them) and the indices grouped by key, in their original order within
/// each key. O(n); used to group spans by lane and a lane's members by depth.
fn bucket(
    n_buckets: usize,
    keys: impl Iterator<Item = usize> + Clone,
    scratch: &ScratchDir,
) -> (Vec<usize>, Scratch<u32>) {
    let mut offsets = vec![0usize; n_buckets + 1];
    for k in keys.clone() {
        offsets[k + 1] += 1;
    }
    for i in 1..offsets.len() {
        offsets[i] += offsets[i - 1];
    }
    let mut fill = offsets.clone();
    let mut order: Scratch<u32> = Scratch::zeroed(scratch, offsets[n_buckets]);
    let slots = order.as_mut_slice();
    for (i, k) in keys.enumerate() {
        slots[fill[k]] = i as u32;
        fill[k] += 1;
    }
    (offsets, order)
}

/// The load-summary line for the improperly nested spans, with one example by name.
fn crossings_note(c: &Crossings, strings: &Interner, span_meta: &[SpanMeta], start: &[i64]) -> String {
    let mut note = format!(
        "improperly nested slices: {} ending after their parent (kept as children), {} starting inside a \
         slice but lying mostly after it (placed beside it)",
        c.clipped, c.reparented
    );
    if let Some((i, p)) = c.example {
        let name = |k: u32| strings.get(span_meta[k as usize].name).to_string();
        note.push_str(&format!("; e.g. {:?} at {} ns starts inside {:?}", name(i), start[i as usize], name(p)));
    }
    note
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What a map insert of every launch in order gives, looked up for every id asked.
    fn check(launches: &[(i64, u32)], asked: &[i64]) -> Result<(), TestCaseError> {
        let mut want: FxHashMap<i64, u32> = FxHashMap::default();
        want.extend(launches.iter().copied());
        let got = LaunchMap::new(launches.iter().copied(), launches.len(), &ScratchDir::heap());
        for &c in asked.iter().chain(launches.iter().map(|l| &l.0)) {
            prop_assert_eq!(got.get(c), want.get(&c).copied(), "id {}", c);
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn launch_map_answers_as_a_hash_map(
            pids in prop::collection::vec(0i64..5, 1..4),
            ids in prop::collection::vec((0usize..4, 0i64..3000, 0u32..1000), 0..400),
            sparse in prop::bool::ANY,
            asked in prop::collection::vec(-5i64..4000, 0..50),
        ) {
            // nsys-style `pid << 32 | id`, or ids scattered over the whole range
            let launches: Vec<(i64, u32)> = ids
                .iter()
                .map(|&(p, id, pos)| {
                    let c = if sparse { id.wrapping_mul(0x9E37_79B9_7F4A_7C15u64 as i64) } else { pids[p % pids.len()] << 32 | id };
                    (c, pos)
                })
                .collect();
            let asked: Vec<i64> = asked.iter().flat_map(|&a| pids.iter().map(move |&p| p << 32 | a)).chain([i64::MIN, i64::MAX, -1]).collect();
            check(&launches, &asked)?;
        }
    }

    proptest! {
        /// The explicit links answer as a set of every pair inserted, whatever the pairs.
        #[test]
        fn linked_answers_as_a_set(
            pairs in proptest::collection::vec((0u32..6, 0u32..10), 0..30),
            asked in proptest::collection::vec((0u32..6, 0u32..10), 0..30),
        ) {
            let mut l = Linked::new(8, ScratchDir::heap());
            let mut set = FxHashSet::default();
            for &(f, t) in &pairs {
                l.insert(f, t);
                set.insert((f, t));
            }
            for &(f, t) in asked.iter().chain(&pairs) {
                prop_assert_eq!(l.contains(f, t), set.contains(&(f, t)), "({}, {})", f, t);
            }
        }
    }

    #[test]
    fn counters_use_the_arrays_and_scattered_ids_the_map() {
        let counted: Vec<(i64, u32)> = (0..1000).map(|i| ((7i64 << 32) | (3 * i + 5), i as u32)).collect();
        assert!(matches!(
            LaunchMap::new(counted.iter().copied(), counted.len(), &ScratchDir::heap()),
            LaunchMap::Dense(_)
        ));
        let scattered: Vec<(i64, u32)> = (0..1000).map(|i| (i * 1_000_003, i as u32)).collect();
        assert!(matches!(
            LaunchMap::new(scattered.iter().copied(), scattered.len(), &ScratchDir::heap()),
            LaunchMap::Sparse(_)
        ));
        let many_pids: Vec<(i64, u32)> = (0..100).map(|i| (i << 32, i as u32)).collect();
        assert!(matches!(
            LaunchMap::new(many_pids.iter().copied(), many_pids.len(), &ScratchDir::heap()),
            LaunchMap::Sparse(_)
        ));
    }
}
