//! Why the GPU is idle in a stretch of a step: the idle breakdown's causes (`idle`), with the
//! CPU range that held the launching thread (`gaps`) and synchronisation told apart.
//!
//! An idle stretch lies in one gap of the device's busy union; the gap decides:
//! - shorter than the threshold: **launch overhead** (the idle breakdown's kernel wait);
//! - the next kernel's launch started after the gap opened: **host wait** (the CPU was not
//!   submitting), named instant by instant by the range that held the thread (`holders`);
//! - otherwise (launched in time but started late): **other**;
//! - in a host wait or other gap, an instant where the launching thread sat in a
//!   synchronisation (`cudaStreamSynchronize`, `cudaEventSynchronize`, `cudaStreamWaitEvent`,
//!   `aten::item`…) is **sync wait**;
//! - a stretch before the device's first or after its last operation is no gap between two
//!   operations: **other**.

use super::stretches::StretchKind;
use crate::gaps::thread_lanes;
use crate::gpu_time::DeviceUnions;
use rustc_hash::FxHashMap;
use strobe_store::Store;

/// Whether a CPU range named `name` is the host blocked on the device.
pub fn is_sync_name(name: &str) -> bool {
    name.contains("Synchronize")
        || name.contains("StreamWaitEvent")
        || name.contains("EventQuery")
        || matches!(name, "aten::item" | "aten::_local_scalar_dense")
}

/// The cause of one idle stretch by its gap, and the lanes of the thread that launched the
/// work closing the gap (where the cause is the host's).
pub struct IdleCauser<'s> {
    store: &'s Store,
    union: &'s DeviceUnions,
    threshold_ns: i64,
    /// The launching thread's lanes, per lane of a launch call.
    lanes: FxHashMap<u32, Vec<u32>>,
    /// Per gap (index of the busy interval that closes it): its cause and launch lane.
    done: FxHashMap<usize, (StretchKind, Option<u32>)>,
}

impl<'s> IdleCauser<'s> {
    pub fn new(store: &'s Store, union: &'s DeviceUnions, threshold_ns: i64) -> IdleCauser<'s> {
        IdleCauser { store, union, threshold_ns, lanes: FxHashMap::default(), done: FxHashMap::default() }
    }

    /// The cause of the idle stretch `[s, e)` (inside one gap of the busy union): launch
    /// overhead, host wait or other (sync is told per instant, `holders`), with the launching
    /// thread's lanes for a long gap.
    pub fn cause(&mut self, s: i64, e: i64) -> (StretchKind, Option<&[u32]>) {
        let busy = &self.union.busy;
        // the busy interval that closes the gap: the first starting at or after the stretch's end
        let next = busy.partition_point(|iv| iv.0 < e);
        if next == 0 || next >= busy.len() || busy[next - 1].1 > s {
            return (StretchKind::IdleOther, None);
        }
        let (kind, lane) = match self.done.get(&next) {
            Some(c) => *c,
            None => {
                let (gs, ge) = (busy[next - 1].1, busy[next].0);
                let c = self.classify(gs, ge, self.union.busy_edges[next].0);
                self.done.insert(next, c);
                c
            }
        };
        (kind, lane.and_then(|l| self.lanes.get(&l)).map(|v| v.as_slice()))
    }

    fn classify(&mut self, gs: i64, ge: i64, next_span: u32) -> (StretchKind, Option<u32>) {
        if ge - gs < self.threshold_ns {
            return (StretchKind::IdleLaunch, None);
        }
        let store = self.store;
        let Some(launch) = store.launch_table().get(next_span) else { return (StretchKind::IdleOther, None) };
        let lane = store.span_meta(launch).lane;
        self.lanes.entry(lane).or_insert_with(|| thread_lanes(store, launch));
        let kind = if store.span_start(launch) > gs { StretchKind::IdleHost } else { StretchKind::IdleOther };
        (kind, Some(lane))
    }
}
