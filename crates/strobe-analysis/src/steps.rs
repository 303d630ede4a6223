//! Profiler steps: the `ProfilerStep#N` ranges the PyTorch profiler records on the CPU.

use serde::Serialize;
use strobe_model::LaneKind;
use strobe_store::Store;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Step {
    pub name: String,
    pub start_ns: i64,
    pub dur_ns: i64,
}

pub fn is_step_name(name: &str) -> bool {
    name.strip_prefix("ProfilerStep#").map(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).unwrap_or(false)
}

/// Steps from CPU lanes (GPU-side copies of the same ranges, as ROCm traces have, are not
/// counted twice), sorted by start.
pub fn steps(store: &Store) -> Vec<Step> {
    let mut out = Vec::new();
    let step_names: Vec<u32> = (0..store.string_count() as u32).filter(|&i| is_step_name(store.string(i))).collect();
    if step_names.is_empty() {
        return out;
    }
    for (lane, desc) in store.lanes.iter().enumerate() {
        if !matches!(desc.kind, LaneKind::CpuThread { .. }) {
            continue;
        }
        let v = store.lane_view(lane as u32);
        for (k, &sid) in v.span.iter().enumerate() {
            let m = store.span_meta(sid);
            if step_names.binary_search(&m.name).is_ok() {
                out.push(Step {
                    name: store.string(m.name).to_string(),
                    start_ns: v.starts[k],
                    dur_ns: v.ends[k] - v.starts[k],
                });
            }
        }
    }
    out.sort_by(|a, b| (a.start_ns, &a.name).cmp(&(b.start_ns, &b.name)));
    out
}
