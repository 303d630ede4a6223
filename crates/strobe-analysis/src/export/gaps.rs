//! The largest idle gaps (`gaps`): one row per gap at least the default threshold long,
//! longest first, with its cause and the op that held the launching thread.

use super::sink::{Cell, Sink};
use crate::figures::TraceFigures;
use std::io::Write;
use strobe_store::Store;

pub const COLUMNS: &[&str] =
    &["device", "start_ns", "end_ns", "len_ns", "cause", "held_by", "held_by_start_ns", "held_by_end_ns"];

/// Every long gap, not only the report's top ones.
pub fn write<W: Write>(store: &Store, sink: &mut Sink<W>) -> std::io::Result<u64> {
    let figs = TraceFigures::default();
    let unions = &figs.activity(store).unions;
    let gaps = crate::gaps::largest_gaps(store, unions, crate::idle::DEFAULT_THRESHOLD_NS, usize::MAX);
    let time = |s: Option<u32>, f: fn(&Store, u32) -> i64| s.map_or(Cell::Null, |s| Cell::Int(f(store, s)));
    for g in &gaps {
        sink.row(&[
            Cell::Int(g.device),
            Cell::Int(g.start_ns),
            Cell::Int(g.end_ns),
            Cell::Int(g.len_ns),
            Cell::Str(g.cause.label()),
            g.held_by_name.as_deref().map_or(Cell::Null, Cell::Str),
            time(g.held_by, Store::span_start),
            time(g.held_by, Store::span_end),
        ])?;
    }
    Ok(gaps.len() as u64)
}
