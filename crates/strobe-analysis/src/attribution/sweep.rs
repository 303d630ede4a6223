//! One device's GPU activity inside a window, instant by instant: which work holds each
//! instant, where communication is exposed, where the device is idle.
//!
//! At an instant where k spans of GPU work (compute kernels, copies, memsets) run at once, each
//! gets 1/k of it: overlapping streams share the time in proportion per instant, so the
//! shares add up to the work union's length and nothing counts twice. Communication kernels
//! only count where no work runs (exposed comm); under work they cost nothing.

use crate::gpu_time::{Classifier, GpuClass};
use strobe_model::LaneKind;
use strobe_store::Store;

/// What the window held.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WindowActivity {
    /// Each work span seen, with its share of the window in ns (fractional where it overlapped
    /// other work).
    pub work: Vec<(u32, f64)>,
    /// Length of the work union inside the window: the shares' exact sum.
    pub work_ns: i64,
    /// Where comm ran and no work did, sorted and disjoint.
    pub exposed_comm: Vec<(i64, i64)>,
    /// Each comm span's share of the exposed time (equal shares where several ran).
    pub comm: Vec<(u32, f64)>,
    /// Where nothing ran, sorted and disjoint.
    pub idle: Vec<(i64, i64)>,
}

/// The GPU stream lanes of `device`.
pub fn device_lanes(store: &Store, device: i64) -> Vec<u32> {
    store
        .lanes
        .iter()
        .enumerate()
        .filter(|(_, l)| matches!(l.kind, LaneKind::GpuStream { device: d, .. } if d == device))
        .map(|(i, _)| i as u32)
        .collect()
}

fn push_interval(v: &mut Vec<(i64, i64)>, s: i64, e: i64) {
    match v.last_mut() {
        Some(last) if last.1 == s => last.1 = e,
        _ => v.push((s, e)),
    }
}

/// The activity of `lanes` (one device's) inside `[a, b)`.
pub fn sweep(store: &Store, lanes: &[u32], classes: &mut Classifier, (a, b): (i64, i64)) -> WindowActivity {
    let mut out = WindowActivity::default();
    if b <= a {
        return out;
    }
    // (time, is_start, comm, index into out.work / out.comm)
    let mut events: Vec<(i64, bool, bool, usize)> = Vec::new();
    for &lane in lanes {
        let v = store.lane_view(lane);
        store.query_window(lane, a, b, |i| {
            let (s, e) = (v.starts[i].max(a), v.ends[i].min(b));
            if e <= s {
                return;
            }
            let sid = v.span[i];
            let m = store.span_meta(sid);
            let comm = match classes.class(strobe_model::SpanKind::from_u8(m.kind), m.name) {
                Some(GpuClass::Comm) => true,
                Some(_) => false,
                None => return,
            };
            let list = if comm { &mut out.comm } else { &mut out.work };
            list.push((sid, 0.0));
            let k = list.len() - 1;
            events.push((s, true, comm, k));
            events.push((e, false, comm, k));
        });
    }
    // ends before starts at one instant: touching spans do not overlap
    events.sort_unstable_by_key(|&(t, start, comm, k)| (t, start, comm, k));
    let (mut work_on, mut comm_on): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
    let mut t = a;
    for (at, start, comm, k) in events {
        let dt = at - t;
        if dt > 0 {
            if !work_on.is_empty() {
                let each = dt as f64 / work_on.len() as f64;
                work_on.iter().for_each(|&i| out.work[i].1 += each);
                out.work_ns += dt;
            } else if !comm_on.is_empty() {
                let each = dt as f64 / comm_on.len() as f64;
                comm_on.iter().for_each(|&i| out.comm[i].1 += each);
                push_interval(&mut out.exposed_comm, t, at);
            } else {
                push_interval(&mut out.idle, t, at);
            }
            t = at;
        }
        let on = if comm { &mut comm_on } else { &mut work_on };
        if start {
            on.push(k);
        } else if let Some(p) = on.iter().position(|&x| x == k) {
            on.swap_remove(p);
        }
    }
    if t < b {
        push_interval(&mut out.idle, t, b);
    }
    out
}
