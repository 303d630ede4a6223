//! One row per counter sample per series (a `C` event with args `{"a": 1, "b": 2}` gives
//! two rows), ordered by (pid, name, series, ts): process counters first, then the series
//! that measure a GPU (its memory water level), which name their `device`.

use super::sink::{Cell, Sink};
use std::io::Write;
use strobe_store::Store;

pub const COLUMNS: &[&str] = &["pid", "device", "name", "series", "ts_ns", "value"];

pub fn write<W: Write>(store: &Store, sink: &mut Sink<W>) -> std::io::Result<u64> {
    let mut rows = 0u64;
    for c in &store.counters {
        let (ts, val) = store.counter_points(c);
        for (t, v) in ts.iter().zip(val) {
            let device = c.device.map_or(Cell::Null, Cell::Int);
            sink.row(&[
                Cell::Id(&c.pid),
                device,
                Cell::Str(&c.name),
                Cell::Str(&c.series),
                Cell::Int(*t),
                Cell::Float(*v),
            ])?;
        }
        rows += ts.len() as u64;
    }
    Ok(rows)
}
