//! "Where does memory go over time" from a trace's own counters: each GPU's memory water
//! level (the `strobe_model::gpu_memory` series that Kineto `[memory]` events and nsys
//! memory-usage events become), its peaks and when they happen. Snapshots have their own,
//! finer analysis in `memory`.

use serde::Serialize;
use strobe_model::gpu_memory;
use strobe_store::Store;

/// The water level's peaks on one device.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct MemoryPeak {
    pub device: i64,
    /// Highest allocated bytes (live tensors); `None` when the source only knows reserved.
    pub peak_allocated_bytes: Option<u64>,
    /// Highest reserved bytes (what the allocator holds from the driver).
    pub peak_reserved_bytes: Option<u64>,
    /// When the allocated peak is first reached (the reserved peak's time when there is no
    /// allocated series).
    pub at_ns: i64,
    /// When the reserved peak is first reached.
    pub reserved_at_ns: Option<i64>,
    /// Samples of the allocated (else reserved) series.
    pub samples: u64,
}

/// The highest value of a series and the first time it is reached (points are in time order;
/// among equal times, in source order).
fn peak(ts: &[i64], vals: &[f64]) -> Option<(u64, i64)> {
    let mut best: Option<(f64, i64)> = None;
    for (&t, &v) in ts.iter().zip(vals) {
        if best.is_none_or(|(b, _)| v > b) {
            best = Some((v, t));
        }
    }
    best.map(|(v, t)| (v.max(0.0).round() as u64, t))
}

/// The higher of two peaks; the earlier one when they are equal.
fn higher(a: Option<(u64, i64)>, b: Option<(u64, i64)>) -> Option<(u64, i64)> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.0 > x.0 || (y.0 == x.0 && y.1 < x.1) { y } else { x }),
        (x, None) => x,
        (None, y) => y,
    }
}

/// The device of a series that makes a memory water level: a device's allocated or reserved
/// bytes, with points.
fn level_device(c: &strobe_store::CounterSeries) -> Option<i64> {
    let level = c.name == gpu_memory::NAME && (c.series == gpu_memory::ALLOCATED || c.series == gpu_memory::RESERVED);
    c.device.filter(|_| level && c.end > c.begin)
}

/// Whether `device` has a memory water level (an entry in `memory_peaks`): read from the
/// series' lengths alone, no point scanned.
pub fn has_water_level(store: &Store, device: i64) -> bool {
    store.counters.iter().any(|c| level_device(c) == Some(device))
}

/// One entry per device with a memory water level, by device. Several series of one device
/// (several recording processes) are taken together: the peak over all of them.
pub fn memory_peaks(store: &Store) -> Vec<MemoryPeak> {
    // device → (allocated peak, reserved peak, allocated samples, reserved samples)
    type Acc = (Option<(u64, i64)>, Option<(u64, i64)>, u64, u64);
    let mut by_dev: std::collections::BTreeMap<i64, Acc> = Default::default();
    for c in &store.counters {
        let Some(device) = level_device(c) else { continue };
        let (ts, vals) = store.counter_points(c);
        let e = by_dev.entry(device).or_default();
        if c.series == gpu_memory::ALLOCATED {
            e.0 = higher(e.0, peak(ts, vals));
            e.2 += ts.len() as u64;
        } else if c.series == gpu_memory::RESERVED {
            e.1 = higher(e.1, peak(ts, vals));
            e.3 += ts.len() as u64;
        }
    }
    by_dev
        .into_iter()
        .filter_map(|(device, (alloc, reserved, na, nr))| {
            let at_ns = alloc.or(reserved)?.1;
            Some(MemoryPeak {
                device,
                peak_allocated_bytes: alloc.map(|p| p.0),
                peak_reserved_bytes: reserved.map(|p| p.0),
                at_ns,
                reserved_at_ns: reserved.map(|p| p.1),
                samples: if alloc.is_some() { na } else { nr },
            })
        })
        .collect()
}
