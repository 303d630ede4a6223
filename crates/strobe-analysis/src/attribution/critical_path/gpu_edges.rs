//! The GPU side of the graph: each GPU op's time, how it was reached (its launch when the
//! stream was empty, else the previous op on its stream), and the waits between the GPU and
//! the CPU (synchronize calls, blocking copies) and between streams (`cudaStreamWaitEvent`).
//!
//! HTA reads the waits off the `cuda_sync` events CUPTI records on the GPU side; a Kineto
//! trace without them (the common case) names only the CPU calls, with no stream or event
//! argument. The waits are then inferred from the calls and the times, as
//! docs/critical_path.md says.

use super::events::{name, Event};
use super::graph::{EdgeKind, Graph, NO_EVENT};
use rustc_hash::FxHashMap;

/// HTA's bound on a gap between two ops of a stream that still counts as one waiting for the
/// other; a longer gap hides a dependency the trace does not show.
pub const KERNEL_GAP_LIMIT_NS: i64 = 1_500_000;

/// The step's GPU ops by stream: ranges of `ev` (the collector keeps them by lane, then start).
fn streams(ev: &[Event], first_gpu: usize) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut i = first_gpu;
    while i < ev.len() {
        let mut j = i;
        while j < ev.len() && ev[j].lane == ev[i].lane {
            j += 1;
        }
        out.push(i..j);
        i = j;
    }
    out
}

/// Counts of what the inference found, for the notes.
#[derive(Clone, Copy, Debug, Default)]
pub struct GpuEdgeCounts {
    /// GPU ops reached neither from their launch nor from the previous op of their stream.
    pub unlinked: usize,
    pub cpu_waits: usize,
    pub stream_waits: usize,
}

pub fn gpu_edges(ev: &mut [Event], first_gpu: usize, g: &mut Graph) -> GpuEdgeCounts {
    let mut counts = GpuEdgeCounts::default();
    let mut launched: FxHashMap<u32, u32> = FxHashMap::default();
    for j in first_gpu..ev.len() {
        let l = ev[j].launch;
        if l != NO_EVENT {
            launched.insert(l, j as u32);
            ev[j].op = ev[l as usize].op;
        }
    }
    let waits_for = stream_waits(ev, first_gpu, &launched);
    let by_stream = streams(ev, first_gpu);
    for r in &by_stream {
        let mut prev: Option<usize> = None;
        for j in r.clone() {
            let e = ev[j];
            let (start, end) = (2 * j as u32, 2 * j as u32 + 1);
            g.add(start, end, EdgeKind::Operator, e.end - e.start, j as u32);
            let src = waits_for.get(&(j as u32)).map(|&s| s as usize);
            if let Some(s) = src {
                g.add(2 * s as u32 + 1, start, EdgeKind::Sync, 0, NO_EVENT);
                counts.stream_waits += 1;
            }
            let launch_edge = e.launch != NO_EVENT
                && e.queue_empty
                && prev.is_none_or(|p| ev[p].end < e.launch_start)
                && src.is_none_or(|s| ev[s].end < e.launch_start);
            if launch_edge {
                g.add(2 * e.launch, start, EdgeKind::LaunchDelay, e.start - e.launch_start, j as u32);
            } else if let Some(p) =
                prev.filter(|&p| e.start - ev[p].end < KERNEL_GAP_LIMIT_NS && src.is_none_or(|s| ev[s].end < ev[p].end))
            {
                g.add(2 * p as u32 + 1, start, EdgeKind::KernelGap, e.start - ev[p].end, p as u32);
            } else if src.is_none() {
                counts.unlinked += 1;
            }
            prev = Some(j);
        }
    }
    counts.cpu_waits = cpu_waits(ev, first_gpu, &by_stream, &launched, g);
    counts
}

/// `cudaEventRecord` then `cudaStreamWaitEvent` on one thread: the op launched last before
/// the record (on the recorded stream) must end before the op launched first after the wait
/// (on the waiting stream) starts. Returns waiting op → op waited for.
fn stream_waits(ev: &[Event], first_gpu: usize, launched: &FxHashMap<u32, u32>) -> FxHashMap<u32, u32> {
    let mut calls: Vec<u32> = (0..first_gpu as u32)
        .filter(|&i| {
            let e = &ev[i as usize];
            e.names & (name::EVENT_RECORD | name::STREAM_WAIT_EVENT) != 0 || launched.contains_key(&i)
        })
        .collect();
    calls.sort_by_key(|&i| (ev[i as usize].lane, ev[i as usize].start, i));
    let mut out = FxHashMap::default();
    for thread in calls.chunk_by(|&a, &b| ev[a as usize].lane == ev[b as usize].lane) {
        let (mut last_launched, mut recorded, mut pending) = (None::<u32>, None::<u32>, None::<u32>);
        for &c in thread {
            let names = ev[c as usize].names;
            if names & name::EVENT_RECORD != 0 {
                recorded = last_launched;
            }
            if names & name::STREAM_WAIT_EVENT != 0 {
                pending = recorded;
            }
            if let Some(&d) = launched.get(&c) {
                if let Some(p) = pending.take() {
                    let (pe, de) = (&ev[p as usize], &ev[d as usize]);
                    if pe.lane != de.lane && pe.end <= de.start {
                        out.insert(d, p);
                    }
                }
                last_launched = Some(d);
            }
        }
    }
    out
}

/// Synchronize calls and blocking copies: the GPU op the call waited for (one that ended
/// while the call ran) leads to the call's end.
fn cpu_waits(
    ev: &[Event],
    first_gpu: usize,
    by_stream: &[std::ops::Range<usize>],
    launched: &FxHashMap<u32, u32>,
    g: &mut Graph,
) -> usize {
    let mut n = 0;
    for c in 0..first_gpu {
        let e = ev[c];
        let during = |j: usize| ev[j].end >= e.start && ev[j].end <= e.end;
        let mut link = |j: usize, g: &mut Graph| {
            g.add(2 * j as u32 + 1, 2 * c as u32 + 1, EdgeKind::Sync, 0, NO_EVENT);
            n += 1;
        };
        if e.names & name::COPY_CALL != 0 {
            if let Some(&d) = launched.get(&(c as u32)) {
                if during(d as usize) {
                    link(d as usize, g);
                }
            }
        }
        if e.names & (name::DEVICE_SYNC | name::ONE_STREAM_SYNC) == 0 {
            continue;
        }
        // each stream's last op launched before the call
        let last_before = by_stream.iter().filter_map(|r| {
            let k = ev[r.clone()].partition_point(|x| x.launch_start < e.start);
            (k > 0).then(|| r.start + k - 1)
        });
        if e.names & name::DEVICE_SYNC != 0 {
            for j in last_before.filter(|&j| during(j)).collect::<Vec<_>>() {
                link(j, g);
            }
        } else if let Some(j) = last_before.filter(|&j| during(j)).max_by_key(|&j| (ev[j].end, j)) {
            // the stream is not recorded: the one whose work ended last while the call waited
            link(j, g);
        }
    }
    n
}
