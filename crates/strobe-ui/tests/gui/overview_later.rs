//! A trace is drawn before its figures are computed: the first frames show the timeline and
//! say the overview is on its way; when the steps arrive the view moves onto them, unless the
//! user already moved it.

use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use strobe_ui::StrobeApp;

use crate::common;
use crate::common::{app_before_the_figures_of, expected};

/// The app with gpt_train.json.gz added as the loader hands it over: no figure computed (the
/// test computes them when it chooses, `Trace::wait_for_analyses`).
fn app_before_the_figures() -> Harness<'static, StrobeApp> {
    common::harness(app_before_the_figures_of("gpt_train.json.gz"))
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
    h.state().timeline_state().view.window(tl.plot_width)
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
    let (pad, px) = ((b - a) / 50, h.state().timeline_state().view.npp.ceil() as i64);
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

/// A laid-out row: its kind (the variant's name), top and height.
type RowAt = (String, f32, f32);

fn rows(h: &Harness<'static, StrobeApp>) -> Vec<RowAt> {
    let rows = &h.state().timeline().layout.rows;
    rows.iter().map(|r| (format!("{:?}", r.kind).split([' ', '{']).next().unwrap().to_string(), r.y, r.h)).collect()
}

/// The rows laid out before the figures and after them, the figures computed in between.
fn rows_before_and_after(file: &str) -> (Vec<RowAt>, Vec<RowAt>) {
    let mut h = common::harness(app_before_the_figures_of(file));
    let before = rows(&h);
    h.state().ws.traces[0].wait_for_analyses();
    h.run_steps(3);
    (before, rows(&h))
}

#[test]
fn the_lanes_stay_where_they_are_when_the_overview_arrives() {
    // the overview's rows are held open before it comes: the step strip, the bands, the NVTX
    // projection (at its tallest, four rows, which these traces' ranges fill on the GPU) and
    // the memory level. Every row keeps its place; only the derived series' group, folded at
    // the bottom, is added
    for (f, kinds) in [
        ("nsys_ddp_2proc.sqlite", &["Steps", "Bands", "NvtxGpu"][..]),
        ("ddp_rank0.json.gz", &["Steps", "Bands", "NvtxGpu", "MemoryLevel"][..]),
    ] {
        let (before, after) = rows_before_and_after(f);
        for k in kinds {
            assert!(before.iter().any(|r| r.0 == *k), "{f}: the {k} row is held before the figures: {before:?}");
        }
        assert_eq!(&after[..before.len()], &before[..], "{f}");
        assert!(after[before.len()..].iter().all(|r| r.0 == "Header"), "{f}: {:?}", &after[before.len()..]);
    }
    // gpt_train's ranges overlap three deep on the GPU: the held row shrinks by one of its
    // rows, and what is under it moves up by that alone
    let (before, after) = rows_before_and_after("gpt_train.json.gz");
    let nvtx = before.iter().position(|r| r.0 == "NvtxGpu").unwrap();
    let shrink = before[nvtx].2 - after[nvtx].2;
    assert!(shrink > 10.0 && shrink < 30.0, "one row of ranges: {shrink}");
    for (i, (b, a)) in before.iter().zip(&after).enumerate() {
        assert_eq!(a.0, b.0, "row {i}");
        let moved = if i > nvtx { shrink } else { 0.0 };
        assert_eq!(a.1, b.1 - moved, "row {i} ({})", a.0);
    }
}
