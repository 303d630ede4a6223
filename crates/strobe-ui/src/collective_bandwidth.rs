//! A collective's bytes, group and bandwidth in the details pane and the timeline's tooltip:
//! from its own record over its own duration (`span_bandwidth`), and, when the ranks are
//! compared, the matched instance's transfer after every rank arrived.

use crate::workspace::Workspace;
use strobe_analysis::ranks::span_bandwidth::{span_bandwidth, SpanBandwidth};
use strobe_analysis::report::fmt_ns;
use strobe_store::Store;

fn gbps(v: Option<f64>) -> String {
    v.map_or_else(|| "—".into(), |x| format!("{x:.2} GB/s"))
}

fn size(b: &SpanBandwidth) -> String {
    match (b.bytes, &b.size_unknown) {
        (Some(n), _) => format!("{} ({n} B)", crate::units::bytes(n as f64)),
        (None, Some(why)) => format!("size unknown: {why}"),
        (None, None) => "size unknown".into(),
    }
}

fn group(b: &SpanBandwidth) -> String {
    match (&b.group, b.group_size) {
        (Some(g), Some(n)) => format!("{g}, {n} ranks"),
        (Some(g), None) => g.clone(),
        (None, Some(n)) => format!("not recorded, {n} ranks"),
        (None, None) => "not recorded".into(),
    }
}

/// The matched instance of `span` (trace `ti`), from the ranks comparison: (transfer ns,
/// algbw, busbw, group).
fn matched(ws: &Workspace, ti: usize, span: u32) -> Option<(i64, Option<f64>, Option<f64>, String)> {
    let c = ws.collectives.as_ref()?;
    let t = ws.traces.get(ti)?;
    c.instance_of(t.id, t.store.span_start(span), t.store.span_end(span))
}

/// The rows of the details pane's Collective section (label, value).
pub fn rows(ws: &Workspace, ti: usize, span: u32) -> Option<Vec<(&'static str, String)>> {
    let st: &Store = &ws.traces.get(ti)?.store;
    let b = span_bandwidth(st, span)?;
    let mut out = vec![
        ("collective", format!("{} ({})", b.kind, b.name)),
        ("group", group(&b)),
        ("bytes", size(&b)),
        ("own duration", fmt_ns(b.dur_ns)),
        ("algbw (own duration)", gbps(b.algbw_gbps)),
        ("busbw (own duration)", gbps(b.busbw_gbps)),
    ];
    if let Some((transfer, alg, bus, g)) = matched(ws, ti, span) {
        out.push(("matched on group", g));
        out.push(("transfer (after all arrived)", fmt_ns(transfer)));
        out.push(("algbw", gbps(alg)));
        out.push(("busbw", gbps(bus)));
    }
    Some(out)
}

/// The details pane's Collective section, when the span is a collective.
pub fn details(ui: &mut egui::Ui, ws: &Workspace, ti: usize, span: u32) {
    let Some(rows) = rows(ws, ti, span) else { return };
    ui.separator();
    ui.strong("Collective");
    egui::Grid::new("collective_grid").num_columns(2).striped(true).show(ui, |ui| {
        for (k, v) in rows {
            ui.label(k);
            ui.label(v);
            ui.end_row();
        }
    });
    ui.weak("Bus bandwidth as nccl-tests defines it. Its own duration includes any wait for a late rank; the transfer counts from the last arrival.");
}

/// The tooltip's lines for a collective span (empty when it is none).
pub fn tooltip(ws: &Workspace, ti: usize, span: u32) -> String {
    let Some(st) = ws.traces.get(ti).map(|t| &*t.store) else { return String::new() };
    let Some(b) = span_bandwidth(st, span) else { return String::new() };
    let mut s = format!(
        "\n{} on group {}\n{}\nalgbw {} · busbw {} (own duration)",
        b.kind,
        group(&b),
        size(&b),
        gbps(b.algbw_gbps),
        gbps(b.busbw_gbps)
    );
    if let Some((transfer, alg, bus, _)) = matched(ws, ti, span) {
        s += &format!("\ntransfer {} after all arrived: algbw {} · busbw {}", fmt_ns(transfer), gbps(alg), gbps(bus));
    }
    s
}
