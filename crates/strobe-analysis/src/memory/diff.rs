//! Two snapshots compared, per device: what each allocated peak is made of (per category and
//! per source line, each with its delta; the deltas add up to the difference of the peaks),
//! which segments one has that the other has not, and the allocator's figures side by side.

use super::breakdown::PeakBreakdown;
use super::categories::Category;
use super::{bytes, DeviceMemory, MemoryReport};
use rustc_hash::FxHashMap;
use serde::Serialize;
use strobe_model::memory::MemorySnapshot;

#[derive(Clone, Debug, Serialize)]
pub struct MemoryDiff {
    pub a: String,
    pub b: String,
    pub devices: Vec<DeviceDiff>,
}

#[derive(Clone, Debug, Serialize)]
pub struct DeviceDiff {
    pub device: i64,
    pub peak_allocated_a: i64,
    pub peak_allocated_b: i64,
    /// b − a; equals the sum of the category deltas and of the source deltas.
    pub peak_allocated_delta: i64,
    pub categories: Vec<CategoryDelta>,
    /// Largest |delta| first.
    pub by_source: Vec<SourceDelta>,
    pub segments: SegmentDelta,
    /// reserved, allocated, peaks, inactive, fragmentation, rounding waste of each.
    pub side_by_side: Vec<Figure>,
    /// What each side's classification rested on.
    pub note_a: String,
    pub note_b: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct CategoryDelta {
    pub category: Category,
    pub a_bytes: i64,
    pub b_bytes: i64,
    pub delta: i64,
}

#[derive(Clone, Debug, Serialize)]
pub struct SourceDelta {
    pub frame: String,
    pub a_bytes: i64,
    pub b_bytes: i64,
    pub delta: i64,
    /// The category of the side holding more of its bytes.
    pub category: Category,
}

#[derive(Clone, Debug, Serialize)]
pub struct SegmentDelta {
    pub a_count: usize,
    pub b_count: usize,
    /// Segments of the same size and stream at another address (two processes seldom map
    /// memory at the same addresses): paired, neither added nor removed.
    pub moved: usize,
    /// In b, not in a (same address, size and stream; else same size and stream elsewhere).
    pub added: Vec<SegmentRef>,
    pub added_bytes: u64,
    /// In a, not in b.
    pub removed: Vec<SegmentRef>,
    pub removed_bytes: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct SegmentRef {
    pub address: u64,
    pub total_size: u64,
    pub stream: i64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Figure {
    pub name: &'static str,
    pub a: f64,
    pub b: f64,
}

/// Compares device by device (devices present on one side only are compared with nothing).
/// Both reports must carry their peak breakdowns (`analyse_with_breakdown`).
pub fn diff(
    a_name: &str,
    a: (&MemorySnapshot, &MemoryReport),
    b_name: &str,
    b: (&MemorySnapshot, &MemoryReport),
) -> MemoryDiff {
    let mut devices: Vec<i64> = a.1.devices.iter().chain(&b.1.devices).map(|d| d.device).collect();
    devices.sort_unstable();
    devices.dedup();
    let find = |r: &MemoryReport, d: i64| r.devices.iter().find(|x| x.device == d).cloned();
    MemoryDiff {
        a: a_name.into(),
        b: b_name.into(),
        devices: devices
            .into_iter()
            .map(|d| device_diff(d, a.0, find(a.1, d).as_ref(), b.0, find(b.1, d).as_ref()))
            .collect(),
    }
}

fn peak_of(m: Option<&DeviceMemory>) -> Option<&PeakBreakdown> {
    m.and_then(|m| m.peak_breakdown.as_ref())
}

pub fn device_diff(
    device: i64,
    sa: &MemorySnapshot,
    a: Option<&DeviceMemory>,
    sb: &MemorySnapshot,
    b: Option<&DeviceMemory>,
) -> DeviceDiff {
    let (pa, pb) = (peak_of(a), peak_of(b));
    // the breakdown's total is what its parts add up to (the replayed peak when the trace is
    // consistent with the final state)
    let peak = |p: Option<&PeakBreakdown>, m: Option<&DeviceMemory>| {
        p.map(|p| p.allocated_bytes).or(m.map(|m| m.peak_allocated_bytes)).unwrap_or(0)
    };
    let (peak_a, peak_b) = (peak(pa, a), peak(pb, b));
    let cat_bytes = |p: Option<&PeakBreakdown>, c: Category| {
        p.and_then(|p| p.categories.iter().find(|x| x.category == c)).map_or(0, |x| x.bytes)
    };
    let categories = Category::ALL
        .iter()
        .map(|&c| {
            let (x, y) = (cat_bytes(pa, c), cat_bytes(pb, c));
            CategoryDelta { category: c, a_bytes: x, b_bytes: y, delta: y - x }
        })
        .collect();
    let mut src: FxHashMap<&str, (i64, i64, Category, Category)> = FxHashMap::default();
    for s in pa.iter().flat_map(|p| &p.by_source) {
        let e = src.entry(&s.frame).or_insert((0, 0, s.category, s.category));
        e.0 += s.bytes;
        e.2 = s.category;
    }
    for s in pb.iter().flat_map(|p| &p.by_source) {
        let e = src.entry(&s.frame).or_insert((0, 0, s.category, s.category));
        e.1 += s.bytes;
        e.3 = s.category;
    }
    let mut by_source: Vec<SourceDelta> = src
        .into_iter()
        .map(|(frame, (x, y, ca, cb))| SourceDelta {
            frame: frame.to_string(),
            a_bytes: x,
            b_bytes: y,
            delta: y - x,
            category: if y >= x { cb } else { ca },
        })
        .collect();
    by_source.sort_by(|p, q| q.delta.abs().cmp(&p.delta.abs()).then_with(|| p.frame.cmp(&q.frame)));
    let segs = |s: &MemorySnapshot| -> Vec<SegmentRef> {
        s.segments
            .iter()
            .filter(|g| g.device == device)
            .map(|g| SegmentRef { address: g.address, total_size: g.total_size, stream: g.stream })
            .collect()
    };
    let (ga, gb) = (segs(sa), segs(sb));
    let key = |g: &SegmentRef| (g.address, g.total_size, g.stream);
    let in_a: rustc_hash::FxHashSet<_> = ga.iter().map(key).collect();
    let in_b: rustc_hash::FxHashSet<_> = gb.iter().map(key).collect();
    let mut added: Vec<SegmentRef> = gb.iter().filter(|g| !in_a.contains(&key(g))).cloned().collect();
    let mut removed: Vec<SegmentRef> = ga.iter().filter(|g| !in_b.contains(&key(g))).cloned().collect();
    // what is left unpaired: pair by size and stream, in address order
    let mut spare: FxHashMap<(u64, i64), Vec<usize>> = FxHashMap::default();
    for (i, g) in removed.iter().enumerate().rev() {
        spare.entry((g.total_size, g.stream)).or_default().push(i);
    }
    let mut paired = vec![false; removed.len()];
    let mut moved = 0;
    added.retain(|g| match spare.get_mut(&(g.total_size, g.stream)).and_then(Vec::pop) {
        Some(i) => {
            paired[i] = true;
            moved += 1;
            false
        }
        None => true,
    });
    let mut i = 0;
    removed.retain(|_| {
        i += 1;
        !paired[i - 1]
    });
    added.sort_by(|p, q| q.total_size.cmp(&p.total_size).then(p.address.cmp(&q.address)));
    removed.sort_by(|p, q| q.total_size.cmp(&p.total_size).then(p.address.cmp(&q.address)));
    let sum = |v: &[SegmentRef]| v.iter().fold(0u64, |s, g| s.saturating_add(g.total_size));
    let segments = SegmentDelta {
        a_count: ga.len(),
        b_count: gb.len(),
        moved,
        added_bytes: sum(&added),
        removed_bytes: sum(&removed),
        added,
        removed,
    };
    let fig =
        |name: &'static str, f: fn(&DeviceMemory) -> f64| Figure { name, a: a.map_or(0.0, f), b: b.map_or(0.0, f) };
    let side_by_side = vec![
        fig("peak_allocated_bytes", |m| m.peak_allocated_bytes as f64),
        fig("peak_reserved_bytes", |m| m.peak_reserved_bytes as f64),
        fig("reserved_bytes", |m| m.reserved_bytes as f64),
        fig("allocated_bytes", |m| m.allocated_bytes as f64),
        fig("inactive_bytes", |m| m.inactive_bytes as f64),
        fig("largest_inactive_block", |m| m.largest_inactive_block as f64),
        fig("fragmentation", |m| m.fragmentation),
        fig("rounding_waste_bytes", |m| m.rounding_waste_bytes as f64),
        fig("segments", |m| m.segments as f64),
    ];
    DeviceDiff {
        device,
        peak_allocated_a: peak_a,
        peak_allocated_b: peak_b,
        peak_allocated_delta: peak_b - peak_a,
        categories,
        by_source,
        segments,
        side_by_side,
        note_a: pa.map_or_else(|| "no allocation trace".into(), |p| p.note.clone()),
        note_b: pb.map_or_else(|| "no allocation trace".into(), |p| p.note.clone()),
    }
}

fn signed(d: i64) -> String {
    if d == 0 {
        "0".into()
    } else if d < 0 {
        format!("-{}", bytes(d.unsigned_abs()))
    } else {
        format!("+{}", bytes(d as u64))
    }
}

pub fn to_text(r: &MemoryDiff, top: usize) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let _ = writeln!(o, "Memory snapshots compared\n  A: {}\n  B: {}", r.a, r.b);
    for d in &r.devices {
        let _ = writeln!(
            o,
            "\nDevice {}: peak allocated {} -> {} ({})",
            d.device,
            bytes(d.peak_allocated_a.max(0) as u64),
            bytes(d.peak_allocated_b.max(0) as u64),
            signed(d.peak_allocated_delta)
        );
        let _ = writeln!(o, "  A: {}\n  B: {}", d.note_a, d.note_b);
        let _ = writeln!(o, "  {:<16} {:>12} {:>12} {:>13}", "category", "A", "B", "delta");
        for c in d.categories.iter().filter(|c| c.a_bytes != 0 || c.b_bytes != 0) {
            let _ = writeln!(
                o,
                "  {:<16} {:>12} {:>12} {:>13}",
                c.category.as_str(),
                bytes(c.a_bytes.max(0) as u64),
                bytes(c.b_bytes.max(0) as u64),
                signed(c.delta)
            );
        }
        let _ = writeln!(o, "  by source line at the peak, largest change first:");
        for s in d.by_source.iter().filter(|s| s.delta != 0).take(top) {
            let _ = writeln!(
                o,
                "  {:>12} {:>12} {:>13}  {:<15} {}",
                bytes(s.a_bytes.max(0) as u64),
                bytes(s.b_bytes.max(0) as u64),
                signed(s.delta),
                s.category.as_str(),
                s.frame
            );
        }
        let changed = d.by_source.iter().filter(|s| s.delta != 0).count();
        if changed > top {
            let _ = writeln!(o, "  … {} more changed lines (--json lists all)", changed - top);
        }
        let g = &d.segments;
        let _ = writeln!(
            o,
            "  segments: {} -> {}; {} of the same size elsewhere, {} added ({}), {} removed ({})",
            g.a_count,
            g.b_count,
            g.moved,
            g.added.len(),
            bytes(g.added_bytes),
            g.removed.len(),
            bytes(g.removed_bytes)
        );
        let _ = writeln!(o, "  {:<24} {:>12} {:>12}", "figure", "A", "B");
        for f in &d.side_by_side {
            let v = |x: f64| {
                if f.name == "fragmentation" {
                    format!("{x:.3}")
                } else if f.name == "segments" {
                    format!("{x}")
                } else {
                    bytes(x.max(0.0) as u64)
                }
            };
            let _ = writeln!(o, "  {:<24} {:>12} {:>12}", f.name, v(f.a), v(f.b));
        }
    }
    o
}
