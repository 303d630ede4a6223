//! One row per resolved flow: explicit flows (trace-event `s`/`t`/`f` chains bound by the
//! format's rules, v2 `bind_id`/`flow_in`/`flow_out` links) and launch → GPU work links by
//! correlation id. Each end is the span the flow binds to.

use super::lanes::LaneIds;
use super::sink::{opt_id, Cell, Sink};
use std::io::Write;
use strobe_store::{Store, FLOW_CORRELATION};

pub const COLUMNS: &[&str] = &[
    "flow_id",
    "from_ts_ns",
    "from_name",
    "from_pid",
    "from_tid",
    "to_ts_ns",
    "to_name",
    "to_pid",
    "to_tid",
    "category",
    "kind",
    "from_event_ts_ns",
    "to_event_ts_ns",
];

pub fn write<W: Write>(store: &Store, sink: &mut Sink<W>) -> std::io::Result<u64> {
    let ids = LaneIds::of_store(store);
    let flows = store.flows();
    let (starts, _) = store.span_times();
    let start = |s: u32| starts.get(s as usize).copied().unwrap_or(0);
    // Sorted by the bound spans' start times: an index, the only per-row memory here.
    let mut order: Vec<u32> = (0..flows.len() as u32).collect();
    order.sort_by_key(|&i| {
        let f = &flows[i as usize];
        (start(f.from), start(f.to), f.from, f.to, f.kind, f.id, i)
    });
    for &i in &order {
        let f = &flows[i as usize];
        let from = ids.get(store.span_meta(f.from).lane as usize).and_then(|x| x.as_ref());
        let to = ids.get(store.span_meta(f.to).lane as usize).and_then(|x| x.as_ref());
        sink.row(&[
            Cell::UInt(f.id),
            Cell::Int(start(f.from)),
            Cell::Str(store.span_name(f.from)),
            opt_id(from.map(|x| &x.pid)),
            opt_id(from.and_then(|x| x.tid.as_ref())),
            Cell::Int(start(f.to)),
            Cell::Str(store.span_name(f.to)),
            opt_id(to.map(|x| &x.pid)),
            opt_id(to.and_then(|x| x.tid.as_ref())),
            Cell::Str(store.string(f.cat)),
            Cell::Str(if f.kind == FLOW_CORRELATION { "correlation" } else { "flow" }),
            Cell::Int(f.from_ts),
            Cell::Int(f.to_ts),
        ])?;
    }
    Ok(order.len() as u64)
}
