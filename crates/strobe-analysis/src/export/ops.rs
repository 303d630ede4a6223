//! The op table (torch.profiler's `key_averages(group_by_input_shape=True)`): one row per
//! event name and input shapes, by device total (`op_table`).

use super::sink::{Cell, Sink};
use std::io::Write;
use strobe_store::Store;

pub const COLUMNS: &[&str] = &[
    "name",
    "input_shapes",
    "kind",
    "on_device",
    "calls",
    "cpu_total_ns",
    "self_cpu_ns",
    "cpu_mean_ns",
    "device_total_ns",
    "self_device_ns",
];

pub fn write<W: Write>(store: &Store, sink: &mut Sink<W>) -> std::io::Result<u64> {
    let t = crate::op_table::op_table(store);
    for r in &t.by_shape {
        sink.row(&[
            Cell::Str(&r.name),
            Cell::Str(r.shapes.as_deref().unwrap_or("[]")),
            Cell::Str(r.kind),
            Cell::Json(if r.on_device { "true" } else { "false" }),
            Cell::UInt(r.count),
            Cell::Int(r.cpu_total_ns),
            Cell::Int(r.self_cpu_ns),
            Cell::Int(r.cpu_mean_ns()),
            Cell::Int(r.device_total_ns),
            Cell::Int(r.self_device_ns),
        ])?;
    }
    Ok(t.by_shape.len() as u64)
}
