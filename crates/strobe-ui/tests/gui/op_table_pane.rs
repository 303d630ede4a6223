//! The Ops tab (torch.profiler's key_averages table): sorting by a column, a click selecting
//! the op's longest occurrence and highlighting every occurrence, a double-click bringing it
//! into view. Expected figures from the independent oracle `tests/expected/ops_expected.py`.

use crate::common::*;
use egui_kittest::kittest::Queryable;

fn ops_tab() -> egui_kittest::Harness<'static, strobe_ui::StrobeApp> {
    let app = app_with(&["gpt_train.json.gz"]);
    app.ws.traces[0].wait_for_analyses();
    // frames 50 ms apart (the default 250 ms would part a double-click's two clicks)
    let mut h = egui_kittest::Harness::builder()
        .with_size([1600.0, 1000.0])
        .with_step_dt(0.05)
        .build_ui_state(|ui, app: &mut strobe_ui::StrobeApp| app.frame(ui), app);
    h.run_steps(3);
    h.get_by_label("Ops").click();
    h.run_steps(3);
    h
}

/// The oracle's host row with the largest `key`.
fn top_by(key: &str) -> (String, i64) {
    let want = expected("gpt_train.ops.json");
    let top = want["by_op"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["device"] == "cpu")
        .max_by_key(|r| r[key].as_i64().unwrap())
        .unwrap()
        .clone();
    (top["name"].as_str().unwrap().to_string(), top[key].as_i64().unwrap())
}

#[test]
fn sorted_by_a_column_header() {
    let mut h = ops_tab();
    // opens by device total, largest first
    let (name, total) = top_by("device_total_ns");
    let rows = h.state().ops.visible(&h.state().ws);
    assert_eq!((rows[0].name.as_str(), rows[0].device_total_ns), (name.as_str(), total));
    assert!(rows.iter().all(|r| !r.on_device), "host rows unless kernel rows are asked for");
    // a click on "Self CPU" sorts by it, largest first; a second click reverses
    h.get_by_label("Self CPU").click();
    h.run_steps(2);
    let rows = h.state().ops.visible(&h.state().ws);
    let (name, self_cpu) = top_by("self_cpu_ns");
    assert_eq!((rows[0].name.as_str(), rows[0].self_cpu_ns), (name.as_str(), self_cpu));
    assert!(rows.windows(2).all(|w| w[0].self_cpu_ns >= w[1].self_cpu_ns));
    h.get_by_label("Self CPU v").click();
    h.run_steps(2);
    let rows = h.state().ops.visible(&h.state().ws);
    assert!(rows.windows(2).all(|w| w[0].self_cpu_ns <= w[1].self_cpu_ns));
}

#[test]
fn a_row_selects_the_longest_occurrence_and_highlights_all() {
    let mut h = ops_tab();
    h.get_by_label("aten::mm").click();
    h.run_steps(3);
    let app = h.state();
    let t = &app.ws.traces[0];
    let sel = app.sel.span.expect("the longest aten::mm is selected");
    assert_eq!(t.store.span_name(sel.span), "aten::mm");
    let dur = |s: u32| t.store.span_end(s) - t.store.span_start(s);
    let longest = (0..t.store.span_count() as u32).filter(|&s| t.store.span_name(s) == "aten::mm").map(dur).max();
    assert_eq!(Some(dur(sel.span)), longest);
    let mm = t.store.span_meta(sel.span).name;
    assert!(app.highlight().active && app.highlight().matches(t.id, mm), "every aten::mm is highlighted");
    assert!(!app
        .highlight()
        .matches(t.id, t.store.span_meta(t.derived.analysis.op_table_ready().unwrap().by_name[0].longest_span).name));
    // the row is drawn selected: a double-click brings the span into view
    // (first zoomed out to the whole trace, where a single aten::mm is under a pixel)
    let ctx = h.ctx.clone();
    h.state_mut().apply(strobe_ui::commands::Command::FitAll, &ctx);
    h.run_steps(2);
    let npp_before = h.state().timeline_state().view.npp;
    // (Details names it too now: the table's cell is the leftmost); both clicks in one frame
    let at = {
        let nodes: Vec<_> = h.get_all_by_label("aten::mm").collect();
        nodes.into_iter().min_by(|a, b| a.rect().left().total_cmp(&b.rect().left())).unwrap().rect().center()
    };
    h.event(egui::Event::PointerMoved(at));
    for pressed in [true, false, true, false] {
        let button = egui::PointerButton::Primary;
        h.event(egui::Event::PointerButton { pos: at, button, pressed, modifiers: Default::default() });
    }
    h.run_steps(3);
    let app = h.state();
    let v = &app.timeline_state().view;
    let start = t_start(&h, sel.span);
    let t0 = v.origin as f64 + v.t0;
    assert!(start as f64 >= t0 && (start as f64) < t0 + v.npp * 1600.0, "the span is in the window");
    assert!(v.npp < npp_before / 10.0, "zoomed in to it: {} then {}", npp_before, v.npp);
}

fn t_start(h: &egui_kittest::Harness<'static, strobe_ui::StrobeApp>, span: u32) -> i64 {
    h.state().ws.traces[0].store.span_start(span)
}
