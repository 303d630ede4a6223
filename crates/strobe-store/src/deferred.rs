//! The last part of a store's build, apart from the rest: the level of detail and the writing
//! of every section after the args. `StoreBuilder::finish` runs it at once. A store made by
//! `StoreBuilder::finish_deferred` is queried first and runs it later (`Store::write_pending`),
//! so an answer that needs no level of detail (`strobe report` on a trace not yet cached) is
//! given before the store's file is written. One made by `finish_write_behind` has its level
//! of detail built and only its writing left, for a window that draws it before a compressed
//! file is written.

use crate::builder::{build_lane_lod, put_section, put_section_parts};
use crate::format::*;
use crate::lod::{LodItem, LodLevel};
use crate::output::{Built, Output};
use crate::reader::{section_part, Backing, Part, Pending, Store};
use crate::scratch::{Scratch, ScratchDir};
use rayon::prelude::*;
use std::sync::Arc;

/// Every section of a store but the args and the level of detail, in memory (the span args
/// only when not written yet): what `StoreBuilder::stage` makes. The arrays of a span or a
/// flow each are `Scratch`es: in a file's pages when the store has a cache dir.
pub(crate) struct Columns {
    /// The span args when not written yet (a deferred or compressed store's; written first,
    /// by `write_members`).
    pub span_args: Option<Scratch<ArgsRef>>,
    pub span_meta: Scratch<SpanMeta>,
    pub m_start: Scratch<i64>,
    pub m_end: Scratch<i64>,
    pub m_max: Scratch<i64>,
    pub m_span: Scratch<u32>,
    pub m_depth: Scratch<u32>,
    /// Without level ranges (the level of detail fills them in).
    pub lane_index: Vec<LaneIndex>,
    pub string_offsets: Vec<u64>,
    pub string_bytes: Vec<u8>,
    pub lanes_json: Vec<u8>,
    pub flows: Scratch<FlowRec>,
    pub flows_by_from: Scratch<u32>,
    pub counter_ts: Vec<i64>,
    pub counter_val: Vec<f64>,
    pub counters_json: Vec<u8>,
    pub meta_json: Vec<u8>,
    pub args_source: Vec<u8>,
    pub names_json: Vec<u8>,
}

/// The same sections borrowed: from a `Columns`, or from a deferred store's own parts.
pub(crate) struct ColumnsView<'a> {
    pub span_args: Option<&'a [ArgsRef]>,
    pub span_meta: &'a [SpanMeta],
    pub m_start: &'a [i64],
    pub m_end: &'a [i64],
    pub m_max: &'a [i64],
    pub m_span: &'a [u32],
    pub m_depth: &'a [u32],
    pub lane_index: &'a [LaneIndex],
    pub string_offsets: &'a [u64],
    pub string_bytes: &'a [u8],
    pub lanes_json: &'a [u8],
    pub flows: &'a [FlowRec],
    pub flows_by_from: &'a [u32],
    pub counter_ts: &'a [i64],
    pub counter_val: &'a [f64],
    pub counters_json: &'a [u8],
    pub meta_json: &'a [u8],
    pub args_source: &'a [u8],
    pub names_json: &'a [u8],
}

impl Columns {
    pub fn view(&self) -> ColumnsView<'_> {
        ColumnsView {
            span_args: self.span_args.as_deref(),
            span_meta: &self.span_meta,
            m_start: &self.m_start,
            m_end: &self.m_end,
            m_max: &self.m_max,
            m_span: &self.m_span,
            m_depth: &self.m_depth,
            lane_index: &self.lane_index,
            string_offsets: &self.string_offsets,
            string_bytes: &self.string_bytes,
            lanes_json: &self.lanes_json,
            flows: &self.flows,
            flows_by_from: &self.flows_by_from,
            counter_ts: &self.counter_ts,
            counter_val: &self.counter_val,
            counters_json: &self.counters_json,
            meta_json: &self.meta_json,
            args_source: &self.args_source,
            names_json: &self.names_json,
        }
    }

    /// Each section as a part of its own, by section id (moved, not copied).
    fn into_parts(self, parts: &mut [Option<Box<dyn Part>>]) {
        fn put(parts: &mut [Option<Box<dyn Part>>], id: u32, v: impl Part + 'static) {
            parts[id as usize] = Some(Box::new(v));
        }
        if let Some(a) = self.span_args {
            put(parts, sid::SPAN_ARGS, a);
        }
        put(parts, sid::SPAN_META, self.span_meta);
        put(parts, sid::M_START, self.m_start);
        put(parts, sid::M_END, self.m_end);
        put(parts, sid::M_MAX, self.m_max);
        put(parts, sid::M_SPAN, self.m_span);
        put(parts, sid::M_DEPTH, self.m_depth);
        put(parts, sid::LANE_INDEX, self.lane_index);
        put(parts, sid::STRING_OFFSETS, self.string_offsets);
        put(parts, sid::STRING_BYTES, self.string_bytes);
        put(parts, sid::LANES_JSON, self.lanes_json);
        put(parts, sid::FLOWS, self.flows);
        put(parts, sid::FLOWS_BY_FROM, self.flows_by_from);
        put(parts, sid::COUNTER_POINTS_TS, self.counter_ts);
        put(parts, sid::COUNTER_POINTS_VAL, self.counter_val);
        put(parts, sid::COUNTERS_JSON, self.counters_json);
        put(parts, sid::META_JSON, self.meta_json);
        put(parts, sid::ARGS_SOURCE, self.args_source);
        put(parts, sid::NAMES_JSON, self.names_json);
    }
}

/// A store over `columns`, with the sections already written (the args) read from `map` (the
/// output file so far, whose sections `table` places), and the rest of its build pending:
/// the level of detail too, unless it comes as `lod`.
pub(crate) fn pending_store(
    columns: Columns,
    lod: Option<Lod>,
    map: memmap2::Mmap,
    out: Output,
    table: Vec<SectionEntry>,
) -> std::io::Result<Store> {
    let image = Arc::new(Backing::Map(map));
    let mut parts: Vec<Option<Box<dyn Part>>> = (0..MAX_SECTIONS).map(|_| None).collect();
    for e in &table {
        parts[e.id as usize] = Some(section_part(&image, e).map_err(std::io::Error::other)?);
    }
    columns.into_parts(&mut parts);
    let lod_built = lod.is_some();
    if let Some(lod) = lod {
        // one buffer a section, as the reader casts it (the pieces are freed as they go)
        fn joined<T: bytemuck::Pod + Send + Sync>(scratch: &ScratchDir, pieces: Vec<Scratch<T>>) -> Box<dyn Part> {
            let mut v: Scratch<T> = scratch.with_capacity(pieces.iter().map(|p| p.len()).sum());
            for p in pieces {
                v.extend_from_slice(&p);
            }
            Box::new(v)
        }
        let scratch = out.scratch_dir();
        parts[sid::LANE_INDEX as usize] = Some(Box::new(lod.lane_index));
        parts[sid::LOD_LEVELS as usize] = Some(Box::new(lod.levels));
        parts[sid::LOD_ITEMS as usize] = Some(joined(&scratch, lod.items));
        parts[sid::DEPTH_MEMBERS as usize] = Some(joined(&scratch, lod.depth_members));
    }
    let mut sections = [(0usize, 0usize); MAX_SECTIONS];
    for (id, p) in parts.iter().enumerate() {
        sections[id] = (0, p.as_ref().map_or(0, |p| p.bytes().len()));
    }
    let key = out.source_key();
    let pending = Some(Pending { out, table, lod_built });
    Store::from_sections(Backing::Parts(parts), sections, key, pending, "<store being built>")
        .map_err(std::io::Error::other)
}

impl Store {
    /// Whether this store's level of detail and file are still to be made (`write_pending`).
    pub fn is_pending(&self) -> bool {
        self.pending.lock().map(|p| p.is_some()).unwrap_or(false)
    }

    /// For a store from `StoreBuilder::finish_deferred`: builds its level of detail and writes
    /// its file, renamed into the cache when whole. The store itself keeps reading from
    /// memory (its own level of detail stays unbuilt). For one from `finish_write_behind`:
    /// writes its file (the level of detail is built). Nothing for any other store, or a
    /// second time.
    pub fn write_pending(&self) -> std::io::Result<()> {
        let Some(p) = self.pending.lock().map_err(|_| std::io::Error::other("store lock poisoned"))?.take() else {
            return Ok(());
        };
        // memory freed while the level of detail is built goes back promptly, as in a build
        let _purge = crate::purge::PromptPurge::start();
        // the span args are in the file already unless the build kept them for later
        let args_written = p.table.iter().any(|e| e.id == sid::SPAN_ARGS);
        let view = ColumnsView {
            span_args: (!args_written).then(|| self.col(sid::SPAN_ARGS)),
            span_meta: self.col(sid::SPAN_META),
            m_start: self.col(sid::M_START),
            m_end: self.col(sid::M_END),
            m_max: self.col(sid::M_MAX),
            m_span: self.col(sid::M_SPAN),
            m_depth: self.col(sid::M_DEPTH),
            lane_index: self.col(sid::LANE_INDEX),
            string_offsets: self.col(sid::STRING_OFFSETS),
            string_bytes: self.section(sid::STRING_BYTES),
            lanes_json: self.section(sid::LANES_JSON),
            flows: self.col(sid::FLOWS),
            flows_by_from: self.col(sid::FLOWS_BY_FROM),
            counter_ts: self.col(sid::COUNTER_POINTS_TS),
            counter_val: self.col(sid::COUNTER_POINTS_VAL),
            counters_json: self.section(sid::COUNTERS_JSON),
            meta_json: self.section(sid::META_JSON),
            args_source: self.section(sid::ARGS_SOURCE),
            names_json: self.section(sid::NAMES_JSON),
        };
        if !p.lod_built {
            return write_rest(p.out, p.table, &view).map(|_| ());
        }
        let (mut out, mut table) = (p.out, p.table);
        write_members(&mut out, &mut table, &view)?;
        let (items, depth_members) = (self.section(sid::LOD_ITEMS), self.section(sid::DEPTH_MEMBERS));
        let (lanes, levels) = (self.col(sid::LANE_INDEX), self.col(sid::LOD_LEVELS));
        write_lod(&mut out, &mut table, &view, lanes, levels, &[items], &[depth_members])?;
        write_tail(out, table, &view).map(|_| ())
    }
}

/// The level of detail of a store's columns, per lane, in the pieces it is built in.
pub(crate) struct Lod {
    /// The lane index with its level ranges filled in.
    pub lane_index: Vec<LaneIndex>,
    pub levels: Vec<LodLevel>,
    /// Each lane's items, one after another (the section is their concatenation).
    pub items: Vec<Scratch<LodItem>>,
    pub depth_members: Vec<Scratch<u32>>,
}

/// The level of detail of `c`, its lanes in parallel.
pub(crate) fn build_lod(c: &ColumnsView<'_>, scratch: &ScratchDir) -> Lod {
    let _t = crate::timing::Phase::start("store: level of detail");
    let lods: Vec<_> = (0..c.lane_index.len())
        .into_par_iter()
        .map(|l| {
            let li = &c.lane_index[l];
            let (b, e) = (li.member_begin as usize, li.member_end as usize);
            build_lane_lod(&c.m_start[b..e], &c.m_end[b..e], &c.m_depth[b..e], &c.m_span[b..e], c.span_meta, scratch)
        })
        .collect();
    // the sections are the lanes' pieces one after another: offsets are running totals,
    // and the pieces are written as they are (a concatenated copy would double the level
    // of detail's memory at the store's peak)
    let mut lane_index = c.lane_index.to_vec();
    let mut levels: Vec<LodLevel> = Vec::new();
    let mut items: Vec<Scratch<LodItem>> = Vec::new();
    let mut items_len = 0u64;
    let mut depth_members: Vec<Scratch<u32>> = Vec::with_capacity(lane_index.len());
    let mut depth_members_len = 0u64;
    for (li, lod) in lane_index.iter_mut().zip(lods) {
        li.level_begin = levels.len() as u64;
        let raw_base = depth_members_len;
        depth_members_len += lod.depth_members.len() as u64;
        depth_members.push(lod.depth_members);
        for (depth, (rb, re)) in lod.depth_ranges.iter().enumerate() {
            levels.push(LodLevel {
                depth: depth as u32,
                width_log2: 0,
                item_begin: raw_base + *rb as u64,
                item_end: raw_base + *re as u64,
            });
        }
        for (depth, w, its) in lod.levels {
            let ib = items_len;
            items_len += its.len() as u64;
            items.push(its);
            levels.push(LodLevel { depth, width_log2: w, item_begin: ib, item_end: items_len });
        }
        li.level_end = levels.len() as u64;
    }
    Lod { lane_index, levels, items, depth_members }
}

/// The span args (when `c` has them: they go right after the args) and the member columns:
/// the sections before the level of detail.
fn write_members(out: &mut Output, table: &mut Vec<SectionEntry>, c: &ColumnsView<'_>) -> std::io::Result<()> {
    if let Some(a) = c.span_args {
        put_section(out, table, sid::SPAN_ARGS, bytemuck::cast_slice(a))?;
    }
    put_section(out, table, sid::SPAN_META, bytemuck::cast_slice(c.span_meta))?;
    put_section(out, table, sid::M_START, bytemuck::cast_slice(c.m_start))?;
    put_section(out, table, sid::M_END, bytemuck::cast_slice(c.m_end))?;
    put_section(out, table, sid::M_MAX, bytemuck::cast_slice(c.m_max))?;
    put_section(out, table, sid::M_SPAN, bytemuck::cast_slice(c.m_span))?;
    put_section(out, table, sid::M_DEPTH, bytemuck::cast_slice(c.m_depth))
}

/// The strings, lanes and level of detail, after the member columns. `items` and
/// `depth_members` are the level of detail's pieces (each section their concatenation).
fn write_lod(
    out: &mut Output,
    t: &mut Vec<SectionEntry>,
    c: &ColumnsView<'_>,
    lane_index: &[LaneIndex],
    levels: &[LodLevel],
    items: &[&[u8]],
    depth_members: &[&[u8]],
) -> std::io::Result<()> {
    put_section(out, t, sid::STRING_OFFSETS, bytemuck::cast_slice(c.string_offsets))?;
    put_section(out, t, sid::STRING_BYTES, c.string_bytes)?;
    put_section(out, t, sid::LANES_JSON, c.lanes_json)?;
    put_section(out, t, sid::LANE_INDEX, bytemuck::cast_slice(lane_index))?;
    put_section(out, t, sid::LOD_LEVELS, bytemuck::cast_slice(levels))?;
    put_section_parts(out, t, sid::LOD_ITEMS, items)?;
    put_section_parts(out, t, sid::DEPTH_MEMBERS, depth_members)
}

/// Every section after the level of detail, then the header: the store complete.
fn write_tail(mut out: Output, mut table: Vec<SectionEntry>, c: &ColumnsView<'_>) -> std::io::Result<Built> {
    let t = &mut table;
    put_section(&mut out, t, sid::FLOWS, bytemuck::cast_slice(c.flows))?;
    put_section(&mut out, t, sid::FLOWS_BY_FROM, bytemuck::cast_slice(c.flows_by_from))?;
    put_section(&mut out, t, sid::COUNTER_POINTS_TS, bytemuck::cast_slice(c.counter_ts))?;
    put_section(&mut out, t, sid::COUNTER_POINTS_VAL, bytemuck::cast_slice(c.counter_val))?;
    put_section(&mut out, t, sid::COUNTERS_JSON, c.counters_json)?;
    put_section(&mut out, t, sid::META_JSON, c.meta_json)?;
    put_section(&mut out, t, sid::ARGS_SOURCE, c.args_source)?;
    put_section(&mut out, t, sid::NAMES_JSON, c.names_json)?;
    let file_len = out.position();
    let table_bytes: &[u8] = bytemuck::cast_slice(&table);
    let header = Header {
        magic: MAGIC,
        version: VERSION,
        section_count: table.len() as u32,
        source_key: out.source_key(),
        file_len,
        table_hash: xxhash_rust::xxh3::xxh3_64(table_bytes),
    };
    let mut head = Vec::with_capacity(HEADER_LEN);
    head.extend_from_slice(bytemuck::bytes_of(&header));
    head.extend_from_slice(table_bytes);
    assert!(head.len() <= HEADER_LEN && table.len() <= MAX_SECTIONS);
    out.write_at(0, &head)?;
    let _t = crate::timing::Phase::start("store: flush, fsync, rename");
    out.finish()
}

/// Builds the level of detail of `c` and writes every section after the args, in the
/// store's order, then the header: the store complete. The member columns are written on a
/// thread of their own while the level of detail is computed (I/O beside compute).
pub(crate) fn write_rest(mut out: Output, mut table: Vec<SectionEntry>, c: &ColumnsView<'_>) -> std::io::Result<Built> {
    // the flows' binding freed its tables just now: give them back before the level of
    // detail, the build's peak (otherwise they wait out the purge delay beside it)
    crate::purge::collect_now();
    let scratch = out.scratch_dir();
    let (lod, written) = std::thread::scope(|sc| {
        let (out_w, table_w) = (&mut out, &mut table);
        let writer = sc.spawn(move || write_members(out_w, table_w, c));
        (build_lod(c, &scratch), writer.join())
    });
    written.map_err(|_| std::io::Error::other("store writer thread panicked"))??;
    let t_write = crate::timing::Phase::start("store: write sections");
    {
        let items: Vec<&[u8]> = lod.items.iter().map(|v| bytemuck::cast_slice(v)).collect();
        let depth_members: Vec<&[u8]> = lod.depth_members.iter().map(|v| bytemuck::cast_slice(v)).collect();
        write_lod(&mut out, &mut table, c, &lod.lane_index, &lod.levels, &items, &depth_members)?;
    }
    // the level of detail is written: it goes before the rest is (it is the build's peak)
    drop(lod);
    let built = write_tail(out, table, c);
    drop(t_write);
    built
}
