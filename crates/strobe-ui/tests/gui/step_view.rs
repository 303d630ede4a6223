//! The Steps tab, the summary strip's step losses and the critical path on the timeline, over
//! gpt_train.json.gz with a step attribution made by hand (`step_data`): a click on a part goes
//! to its evidence, a step's name shows the step, C outlines the path and `>` / `<` walk it;
//! the rank × step heat map shows an attribution part.

use crate::common;
use crate::step_data;

use crate::common::{app_before_the_figures_of, click_at, harness};
use egui_kittest::kittest::Queryable;
use strobe_analysis::report::fmt_ns;
use strobe_ui::app::BottomTab;
use strobe_ui::workspace::SpanRef;
use strobe_ui::StrobeApp;

/// gpt_train with the hand-made attribution in place of the analyses' (its other figures
/// computed as a load does).
fn app_with_fixture() -> (StrobeApp, step_data::Fixture) {
    let app = app_before_the_figures_of("gpt_train.json.gz");
    let t = &app.ws.traces[0];
    t.derived.fill_overview(&t.store);
    let fx = step_data::gpt_fixture(t);
    t.derived.step_figures.get_or_init(|| fx.figs.clone());
    t.wait_for_analyses();
    (app, fx)
}

#[test]
fn the_fixture_is_the_traces_three_steps() {
    let (app, fx) = app_with_fixture();
    let names: Vec<&str> = fx.figs.steps.iter().map(|s| s.step.as_str()).collect();
    assert_eq!(names, ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"]);
    for s in &fx.figs.steps {
        assert_eq!(s.parts.total(), s.dur_ns, "{}: the parts add up to the step", s.step);
    }
    // 29.4, 37.3 and 30.5 ms long (the trace's ProfilerStep ranges): the median is the third
    assert_eq!(fx.figs.median, Some(2));
    assert!(app.ws.traces[0].step_figures().is_some());
}

#[test]
fn the_summary_strip_says_the_median_steps_two_largest_losses() {
    let (app, _) = app_with_fixture();
    let mut h = harness(app);
    // 20 % GEMM inefficiency and 14 % host idle in the `data` range are the fixture's largest
    let at = h.get_by_label("step: 20 % GEMM inefficiency, 14 % host idle (data)").rect().center();
    // a click opens the Steps tab
    click_at(&mut h, at);
    assert_eq!(h.state().bottom_tab(), BottomTab::Steps);
}

#[test]
fn a_part_goes_to_its_evidence_and_a_name_to_its_step() {
    let (app, fx) = app_with_fixture();
    let mut h = harness(app);
    let id = h.state().ws.traces[0].id;
    h.get_by_label("Steps").click();
    h.run_steps(3);
    // the inefficiency part of ProfilerStep#3's bar: the Efficiency tab, GEMM ops only
    let s1 = &fx.figs.steps[1];
    let label = format!("ProfilerStep#3: model-op inefficiency {}", fmt_ns(s1.parts.model_ops_inefficiency_ns));
    let at = h.get_by_label(&label).rect().center();
    click_at(&mut h, at);
    assert_eq!(h.state().bottom_tab(), BottomTab::Efficiency);
    assert_eq!(h.state().efficiency().class.as_deref(), Some("gemm"));
    assert_eq!(h.state().sel.step, Some((id, 1)), "the clicked step is picked");
    // picked, the strip speaks of it
    h.get_by_label("step: 20 % GEMM inefficiency, 14 % host idle (data)");

    // back in the Steps tab, the legend speaks of the picked step: host idle reveals its `data`
    h.get_by_label("Steps").click();
    h.run_steps(3);
    let at = h.get_by_label("host idle").rect().center();
    click_at(&mut h, at);
    assert_eq!(h.state().sel.span, Some(SpanRef { trace: id, span: fx.data[1] }));
    // other GPU work: the optimizer's range
    let at = h.get_by_label("other GPU work").rect().center();
    click_at(&mut h, at);
    assert_eq!(h.state().sel.span, Some(SpanRef { trace: id, span: fx.optimizer[1] }));

    // a step's name shows that step on the timeline, and so does its row beside its parts
    let shown = |h: &egui_kittest::Harness<'static, StrobeApp>, i: usize| {
        let app = h.state();
        let s = &fx.figs.steps[i];
        assert_eq!(app.sel.step, Some((id, i)));
        let (w0, w1) = app.timeline_state().view.window(app.timeline().plot_width);
        let (a, b) = (s.start_ns, s.start_ns + s.dur_ns);
        assert!(w0 <= a && w1 >= b && w1 - w0 < 2 * s.dur_ns, "step [{a}, {b}) fills the window [{w0}, {w1})");
    };
    let at = h.get_by_label(&format!("ProfilerStep#4 · {}", fmt_ns(fx.figs.steps[2].dur_ns))).rect().center();
    click_at(&mut h, at);
    shown(&h, 2);
    // ProfilerStep#2 is the shortest: its row's right end is past its parts
    let row = h.get_by_label("ProfilerStep#2 bar").rect();
    click_at(&mut h, egui::pos2(row.right() - 4.0, row.center().y));
    shown(&h, 0);
}

#[test]
fn c_outlines_the_critical_path_and_the_angle_keys_walk_it() {
    let (app, fx) = app_with_fixture();
    let mut h = harness(app);
    let id = h.state().ws.traces[0].id;
    assert!(!h.state().timeline_state().show_critical_path);
    h.key_press(egui::Key::C);
    h.run_steps(1);
    assert!(h.state().timeline_state().show_critical_path, "C outlines the path");
    h.key_press(egui::Key::C);
    h.run_steps(1);
    assert!(!h.state().timeline_state().show_critical_path, "C again: no outline");
    // the View menu's item does the same
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("Critical path (C)").click();
    h.run_steps(2);
    assert!(h.state().timeline_state().show_critical_path);
    h.key_press(egui::Key::Escape);
    h.run_steps(2);

    // nothing selected: `>` goes to the first path span from the window's left edge
    let app = h.state();
    let left = app.timeline_state().view.window(app.timeline().plot_width).0;
    let st = &app.ws.traces[0].store;
    let first = fx.path.iter().position(|&s| st.span_start(s) >= left).unwrap();
    let type_key = |h: &mut egui_kittest::Harness<'static, StrobeApp>, k: &str| {
        h.event(egui::Event::Text(k.into()));
        h.run_steps(2);
        h.state().sel.span.map(|r| r.span)
    };
    assert_eq!(type_key(&mut h, ">"), Some(fx.path[first]));
    assert_eq!(type_key(&mut h, ">"), Some(fx.path[first + 1]));
    assert_eq!(type_key(&mut h, ">"), Some(fx.path[first + 2]));
    assert_eq!(type_key(&mut h, "<"), Some(fx.path[first + 1]));
    // the jump reveals the span: it is in the window
    let app = h.state();
    let (w0, w1) = app.timeline_state().view.window(app.timeline().plot_width);
    let s = fx.path[first + 1];
    let st = &app.ws.traces[0].store;
    assert!(w0 <= st.span_start(s) && st.span_end(s) <= w1, "the span is in view");

    // from a span off the path: the first path span after it
    let off = fx.optimizer[1];
    assert!(!fx.path.contains(&off));
    h.state_mut().push(strobe_ui::commands::Command::SelectSpan(SpanRef { trace: id, span: off }));
    h.run_steps(2);
    let start = h.state().ws.traces[0].store.span_start(off);
    let st = &h.state().ws.traces[0].store;
    let after = *fx.path.iter().find(|&&s| st.span_start(s) > start).unwrap();
    assert_eq!(type_key(&mut h, ">"), Some(after));
}

#[test]
fn the_steps_tab_says_what_it_waits_for_and_when_there_are_no_steps() {
    // before the analyses: the attribution is being computed
    let mut h = harness(app_before_the_figures_of("gpt_train.json.gz"));
    h.get_by_label("Steps").click();
    h.run_steps(2);
    assert!(h.get_all_by_label("computing the step attribution…").next().is_some());

    // a trace with no GPU work has no steps: the tab says so and how to set them
    let app = app_before_the_figures_of("catapult_flow.json");
    app.ws.traces[0].wait_for_analyses();
    assert!(app.ws.traces[0].steps().is_empty(), "no steps in a browser trace");
    let mut h = harness(app);
    h.get_by_label("Steps").click();
    h.run_steps(2);
    h.get_by_label(
        "No steps: this trace has no ProfilerStep, NVTX step or repeating pattern (View > Steps sets a pattern).",
    );
}

/// The DDP pair's report with a hand-made attribution: in every step the fast rank waits
/// 6 ms for the slow one and the slow one 0.2 ms; the heat map's part menu shows it, each cell
/// coloured against its step's median as the other figures are.
#[test]
fn the_heat_map_shows_an_attribution_part() {
    use strobe_analysis::attribution::{Parts, StepBreakdown};
    use strobe_ui::ranks::{heat_map, Metric};
    let mut app = common::app_with_ranks(&["ddp_rank0.json.gz", "ddp_rank1.json.gz"]);
    app.set_bottom_tab(BottomTab::Ranks);
    let c = app.ranks_mut().computed.as_mut().unwrap();
    let mut want = Vec::new();
    for (si, row) in c.report.steps.iter().enumerate() {
        for p in &row.per_rank {
            // rank (si % 2) is the slow one in step si: the other waits for it
            let wait = if p.rank == (si as i64 % 2) { 200_000 } else { 6_000_000 };
            let parts = Parts { comm_wait_ns: wait, model_at_peak_ns: p.dur_ns - wait, ..Default::default() };
            c.report.step_breakdown.push(StepBreakdown {
                step: row.name.clone(),
                rank: Some(p.rank),
                start_ns: p.start_ns,
                dur_ns: p.dur_ns,
                parts,
                ..Default::default()
            });
            want.push((si, p.rank, wait, p.dur_ns));
        }
    }
    c.heat = heat_map::HeatIndex::new(&c.report);
    let comm_wait = Metric::Part(3);
    assert_eq!(comm_wait.name(), "comm wait");
    let c = app.ranks().computed.as_ref().unwrap();
    for &(si, rank, wait, _) in &want {
        let ri = c.report.ranks.iter().position(|r| r.rank == rank).unwrap();
        let cell = c.heat.cell(&c.report, ri, si).unwrap();
        assert_eq!(c.heat.value(comm_wait, si, cell), Some(wait));
        // against the step's median wait (of two: their mean), as a share of its median time
        let durs: Vec<i64> = want.iter().filter(|w| w.0 == si).map(|w| w.3).collect();
        let step_ns = (durs[0] + durs[1]) / 2;
        assert_eq!(c.heat.colour(comm_wait, si, cell), heat_map::heat(wait, (200_000 + 6_000_000) / 2, step_ns));
    }
    let mut h = harness(app);
    h.get_by_label("Ranks").click();
    h.run_steps(2);
    h.get_by_label("attribution part…").click();
    h.run_steps(2);
    h.get_by_label("comm wait").click();
    h.run_steps(2);
    assert_eq!(h.state().ranks().metric, comm_wait);
    // each cell shows its part in ms (a straggler's cell then its star)
    let names: Vec<String> =
        h.state().ranks().computed.as_ref().unwrap().report.steps.iter().map(|s| s.name.clone()).collect();
    for (si, rank, wait, _) in want {
        h.get_by_label_contains(&format!("{} rank {rank}: {:.3}", names[si], wait as f64 / 1e6));
    }
}
