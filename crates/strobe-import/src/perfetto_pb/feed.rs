//! A `Decoded` trace as Kineto-shaped events for the chrome assembler, handed over in memory
//! (`chrome_json::direct`): GPU work as `kernel` / `gpu_memcpy` / `gpu_memset` events on
//! `pid` = device, `tid` = stream with `device`, `stream` and `correlation` args; launches
//! linked by `ac2g` flows; host slices on their threads; so the same lanes, kernels, steps
//! and flows come out as for a Kineto trace. GPU counters are returned as points of their
//! device, for the store's per-GPU counters.

use super::lanes::{Key, Lanes, Place};
use super::model::Decoded;
use crate::chrome_json::direct::{Events, Key as EvKey};
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;
use std::io::Write;

/// A counter point of a GPU: device, name, series, time (ns), value.
pub type DevicePoint = (i64, String, String, i64, f64);

pub struct Fed {
    pub events: Events,
    pub device_points: Vec<DevicePoint>,
    /// Slices, GPU work and counter points: what the load summary counts.
    pub count: u64,
}

/// Kineto's names for categories producers write in their own words.
fn kineto_category(cat: &str) -> &str {
    match cat {
        "kernel_dispatch" => "kernel",
        "memory_copy" => "gpu_memcpy",
        "hip_api" => "hip_runtime",
        c => c,
    }
}

fn ev_key(k: &Key) -> EvKey<'static> {
    match k {
        Key::Num(n) => EvKey::Num(*n),
        Key::Str(s) => EvKey::Str(Cow::Owned(s.clone())),
    }
}

/// Where a counter track's points go: a GPU's series (its device), or a process's counter
/// (the event thread and the name's string id).
type CounterTo = Result<i64, (u32, u32)>;

/// Where a track's events go: a thread of the events, and the GPU stream when it is one.
#[derive(Clone, Copy)]
struct At {
    thread: u32,
    gpu: Option<(i64, i64, Option<&'static str>)>,
}

pub fn feed(d: &Decoded) -> Fed {
    let mut used: FxHashSet<u64> = d.slices.iter().map(|s| s.track).collect();
    used.extend(d.counters.iter().map(|s| s.track));
    let lanes = Lanes::new(&d.tracks, &used);
    let args_bytes: usize = d.slices.iter().map(|s| s.args.len() + 24).sum::<usize>()
        + d.gpu_ops.iter().map(|o| o.args.len()).sum::<usize>();
    let mut ev = Events::with_capacity(d.slices.len() * 2 + d.gpu_ops.len() * 2 + d.counters.len(), args_bytes);
    let mut count = 0u64;
    // each pool string's id among the events, made on first use
    let mut ids: Vec<u32> = vec![u32::MAX; d.pool.strings.len()];
    let mut sid = |ev: &mut Events, i: u32| -> u32 {
        let slot = &mut ids[i as usize];
        if *slot == u32::MAX {
            *slot = ev.string(d.pool.get(i));
        }
        *slot
    };
    for (pid, name) in &lanes.process_names {
        let th = ev.thread(ev_key(pid), EvKey::Num(0));
        ev.metadata(th, "process_name", name);
    }
    for (pid, tid, name) in &lanes.thread_names {
        let th = ev.thread(ev_key(pid), ev_key(tid));
        ev.metadata(th, "thread_name", name);
    }
    let mut gpu_queues: FxHashMap<(i64, i64), u32> = FxHashMap::default();
    for op in &d.gpu_ops {
        gpu_queues.entry((op.gpu, op.stream)).or_insert(op.queue);
    }
    let mut queues: Vec<_> = gpu_queues.into_iter().collect();
    queues.sort_unstable();
    for ((gpu, stream), queue) in &queues {
        let th = ev.thread(EvKey::Num(*gpu), EvKey::Num(*stream));
        ev.metadata(th, "thread_name", d.pool.get(*queue));
    }
    // each track's place once (a track's place has owned names: not cloned per event)
    let mut at_of: FxHashMap<u64, At> = FxHashMap::default();
    let mut at = |ev: &mut Events, track: u64| -> At {
        if let Some(a) = at_of.get(&track) {
            return *a;
        }
        let a = match lanes.places.get(&track) {
            Some(Place::Cpu { pid, tid }) => At { thread: ev.thread(ev_key(pid), ev_key(tid)), gpu: None },
            Some(Place::Gpu { device, stream, cat }) => {
                At { thread: ev.thread(EvKey::Num(*device), EvKey::Num(*stream)), gpu: Some((*device, *stream, *cat)) }
            }
            None => At { thread: ev.thread(EvKey::Num(0), EvKey::Num(0)), gpu: None },
        };
        at_of.insert(track, a);
        a
    };
    let mut gpu_threads: FxHashMap<(i64, i64), u32> = FxHashMap::default();
    let mut gpu_thread = |ev: &mut Events, gpu: i64, stream: i64| -> u32 {
        *gpu_threads.entry((gpu, stream)).or_insert_with(|| ev.thread(EvKey::Num(gpu), EvKey::Num(stream)))
    };
    // a flow id's slices in time order: each consecutive pair one arrow, a terminating id
    // ending its chain
    let mut flow_steps: FxHashMap<u64, Vec<(i64, usize, bool)>> = FxHashMap::default();
    let mut cats: FxHashMap<(u32, bool, Option<&'static str>), u32> = FxHashMap::default();
    for (i, s) in d.slices.iter().enumerate() {
        count += 1;
        let a = at(&mut ev, s.track);
        let name = sid(&mut ev, s.name);
        let cat = *cats.entry((s.cat, a.gpu.is_some(), a.gpu.and_then(|g| g.2))).or_insert_with(|| {
            let own = kineto_category(d.pool.get(s.cat));
            let cat = match a.gpu {
                None => own,
                Some(_) if matches!(own, "kernel" | "gpu_memcpy" | "gpu_memset" | "gpu_user_annotation") => own,
                Some((_, _, c)) => c.unwrap_or("kernel"),
            };
            ev.string(cat)
        });
        // an instant no flow binds to is an instant event; one with flows a slice of no
        // duration, for the arrows to bind to (Perfetto keeps every instant so)
        let point = s.instant && s.flows.is_empty() && s.terminating_flows.is_empty();
        if point {
            ev.instant(a.thread, name, cat, s.ts, s.args.as_bytes());
        } else {
            let dur = s.end.saturating_sub(s.ts);
            ev.complete(a.thread, name, cat, s.ts, dur, |out| match a.gpu {
                Some((device, stream, _)) => {
                    let inner = s.args.trim_start_matches('{');
                    let comma = if inner == "}" { "" } else { "," };
                    let _ = write!(out, "{{\"device\":{device},\"stream\":{stream}{comma}{inner}");
                }
                None => out.extend_from_slice(s.args.as_bytes()),
            });
        }
        for &f in &s.flows {
            flow_steps.entry(f).or_default().push((s.ts, i, false));
        }
        for &f in &s.terminating_flows {
            flow_steps.entry(f).or_default().push((s.ts, i, true));
        }
    }
    let mut next_flow: u64 = 1 << 48;
    let mut arrow = |ev: &mut Events, cat: u32, from: (u32, i64), to: (u32, i64)| {
        next_flow += 1;
        ev.flow(b's', from.0, cat, from.1, next_flow);
        ev.flow(b'f', to.0, cat, to.1, next_flow);
    };
    let flow_cat = ev.string("flow");
    let mut flow_ids: Vec<u64> = flow_steps.keys().copied().collect();
    flow_ids.sort_unstable();
    for id in flow_ids {
        let mut steps = flow_steps.remove(&id).unwrap_or_default();
        steps.sort_by_key(|&(ts, i, end)| (ts, i, end));
        for w in steps.windows(2) {
            let ((_, a, a_end), (_, b, _)) = (w[0], w[1]);
            if a_end || a == b {
                continue; // the chain ended at `a`; `b` starts a new one
            }
            let (sa, sb) = (&d.slices[a], &d.slices[b]);
            let (ta, tb) = (at(&mut ev, sa.track).thread, at(&mut ev, sb.track).thread);
            arrow(&mut ev, flow_cat, (ta, sa.ts), (tb, sb.ts));
        }
    }
    let by_event: FxHashMap<u64, usize> = d.gpu_ops.iter().enumerate().map(|(i, o)| (o.event_id, i)).collect();
    for op in &d.gpu_ops {
        count += 1;
        let th = gpu_thread(&mut ev, op.gpu, op.stream);
        let (name, cat) = (sid(&mut ev, op.name), sid(&mut ev, op.cat));
        ev.complete(th, name, cat, op.ts, op.dur, |out| out.extend_from_slice(op.args.as_bytes()));
    }
    // host launches to the GPU work they started (`gpu_correlation`), as Kineto's ac2g arrows
    let ac2g = ev.string("ac2g");
    for s in d.slices.iter().filter(|s| !s.launches.is_empty()) {
        let host = at(&mut ev, s.track).thread;
        for e in &s.launches {
            if let Some(&i) = by_event.get(e) {
                let op = &d.gpu_ops[i];
                let to = gpu_thread(&mut ev, op.gpu, op.stream);
                arrow(&mut ev, ac2g, (host, s.ts), (to, op.ts));
            }
        }
    }
    // GPU work a host slice waited for (`render_stage_wait_event_ids`): from the work to it
    let gpu_wait = ev.string("gpu_wait");
    for s in d.slices.iter().filter(|s| !s.waits_on.is_empty()) {
        let host = at(&mut ev, s.track).thread;
        for e in &s.waits_on {
            if let Some(&i) = by_event.get(e) {
                let op = &d.gpu_ops[i];
                let from = gpu_thread(&mut ev, op.gpu, op.stream);
                arrow(&mut ev, gpu_wait, (from, op.ts), (host, s.ts));
            }
        }
    }
    // CUDA-graph node dependencies (`event_wait_ids`): predecessor to successor
    let dependency = ev.string("gpu_dependency");
    for op in &d.gpu_ops {
        for w in &op.waits {
            if let Some(&i) = by_event.get(w) {
                let p = &d.gpu_ops[i];
                let (from, to) = (gpu_thread(&mut ev, p.gpu, p.stream), gpu_thread(&mut ev, op.gpu, op.stream));
                arrow(&mut ev, dependency, (from, p.ts), (to, op.ts));
            }
        }
    }
    let mut device_points: Vec<DevicePoint> = Vec::new();
    // each counter track's name, and where it goes: a GPU, or its process (thread 0 of it)
    let mut counter_tracks: FxHashMap<u64, (String, CounterTo)> = FxHashMap::default();
    for c in &d.counters {
        count += 1;
        let (name, to) = counter_tracks.entry(c.track).or_insert_with(|| {
            let t = d.tracks.get(&c.track);
            let name =
                t.map(|t| t.name.clone()).filter(|n| !n.is_empty()).unwrap_or_else(|| format!("counter {}", c.track));
            let to = match lanes.counter_gpu.get(&c.track) {
                Some(&dev) => Ok(dev),
                None => {
                    let pid = match lanes.places.get(&c.track) {
                        Some(Place::Cpu { pid, .. }) => ev_key(pid),
                        Some(Place::Gpu { device, .. }) => EvKey::Num(*device),
                        None => EvKey::Num(0),
                    };
                    Err((ev.thread(pid, EvKey::Num(0)), ev.string(&name)))
                }
            };
            (name, to)
        });
        // one unnamed series per track, as PyTorch's JSON export writes counters (`{"": v}`)
        match to {
            Ok(dev) => device_points.push((*dev, name.clone(), String::new(), c.ts, c.value)),
            Err((th, name_id)) => ev.counter(*th, *name_id, c.ts, "", c.value),
        }
    }
    for g in &d.gpu_samples {
        count += 1;
        device_points.push((g.gpu, d.pool.get(g.name).to_string(), String::new(), g.ts, g.value));
    }
    Fed { events: ev, device_points, count }
}
