//! Area selection (Shift-drag on the timeline): what is in the time range on the covered
//! lanes — count and total (clipped to the range), pivoted as the user picks: by name and
//! lane, by name alone, by lane alone, or by the value of one arg (a kernel's grid, an op's
//! input shapes, a copy's kind) — Perfetto's area-selection pivot table.

use crate::view_ctx::ViewCtx;
use crate::workspace::{TraceId, Workspace};
use std::collections::HashMap;
use strobe_analysis::report::fmt_ns;

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
    trace: TraceId,
    lane: u32,
    span: u32,
    clipped_ns: i64,
}

/// Spans collected from one area at most (the sums stay exact up to here).
const MAX_SPANS: usize = 4_000_000;

#[derive(Default)]
pub struct AreaTable {
    pub range: Option<(i64, i64)>,
    pub lanes: usize,
    pub pivot: Pivot,
    pub rows: Vec<AreaRow>,
    /// Arg keys found on the spans in the area (the Arg pivot's choices).
    pub arg_keys: Vec<String>,
    spans: Vec<InArea>,
    /// The spans beyond `MAX_SPANS` (not in the rows).
    pub dropped: u64,
}

impl AreaTable {
    pub fn compute(&mut self, ws: &Workspace, t0: i64, t1: i64, lanes: &[(TraceId, u32)]) {
        self.range = Some((t0, t1));
        self.lanes = lanes.len();
        self.spans.clear();
        self.dropped = 0;
        for &(id, lane) in lanes {
            let Some(t) = ws.trace(id) else { continue };
            let st = &*t.store;
            let v = st.lane_spans(lane);
            // the area is on the shared axis; this trace's own clock is offset from it
            let (a, b) = (t.to_local(t0), t.to_local(t1));
            let (spans, dropped) = (&mut self.spans, &mut self.dropped);
            st.query_window(lane, a, b, |i| {
                if spans.len() >= MAX_SPANS {
                    *dropped += 1;
                    return;
                }
                spans.push(InArea {
                    trace: id,
                    lane,
                    span: v.span[i],
                    clipped_ns: v.ends[i].min(b) - v.starts[i].max(a),
                });
            });
        }
        self.arg_keys = arg_keys(ws, &self.spans);
        if matches!(&self.pivot, Pivot::Arg(k) if !self.arg_keys.contains(k)) {
            self.pivot = Pivot::NameAndLane;
        }
        self.regroup(ws);
    }

    /// Groups the area's spans by the current pivot.
    pub fn regroup(&mut self, ws: &Workspace) {
        let mut per: HashMap<String, AreaRow> = HashMap::new();
        for s in &self.spans {
            let Some(t) = ws.trace(s.trace) else { continue };
            let st = &*t.store;
            let name = st.string(st.span_meta(s.span).name);
            let lane = st.lanes.get(s.lane as usize).map(|l| l.name.as_str()).unwrap_or("");
            let lane = if ws.traces.len() > 1 { format!("{} · {lane}", t.label) } else { lane.to_string() };
            let key = match &self.pivot {
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
        self.rows = rows;
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
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
        });
        if self.pivot != before {
            self.regroup(cx.ws);
        }
        use egui_extras::{Column, TableBuilder};
        let (first, second) = match &self.pivot {
            Pivot::NameAndLane => ("Name", "Lane"),
            Pivot::Name => ("Name", ""),
            Pivot::Lane => ("Lane", ""),
            Pivot::Arg(_) => ("Value", ""),
        };
        TableBuilder::new(ui)
            .id_salt("area_table")
            .striped(true)
            .column(Column::remainder().at_least(200.0).clip(true))
            .column(Column::auto().at_least(160.0).clip(true))
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
                    row.col(|ui| {
                        ui.add(egui::Label::new(c1).truncate());
                    });
                    row.col(|ui| {
                        ui.add(egui::Label::new(c2).truncate());
                    });
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

/// The arg keys of the spans (sampled: the first 500 of each lane, so a lane's own keys are
/// found however many spans the others have), most common first.
fn arg_keys(ws: &Workspace, spans: &[InArea]) -> Vec<String> {
    let mut n: HashMap<String, usize> = HashMap::new();
    let mut per_lane: HashMap<(TraceId, u32), usize> = HashMap::new();
    for s in spans {
        let seen = per_lane.entry((s.trace, s.lane)).or_default();
        *seen += 1;
        if *seen > 500 {
            continue;
        }
        let Some(t) = ws.trace(s.trace) else { continue };
        if let Ok(serde_json::Value::Object(m)) = serde_json::from_str(&t.store.span_args(s.span)) {
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
