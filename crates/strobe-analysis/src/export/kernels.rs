//! The kernel table of `strobe report`, every kernel name (not only the top N).

use super::sink::{Cell, Sink};
use std::io::Write;
use strobe_store::Store;

pub const COLUMNS: &[&str] = &["name", "count", "total_ns", "mean_ns", "min_ns", "max_ns", "pct_kernel_time"];

pub fn write<W: Write>(store: &Store, sink: &mut Sink<W>) -> std::io::Result<u64> {
    let stats = crate::kernels::kernel_stats(store);
    for k in &stats {
        sink.row(&[
            Cell::Str(&k.name),
            Cell::UInt(k.count),
            Cell::Int(k.total_ns),
            Cell::Int(k.mean_ns),
            Cell::Int(k.min_ns),
            Cell::Int(k.max_ns),
            Cell::Float(k.pct_kernel_time),
        ])?;
    }
    Ok(stats.len() as u64)
}
