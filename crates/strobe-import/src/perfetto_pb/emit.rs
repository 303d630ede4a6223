//! A `Decoded` trace as Chrome trace-event JSON in Kineto's shape (GPU work as `kernel` /
//! `gpu_memcpy` / `gpu_memset` events on `pid` = device, `tid` = stream with `device`,
//! `stream` and `correlation` args; launches linked by `ac2g` flows; host slices on their
//! threads), so the chrome importer builds the same lanes, kernels, steps and flows as for
//! a Kineto trace. GPU counters do not go through the text: they are returned as points of
//! their device, for the store's per-GPU counters.

use super::decode::json_str;
use super::lanes::{Key, Lanes, Place};
use super::model::Decoded;
use rustc_hash::{FxHashMap, FxHashSet};
use std::io::Write;

/// A counter point of a GPU: device, name, series, time (ns), value.
pub type DevicePoint = (i64, String, String, i64, f64);

pub struct Emitted {
    pub json: Vec<u8>,
    pub device_points: Vec<DevicePoint>,
    pub events: u64,
}

/// Nanoseconds as a JSON number of microseconds, exactly.
fn us(out: &mut Vec<u8>, ns: i64) {
    let (sign, a) = if ns < 0 { ("-", ns.unsigned_abs()) } else { ("", ns as u64) };
    let _ = write!(out, "{sign}{}.{:03}", a / 1000, a % 1000);
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

pub fn emit(d: &Decoded) -> Emitted {
    let mut used: FxHashSet<u64> = d.slices.iter().map(|s| s.track).collect();
    used.extend(d.counters.iter().map(|s| s.track));
    let lanes = Lanes::new(&d.tracks, &used);
    let mut out: Vec<u8> = Vec::with_capacity(d.slices.len() * 160 + d.gpu_ops.len() * 260 + 4096);
    let mut events = 0u64;
    out.extend_from_slice(b"{\"traceEvents\":[\n");
    let cpu = |track: u64| -> Place {
        lanes.places.get(&track).cloned().unwrap_or(Place::Cpu { pid: Key::Num(0), tid: Key::Num(0) })
    };
    for (pid, name) in &lanes.process_names {
        sep_after(&mut out);
        let _ = write!(
            out,
            "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":{}}}}}",
            pid.json(),
            json_str(name)
        );
    }
    for (pid, tid, name) in &lanes.thread_names {
        sep_after(&mut out);
        let _ = write!(
            out,
            "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}}",
            pid.json(),
            tid.json(),
            json_str(name)
        );
    }
    let mut gpu_queues: FxHashMap<(i64, i64), u32> = FxHashMap::default();
    for op in &d.gpu_ops {
        gpu_queues.entry((op.gpu, op.stream)).or_insert(op.queue);
    }
    let mut queues: Vec<_> = gpu_queues.into_iter().collect();
    queues.sort_unstable();
    for ((gpu, stream), queue) in &queues {
        sep_after(&mut out);
        let _ = write!(
            out,
            "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{gpu},\"tid\":{stream},\"args\":{{\"name\":{}}}}}",
            json_str(d.pool.get(*queue))
        );
    }
    // a flow id's slices in time order: each consecutive pair one arrow, a terminating id
    // ending its chain
    let mut flow_steps: FxHashMap<u64, Vec<(i64, usize, bool)>> = FxHashMap::default();
    for (i, s) in d.slices.iter().enumerate() {
        events += 1;
        sep_after(&mut out);
        let (pid, tid, cat, gpu_args) = match cpu(s.track) {
            Place::Cpu { pid, tid } => (pid, tid, kineto_category(d.pool.get(s.cat)).to_string(), None),
            Place::Gpu { device, stream, cat } => {
                let own = kineto_category(d.pool.get(s.cat));
                let cat = match own {
                    "kernel" | "gpu_memcpy" | "gpu_memset" | "gpu_user_annotation" => own,
                    _ => cat.unwrap_or("kernel"),
                };
                (Key::Num(device), Key::Num(stream), cat.to_string(), Some((device, stream)))
            }
        };
        // an instant no flow binds to is an instant event; one with flows a slice of no
        // duration, for the arrows to bind to (Perfetto keeps every instant so)
        let point = s.instant && s.flows.is_empty() && s.terminating_flows.is_empty();
        let ph = if point { "i\",\"s\":\"t" } else { "X" };
        let _ = write!(
            out,
            "{{\"ph\":\"{ph}\",\"name\":{},\"cat\":{},\"pid\":{},\"tid\":{},\"ts\":",
            json_str(d.pool.get(s.name)),
            json_str(&cat),
            pid.json(),
            tid.json()
        );
        us(&mut out, s.ts);
        if !point {
            out.extend_from_slice(b",\"dur\":");
            us(&mut out, s.end - s.ts);
        }
        out.extend_from_slice(b",\"args\":");
        match gpu_args {
            Some((device, stream)) => {
                let inner = s.args.trim_start_matches('{');
                let comma = if inner == "}" { "" } else { "," };
                let _ = write!(out, "{{\"device\":{device},\"stream\":{stream}{comma}{inner}");
            }
            None => out.extend_from_slice(s.args.as_bytes()),
        }
        out.push(b'}');
        for &f in &s.flows {
            flow_steps.entry(f).or_default().push((s.ts, i, false));
        }
        for &f in &s.terminating_flows {
            flow_steps.entry(f).or_default().push((s.ts, i, true));
        }
    }
    let mut next_flow: u64 = 1 << 48;
    let mut arrow = |out: &mut Vec<u8>, cat: &str, from: (&Key, &Key, i64), to: (&Key, &Key, i64)| {
        next_flow += 1;
        for (ph, (pid, tid, ts), bp) in [("s", from, ""), ("f", to, ",\"bp\":\"e\"")] {
            if !out.ends_with(b"[\n") {
                out.extend_from_slice(b",\n");
            }
            let _ = write!(
                out,
                "{{\"ph\":\"{ph}\",\"id\":{next_flow},\"name\":{cat:?},\"cat\":{cat:?},\"pid\":{},\"tid\":{},\"ts\":",
                pid.json(),
                tid.json()
            );
            us(out, ts);
            let _ = write!(out, "{bp}}}");
        }
    };
    let place_keys = |p: Place| match p {
        Place::Cpu { pid, tid } => (pid, tid),
        Place::Gpu { device, stream, .. } => (Key::Num(device), Key::Num(stream)),
    };
    let mut flow_ids: Vec<u64> = flow_steps.keys().copied().collect();
    flow_ids.sort_unstable();
    let mut flows = 0u64;
    for id in flow_ids {
        let mut steps = flow_steps.remove(&id).unwrap_or_default();
        steps.sort_by_key(|&(ts, i, end)| (ts, i, end));
        for w in steps.windows(2) {
            let ((_, a, a_end), (_, b, _)) = (w[0], w[1]);
            if a_end || a == b {
                continue; // the chain ended at `a`; `b` starts a new one
            }
            let (sa, sb) = (&d.slices[a], &d.slices[b]);
            let (pa, ta) = place_keys(cpu(sa.track));
            let (pb, tb) = place_keys(cpu(sb.track));
            arrow(&mut out, "flow", (&pa, &ta, sa.ts), (&pb, &tb, sb.ts));
            flows += 1;
        }
    }
    let by_event: FxHashMap<u64, usize> = d.gpu_ops.iter().enumerate().map(|(i, o)| (o.event_id, i)).collect();
    for op in &d.gpu_ops {
        events += 1;
        sep_after(&mut out);
        let _ = write!(
            out,
            "{{\"ph\":\"X\",\"name\":{},\"cat\":{},\"pid\":{},\"tid\":{},\"ts\":",
            json_str(d.pool.get(op.name)),
            json_str(d.pool.get(op.cat)),
            op.gpu,
            op.stream
        );
        us(&mut out, op.ts);
        out.extend_from_slice(b",\"dur\":");
        us(&mut out, op.dur);
        let _ = write!(out, ",\"args\":{}}}", op.args);
    }
    // host launches to the GPU work they started (`gpu_correlation`), as Kineto's ac2g arrows
    for s in &d.slices {
        if s.launches.is_empty() {
            continue;
        }
        let (hp, ht) = place_keys(cpu(s.track));
        for e in &s.launches {
            if let Some(&i) = by_event.get(e) {
                let op = &d.gpu_ops[i];
                arrow(&mut out, "ac2g", (&hp, &ht, s.ts), (&Key::Num(op.gpu), &Key::Num(op.stream), op.ts));
            }
        }
    }
    // GPU work a host slice waited for (`render_stage_wait_event_ids`): from the work to it
    for s in &d.slices {
        if s.waits_on.is_empty() {
            continue;
        }
        let (hp, ht) = place_keys(cpu(s.track));
        for e in &s.waits_on {
            if let Some(&i) = by_event.get(e) {
                let op = &d.gpu_ops[i];
                arrow(&mut out, "gpu_wait", (&Key::Num(op.gpu), &Key::Num(op.stream), op.ts), (&hp, &ht, s.ts));
            }
        }
    }
    // CUDA-graph node dependencies (`event_wait_ids`): predecessor to successor
    for op in &d.gpu_ops {
        for w in &op.waits {
            if let Some(&i) = by_event.get(w) {
                let p = &d.gpu_ops[i];
                arrow(
                    &mut out,
                    "gpu_dependency",
                    (&Key::Num(p.gpu), &Key::Num(p.stream), p.ts),
                    (&Key::Num(op.gpu), &Key::Num(op.stream), op.ts),
                );
            }
        }
    }
    let mut device_points: Vec<DevicePoint> = Vec::new();
    for c in &d.counters {
        events += 1;
        let t = d.tracks.get(&c.track);
        let name =
            t.map(|t| t.name.clone()).filter(|n| !n.is_empty()).unwrap_or_else(|| format!("counter {}", c.track));
        // one unnamed series per track, as PyTorch's JSON export writes counters (`{"": v}`)
        let series = String::new();
        if let Some(&dev) = lanes.counter_gpu.get(&c.track) {
            device_points.push((dev, name, series, c.ts, c.value));
            continue;
        }
        let (pid, _) = place_keys(cpu(c.track));
        sep_after(&mut out);
        let _ = write!(out, "{{\"ph\":\"C\",\"name\":{},\"pid\":{},\"tid\":0,\"ts\":", json_str(&name), pid.json());
        us(&mut out, c.ts);
        let _ = write!(out, ",\"args\":{{{}:{}}}}}", json_str(&series), c.value);
    }
    for g in &d.gpu_samples {
        events += 1;
        device_points.push((g.gpu, d.pool.get(g.name).to_string(), String::new(), g.ts, g.value));
    }
    out.extend_from_slice(b"\n]");
    if let Some(off) = d.realtime_offset {
        let _ = write!(out, ",\"baseTimeNanoseconds\":{off}");
    }
    out.extend_from_slice(b"}\n");
    let _ = flows;
    Emitted { json: out, device_points, events }
}

fn sep_after(out: &mut Vec<u8>) {
    if !out.ends_with(b"[\n") {
        out.extend_from_slice(b",\n");
    }
}
