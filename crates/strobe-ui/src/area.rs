//! Area selection (Shift-drag on the timeline): what is in the time range on the covered
//! lanes — count and total (clipped to the range) per name, per lane.

use crate::view_ctx::ViewCtx;
use crate::workspace::{TraceId, Workspace};
use strobe_analysis::report::fmt_ns;

#[derive(Clone, Debug, PartialEq)]
pub struct AreaRow {
    pub trace: TraceId,
    pub lane: u32,
    pub name: String,
    pub count: u64,
    pub total_ns: i64,
}

#[derive(Default)]
pub struct AreaTable {
    pub range: Option<(i64, i64)>,
    pub rows: Vec<AreaRow>,
}

impl AreaTable {
    pub fn compute(&mut self, ws: &Workspace, t0: i64, t1: i64, lanes: &[(TraceId, u32)]) {
        self.range = Some((t0, t1));
        self.rows.clear();
        for &(id, lane) in lanes {
            let Some(t) = ws.trace(id) else { continue };
            let st = &*t.store;
            let v = st.lane_view(lane);
            // the area is on the shared axis; this trace's own clock is offset from it
            let (t0, t1) = (t.to_local(t0), t.to_local(t1));
            let mut per: std::collections::HashMap<u32, (u64, i64)> = Default::default();
            st.query_window(lane, t0, t1, |i| {
                let sid = v.span[i];
                let e = per.entry(st.span_meta(sid).name).or_default();
                e.0 += 1;
                e.1 += v.ends[i].min(t1) - v.starts[i].max(t0);
            });
            for (name, (count, total)) in per {
                self.rows.push(AreaRow { trace: id, lane, name: st.string(name).to_string(), count, total_ns: total });
            }
        }
        self.rows.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then_with(|| a.name.cmp(&b.name)));
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        let ws = cx.ws;
        let Some((a, b)) = self.range else {
            ui.weak("Shift-drag on the timeline to select an area.");
            return;
        };
        ui.label(format!("{} selected · {} names on {} lanes", fmt_ns(b - a), self.rows.len(), {
            let mut l: Vec<_> = self.rows.iter().map(|r| (r.trace, r.lane)).collect();
            l.sort();
            l.dedup();
            l.len()
        }));
        use egui_extras::{Column, TableBuilder};
        TableBuilder::new(ui)
            .id_salt("area_table")
            .striped(true)
            .column(Column::auto().at_least(160.0).clip(true))
            .column(Column::remainder().at_least(200.0).clip(true))
            .columns(Column::auto().at_least(70.0), 2)
            .header(20.0, |mut h| {
                for s in ["Lane", "Name", "Count", "Total"] {
                    h.col(|ui| {
                        ui.strong(s);
                    });
                }
            })
            .body(|body| {
                body.rows(18.0, self.rows.len(), |mut row| {
                    let r = &self.rows[row.index()];
                    let lane = ws
                        .store(r.trace)
                        .and_then(|s| s.lanes.get(r.lane as usize))
                        .map(|l| l.name.clone())
                        .unwrap_or_default();
                    row.col(|ui| {
                        ui.add(egui::Label::new(lane).truncate());
                    });
                    row.col(|ui| {
                        ui.add(egui::Label::new(&r.name).truncate());
                    });
                    row.col(|ui| {
                        ui.label(r.count.to_string());
                    });
                    row.col(|ui| {
                        ui.label(fmt_ns(r.total_ns));
                    });
                });
            });
    }
}
