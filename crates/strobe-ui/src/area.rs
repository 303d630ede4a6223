//! Area selection (Shift-drag on the timeline): what is in the time range on the covered
//! lanes — count and total (clipped to the range), pivoted as the user picks: by name and
//! lane, by name alone, by lane alone, or by the value of one arg (a kernel's grid, an op's
//! input shapes, a copy's kind) — Perfetto's area-selection pivot table.

use crate::jobs::{Pending, Poll};
use crate::view_ctx::ViewCtx;
use crate::workspace::{TraceId, Workspace};
use std::collections::HashMap;
use std::sync::Arc;
use strobe_analysis::report::fmt_ns;
use strobe_store::Store;

#[derive(Clone, Debug, PartialEq)]
pub struct AreaRow {
    /// What the row groups by, as shown ("name · lane", the name, the lane, or the arg value).
    pub key: String,
    pub name: String,
    pub lane: String,
    pub count: u64,
    pub total_ns: i64,
}

/// How the rows are grouped.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Pivot {
    #[default]
    NameAndLane,
    Name,
    Lane,
    /// The value of this arg of each span ("(none)" where a span lacks it).
    Arg(String),
}

/// One span in the area: which, and how much of it is inside.
#[derive(Clone, Copy, Debug)]
struct InArea {
    /// Index into the area's traces.
    trace: usize,
    lane: u32,
    span: u32,
    clipped_ns: i64,
}

/// Spans collected from one area at most (the sums stay exact up to here).
const MAX_SPANS: usize = 4_000_000;

/// What the area's jobs read of one trace: its store, its clock's offset on the shared axis
/// and how its lanes are named.
#[derive(Clone)]
struct AreaTrace {
    id: TraceId,
    store: Arc<Store>,
    offset_ns: i64,
    /// Put before each lane's name (several traces open), else empty.
    label: Option<String>,
}

/// A job's answer: the spans (found again only for a new area) and their rows.
struct Grouped {
    spans: Arc<Vec<InArea>>,
    dropped: u64,
    arg_keys: Vec<String>,
    pivot: Pivot,
    rows: Vec<AreaRow>,
}

#[derive(Default)]
pub struct AreaTable {
    pub range: Option<(i64, i64)>,
    pub lanes: usize,
    pub pivot: Pivot,
    pub rows: Vec<AreaRow>,
    /// Arg keys found on the spans in the area (the Arg pivot's choices).
    pub arg_keys: Vec<String>,
    spans: Arc<Vec<InArea>>,
    traces: Arc<Vec<AreaTrace>>,
    /// The spans beyond `MAX_SPANS` (not in the rows).
    pub dropped: u64,
    /// The spans being gathered or grouped: a large area holds millions, and grouping by an
    /// arg reads each one's args, so neither runs on the UI thread.
    job: Option<Pending<Grouped>>,
}

impl AreaTable {
    /// Gathers the spans of `lanes` in `[t0, t1)` (shared axis) and groups them, on a worker;
    /// `ctx` repaints when they are in.
    pub fn compute(&mut self, ws: &Workspace, t0: i64, t1: i64, lanes: &[(TraceId, u32)], ctx: &egui::Context) {
        self.range = Some((t0, t1));
        self.lanes = lanes.len();
        let several = ws.traces.len() > 1;
        let mut traces: Vec<AreaTrace> = Vec::new();
        let mut wanted: Vec<(usize, u32)> = Vec::with_capacity(lanes.len());
        for &(id, lane) in lanes {
            let Some(t) = ws.trace(id) else { continue };
            let i = traces.iter().position(|a| a.id == id).unwrap_or_else(|| {
                let label = several.then(|| t.label.clone());
                traces.push(AreaTrace { id, store: Arc::clone(&t.store), offset_ns: t.offset_ns, label });
                traces.len() - 1
            });
            wanted.push((i, lane));
        }
        let traces = Arc::new(traces);
        self.traces = Arc::clone(&traces);
        let pivot = self.pivot.clone();
        self.job = Some(Pending::spawn_ui(ctx, move || {
            let (spans, dropped) = gather(&traces, &wanted, t0, t1);
            let arg_keys = arg_keys(&traces, &spans);
            let pivot = match pivot {
                Pivot::Arg(k) if !arg_keys.contains(&k) => Pivot::NameAndLane,
                p => p,
            };
            let rows = group(&traces, &spans, &pivot);
            Grouped { spans: Arc::new(spans), dropped, arg_keys, pivot, rows }
        }));
    }

    /// Groups the area's spans by the current pivot, on a worker.
    pub fn regroup(&mut self, ctx: &egui::Context) {
        let (traces, spans, pivot) = (Arc::clone(&self.traces), Arc::clone(&self.spans), self.pivot.clone());
        let (dropped, arg_keys) = (self.dropped, self.arg_keys.clone());
        self.job = Some(Pending::spawn_ui(ctx, move || {
            let rows = group(&traces, &spans, &pivot);
            Grouped { spans, dropped, arg_keys, pivot, rows }
        }));
    }

    /// Whether spans are being gathered or grouped.
    pub fn busy(&self) -> bool {
        self.job.is_some()
    }

    /// Takes a finished job's rows.
    pub fn poll(&mut self) {
        let Some(job) = &self.job else { return };
        match job.poll() {
            Poll::Ready(g) => {
                self.job = None;
                (self.spans, self.dropped, self.arg_keys, self.pivot, self.rows) =
                    (g.spans, g.dropped, g.arg_keys, g.pivot, g.rows);
            }
            Poll::Running => {}
            Poll::Lost => self.job = None,
        }
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, _cx: &mut ViewCtx) {
        self.poll();
        let Some((a, b)) = self.range else {
            ui.weak("Shift-drag on the timeline to select an area.");
            return;
        };
        let before = self.pivot.clone();
        ui.horizontal_wrapped(|ui| {
            ui.label(format!(
                "{} selected · {} spans on {} lanes · {} rows",
                fmt_ns(b - a),
                self.spans.len(),
                self.lanes,
                self.rows.len()
            ));
            if self.dropped > 0 {
                ui.colored_label(
                    egui::Color32::from_rgb(230, 180, 60),
                    format!("({} more spans not counted)", self.dropped),
                );
            }
            ui.separator();
            ui.label("Pivot:");
            ui.selectable_value(&mut self.pivot, Pivot::NameAndLane, "name × lane");
            ui.selectable_value(&mut self.pivot, Pivot::Name, "name");
            ui.selectable_value(&mut self.pivot, Pivot::Lane, "lane");
            let arg = if let Pivot::Arg(k) = &self.pivot { k.clone() } else { "arg…".into() };
            let name = format!("Pivot by arg: {arg}");
            egui::ComboBox::from_id_salt("area_pivot_arg")
                .selected_text(arg)
                .show_ui(ui, |ui| {
                    for k in self.arg_keys.clone() {
                        ui.selectable_value(&mut self.pivot, Pivot::Arg(k.clone()), k);
                    }
                })
                .response
                // a name for screen readers (and kittest's accessibility check)
                .widget_info(|| egui::WidgetInfo::labeled(egui::Role::ComboBox, true, &name));
            if self.busy() {
                crate::jobs::busy_indicator(ui, "grouping…");
            }
        });
        if self.pivot != before {
            self.regroup(ui.ctx());
        }
        use egui_extras::{Column, TableBuilder};
        let (first, second) = match &self.pivot {
            Pivot::NameAndLane => ("Name", "Lane"),
            Pivot::Name => ("Name", ""),
            Pivot::Lane => ("Lane", ""),
            Pivot::Arg(_) => ("Value", ""),
        };
        TableBuilder::new(ui)
            // its own widths with a lane column and without
            .id_salt(("area_table", second.is_empty()))
            .striped(true)
            .column(Column::remainder().at_least(200.0).clip(true))
            // a lane's name carries its trace's and thread's ("rank 0 · thread 1234 (python)"):
            // room for it, elided past that with the whole name on hover
            .column(
                Column::initial(if second.is_empty() { 0.0 } else { 340.0 }).at_least(0.0).resizable(true).clip(true),
            )
            .columns(Column::auto().at_least(70.0), 3)
            .header(20.0, |mut h| {
                for s in [first, second, "Count", "Total", "% of area"] {
                    h.col(|ui| {
                        ui.strong(s);
                    });
                }
            })
            .body(|body| {
                let all: i64 = self.rows.iter().map(|r| r.total_ns).sum::<i64>().max(1);
                body.rows(18.0, self.rows.len(), |mut row| {
                    let r = &self.rows[row.index()];
                    let (c1, c2) = match &self.pivot {
                        Pivot::NameAndLane => (r.name.as_str(), r.lane.as_str()),
                        _ => (r.key.as_str(), ""),
                    };
                    for c in [c1, c2] {
                        row.col(|ui| {
                            if !c.is_empty() {
                                ui.add(egui::Label::new(c).truncate().show_tooltip_when_elided(false)).on_hover_text(c);
                            }
                        });
                    }
                    row.col(|ui| {
                        ui.label(r.count.to_string());
                    });
                    row.col(|ui| {
                        ui.label(fmt_ns(r.total_ns));
                    });
                    row.col(|ui| {
                        ui.label(format!("{:.1}%", 100.0 * r.total_ns as f64 / all as f64));
                    });
                });
            });
    }
}

/// The spans of `lanes` (index into `traces`, lane) in `[t0, t1)` on the shared axis, each
/// with the part of it inside; past `MAX_SPANS` only counted.
fn gather(traces: &[AreaTrace], lanes: &[(usize, u32)], t0: i64, t1: i64) -> (Vec<InArea>, u64) {
    let (mut spans, mut dropped) = (Vec::new(), 0u64);
    for &(ti, lane) in lanes {
        let t = &traces[ti];
        let v = t.store.lane_spans(lane);
        // the area is on the shared axis; this trace's own clock is offset from it
        let (a, b) = (t0 - t.offset_ns, t1 - t.offset_ns);
        t.store.query_window(lane, a, b, |i| {
            if spans.len() >= MAX_SPANS {
                dropped += 1;
                return;
            }
            spans.push(InArea { trace: ti, lane, span: v.span[i], clipped_ns: v.ends[i].min(b) - v.starts[i].max(a) });
        });
    }
    (spans, dropped)
}

/// The spans grouped by `pivot`, the largest total first.
fn group(traces: &[AreaTrace], spans: &[InArea], pivot: &Pivot) -> Vec<AreaRow> {
    let mut per: HashMap<String, AreaRow> = HashMap::new();
    for s in spans {
        let t = &traces[s.trace];
        let st = &*t.store;
        let name = st.string(st.span_meta(s.span).name);
        let lane = st.lanes.get(s.lane as usize).map(|l| l.name.as_str()).unwrap_or("");
        let lane = match &t.label {
            Some(label) => format!("{label} · {lane}"),
            None => lane.to_string(),
        };
        let key = match pivot {
            Pivot::NameAndLane => format!("{name}\u{1f}{lane}"),
            Pivot::Name => name.to_string(),
            Pivot::Lane => lane.clone(),
            Pivot::Arg(k) => arg_value(&st.span_args(s.span), k),
        };
        let e = per.entry(key.clone()).or_insert_with(|| AreaRow {
            key: key.replace('\u{1f}', " · "),
            name: name.to_string(),
            lane: lane.clone(),
            count: 0,
            total_ns: 0,
        });
        e.count += 1;
        e.total_ns += s.clipped_ns;
    }
    let mut rows: Vec<AreaRow> = per.into_values().collect();
    rows.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then_with(|| a.key.cmp(&b.key)));
    rows
}

/// The arg keys of the spans (sampled: the first 500 of each lane, so a lane's own keys are
/// found however many spans the others have), most common first.
fn arg_keys(traces: &[AreaTrace], spans: &[InArea]) -> Vec<String> {
    let mut n: HashMap<String, usize> = HashMap::new();
    let mut per_lane: HashMap<(usize, u32), usize> = HashMap::new();
    for s in spans {
        let seen = per_lane.entry((s.trace, s.lane)).or_default();
        *seen += 1;
        if *seen > 500 {
            continue;
        }
        if let Ok(serde_json::Value::Object(m)) = serde_json::from_str(&traces[s.trace].store.span_args(s.span)) {
            for k in m.keys() {
                *n.entry(k.clone()).or_default() += 1;
            }
        }
    }
    let mut keys: Vec<(String, usize)> = n.into_iter().collect();
    keys.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    keys.into_iter().map(|k| k.0).collect()
}

/// The value of arg `key` in a span's args (JSON text), as shown.
fn arg_value(args: &str, key: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(args).ok().as_ref().and_then(|v| v.get(key)) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "(none)".into(),
    }
}
