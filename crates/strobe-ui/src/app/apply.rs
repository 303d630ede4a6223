//! What each command does: the one place shared state changes.

use super::{BottomTab, StrobeApp};
use crate::commands::{Command, Highlight, Selection};
use crate::workspace::{SpanRef, TraceId};
use strobe_model::SpanKind;

impl StrobeApp {
    /// Applies one command (what every pane's clicks turn into).
    pub fn apply(&mut self, c: Command, ctx: &egui::Context) {
        match c {
            Command::SelectSpan(r) => {
                self.select_span(r);
                self.select_launch_of_span(r);
            }
            Command::RevealSpan(r) => {
                self.select_span(r);
                self.timeline.reveal(&mut self.timeline_state, &self.ws, r);
                self.select_launch_of_span(r);
            }
            Command::FrameSpan(r) => self.timeline.frame_span(&mut self.timeline_state, &self.ws, r),
            Command::ClearSelection => {
                self.sel = Selection::default();
                self.kernel_highlight = Highlight::default();
            }
            Command::SelectKernel { trace, name } => {
                self.select_kernel(trace, &name);
                // The launch linked to the span shown, else the kernel's first launch.
                if let (Some(p), Some(doc)) = (self.kernel_sol.as_mut(), &self.ws.ncu) {
                    if !self.sel.span.is_some_and(|r| p.select_span(r)) {
                        p.select_name(&doc.report, &name);
                    }
                }
            }
            Command::SelectNcuLaunch(i) => self.select_ncu_launch(i),
            Command::ZoomTo { t0, t1 } => self.timeline_state.view.fit(t0, t1, self.timeline.plot_width),
            Command::CenterOn(t) => {
                let w = (self.timeline_state.view.npp * self.timeline.plot_width as f64) as i64;
                self.timeline_state.view.fit(t - w / 2, t + w / 2, self.timeline.plot_width);
            }
            Command::SetView { from, view, scroll_y } => self.set_view(from, view, scroll_y),
            Command::SetLabelWidth(w) => self.timeline_state.label_w = w,
            Command::ToggleFold(key) => self.timeline_state.toggle(key),
            Command::FitAll => self.timeline_state.fit_all(&self.ws, self.timeline.plot_width),
            Command::ShowRankStep { trace, t0, t1 } => {
                let Some(t) = self.ws.trace(trace) else { return };
                let pad = (t1 - t0) / 40;
                let (t0, t1) = t.range_to_shared((t0 - pad, t1 + pad));
                self.timeline_state.view.fit(t0, t1, self.timeline.plot_width);
                // asked for right after the trace opened (a rank from summaries): this range,
                // not the whole-trace fit the opening queued
                self.timeline_state.fit_pending = false;
                self.timeline.show_trace(&mut self.timeline_state, trace);
            }
            Command::AreaSelected { t0, t1, lanes } => {
                self.area.compute(&self.ws, t0, t1, &lanes, ctx);
                self.sel.range = Some((t0, t1));
                self.sel.range_lanes = lanes;
                self.bottom_tab = BottomTab::Area;
            }
            Command::ApplyAlignment(offsets) => self.apply_alignment(offsets),
            Command::AreaPivot(p) => {
                self.area.pivot = p;
                self.area.regroup(ctx);
            }
            Command::SearchResults(h) => self.search_highlight = h,
            Command::OpenFiles(p) => self.open_files(p, true, ctx),
            Command::AddFiles(p) => self.open_files(p, false, ctx),
            Command::ShowOpenDialog(mode) => self.show_open_dialog(mode, ctx),
            Command::ShowBrowser => self.browser.show(),
            Command::CloseAll => self.close_all(),
            Command::FocusSearch => self.search.focus_request = true,
            Command::EndSearch => {
                self.search.end();
                self.search_highlight = Highlight::default();
            }
            Command::SetIdleThreshold(ns) => {
                // the breakdown at the new threshold comes from the analyses' threads
                let settings =
                    crate::workspace::FigureSettings { idle_threshold_ns: ns, ..self.ws.figure_settings().clone() };
                self.ws.set_figure_settings(settings);
            }
            Command::AddMark { t, note, name_it } => {
                let i = self.timeline_state.marks.add(t, note);
                if name_it {
                    self.timeline_state.note_to_name = Some(i);
                }
            }
            Command::RenameMark { index, note } => {
                if let Some(m) = self.timeline_state.marks.list.get_mut(index) {
                    m.note = note;
                }
            }
            Command::DeleteMark(i) => {
                if i < self.timeline_state.marks.len() {
                    self.timeline_state.marks.list.remove(i);
                }
            }
            Command::NoteFocused => self.timeline_state.note_to_name = None,
            Command::ClearMarks => self.timeline_state.marks.clear(),
            Command::SetStepPattern(p) => {
                let rule = if p.trim().is_empty() {
                    Ok(strobe_analysis::steps::StepRule::default())
                } else {
                    strobe_analysis::steps::StepRule::from_pattern(p.trim())
                };
                match rule {
                    // every trace's steps, and what follows them, from the analyses' threads
                    Ok(step_rule) => {
                        let settings =
                            crate::workspace::FigureSettings { step_rule, ..self.ws.figure_settings().clone() };
                        self.ws.set_figure_settings(settings);
                    }
                    Err(e) => self.errors.push(e),
                }
            }
            Command::SaveSession(Some(p)) => self.write_session(p),
            Command::SaveSession(None) => self.show_save_dialog(ctx),
            Command::ToggleShortcuts => self.timeline_state.show_shortcuts ^= true,
            Command::ShowNotes => self.bottom_tab = BottomTab::Notes,
            Command::FindTrack => self.track_finder.open(),
            Command::RevealLane { trace, lane } => {
                self.timeline.reveal_lane(&mut self.timeline_state, &self.ws, trace, lane)
            }
            Command::TogglePin { trace, lane } => self.timeline_state.toggle_pin(trace, lane),
            Command::SetLaneHidden { trace, lane, hidden } => self.timeline_state.set_hidden(trace, lane, hidden),
            Command::ShowHiddenLanes => self.timeline_state.hidden.clear(),
            Command::FindAll(name) => self.search.find_name(&name),
            Command::SelectStep { trace, index } => self.sel.step = Some((trace, index)),
            Command::ShowEfficiency { trace, class } => {
                self.efficiency.show(trace, class);
                self.bottom_tab = BottomTab::Efficiency;
            }
            Command::ShowKernelGains => {
                if let Some(p) = self.kernel_sol.as_mut() {
                    p.reveal_gains = true;
                    self.bottom_tab = BottomTab::KernelSol;
                }
            }
            Command::ShowPipeline => {
                if self.ws.pipeline.is_some() {
                    self.bottom_tab = BottomTab::Pipeline;
                }
            }
            Command::ShowSteps(trace) => {
                self.steps.trace = Some(trace);
                self.bottom_tab = BottomTab::Steps;
            }
            Command::ToggleCriticalPath => self.timeline_state.show_critical_path ^= true,
            Command::SetPipeline(p) => {
                // a pipeline just found: what the user came for is its table
                if p.is_some()
                    && !self.pipeline_shown
                    && matches!(self.bottom_tab, BottomTab::Kernels | BottomTab::Ranks)
                {
                    self.bottom_tab = BottomTab::Pipeline;
                    self.pipeline_shown = true;
                }
                if p.is_none() && self.bottom_tab == BottomTab::Pipeline {
                    self.bottom_tab = BottomTab::Ranks;
                }
                self.ws.pipeline = p;
                self.ws.pipeline_settled = true;
            }
            Command::SetCollectives(c) => self.ws.collectives = c,
        }
    }

    /// The timeline's own move of the window and scroll. A window another command set in
    /// this frame (a jump from a pane) stands: the timeline moved the one it saw.
    fn set_view(&mut self, from: crate::timeline::View, view: crate::timeline::View, scroll_y: f32) {
        let st = &mut self.timeline_state;
        if st.view == from {
            st.view = view;
        }
        st.scroll_y = scroll_y;
        // the timeline does the opening fit before it moves anything else
        st.fit_pending = false;
    }

    /// The ranks pane's clock offsets to the traces (the timeline draws with them).
    fn apply_alignment(&mut self, offsets: Vec<(TraceId, i64, i64)>) {
        // several ranks just opened: what the user came for is the rank table
        if self.bottom_tab == BottomTab::Kernels && !self.ranks_shown {
            self.bottom_tab = BottomTab::Ranks;
        }
        self.ranks_shown = true;
        for (id, o, rank) in offsets {
            if let Some(tr) = self.ws.trace_mut(id) {
                tr.offset_ns = o;
                // the rank the comparison settled on (files may all claim the same one)
                tr.label = crate::workspace::trace_label(&tr.path, Some(rank));
            }
        }
    }

    /// Computes the rank comparison on this thread and applies its alignment (tests).
    pub fn settle_ranks_blocking(&mut self, ctx: &egui::Context) {
        let mut cmds = Vec::new();
        self.ranks.update_blocking(&self.ws, &mut cmds);
        self.pending.extend(cmds);
        self.apply_pending(ctx);
    }

    /// Finds the pipeline on this thread and hands it to the workspace (tests): the rank
    /// comparison finds it, its alignment applied with it.
    pub fn settle_pipeline_blocking(&mut self, ctx: &egui::Context) {
        self.settle_ranks_blocking(ctx);
    }

    /// Links the kernel pane's launches to the open traces' kernel spans when the workspace
    /// changed, and shows the linked launches' figures in the kernel table.
    pub(super) fn link_ncu(&mut self) {
        let (Some(p), Some(doc)) = (self.kernel_sol.as_mut(), &self.ws.ncu) else { return };
        if self.ncu_linked == Some(self.ws.generation) {
            return;
        }
        self.ncu_linked = Some(self.ws.generation);
        p.link(&doc.report, &self.ws);
        let ws = &self.ws;
        let names: Vec<Option<String>> = p
            .links
            .iter()
            .map(|l| {
                let r = (*l)?;
                let st = ws.store(r.trace)?;
                Some(st.string(st.span_meta(r.span).name).to_string())
            })
            .collect();
        self.kernels.sol = Some(strobe_analysis::ncu_match::SolByName::from_report_linked(&doc.report, &names));
    }

    /// Selects span `r`. A kernel selected from the table stays selected only while the span
    /// is one of its occurrences: its figures and highlight describe the selection, never a
    /// span clicked after it.
    fn select_span(&mut self, r: SpanRef) {
        self.sel.span = Some(r);
        let of_kernel = self.sel.kernel.as_ref().is_some_and(|(trace, name)| {
            *trace == r.trace && self.ws.store(r.trace).is_some_and(|st| st.span_name(r.span) == name)
        });
        if !of_kernel {
            self.sel.kernel = None;
            self.kernel_highlight = Highlight::default();
        }
    }

    /// A span selected anywhere: the kernel pane selects its linked launch, else (a kernel
    /// not in the profiled window) the first launch of its name.
    fn select_launch_of_span(&mut self, r: SpanRef) {
        let (Some(p), Some(doc)) = (self.kernel_sol.as_mut(), &self.ws.ncu) else { return };
        if p.select_span(r) {
            return;
        }
        let Some(st) = self.ws.store(r.trace) else { return };
        let m = st.span_meta(r.span);
        if SpanKind::from_u8(m.kind) == SpanKind::Kernel {
            p.select_name(&doc.report, st.string(m.name));
        }
    }

    /// An ncu launch selected (kernel pane): select it, highlight its kernel on the timeline
    /// and select + reveal its linked span (by name only when it has none).
    pub fn select_ncu_launch(&mut self, i: usize) {
        let (Some(p), Some(doc)) = (self.kernel_sol.as_mut(), &self.ws.ncu) else { return };
        let Some(k) = doc.report.kernels.get(i) else { return };
        p.selected = Some(i);
        let (link, ncu_name) = (p.links.get(i).copied().flatten(), k.name.clone());
        if let Some((r, st)) = link.and_then(|r| Some((r, self.ws.store(r.trace)?))) {
            let name = st.string(st.span_meta(r.span).name).to_string();
            self.select_kernel(r.trace, &name);
            self.sel.span = Some(r);
            self.timeline.reveal(&mut self.timeline_state, &self.ws, r);
        } else if let Some((t, name)) = match_timeline_kernel(&self.ws, &ncu_name) {
            self.select_kernel(t, &name);
        }
    }

    /// Highlights every occurrence of kernel `name` in `trace` and jumps to the longest: both
    /// read off the trace's kernel figures (nothing until they arrive), not a pass over its
    /// spans.
    pub fn select_kernel(&mut self, trace: TraceId, name: &str) {
        let Some(t) = self.ws.trace(trace) else { return };
        let stats: Vec<&strobe_analysis::kernels::KernelStat> = t.kernels().iter().filter(|k| k.name == name).collect();
        let mut mask = vec![false; t.store.string_count()];
        for k in &stats {
            if let Some(m) = mask.get_mut(k.name_id as usize) {
                *m = true;
            }
        }
        // the first longest, as the figures order the names
        let best = stats.iter().fold(None::<&&strobe_analysis::kernels::KernelStat>, |b, k| match b {
            Some(b) if b.max_ns >= k.max_ns => Some(b),
            _ => Some(k),
        });
        let longest = best.map(|k| k.longest_span);
        self.kernel_highlight = Highlight { names: [(trace, mask)].into_iter().collect(), active: !stats.is_empty() };
        self.sel.kernel = Some((trace, name.to_string()));
        if let Some(sid) = longest {
            let r = SpanRef { trace, span: sid };
            self.sel.span = Some(r);
            self.timeline.reveal(&mut self.timeline_state, &self.ws, r);
        }
    }
}

/// The timeline kernel an ncu launch's name stands for: the same name in some trace, else
/// the first with the same `kernel_match_key` (the demanglers differ).
pub fn match_timeline_kernel(ws: &crate::workspace::Workspace, ncu_name: &str) -> Option<(TraceId, String)> {
    let lists: Vec<&[strobe_analysis::kernels::KernelStat]> = ws.traces.iter().map(|t| t.kernels()).collect();
    strobe_analysis::ncu_match::kernel_for_launch(&lists, ncu_name).map(|(i, name)| (ws.traces[i].id, name))
}
