//! Busy but not working: stretches where the GPU runs compute kernels through the whole
//! sampling period while few of its SMs are active. The kernel timeline calls that time busy;
//! the SMs say most of the GPU is waiting: the tail of a kernel whose last wave fills a few
//! SMs, grids too small to fill the GPU, serial chains of tiny kernels.
//!
//! A chain of tiny kernels queued ahead of the GPU runs with a gap of about a microsecond
//! between one kernel's end and the next one's start (the GPU moving to the next queued
//! launch): a real H100 chain of 5 µs reductions fills only ~76 % of each sampling period
//! with kernels, yet the GPU never waits for anything but its own turnaround. Gaps that short
//! are counted as kernel time. A host launching kernels one at a time cannot be that quick
//! (a launch call costs several microseconds; the launch-bound chain in the H100 sample
//! leaves 8–17 µs gaps), so the GPU idling for its host still is not busy.

use super::{find, periods};
use crate::intervals::total_within;
use serde::{Deserialize, Serialize};
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

/// SMs Active below this (% of the SMs) while kernels run counts as not working.
pub const LOW_PCT: f64 = 50.0;
/// A sampling period counts as kernel-busy when compute kernels cover this much of it.
pub const BUSY_FRACTION: f64 = 0.9;
/// Gaps between compute kernels shorter than this are the GPU moving to its next queued
/// kernel, counted as busy.
pub const TURNAROUND_NS: i64 = 2_000;
/// How many of the longest stretches are listed.
pub const LONGEST: usize = 5;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BusyNotWorking {
    pub threshold_pct: f64,
    /// The device's SM count, where the trace gives it (what a grid is measured against).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_count: Option<u32>,
    /// Time of the sampling periods compute kernels ran through (at least 90 % of each).
    pub busy_ns: i64,
    /// Of that, the periods with SMs Active below the threshold.
    pub low_ns: i64,
    pub low_pct: f64,
    /// The longest runs of such periods, longest first.
    pub stretches: Vec<LowStretch>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LowStretch {
    pub start_ns: i64,
    pub end_ns: i64,
    pub samples: u64,
    /// Mean SMs Active over its samples (%).
    pub sms_active: f64,
    /// Mean Tensor Active over the same periods (%), where the export has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensor_active: Option<f64>,
    /// The kernel that ran longest in it, how long there, and its grid's block count.
    pub kernel: Option<String>,
    pub kernel_ns: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid_blocks: Option<u64>,
}

/// `u` (sorted, disjoint) with the gaps shorter than `TURNAROUND_NS` closed.
fn close_turnarounds(u: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(u.len());
    for &(s, e) in u {
        match out.last_mut() {
            Some(last) if s - last.1 < TURNAROUND_NS => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Busy-but-not-working time of `device`, from its SMs Active samples and its compute
/// kernels' union `compute`; None without SMs Active samples or kernel-busy periods.
pub fn busy_not_working(store: &Store, device: i64, compute: &[(i64, i64)]) -> Option<BusyNotWorking> {
    let sms = find(store, device, "SMs Active")?;
    let compute = &close_turnarounds(compute)[..];
    let (ts, vals) = store.counter_points(sms);
    let tensor = find(store, device, "Tensor Active").map(|c| store.counter_points(c));
    let per = periods(ts);
    let (mut busy_ns, mut low_ns) = (0i64, 0i64);
    // runs of consecutive low periods: (first index, last index)
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (i, &(a, b)) in per.iter().enumerate() {
        let len = b - a;
        if len <= 0 || (total_within(compute, a, b) as f64) < BUSY_FRACTION * len as f64 {
            continue;
        }
        busy_ns += len;
        if vals[i] >= LOW_PCT {
            continue;
        }
        low_ns += len;
        match runs.last_mut() {
            Some(r) if r.1 + 1 == i => r.1 = i,
            _ => runs.push((i, i)),
        }
    }
    if busy_ns == 0 {
        return None;
    }
    runs.sort_by_key(|&(i, j)| (std::cmp::Reverse(per[j].1 - per[i].0), i));
    runs.truncate(LONGEST);
    let stretches = runs
        .into_iter()
        .map(|(i, j)| {
            let (a, b) = (per[i].0, per[j].1);
            let n = (j - i + 1) as f64;
            let tensor_active = tensor.map(|(tts, tv)| {
                let v = super::values_in(tts, tv, a, b);
                if v.is_empty() {
                    f64::NAN
                } else {
                    v.iter().sum::<f64>() / v.len() as f64
                }
            });
            let (kernel, kernel_ns, grid_blocks) = longest_kernel(store, device, a, b);
            LowStretch {
                start_ns: a,
                end_ns: b,
                samples: (j - i + 1) as u64,
                sms_active: vals[i..=j].iter().sum::<f64>() / n,
                tensor_active: tensor_active.filter(|v| v.is_finite()),
                kernel,
                kernel_ns,
                grid_blocks,
            }
        })
        .collect();
    Some(BusyNotWorking {
        threshold_pct: LOW_PCT,
        sm_count: store.meta.devices.iter().find(|d| d.id == device).and_then(|d| d.sm_count),
        busy_ns,
        low_ns,
        low_pct: low_ns as f64 * 100.0 / busy_ns as f64,
        stretches,
    })
}

/// The kernel name of `device` with the most time inside `[a, b)`, that time, and the block
/// count of its longest launch there (from its `grid` arg).
fn longest_kernel(store: &Store, device: i64, a: i64, b: i64) -> (Option<String>, i64, Option<u64>) {
    let mut by_name: std::collections::HashMap<&str, (i64, u32, i64)> = Default::default();
    for (lane, l) in store.lanes.iter().enumerate() {
        if !matches!(l.kind, LaneKind::GpuStream { device: d, .. } if d == device) {
            continue;
        }
        let v = store.lane_view(lane as u32);
        store.query_window(lane as u32, a, b, |m| {
            let span = v.span[m];
            if store.span_kind(span) != SpanKind::Kernel {
                return;
            }
            let inside = v.ends[m].min(b) - v.starts[m].max(a);
            if inside <= 0 {
                return;
            }
            let e = by_name.entry(store.span_name(span)).or_insert((0, span, 0));
            e.0 += inside;
            if inside > e.2 {
                e.1 = span;
                e.2 = inside;
            }
        });
    }
    let Some((name, &(ns, span, _))) = by_name.iter().max_by_key(|(n, v)| (v.0, std::cmp::Reverse(**n))) else {
        return (None, 0, None);
    };
    (Some(name.to_string()), ns, grid_blocks(&store.span_args(span)))
}

/// Blocks in a launch's grid, from its args' `"grid":[x, y, z]`.
pub fn grid_blocks(args: &str) -> Option<u64> {
    let at = args.find("\"grid\"")?;
    let rest = &args[at + 6..];
    let open = rest.find('[')?;
    let close = rest.find(']')?;
    if rest[..open].trim().trim_start_matches(':').trim() != "" {
        return None;
    }
    let dims: Option<Vec<u64>> = rest[open + 1..close].split(',').map(|d| d.trim().parse::<u64>().ok()).collect();
    let dims = dims?;
    (!dims.is_empty()).then(|| dims.iter().product())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_from_args() {
        assert_eq!(grid_blocks(r#"{"grid":[4, 2, 1],"block":[128,1,1]}"#), Some(8));
        assert_eq!(grid_blocks(r#"{"grid": [132,1,1]}"#), Some(132));
        assert_eq!(grid_blocks(r#"{"block":[128,1,1]}"#), None);
        assert_eq!(grid_blocks(r#"{"grid":"x"}"#), None);
    }

    #[test]
    fn only_turnaround_gaps_are_closed() {
        let u = [(0, 5_000), (6_000, 11_000), (11_900, 12_000), (25_000, 30_000)];
        assert_eq!(close_turnarounds(&u), [(0, 12_000), (25_000, 30_000)]);
        assert!(close_turnarounds(&[]).is_empty());
    }
}

#[cfg(test)]
mod store_tests {
    use super::*;
    use crate::test_util::{finished, span};
    use strobe_model::IdKey;

    /// One GPU sampled every 10 ns from 0 to 100: a wide kernel over 0–40 with SMs Active 90,
    /// then a one-block kernel over 40–90 (args `grid` [1,1,1]) with SMs Active 5, idle after.
    #[test]
    fn a_kernel_busy_stretch_with_few_sms_active_is_found_with_its_kernel() {
        let mut b = strobe_store::StoreBuilder::in_memory();
        let (wide, tiny, cat) = (b.intern("wide_gemm"), b.intern("spin_one_block"), b.intern("kernel"));
        let lane = b.lane(LaneKind::GpuStream { device: 0, stream: 7 });
        b.push_span(span(lane, 0, 40, wide, cat, SpanKind::Kernel)).unwrap();
        let args = br#"{"grid":[1,1,1],"block":[1,1,1]}"#;
        b.push_span(strobe_store::SpanInput { args, ..span(lane, 40, 90, tiny, cat, SpanKind::Kernel) }).unwrap();
        let sms: Vec<(i64, f64)> = (0..10)
            .map(|i| {
                (
                    i * 10,
                    if i < 4 {
                        90.0
                    } else if i < 9 {
                        5.0
                    } else {
                        0.0
                    },
                )
            })
            .collect();
        let tensor: Vec<(i64, f64)> = (0..10).map(|i| (i * 10, if i < 4 { 70.0 } else { 0.0 })).collect();
        let key = IdKey::Str(strobe_model::gpu_metrics::NAME.into());
        let name = strobe_model::gpu_metrics::NAME;
        b.extend_device_counter(0, key.clone(), name, "SMs Active [Throughput %]", sms);
        b.extend_device_counter(0, key, name, "Tensor Active [Throughput %]", tensor);
        let store = finished(b);
        let got = busy_not_working(&store, 0, &[(0, 90)]).unwrap();
        // periods 0..90 are kernel-busy (9 × 10 ns); 40..90 of them have SMs Active 5
        assert_eq!((got.busy_ns, got.low_ns), (90, 50));
        assert!((got.low_pct - 50.0 * 100.0 / 90.0).abs() < 1e-9);
        assert_eq!(got.stretches.len(), 1);
        let s = &got.stretches[0];
        assert_eq!((s.start_ns, s.end_ns, s.samples), (40, 90, 5));
        assert_eq!((s.sms_active, s.tensor_active), (5.0, Some(0.0)));
        assert_eq!((s.kernel.as_deref(), s.kernel_ns, s.grid_blocks), (Some("spin_one_block"), 50, Some(1)));
        // the same with no kernel running: nothing is busy
        assert!(busy_not_working(&store, 0, &[]).is_none());
    }
}
