//! Flows as records between member positions: the explicit flows and v1 flow chains an
//! importer pushed, bound to spans, and the CUDA correlation links from a launch to its GPU work.

use super::stage::Members;
use super::{FlowEnd, StoreBuilder};
use crate::format::*;
use crate::scratch::{Scratch, ScratchDir};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use strobe_model::SpanKind;

/// Binds a flow end to a member position. Read-only, so flows bind on all cores.
struct Binder<'a> {
    new_id: &'a [u32],
    lanes: &'a [LaneIndex],
    m_start: &'a [i64],
    m_end: &'a [i64],
    m_max: &'a [i64],
    m_depth: &'a [u32],
}

impl Binder<'_> {
    fn bind(&self, e: FlowEnd) -> Option<u32> {
        match e {
            FlowEnd::Span(id) => self.new_id.get(id as usize).copied(),
            FlowEnd::Enclosing { lane, ts } => {
                let li = self.lanes.get(lane as usize)?;
                crate::bind::enclosing(li, self.m_start, self.m_end, self.m_max, self.m_depth, ts)
            }
            FlowEnd::Next { lane, ts } => {
                let li = self.lanes.get(lane as usize)?;
                crate::bind::next_starting(li, self.m_start, self.m_depth, ts)
            }
        }
    }
}

impl StoreBuilder {
    /// Every flow between member positions: the explicit flows, the chains' links, then the
    /// correlation links that no explicit flow already makes. `new_id` maps a builder id to
    /// its member position, `corr` lists the spans with a correlation id.
    pub(super) fn resolve_flows(
        &mut self,
        new_id: &[u32],
        lanes: &[LaneIndex],
        members: &Members,
        corr: &[Corr],
    ) -> Scratch<FlowRec> {
        let scratch = self.out.scratch_dir();
        let mut out: Scratch<FlowRec> = scratch.new_array();
        let mut linked = Linked::new(new_id.len(), scratch.clone());
        let binder = Binder {
            new_id,
            lanes,
            m_start: &members.start,
            m_end: &members.end,
            m_max: &members.max_end,
            m_depth: &members.depth,
        };
        // binding is read-only: do it on all cores, then apply the chain rules in order
        let bound: Vec<(Option<u32>, Option<u32>)> =
            self.flows.par_iter().map(|f| (binder.bind(f.from), binder.bind(f.to))).collect();
        let chain_bound: Vec<Option<u32>> = self.chain_steps.par_iter().map(|st| binder.bind(st.end)).collect();
        self.push_explicit_flows(bound, &mut linked, &mut out);
        self.push_chain_flows(chain_bound, &mut linked, &mut out);
        self.push_correlation_flows(corr, &linked, &members.start, &scratch, &mut out);
        out
    }

    /// The explicit flows whose two ends bound (`bound`, one pair a flow); the others are
    /// counted as unbound.
    fn push_explicit_flows(
        &mut self,
        bound: Vec<(Option<u32>, Option<u32>)>,
        linked: &mut Linked,
        out: &mut Scratch<FlowRec>,
    ) {
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
    }

    /// The links of the v1 flow chains, by the chain rules of `push_flow_step`; `bound` is
    /// where each step bound.
    fn push_chain_flows(&mut self, bound: Vec<Option<u32>>, linked: &mut Linked, out: &mut Scratch<FlowRec>) {
        let mut open: Option<(u32, i64)> = None;
        let mut key: Option<(u32, u64)> = None;
        for (st, bound) in self.chain_steps.iter().zip(bound) {
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
    }

    /// A flow from each launch (CUDA runtime or driver call) to the GPU work of the same
    /// correlation id, unless an explicit flow links them already.
    fn push_correlation_flows(
        &mut self,
        corr: &[Corr],
        linked: &Linked,
        m_start: &[i64],
        scratch: &ScratchDir,
        out: &mut Scratch<FlowRec>,
    ) {
        // the launches and the flows are sized first: grown by doubling,
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
            scratch,
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
    }
}

/// A span with a correlation id: the id, the span's member position and its kind.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct Corr {
    pub id: i64,
    pub pos: u32,
    pub kind: u32,
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
