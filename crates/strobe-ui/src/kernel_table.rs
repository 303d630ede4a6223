//! Kernel table: per kernel name count, total, mean, min, max, % of GPU kernel time
//! (`strobe_analysis::kernels`, the numbers of `strobe report`). Sortable, filterable and
//! virtualised (only visible rows are laid out), so 100 k names scroll smoothly.

use crate::commands::Command;
use crate::view_ctx::ViewCtx;
use crate::workspace::{Trace, TraceId, Workspace};
use egui_extras::{Column, TableBuilder};
use strobe_analysis::efficiency::figures::Figures;
use strobe_analysis::ncu_match::SolByName;
use strobe_analysis::report::fmt_ns;

/// The trace's efficiency figures of each kernel, by name.
type EfficiencyByName = std::collections::HashMap<String, Figures>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortBy {
    Name,
    Count,
    Total,
    Mean,
    Min,
    Max,
}

pub struct KernelTable {
    /// The trace shown (none picked, or closed: the first).
    pub trace: Option<TraceId>,
    /// Rows are the NVTX / record_function ranges with the GPU time they launched, not kernels.
    pub by_range: bool,
    /// Rows are CUDA graphs, each with its replays as the count (`graph_table`).
    pub by_graph: bool,
    pub filter: String,
    pub sort: SortBy,
    pub descending: bool,
    /// Row indices into the trace's kernel stats after filter and sort.
    rows: Vec<u32>,
    key: Option<(TraceId, String, SortBy, bool, usize)>,
    /// SOL columns from an open Nsight Compute export (`kernel_sol`), matched by name.
    pub sol: Option<SolByName>,
}

impl Default for KernelTable {
    fn default() -> Self {
        KernelTable {
            trace: None,
            by_range: false,
            by_graph: false,
            filter: String::new(),
            sort: SortBy::Total,
            descending: true,
            rows: Vec::new(),
            key: None,
            sol: None,
        }
    }
}

impl KernelTable {
    /// The trace the table shows.
    pub fn shown<'w>(&self, ws: &'w Workspace) -> Option<&'w Trace> {
        self.trace.and_then(|id| ws.trace(id)).or_else(|| ws.traces.first())
    }

    fn refresh(&mut self, ws: &Workspace) {
        let Some(t) = self.shown(ws) else {
            self.rows.clear();
            return;
        };
        let k = &t.kernels();
        let key = (t.id, self.filter.clone(), self.sort, self.descending, k.len());
        if self.key.as_ref() == Some(&key) {
            return;
        }
        let f = self.filter.to_lowercase();
        let mut rows: Vec<u32> =
            (0..k.len() as u32).filter(|&i| f.is_empty() || k[i as usize].name.to_lowercase().contains(&f)).collect();
        rows.sort_by(|&a, &b| {
            let (x, y) = (&k[a as usize], &k[b as usize]);
            let o = match self.sort {
                SortBy::Name => x.name.cmp(&y.name),
                SortBy::Count => x.count.cmp(&y.count),
                SortBy::Total => x.total_ns.cmp(&y.total_ns),
                SortBy::Mean => x.mean_ns.cmp(&y.mean_ns),
                SortBy::Min => x.min_ns.cmp(&y.min_ns),
                SortBy::Max => x.max_ns.cmp(&y.max_ns),
            };
            if self.descending {
                o.reverse()
            } else {
                o
            }
        });
        self.rows = rows;
        self.key = Some(key);
    }

    pub fn visible_rows(&self) -> usize {
        self.rows.len()
    }

    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut ViewCtx) {
        let (ws, sel) = (cx.ws, cx.sel);
        ui.horizontal(|ui| self.controls(ui, ws));
        let Some(t) = self.shown(ws) else { return };
        if self.by_graph {
            crate::graph_table::graph_table(ui, t, &self.filter, cx);
            return;
        }
        if self.by_range {
            ranges_table(ui, t, &self.filter);
            return;
        }
        let selected = sel.kernel.as_ref().filter(|(id, _)| *id == t.id).map(|(_, n)| n.as_str());
        let (clicked, sort_click) = self.kernels_table(ui, t, selected);
        if let Some(by) = sort_click {
            if self.sort == by {
                self.descending = !self.descending;
            } else {
                self.sort = by;
                self.descending = by != SortBy::Name;
            }
        }
        if let Some(name) = clicked {
            cx.emit(Command::SelectKernel { trace: t.id, name });
        }
    }

    /// The trace picker, the filter, the row count and the kernel / range switch.
    fn controls(&mut self, ui: &mut egui::Ui, ws: &Workspace) {
        let shown = self.shown(ws).map(|t| t.id);
        crate::trace_picker::trace_picker(ui, ws, shown, &mut self.trace, "kt_trace");
        let lab = ui.label("Filter:");
        ui.add(
            egui::TextEdit::singleline(&mut self.filter)
                .id_salt("kernel_filter")
                .hint_text("kernel name")
                .desired_width(260.0),
        )
        .labelled_by(lab.id);
        self.refresh(ws);
        match self.shown(ws) {
            Some(t) if !t.derived.kernels_ready() => {
                ui.spinner();
                ui.weak("measuring kernels…");
            }
            shown => {
                let total = shown.map(|t| t.kernels().len()).unwrap_or(0);
                ui.label(format!("{} of {} kernels", self.rows.len(), total));
            }
        }
        ui.separator();
        let mode = (self.by_range, self.by_graph);
        if ui.selectable_label(mode == (false, false), "by kernel").clicked() {
            (self.by_range, self.by_graph) = (false, false);
        }
        if ui
            .selectable_label(mode == (true, false), "by NVTX range (GPU)")
            .on_hover_text("each CPU range with the GPU time of the work launched inside it")
            .clicked()
        {
            (self.by_range, self.by_graph) = (true, false);
        }
        if ui
            .selectable_label(self.by_graph, "by CUDA graph")
            .on_hover_text("each CUDA graph with its replays as the count")
            .clicked()
        {
            self.by_graph = true;
        }
    }

    /// The kernels of `t` after filter and sort; returns the name clicked and the column whose
    /// header was clicked.
    fn kernels_table(&self, ui: &mut egui::Ui, t: &Trace, selected: Option<&str>) -> (Option<String>, Option<SortBy>) {
        let k = &t.kernels();
        let mut clicked: Option<String> = None;
        let mut sort_click: Option<SortBy> = None;
        let sol = self.sol.as_ref();
        // the trace's own efficiency figures (shapes × device peaks), where any kernel has them
        // none while the per-op figures are computed (the app repaints while figures are due)
        let no_figures = Default::default();
        let eff = t.ops().map_or(&no_figures, |o| &o.kernel_efficiency);
        let has_eff = !eff.is_empty();
        TableBuilder::new(ui)
            .id_salt("kernel_table")
            .striped(true)
            .sense(egui::Sense::click())
            .column(Column::remainder().at_least(200.0).clip(true))
            .columns(Column::auto().at_least(70.0), 6 + 3 * sol.is_some() as usize + 4 * has_eff as usize)
            .header(20.0, |mut h| {
                self.header(&mut h, has_eff, sol.is_some(), &mut sort_click);
            })
            .body(|body| {
                body.rows(18.0, self.rows.len(), |mut row| {
                    let s = &k[self.rows[row.index()] as usize];
                    row.set_selected(selected == Some(s.name.as_str()));
                    kernel_row(&mut row, s, has_eff.then_some(eff), sol);
                    if row.response().clicked() {
                        clicked = Some(s.name.clone());
                    }
                });
            });
        (clicked, sort_click)
    }

    /// Sortable column headers (an arrow on the sorted one), then the efficiency and SOL ones.
    fn header(&self, h: &mut egui_extras::TableRow, has_eff: bool, has_sol: bool, sort_click: &mut Option<SortBy>) {
        let (cur, desc) = (self.sort, self.descending);
        let mut sortable = |h: &mut egui_extras::TableRow, label: &str, by: SortBy| {
            h.col(|ui| {
                let arrow = match (cur == by, desc) {
                    (false, _) => "",
                    (true, true) => " v",
                    (true, false) => " ^",
                };
                let text = egui::RichText::new(format!("{label}{arrow}")).strong();
                if ui.add(egui::Button::new(text).frame(false)).clicked() {
                    *sort_click = Some(by);
                }
            });
        };
        sortable(h, "Name", SortBy::Name);
        sortable(h, "Count", SortBy::Count);
        sortable(h, "Total", SortBy::Total);
        sortable(h, "Mean", SortBy::Mean);
        sortable(h, "Min", SortBy::Min);
        sortable(h, "Max", SortBy::Max);
        h.col(|ui| {
            ui.strong("% GPU");
        });
        if has_eff {
            for (label, tip) in [
                ("TFLOP/s", "achieved, from the ops' recorded shapes (docs/efficiency.md)"),
                ("% peak", "of the device's peak for the op's unit (tensor bf16, fp32, …)"),
                ("Efficiency", "theoretical ÷ measured: max(FLOPs / peak, bytes / bandwidth) over the GPU time"),
                ("Time lost", "measured − theoretical: what optimising it could win"),
            ] {
                h.col(|ui| {
                    ui.strong(label).on_hover_text(tip);
                });
            }
        }
        if has_sol {
            h.col(|ui| {
                ui.strong("TFLOP/s (ncu)").on_hover_text(
                    "measured by Nsight Compute, tensor work included: beside the trace's shape-based figure",
                );
            });
            h.col(|ui| {
                ui.strong("SM / Mem % (ncu)");
            });
            h.col(|ui| {
                ui.strong("Verdict (ncu)");
            });
        }
    }
}

/// One kernel's cells: its figures, then its efficiency (where any kernel has it) and SOL columns.
fn kernel_row(
    row: &mut egui_extras::TableRow,
    s: &strobe_analysis::kernels::KernelStat,
    eff: Option<&EfficiencyByName>,
    sol: Option<&SolByName>,
) {
    row.col(|ui| {
        ui.add(egui::Label::new(&s.name).truncate().selectable(false));
    });
    for text in [s.count.to_string(), fmt_ns(s.total_ns), fmt_ns(s.mean_ns), fmt_ns(s.min_ns), fmt_ns(s.max_ns)] {
        row.col(|ui| {
            ui.label(text);
        });
    }
    row.col(|ui| {
        ui.label(format!("{:.1}%", s.pct_kernel_time));
    });
    if let Some(eff) = eff {
        let f = eff.get(&s.name);
        let opt = |v: Option<f64>, fmt: &dyn Fn(f64) -> String| v.map(fmt).unwrap_or_default();
        for text in [
            opt(f.and_then(|f| f.tflops_per_s), &|v| format!("{v:.1}")),
            opt(f.and_then(|f| f.pct_of_peak), &|v| format!("{v:.0}%")),
            opt(f.and_then(|f| f.efficiency), &|v| format!("{:.0}%", v * 100.0)),
            opt(f.and_then(|f| f.lost_ns), &|v| fmt_ns(v as i64)),
        ] {
            row.col(|ui| {
                ui.label(text);
            });
        }
    }
    if let Some(sol) = sol {
        let c = sol.get(&s.name);
        row.col(|ui| {
            ui.label(c.and_then(|c| c.flops_per_s).map(|v| format!("{:.1}", v / 1e12)).unwrap_or_default());
        });
        let pct = |v: Option<f64>| v.map(|v| format!("{v:.0}")).unwrap_or_else(|| "-".into());
        row.col(|ui| {
            ui.label(c.map(|c| format!("{} / {}", pct(c.sm_pct), pct(c.memory_pct))).unwrap_or_default());
        });
        row.col(|ui| {
            let v = c.and_then(|c| c.verdict);
            ui.colored_label(crate::kernel_sol::verdict_color(v), v.map(|v| v.as_str()).unwrap_or(""));
        });
    }
}

/// The NVTX / record_function ranges by name with the GPU time they launched
/// (`strobe_analysis::nvtx_gpu::by_name`), filtered like the kernels.
fn ranges_table(ui: &mut egui::Ui, t: &Trace, filter: &str) {
    let f = filter.to_lowercase();
    let rows: Vec<_> = strobe_analysis::nvtx_gpu::by_name(t.nvtx_gpu())
        .into_iter()
        .filter(|r| f.is_empty() || r.name.to_lowercase().contains(&f))
        .collect();
    if rows.is_empty() {
        ui.weak("No NVTX or record_function range launched GPU work in this trace.");
        return;
    }
    TableBuilder::new(ui)
        .id_salt("range_table")
        .striped(true)
        .column(Column::remainder().at_least(200.0).clip(true))
        .columns(Column::auto().at_least(80.0), 3)
        .header(20.0, |mut h| {
            for s in ["Range", "Count", "GPU time", "GPU spans"] {
                h.col(|ui| {
                    ui.strong(s);
                });
            }
        })
        .body(|body| {
            body.rows(18.0, rows.len(), |mut row| {
                let r = &rows[row.index()];
                row.col(|ui| {
                    ui.add(egui::Label::new(&r.name).truncate());
                });
                row.col(|ui| {
                    ui.label(r.count.to_string());
                });
                row.col(|ui| {
                    ui.label(fmt_ns(r.gpu_ns));
                });
                row.col(|ui| {
                    ui.label(r.gpu_spans.to_string());
                });
            });
        });
}
