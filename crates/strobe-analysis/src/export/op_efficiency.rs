//! The per-op efficiency table (docs/efficiency.md): one row per op name with a formula, by
//! time lost.

use super::sink::{Cell, Sink};
use crate::efficiency::{efficiency, PeakOverride};
use std::io::Write;
use strobe_store::Store;

pub const COLUMNS: &[&str] = &[
    "name",
    "count",
    "flops",
    "bytes",
    "gpu_ns",
    "tflops_per_s",
    "gbps",
    "arithmetic_intensity",
    "pct_of_peak",
    "bound",
    "theoretical_ns",
    "efficiency",
    "lost_ns",
    "unit",
    "source",
];

pub fn write<W: Write>(store: &Store, peaks: PeakOverride, sink: &mut Sink<W>) -> std::io::Result<u64> {
    let e = efficiency(store, peaks);
    let f = |v: Option<f64>| v.map_or(Cell::Null, Cell::Float);
    for o in &e.ops {
        let x = &o.figures;
        sink.row(&[
            Cell::Str(&o.name),
            Cell::UInt(o.count),
            Cell::Float(o.flops),
            Cell::Float(o.bytes),
            Cell::Int(o.gpu_ns),
            f(x.tflops_per_s),
            f(x.gbps),
            f(x.arithmetic_intensity),
            f(x.pct_of_peak),
            x.bound.map_or(Cell::Null, |b| Cell::Str(b.as_str())),
            f(x.theoretical_ns),
            f(x.efficiency),
            f(x.lost_ns),
            Cell::Str(o.unit.as_str()),
            Cell::Str(&o.source),
        ])?;
    }
    Ok(e.ops.len() as u64)
}
