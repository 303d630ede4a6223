//! The Gaps tab and the summary strip's headline on a real Nsight Systems export, against the
//! independent oracle tests/expected/nsys/gaps_expected.py: clicking a gap's row shows that
//! gap on the timeline and selects the op that held the host.

use crate::common::{app_with, click_at, expected, harness, step_until};
use egui_kittest::kittest::Queryable;
use strobe_analysis::report::fmt_ns;

#[test]
fn a_gap_row_shows_the_gap_and_selects_the_op_that_held_the_host() {
    let mut h = harness(app_with(&["nsys_gpt_single.sqlite"]));
    h.state().ws.traces[0].wait_for_analyses();
    step_until(&mut h, |a| a.ws.traces[0].derived.overview_ready());
    h.run_steps(2);
    let exp = expected("nsys/nsys_gpt_single.gaps.json");

    // the strip covers the six steps: idle = the oracle's idle over the steps' window
    let d = &exp["headline"]["devices"][0];
    let (idle, window) = (d["idle_ns"].as_i64().unwrap(), d["window_ns"].as_i64().unwrap());
    h.get_by_label(&format!("over 6 steps, {}", fmt_ns(window)));
    h.get_by_label(&format!("idle {:.1}%", idle as f64 * 100.0 / window as f64));

    h.get_by_label("Gaps").click();
    h.run_steps(3);
    // the longest gap held by an op: the oracle names it and its length labels its row
    let g = exp["largest_gaps"].as_array().unwrap().iter().find(|g| !g["held_by"].is_null()).unwrap().clone();
    let (start, len) = (g["start_ns"].as_i64().unwrap(), g["len_ns"].as_i64().unwrap());
    let held = g["held_by"].as_str().unwrap();
    // a click on the row, as a user makes it
    let at = h.get_by_label(&fmt_ns(len)).rect().center();
    click_at(&mut h, at);
    let app = h.state();
    let (w0, w1) = app.timeline_state().view.window(app.timeline().plot_width);
    assert!(w0 <= start && w1 >= start + len, "the gap [{start}, {}) is in view: [{w0}, {w1})", start + len);
    assert!(w1 - w0 < 2 * len, "zoomed onto the gap: [{w0}, {w1}) for {len} ns");
    let sel = app.sel.span.expect("the op that held the host is selected");
    assert_eq!(app.ws.traces[0].store.span_name(sel.span), held);
}

#[test]
fn the_load_summary_shows_the_profilers_warnings() {
    let mut h = harness(app_with(&["nsys_fuser_h200.sqlite"]));
    h.get_by_label("Load summary").click();
    h.run_steps(3);
    // each distinct warning the oracle reads from DIAGNOSTIC_EVENT, with how often it came
    for d in expected("nsys/nsys_fuser_h200.gaps.json")["diagnostics"].as_array().unwrap() {
        let n = d["count"].as_i64().unwrap();
        let times = if n > 1 { format!(" (reported {n} times)") } else { String::new() };
        h.get_by_label(&format!("nsys {}: {}{times}", d["severity"].as_str().unwrap(), d["text"].as_str().unwrap()));
    }
}

/// The Start header puts the gaps in time order, the Length header back to longest first; the
/// first row is then the oracle's earliest, then its longest, gap.
#[test]
fn the_start_and_length_headers_order_the_gaps() {
    let mut h = harness(app_with(&["nsys_gpt_single.sqlite"]));
    h.state().ws.traces[0].wait_for_analyses();
    step_until(&mut h, |a| a.ws.traces[0].derived.overview_ready());
    h.get_by_label("Gaps").click();
    h.run_steps(3);
    let exp = expected("nsys/nsys_gpt_single.gaps.json");
    let gaps = exp["largest_gaps"].as_array().unwrap();
    let origin = h.state().ws.origin();
    let start_text = |g: &serde_json::Value| {
        let t = &h.state().ws.traces[0];
        fmt_ns(t.to_shared(g["start_ns"].as_i64().unwrap()) - origin)
    };
    // the row of `first` is drawn and above `second`'s, if that one is drawn at all (the table
    // draws only the rows in view)
    let above = |h: &egui_kittest::Harness<'_, strobe_ui::StrobeApp>, first: &str, second: &str| {
        let y = h.get_by_label(first).rect().center().y;
        h.query_by_label(second).is_none_or(|n| y < n.rect().center().y)
    };
    let longest = gaps.iter().max_by_key(|g| g["len_ns"].as_i64().unwrap()).unwrap();
    let earliest = gaps.iter().min_by_key(|g| g["start_ns"].as_i64().unwrap()).unwrap();
    assert_ne!(longest, earliest, "the fixture's longest gap is not its first");
    let (l_start, e_start) = (start_text(longest), start_text(earliest));
    assert!(above(&h, &l_start, &e_start), "longest first");
    h.get_by_label("Start").click();
    h.run_steps(3);
    assert!(above(&h, &e_start, &l_start), "time order after a click on Start");
    h.get_by_label("Length").click();
    h.run_steps(3);
    assert!(above(&h, &l_start, &e_start), "longest first again after a click on Length");
}
