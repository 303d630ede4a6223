//! `StoreBuilder::stage`: the staged spans turned into the store's columns, one function a
//! phase, in the order they run: the copy-engine lanes, the sort into lanes, the gathered
//! columns, depth and interval index, the copy-engine lanes' members, each lane's extent,
//! the flows and the counters.

use super::bucket::bucket;
use super::flows::Corr;
use super::{CounterKey, Stage, Staged, StagedMeta, StoreBuilder, MAX_MERGED_RUNS};
use crate::format::*;
use crate::nesting::{assign_depth, Crossings};
use crate::output::Output;
use crate::scratch::{Scratch, ScratchDir};
use crate::strings::Interner;
use crate::timing::Phase;
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use strobe_model::{CopyDir, LaneKind, TraceMeta};

/// The copy-engine lane of each (device, copy direction) that has copy spans.
type CopyLanes = FxHashMap<(i64, u8), u32>;

/// The member columns: first the primary block, where member `i` is span `i` (spans in lane
/// order), then the members of the copy-engine lanes, which repeat copy spans.
pub(super) struct Members {
    pub start: Scratch<i64>,
    pub end: Scratch<i64>,
    pub depth: Scratch<u32>,
    /// The interval index: the latest end up to each member (`interval::build_max_end`).
    pub max_end: Scratch<i64>,
    /// The span each member shows.
    pub span: Scratch<u32>,
}

/// The primary block's depths and interval index, and the improperly nested spans found there.
struct Depths {
    depth: Scratch<u32>,
    max_end: Scratch<i64>,
    crossings: Crossings,
}

impl StoreBuilder {
    /// Everything `finish` makes before the level of detail: spans sorted into lanes, their
    /// columns, depths and interval index, flows, counters, strings and the JSON sections.
    /// The args are in the output already, and the span args are written there too unless
    /// `keep_span_args` or the sections are compressed (then they come back in memory, with
    /// the rest, and are written first after them). The last member is
    /// the builder's prompt purge (`purge`), for the caller to hold while the rest is built.
    pub(super) fn stage(mut self, meta: &TraceMeta, keep_span_args: bool) -> std::io::Result<Stage> {
        self.args_seen = FxHashMap::default(); // no more args come
        let n = self.spans.len();
        if n > u32::MAX as usize - 1 {
            return Err(std::io::Error::other("more than 4 billion spans in one trace"));
        }
        let (copy_lanes, copy_members) = self.add_copy_engine_lanes();
        self.name_lanes();
        let scratch = self.out.scratch_dir();
        let (counts, order) = self.sort_into_lanes(&scratch);
        let t_cols = Phase::start("store: columns");
        let members = n + copy_members;
        let (m_start, m_end, mut span_meta) = self.gather_columns(&order, members, &scratch);
        let (table, span_args) = self.place_span_args(&order, keep_span_args, &scratch)?;
        let new_id = renumbering(&order, &scratch);
        let (secondary, corr) = self.copy_members_and_correlations(&new_id, &copy_lanes, &scratch);
        drop(order);
        // everything needed is in the columns now
        self.spans = Staged::default();
        // spans are bucketed by lane, so each lane's primary block is its bucket
        let primary_range: Vec<(usize, usize)> = (0..self.lanes.len()).map(|l| (counts[l], counts[l + 1])).collect();
        let depths = self.primary_depths(&primary_range, &secondary, (&m_start, &m_end), &span_meta, members, &scratch);
        let crossings = &depths.crossings;
        let crossings_note = (crossings.clipped + crossings.reparented > 0)
            .then(|| crossings_note(crossings, &self.strings, &span_meta, &m_start));
        for (m, &d) in span_meta.iter_mut().zip(depths.depth.iter()) {
            m.depth = d.min(u16::MAX as u32) as u16;
        }
        let mut cols = Members {
            start: m_start,
            end: m_end,
            depth: depths.depth,
            max_end: depths.max_end,
            span: Scratch::par_collected(&scratch, members, (0..n as u32).into_par_iter()),
        };
        let mut lane_index = append_copy_engine_members(&mut cols, &primary_range, secondary);
        drop(t_cols);
        set_extents(&mut lane_index, &cols);
        let (flows, flows_by_from) = self.flow_columns(new_id, corr, &lane_index, &cols, &scratch);
        let (counter_series, counter_ts, counter_val) = counter_columns(std::mem::take(&mut self.counters));
        let (string_offsets, string_bytes) = self.strings.to_columns();
        let meta = self.completed_meta(meta, crossings_note);
        let columns = crate::deferred::Columns {
            span_args,
            span_meta,
            m_start: cols.start,
            m_end: cols.end,
            m_max: cols.max_end,
            m_span: cols.span,
            m_depth: cols.depth,
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

    /// A copy-engine lane for each (device, direction) with copy spans, added in that order: a
    /// second index over the copy spans. Returns the lanes and how many copy spans they hold.
    fn add_copy_engine_lanes(&mut self) -> (CopyLanes, usize) {
        let mut copy_lane_of: CopyLanes = FxHashMap::default();
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
        let mut keys: Vec<(i64, u8)> = copy_lane_of.keys().copied().collect();
        keys.sort();
        for k in keys {
            let id = self.lane(LaneKind::CopyEngine { device: k.0, dir: CopyDir::from_u8(k.1) });
            copy_lane_of.insert(k, id);
        }
        (copy_lane_of, copy_members)
    }

    /// The spans' ids ordered by (lane, start, longer first), so that parents precede their
    /// children, and each lane's offset in that order (one more than the lanes).
    /// Bucketed by lane (stable, O(n)), then each lane is sorted only if the producer did not
    /// already emit it in order (most do), lanes in parallel.
    fn sort_into_lanes(&self, scratch: &ScratchDir) -> (Vec<usize>, Scratch<u32>) {
        let _t = Phase::start("store: sort spans");
        let lane_count = self.lanes.len();
        let (counts, mut order) = bucket(lane_count, self.spans.meta.iter().map(|s| s.lane as usize), scratch);
        let (st_start, st_end): (&[i64], &[i64]) = (&self.spans.start, &self.spans.end);
        let key = |i: u32| (st_start[i as usize], std::cmp::Reverse(st_end[i as usize]), i);
        let mut parts: Vec<&mut [u32]> = Vec::with_capacity(lane_count);
        let mut rest: &mut [u32] = &mut order[..];
        for l in 0..lane_count {
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
        (counts, order)
    }

    /// The start, end and meta columns in the new order, with room for `members` starts and
    /// ends. Gathers run on all cores (they are random reads into the staged spans); each
    /// staged field is freed as soon as its column is made.
    fn gather_columns(
        &mut self,
        order: &[u32],
        members: usize,
        scratch: &ScratchDir,
    ) -> (Scratch<i64>, Scratch<i64>, Scratch<SpanMeta>) {
        let st_start = std::mem::take(&mut self.spans.start);
        let from: &[i64] = &st_start;
        let m_start = Scratch::par_collected(scratch, members, order.par_iter().map(|&o| from[o as usize]));
        drop(st_start);
        let st_end = std::mem::take(&mut self.spans.end);
        let from: &[i64] = &st_end;
        let m_end = Scratch::par_collected(scratch, members, order.par_iter().map(|&o| from[o as usize]));
        drop(st_end);
        let st_meta: &[StagedMeta] = &self.spans.meta;
        let span_meta = Scratch::par_collected(
            scratch,
            order.len(),
            order.par_iter().map(|&o| {
                let s = &st_meta[o as usize];
                SpanMeta { name: s.name, cat: s.cat, lane: s.lane, depth: 0, kind: s.kind, flags: s.flags as u8 }
            }),
        );
        (m_start, m_end, span_meta)
    }

    /// The section table so far (the args, written while spans came), and the span args in the
    /// new order. They go straight to the output (they need nothing later): one column less in
    /// memory at the peak. A deferred store keeps them (its answer comes before writes), and
    /// compressed ones are written with the other columns, in chunks of their own.
    fn place_span_args(
        &mut self,
        order: &[u32],
        keep_span_args: bool,
        scratch: &ScratchDir,
    ) -> std::io::Result<(Vec<SectionEntry>, Option<Scratch<ArgsRef>>)> {
        let n = order.len();
        let mut table: Vec<SectionEntry> = Vec::new();
        table.push(SectionEntry {
            id: sid::ARGS,
            codec: crate::codec::RAW,
            offset: HEADER_LEN as u64,
            len: self.args_len,
        });
        let st_args = std::mem::take(&mut self.spans.args);
        let span_args = if keep_span_args || self.out.compresses() {
            let from: &[ArgsRef] = &st_args;
            Some(Scratch::par_collected(scratch, n, order.par_iter().map(|&o| from[o as usize])))
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
        Ok((table, span_args))
    }

    /// The copy spans' member positions per copy-engine lane (empty for the other lanes), and
    /// the spans with a correlation id. One serial pass in push order, reading sequentially.
    fn copy_members_and_correlations(
        &self,
        new_id: &[u32],
        copy_lanes: &CopyLanes,
        scratch: &ScratchDir,
    ) -> (Vec<Vec<u32>>, Scratch<Corr>) {
        let mut secondary: Vec<Vec<u32>> = vec![Vec::new(); self.lanes.len()];
        // at most one per span; pages past the last one pushed are never touched
        let mut corr: Scratch<Corr> = scratch.with_capacity(new_id.len());
        for (old, (s, &c)) in self.spans.meta.iter().zip(self.spans.correlation.iter()).enumerate() {
            let pos = new_id[old];
            if s.copy_dir != 255 {
                if let Some(dev) = self.lanes[s.lane as usize].kind.device() {
                    secondary[copy_lanes[&(dev, s.copy_dir)] as usize].push(pos);
                }
            }
            if c != 0 {
                corr.push(Corr { id: c, pos, kind: s.kind as u32 });
            }
        }
        (secondary, corr)
    }

    /// Depth and interval index of each primary lane (`primary_range` of the `(start, end)`
    /// columns; the copy-engine lanes, which have `secondary` members, come later), in parallel
    /// over disjoint slices. The columns have room for `members`.
    fn primary_depths(
        &self,
        primary_range: &[(usize, usize)],
        secondary: &[Vec<u32>],
        (m_start, m_end): (&[i64], &[i64]),
        span_meta: &[SpanMeta],
        members: usize,
        scratch: &ScratchDir,
    ) -> Depths {
        let n = span_meta.len();
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
        let mut primaries: Vec<usize> = (0..self.lanes.len())
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
        let found: Vec<(usize, Crossings)> = jobs
            .into_par_iter()
            .map(|(l, b, e, d, x)| {
                let unclosed = |i: usize| span_meta[b + i].flags as u16 & strobe_model::flags::UNCLOSED != 0;
                let c = assign_depth(&m_start[b..e], &m_end[b..e], unclosed, d, pack_lane[l]);
                crate::interval::build_max_end(&m_end[b..e], x);
                (b, c)
            })
            .collect();
        for (b, c) in found {
            crossings.add(&Crossings { example: c.example.map(|(i, p)| (b as u32 + i, b as u32 + p)), ..c });
        }
        Depths { depth: m_depth, max_end: m_max, crossings }
    }

    /// The flows between member positions, sorted by (to, from, id), and their order by
    /// (from, to). The flow inputs go once resolved.
    fn flow_columns(
        &mut self,
        new_id: Scratch<u32>,
        corr: Scratch<Corr>,
        lane_index: &[LaneIndex],
        cols: &Members,
        scratch: &ScratchDir,
    ) -> (Scratch<FlowRec>, Scratch<u32>) {
        let _t = Phase::start("store: flows");
        let mut flows = self.resolve_flows(&new_id, lane_index, cols, &corr);
        drop((new_id, corr));
        self.flows = Vec::new();
        self.chain_steps = Vec::new();
        flows.par_sort_unstable_by_key(|f| (f.to, f.from, f.id));
        let mut flows_by_from = Scratch::par_collected(scratch, flows.len(), (0..flows.len() as u32).into_par_iter());
        flows_by_from.par_sort_unstable_by_key(|&i| (flows[i as usize].from, flows[i as usize].to));
        (flows, flows_by_from)
    }

    /// `meta` with what the build found added to its load summary: the improperly nested
    /// spans, the flows with no span to bind to and the orphan flow steps.
    fn completed_meta(&self, meta: &TraceMeta, crossings_note: Option<String>) -> TraceMeta {
        let mut meta = meta.clone();
        meta.load.notes.extend(crossings_note);
        if self.unbound_flows > 0 {
            *meta.load.skipped.entry("flow end with no span to bind to".into()).or_default() += self.unbound_flows;
        }
        if self.orphan_flow_steps > 0 {
            *meta.load.skipped.entry("flow step with no open flow (t/f without s)".into()).or_default() +=
                self.orphan_flow_steps;
        }
        meta
    }
}

/// For each builder id, the span's position in `order`.
fn renumbering(order: &[u32], scratch: &ScratchDir) -> Scratch<u32> {
    let mut new_id: Scratch<u32> = Scratch::zeroed(scratch, order.len());
    let ids = new_id.as_mut_slice();
    for (pos, &old) in order.iter().enumerate() {
        ids[old as usize] = pos as u32;
    }
    new_id
}

/// The copy-engine lanes' members (`secondary`, by lane) appended after the primary block, each
/// lane sorted, nested and indexed as a primary one is; returns every lane's member range.
fn append_copy_engine_members(
    cols: &mut Members,
    primary_range: &[(usize, usize)],
    mut secondary: Vec<Vec<u32>>,
) -> Vec<LaneIndex> {
    let mut lane_ix = vec![LaneIndex::default(); primary_range.len()];
    for l in 0..primary_range.len() {
        if secondary[l].is_empty() {
            let (b, e) = primary_range[l];
            lane_ix[l].member_begin = b as u64;
            lane_ix[l].member_end = e as u64;
            continue;
        }
        let mut ids = std::mem::take(&mut secondary[l]);
        let (m_start, m_end) = (&cols.start, &cols.end);
        ids.sort_by_key(|&p| (m_start[p as usize], std::cmp::Reverse(m_end[p as usize]), p));
        let b = m_start.len();
        let st: Vec<i64> = ids.iter().map(|&p| m_start[p as usize]).collect();
        let en: Vec<i64> = ids.iter().map(|&p| m_end[p as usize]).collect();
        let mut d = vec![0u32; ids.len()];
        assign_depth(&st, &en, |_| false, &mut d, true);
        let mut x = vec![0i64; ids.len()];
        crate::interval::build_max_end(&en, &mut x);
        cols.start.extend_from_slice(&st);
        cols.end.extend_from_slice(&en);
        cols.depth.extend_from_slice(&d);
        cols.max_end.extend_from_slice(&x);
        cols.span.extend_from_slice(&ids);
        lane_ix[l].member_begin = b as u64;
        lane_ix[l].member_end = cols.start.len() as u64;
    }
    lane_ix
}

/// Each lane's extent and deepest nesting (the level ranges come with the level of detail).
fn set_extents(lane_index: &mut [LaneIndex], cols: &Members) {
    for li in lane_index {
        let (b, e) = (li.member_begin as usize, li.member_end as usize);
        li.max_depth = cols.depth[b..e].iter().copied().max().unwrap_or(0);
        li.min_start = cols.start.get(b).copied().filter(|_| e > b).unwrap_or(0);
        li.max_end = cols.end[b..e].iter().copied().max().unwrap_or(0);
    }
}

/// The counter series in key order, each one's points sorted by time: the series' table and
/// the time and value columns.
fn counter_columns(counters: BTreeMap<CounterKey, Vec<(i64, f64)>>) -> (Vec<CounterSeries>, Vec<i64>, Vec<f64>) {
    let mut counter_series = Vec::new();
    let mut counter_ts: Vec<i64> = Vec::new();
    let mut counter_val: Vec<f64> = Vec::new();
    for ((device, pid, name, series), mut pts) in counters {
        pts.sort_by_key(|p| p.0);
        let b = counter_ts.len() as u64;
        for (t, v) in pts {
            counter_ts.push(t);
            counter_val.push(v);
        }
        counter_series.push(CounterSeries { pid, device, name, series, begin: b, end: counter_ts.len() as u64 });
    }
    (counter_series, counter_ts, counter_val)
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
