//! The Ops tab: torch.profiler's `key_averages().table()` for a trace
//! (`strobe_analysis::op_table`, the numbers of `strobe report`'s Ops section): per event name,
//! or per name and input shapes, calls, CPU total / self / mean and device total / self.
//! Sortable and filterable. A click on a row selects the op's longest occurrence and
//! highlights every occurrence on the timeline; a double-click brings the longest into view.

use crate::commands::{Command, Highlight};
use crate::view_ctx::ViewCtx;
use crate::workspace::{SpanRef, Trace, TraceId, Workspace};
use egui_extras::{Column, TableBuilder};
use strobe_analysis::op_table::OpRow;
use strobe_analysis::report::fmt_ns;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortBy {
    Name,
    Shapes,
    Calls,
    CpuTotal,
    SelfCpu,
    CpuMean,
    DeviceTotal,
    SelfDevice,
}

impl SortBy {
    /// The column headers, in order.
    const COLUMNS: [(SortBy, &'static str, &'static str); 7] = [
        (SortBy::Calls, "Calls", "occurrences"),
        (SortBy::CpuTotal, "CPU total", "CPU time with its children (key_averages' cpu_time_total)"),
        (SortBy::SelfCpu, "Self CPU", "CPU time less its direct children's, runtime calls included"),
        (SortBy::CpuMean, "CPU mean", "CPU total ÷ calls"),
        (
            SortBy::DeviceTotal,
            "Device total",
            "GPU time of the kernels, memcpys and memsets it and its children launched",
        ),
        (SortBy::SelfDevice, "Self device", "GPU time of the work it launched itself (innermost op)"),
        (SortBy::Shapes, "Input shapes", "the op's Input Dims (record_shapes=True)"),
    ];
}

pub struct OpTablePane {
    /// The trace shown (none picked, or closed: the first).
    pub trace: Option<TraceId>,
    /// One row per name and input shapes (`key_averages(group_by_input_shape=True)`).
    pub by_shape: bool,
    /// Show the device rows (kernels, memcpys, memsets) too, as `key_averages` does.
    pub device_rows: bool,
    pub filter: String,
    pub sort: SortBy,
    pub descending: bool,
    /// The row clicked last (name, shapes, on device), drawn selected.
    pub selected: Option<(String, Option<String>, bool)>,
    /// Row indices into the shown grouping after filter and sort.
    rows: Vec<u32>,
    key: Option<(TraceId, bool, bool, String, SortBy, bool, usize)>,
}

impl Default for OpTablePane {
    fn default() -> Self {
        OpTablePane {
            trace: None,
            by_shape: false,
            device_rows: false,
            filter: String::new(),
            sort: SortBy::DeviceTotal,
            descending: true,
            selected: None,
            rows: Vec::new(),
            key: None,
        }
    }
}

fn table_of(t: &Trace, by_shape: bool) -> &[OpRow] {
    match t.derived.analysis.op_table_ready() {
        Some(o) if by_shape => &o.by_shape,
        Some(o) => &o.by_name,
        None => &[],
    }
}

fn is_selected(sel: &Option<(String, Option<String>, bool)>, r: &OpRow) -> bool {
    sel.as_ref().is_some_and(|(n, s, d)| *n == r.name && *s == r.shapes && *d == r.on_device)
}

impl OpTablePane {
    /// The trace the table shows.
    pub fn shown<'w>(&self, ws: &'w Workspace) -> Option<&'w Trace> {
        self.trace.and_then(|id| ws.trace(id)).or_else(|| ws.traces.first())
    }

    /// The rows shown, in order (after filter and sort).
    pub fn visible<'w>(&self, ws: &'w Workspace) -> Vec<&'w OpRow> {
        let Some(t) = self.shown(ws) else { return Vec::new() };
        let all = table_of(t, self.by_shape);
        self.rows.iter().filter_map(|&i| all.get(i as usize)).collect()
    }

    fn refresh(&mut self, ws: &Workspace) {
        let Some(t) = self.shown(ws) else {
            self.rows.clear();
            return;
        };
        let all = table_of(t, self.by_shape);
        let key = (t.id, self.by_shape, self.device_rows, self.filter.clone(), self.sort, self.descending, all.len());
        if self.key.as_ref() == Some(&key) {
            return;
        }
        let f = self.filter.to_lowercase();
        let mut rows: Vec<u32> = (0..all.len() as u32)
            .filter(|&i| {
                let r = &all[i as usize];
                (self.device_rows || !r.on_device) && (f.is_empty() || r.name.to_lowercase().contains(&f))
            })
            .collect();
        rows.sort_by(|&a, &b| {
            let (x, y) = (&all[a as usize], &all[b as usize]);
            let o = match self.sort {
                SortBy::Name => x.name.cmp(&y.name),
                SortBy::Shapes => x.shapes.cmp(&y.shapes),
                SortBy::Calls => x.count.cmp(&y.count),
                SortBy::CpuTotal => x.cpu_total_ns.cmp(&y.cpu_total_ns),
                SortBy::SelfCpu => x.self_cpu_ns.cmp(&y.self_cpu_ns),
                SortBy::CpuMean => x.cpu_mean_ns().cmp(&y.cpu_mean_ns()),
                SortBy::DeviceTotal => x.device_total_ns.cmp(&y.device_total_ns),
                SortBy::SelfDevice => x.self_device_ns.cmp(&y.self_device_ns),
            };
            // ties keep the analysis' order (device total, CPU total, name)
            let o = if self.descending { o.reverse() } else { o };
            o.then(a.cmp(&b))
        });
        self.rows = rows;
        self.key = Some(key);
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        ui.horizontal(|ui| self.controls(ui, cx.ws));
        let Some(t) = self.shown(cx.ws) else { return };
        if t.derived.analysis.op_table_ready().is_some_and(|o| o.is_empty()) {
            ui.weak("No CPU ops in this trace: the Ops table is torch.profiler's key_averages() of a Kineto trace.");
            return;
        }
        let (clicked, sort_click) = self.table(ui, t);
        if let Some(by) = sort_click {
            if self.sort == by {
                self.descending = !self.descending;
            } else {
                self.sort = by;
                self.descending = !matches!(by, SortBy::Name | SortBy::Shapes);
            }
        }
        if let Some((r, double)) = clicked {
            self.selected = Some((r.name.clone(), r.shapes.clone(), r.on_device));
            let span = SpanRef { trace: t.id, span: r.longest_span };
            let mut mask = vec![false; t.store.string_count()];
            for &n in &r.name_ids {
                if let Some(m) = mask.get_mut(n as usize) {
                    *m = true;
                }
            }
            cx.emit(Command::SearchResults(Highlight { names: [(t.id, mask)].into_iter().collect(), active: true }));
            cx.emit(if double { Command::RevealSpan(span) } else { Command::SelectSpan(span) });
        }
    }

    /// The trace picker, the filter, the row count, the grouping and the device rows switch.
    fn controls(&mut self, ui: &mut egui::Ui, ws: &Workspace) {
        let shown = self.shown(ws).map(|t| t.id);
        crate::trace_picker::trace_picker(ui, ws, shown, &mut self.trace, "ops_trace");
        let lab = ui.label("Filter:");
        ui.add(
            egui::TextEdit::singleline(&mut self.filter)
                .id_salt("ops_filter")
                .hint_text("op name")
                .desired_width(220.0),
        )
        .labelled_by(lab.id);
        self.refresh(ws);
        match self.shown(ws) {
            Some(t) if t.derived.analysis.op_table_ready().is_none() => {
                ui.spinner();
                ui.weak("measuring ops…");
            }
            shown => {
                let total = shown.map(|t| table_of(t, self.by_shape).len()).unwrap_or(0);
                ui.label(format!("{} of {} rows", self.rows.len(), total));
            }
        }
        ui.separator();
        ui.selectable_value(&mut self.by_shape, false, "by name");
        ui.selectable_value(&mut self.by_shape, true, "by name and input shapes")
            .on_hover_text("key_averages(group_by_input_shape=True)");
        ui.checkbox(&mut self.device_rows, "kernel rows")
            .on_hover_text("key_averages also lists each kernel, memcpy and memset name as a row");
    }

    /// The rows after filter and sort; returns the row clicked (and whether twice) and the
    /// column whose header was clicked.
    fn table<'t>(&self, ui: &mut egui::Ui, t: &'t Trace) -> (Option<(&'t OpRow, bool)>, Option<SortBy>) {
        let all = table_of(t, self.by_shape);
        let mut clicked = None;
        let mut sort_click = None;
        let numbers = SortBy::COLUMNS.len() - 1;
        let mut b = TableBuilder::new(ui)
            .id_salt("op_table")
            .striped(true)
            .sense(egui::Sense::click())
            .column(Column::remainder().at_least(220.0).clip(true))
            .columns(Column::auto().at_least(80.0), numbers);
        if self.by_shape {
            b = b.column(Column::initial(260.0).at_least(120.0).clip(true));
        }
        // room for the scroll bar, which would cover the last column's digits
        b = b.column(Column::exact(12.0));
        b.header(20.0, |mut h| {
            let arrow = |by: SortBy| match (self.sort == by, self.descending) {
                (true, true) => " v",
                (true, false) => " ^",
                _ => "",
            };
            h.col(|ui| {
                let text = egui::RichText::new(format!("Name{}", arrow(SortBy::Name))).strong();
                if ui.add(egui::Button::new(text).frame(false)).clicked() {
                    sort_click = Some(SortBy::Name);
                }
            });
            for (by, title, hint) in SortBy::COLUMNS {
                if by == SortBy::Shapes && !self.by_shape {
                    continue;
                }
                h.col(|ui| {
                    let text = egui::RichText::new(format!("{title}{}", arrow(by))).strong();
                    if ui.add(egui::Button::new(text).frame(false)).on_hover_text(hint).clicked() {
                        sort_click = Some(by);
                    }
                });
            }
        })
        .body(|body| {
            body.rows(18.0, self.rows.len(), |mut row| {
                let r = &all[self.rows[row.index()] as usize];
                row.set_selected(is_selected(&self.selected, r));
                row.col(|ui| {
                    ui.add(egui::Label::new(&r.name).truncate().selectable(false))
                        .on_hover_text(format!("{} ({})", r.name, r.kind));
                });
                let cell = |row: &mut egui_extras::TableRow, text: String| {
                    row.col(|ui| {
                        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                            ui.add(egui::Label::new(text).selectable(false))
                        });
                    });
                };
                cell(&mut row, r.count.to_string());
                cell(&mut row, fmt_ns(r.cpu_total_ns));
                cell(&mut row, fmt_ns(r.self_cpu_ns));
                cell(&mut row, fmt_ns(r.cpu_mean_ns()));
                cell(&mut row, fmt_ns(r.device_total_ns));
                cell(&mut row, fmt_ns(r.self_device_ns));
                if self.by_shape {
                    row.col(|ui| {
                        let s = r.shapes.as_deref().unwrap_or("[]");
                        ui.add(egui::Label::new(s).truncate().selectable(false)).on_hover_text(s);
                    });
                }
                let resp = row.response();
                if resp.double_clicked() {
                    clicked = Some((r, true));
                } else if resp.clicked() {
                    clicked = Some((r, false));
                }
            });
        });
        (clicked, sort_click)
    }
}
