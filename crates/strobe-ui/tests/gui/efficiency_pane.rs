//! The Efficiency tab and the step strip with egui_kittest, on gpt_train (H200, record_shapes):
//! figures from tests/expected/gpt_train.efficiency.json and gpt_train.report.json (the
//! independent Python oracles).

use crate::common;

use crate::common::*;
use egui_kittest::kittest::Queryable;
use strobe_ui::app::BottomTab;

#[test]
fn a_row_of_the_ops_table_selects_the_ops_longest_instance() {
    let exp = expected("gpt_train.efficiency.json");
    let mut app = app_with(&["gpt_train.json.gz"]);
    app.set_bottom_tab(BottomTab::Efficiency);
    let mut h = harness(app);
    h.run_steps(2);
    // the oracle's count of aten::mm instances is the table's
    let mm = &exp["aten::mm"];
    let ops = &h.state().ws.traces[0].ops_blocking().efficiency.ops;
    let row = ops.iter().find(|o| o.name == "aten::mm").expect("aten::mm in the table");
    assert_eq!(row.count, mm["count"].as_u64().unwrap());
    h.get_by_label("aten::mm").click();
    h.run_steps(3);
    let sel = h.state().sel.span.expect("the op's instance is selected");
    let st = &h.state().ws.traces[0].store;
    assert_eq!(st.span_name(sel.span), "aten::mm");
    // the longest-GPU-time instance: no other aten::mm launched more GPU time
    let ops = h.state().ws.traces[0].ops_blocking();
    assert_eq!(ops.op_spans["aten::mm"][0], sel.span);
    // and its timeline lane is scrolled into view and flashing
    assert!(h.state().timeline().flash.is_some());
    // MFU in the summary strip and per step in the tab
    assert!(h.get_all_by_label_contains("MFU").count() > h.state().ws.traces[0].ops_blocking().efficiency.steps.len());
}

#[test]
fn the_step_strip_shows_each_step_and_a_click_zooms_to_it() {
    let exp = expected("gpt_train.report.json");
    let mut h = harness(app_with(&["gpt_train.json.gz"]));
    h.run_steps(2);
    let steps = exp["steps"].as_array().unwrap();
    let d = h.state().ws.traces[0].steps();
    assert_eq!(d.len(), steps.len());
    for (s, w) in d.iter().zip(steps) {
        assert_eq!(
            (s.name.as_str(), s.start_ns, s.dur_ns),
            (w["name"].as_str().unwrap(), w["start_ns"].as_i64().unwrap(), w["dur_ns"].as_i64().unwrap())
        );
    }
    // the viewer opened on the steps: the window starts near the first and ends near the last
    let (w0, w1) = h.state().timeline_state().view.window(h.state().timeline().plot_width);
    let (a, b) = (steps[0]["start_ns"].as_i64().unwrap(), {
        let l = &steps[steps.len() - 1];
        l["start_ns"].as_i64().unwrap() + l["dur_ns"].as_i64().unwrap()
    });
    let pad = (b - a) / 20;
    assert!(w0 >= a - pad && w0 <= a && w1 >= b && w1 <= b + pad, "window {w0}..{w1} vs steps {a}..{b}");
    // a click on ProfilerStep#3's box shows that step
    let s3 = &steps[1];
    let (s, e) = (s3["start_ns"].as_i64().unwrap(), s3["start_ns"].as_i64().unwrap() + s3["dur_ns"].as_i64().unwrap());
    let tl = h.state().timeline();
    let plot =
        tl.layout.rows.iter().find(|r| matches!(r.kind, strobe_ui::timeline::RowKind::Steps { .. })).unwrap().clone();
    let x = h.state().timeline_state().view.x_of((s + e) / 2, tl.last_plot().min.x);
    let y = tl.last_plot().min.y + plot.y + plot.h / 2.0;
    click_at(&mut h, egui::pos2(x, y));
    let tl = h.state().timeline();
    let (w0, w1) = h.state().timeline_state().view.window(tl.plot_width);
    assert!(w0 <= s && e <= w1 && (w1 - w0) < (e - s) * 2, "zoomed to ProfilerStep#3: {w0}..{w1}");
}

/// The per-op figures are not waited for before the trace is shown: a loaded trace gets them
/// from a thread of its own, soon after, and they are the figures computed directly.
#[test]
fn the_ops_figures_arrive_after_the_trace_is_shown() {
    let opts = strobe_import::LoadOptions::in_memory();
    let Ok(strobe_import::Source::Trace(store)) = strobe_import::open(&common::sample("gpt_train.json.gz"), &opts)
    else {
        panic!("the sample is a trace")
    };
    let t = strobe_ui::workspace::Trace::new(common::sample("gpt_train.json.gz"), *store, &common::ten_microseconds());
    let t0 = std::time::Instant::now();
    while t.ops().is_none() {
        assert!(t0.elapsed() < std::time::Duration::from_secs(120), "the figures never came");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let direct = strobe_ui::workspace::OpFigures::of(&t.store, &strobe_analysis::figures::TraceFigures::default());
    let got = t.ops().unwrap();
    assert!(!got.efficiency.ops.is_empty());
    assert_eq!(got.efficiency, direct.efficiency);
    assert_eq!(got.op_spans, direct.op_spans);
}

/// View ▸ Steps: the pattern a user sets decides the steps everywhere, the Efficiency tab's MFU
/// per step included, found again on the background threads. Expected names from the oracle
/// (tests/expected/gpt_train.report.json): its steps that the pattern matches.
#[test]
fn a_step_pattern_decides_the_steps_and_the_mfu_per_step() {
    let exp = expected("gpt_train.report.json");
    let want: Vec<&str> = exp["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .filter(|n| ["ProfilerStep#3", "ProfilerStep#4"].contains(n))
        .collect();
    assert_eq!(want.len(), 2, "the oracle has both steps");
    let mut app = app_with(&["gpt_train.json.gz"]);
    app.set_bottom_tab(BottomTab::Efficiency);
    let mut h = harness(app);
    h.state_mut().push(strobe_ui::commands::Command::SetStepPattern("ProfilerStep#[34]".into()));
    step_until(&mut h, |a| a.ws.traces.iter().all(|t| !t.derived.pending()));
    let t = &h.state().ws.traces[0];
    let names: Vec<&str> = t.steps().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, want, "the timeline's steps");
    let mfu: Vec<&str> = t.ops().expect("per-op figures").efficiency.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(mfu, want, "MFU per step of the pattern's steps");
    // and back to the built-in rules: every step again
    h.state_mut().push(strobe_ui::commands::Command::SetStepPattern(String::new()));
    step_until(&mut h, |a| a.ws.traces.iter().all(|t| !t.derived.pending()));
    let t = &h.state().ws.traces[0];
    assert_eq!(t.ops().unwrap().efficiency.steps.len(), exp["steps"].as_array().unwrap().len());
}
