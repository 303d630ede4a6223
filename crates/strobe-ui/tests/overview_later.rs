//! A trace is drawn before its figures are computed: the first frames show the timeline and
//! say the overview is on its way; when the steps arrive the view moves onto them, unless the
//! user already moved it.

use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use strobe_ui::workspace::Trace;
use strobe_ui::{Settings, StrobeApp};

mod common;
use common::{expected, sample};

/// The app with gpt_train.json.gz added as the loader hands it over: no figure computed (the
/// test computes them when it chooses, `Trace::wait_for_analyses`).
fn app_before_the_figures() -> Harness<'static, StrobeApp> {
    let opts = strobe_import::LoadOptions::in_memory();
    let Ok(strobe_import::Source::Trace(store)) = strobe_import::open(&sample("gpt_train.json.gz"), &opts) else {
        panic!("the sample is a trace")
    };
    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    app.add_trace(Trace::unanalysed(sample("gpt_train.json.gz"), *store, 10_000));
    common::harness(app)
}

/// The first and last step's edges (tests/expected: the oracle's ProfilerSteps).
fn steps_extent() -> (i64, i64) {
    let exp = expected("gpt_train.report.json");
    let steps = exp["steps"].as_array().unwrap();
    let l = &steps[steps.len() - 1];
    (steps[0]["start_ns"].as_i64().unwrap(), l["start_ns"].as_i64().unwrap() + l["dur_ns"].as_i64().unwrap())
}

fn window(h: &Harness<'static, StrobeApp>) -> (i64, i64) {
    let tl = h.state().timeline();
    tl.view.window(tl.plot_width)
}

#[test]
fn the_first_frames_draw_the_trace_and_the_view_moves_onto_the_steps_when_they_arrive() {
    let mut h = app_before_the_figures();
    // drawn: lanes, and the summary saying what is still coming (not "no GPU activity")
    assert!(h.state().timeline().stats.items > 0, "the first frames drew the trace's lanes");
    h.get_by_label_contains("measuring GPU time");
    assert!(h.query_by_label_contains("no GPU activity").is_none());
    h.get_by_label_contains("measuring kernels");
    // no steps yet: the whole trace is shown
    let (t_min, t_max) = (h.state().ws.traces[0].t_min, h.state().ws.traces[0].t_max);
    let (w0, w1) = window(&h);
    assert!(w0 <= t_min && t_max <= w1, "whole trace {t_min}..{t_max} in the window {w0}..{w1}");
    let first = (w0, w1);

    h.state().ws.traces[0].wait_for_analyses();
    h.run_steps(3);
    // the opening fit on the steps: their extent and a fiftieth of it each side, to a pixel
    let (a, b) = steps_extent();
    let (w0, w1) = window(&h);
    let (pad, px) = ((b - a) / 50, h.state().timeline().view.npp.ceil() as i64);
    let (fit0, fit1) = (a - pad, b + pad);
    assert!(
        (first.0 - fit0).abs() > 2 * px || (first.1 - fit1).abs() > 2 * px,
        "the whole-trace window {first:?} is not already the steps' fit {fit0}..{fit1}"
    );
    assert!(
        (w0 - fit0).abs() <= px && (w1 - fit1).abs() <= px,
        "window {w0}..{w1} vs steps {a}..{b} (pad {pad}, a pixel {px} ns)"
    );
    assert!(h.query_by_label_contains("measuring").is_none(), "the overview is drawn");
    h.get_by_label_contains("top kernel:");
}

#[test]
fn a_view_the_user_moved_stays_where_it_is_when_the_steps_arrive() {
    let mut h = app_before_the_figures();
    // zoom in (W) before the figures come
    h.key_press(egui::Key::W);
    h.run_steps(2);
    let moved = window(&h);
    h.state().ws.traces[0].wait_for_analyses();
    h.run_steps(3);
    assert_eq!(window(&h), moved, "the user's view is kept");
}
