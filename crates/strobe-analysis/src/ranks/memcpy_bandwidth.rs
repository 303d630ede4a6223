//! Memory bandwidth counters (HTA `get_memory_bw_time_series`): per device and copy kind (the
//! op's name, e.g. `Memcpy DtoH (Device -> Pinned)`), the bandwidth in use over time — each
//! memcpy/memset adds bytes/duration from its start to its end. Bytes come from the op's
//! `args.bytes`; ops without it are counted in `without_bytes` and left out. A zero-length op
//! is taken as 1 ns long (HTA rounds it to 1 µs) so its rate stays finite.

use serde::Serialize;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BandwidthSeries {
    pub device: i64,
    pub name: String,
    pub ops: u64,
    pub bytes: u64,
    pub without_bytes: u64,
    /// (ts, GB/s in use from ts on), one point per change (not in the JSON report).
    #[serde(skip)]
    pub points: Vec<(i64, f64)>,
    pub max_gb_per_s: f64,
    /// bytes / Σ durations: the mean rate of one op.
    pub mean_gb_per_s: f64,
}

fn arg_bytes(args: &str) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_str(args).ok()?;
    v.get("bytes")?.as_u64()
}

pub fn memcpy_bandwidth(store: &Store) -> Vec<BandwidthSeries> {
    // (device, name) → (ops, bytes, without, busy ns, events (ts, +/- GB/s))
    type Acc = (u64, u64, u64, i64, Vec<(i64, f64)>);
    let mut by: std::collections::BTreeMap<(i64, String), Acc> = Default::default();
    for (lane, desc) in store.lanes.iter().enumerate() {
        let LaneKind::GpuStream { device, .. } = desc.kind else { continue };
        let v = store.lane_spans(lane as u32);
        for (k, &sid) in v.span.iter().enumerate() {
            if !matches!(store.span_kind(sid), SpanKind::Memcpy | SpanKind::Memset) {
                continue;
            }
            let e = by.entry((device, store.span_name(sid).to_string())).or_default();
            e.0 += 1;
            let Some(bytes) = arg_bytes(&store.span_args(sid)) else {
                e.2 += 1;
                continue;
            };
            let dur = (v.ends[k] - v.starts[k]).max(1);
            let rate = bytes as f64 / dur as f64; // bytes/ns = GB/s
            e.1 += bytes;
            e.3 += dur;
            e.4.push((v.starts[k], rate));
            e.4.push((v.starts[k] + dur, -rate));
        }
    }
    by.into_iter()
        .map(|((device, name), (ops, bytes, without_bytes, busy, mut ev))| {
            // ends before starts at one instant: back-to-back copies do not add up
            ev.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
            let mut points: Vec<(i64, f64)> = Vec::new();
            let mut cur = 0.0f64;
            for (t, d) in ev {
                cur = (cur + d).max(0.0);
                match points.last_mut() {
                    Some(p) if p.0 == t => p.1 = cur,
                    _ => points.push((t, cur)),
                }
            }
            let max_gb_per_s = points.iter().map(|p| p.1).fold(0.0, f64::max);
            BandwidthSeries {
                device,
                name,
                ops,
                bytes,
                without_bytes,
                points,
                max_gb_per_s,
                mean_gb_per_s: if busy > 0 { bytes as f64 / busy as f64 } else { 0.0 },
            }
        })
        .collect()
}
