//! The memory pane's breakdown with egui_kittest: the categories at the peak, the source lines
//! (a click shows the line's largest allocation in the timeline), the flame graph, and the
//! compare mode against the snapshot opened before.

use crate::common::{app_with, harness};
use egui_kittest::kittest::Queryable;
use strobe_ui::memory::MemoryView;
use strobe_ui::StrobeApp;

/// Runs frames until `done` holds (the classifier and the comparison run on workers).
fn until(h: &mut egui_kittest::Harness<'_, StrobeApp>, what: &str, done: impl Fn(&StrobeApp) -> bool) {
    for _ in 0..400 {
        h.run_steps(1);
        if done(h.state()) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("{what}: never happened");
}

#[test]
fn categories_sources_and_flame_graph_of_the_peak() {
    let mut h = harness(app_with(&["mem_adamw_b8.pickle"]));
    until(&mut h, "categories drawn", |a| a.memory().unwrap().category_rows > 0);
    let want = strobe_analysis::memory::analyse_with_breakdown(&h.state().ws.memory.as_ref().unwrap().snapshot);
    let b = want.devices[0].peak_breakdown.clone().unwrap();
    let nonzero = b.categories.iter().filter(|c| c.count > 0).count();
    assert_eq!(h.state().memory().unwrap().category_rows, nonzero, "a row per category holding bytes");
    for label in ["parameters", "optimizer state", "activations", "at the peak"] {
        h.get_by_label(label);
    }
    h.get_by_label("By source line and stack").click();
    until(&mut h, "flame graph drawn", |a| a.memory().unwrap().flame.drawn > 1);
    // the largest line is a link to its largest allocation in the active-memory timeline
    let top = &b.by_source[0];
    h.get_by_label(&top.frame).click();
    h.run_steps(3);
    let p = h.state().memory().unwrap();
    assert_eq!(p.view, MemoryView::Allocations);
    let st = p.states[0].as_ref().unwrap();
    assert_eq!(st.active.selected, top.allocations.first().copied());
    assert_eq!(st.history.position(), b.position, "the history moved to the peak");
    // the selected allocation says what it is and why
    let i = st.active.selected.unwrap();
    let doc = h.state().ws.memory.as_ref().unwrap();
    let rule = strobe_analysis::memory::Classifier::new(&doc.snapshot, 0).rule(&st.timeline.allocs[i]);
    h.get_by_label(&format!("{}: {}", strobe_ui::memory::breakdown_view::category_label(rule.category()), rule.text()));
}

#[test]
fn compare_mode_against_the_snapshot_opened_before() {
    let mut h = harness(app_with(&["mem_adamw_b8.pickle", "mem_adamw_b16.pickle"]));
    h.run_steps(2);
    h.get_by_label("Compare with mem_adamw_b8.pickle").click();
    until(&mut h, "comparison drawn", |a| a.memory().unwrap().compare.category_rows > 0);
    let p = h.state().memory().unwrap();
    let d = p.compare.result.as_ref().unwrap().devices[0].clone();
    assert_eq!(p.compare.category_rows, d.categories.iter().filter(|c| c.a_bytes != 0 || c.b_bytes != 0).count());
    assert_eq!(p.compare.source_rows, d.by_source.iter().filter(|s| s.delta != 0).count().min(40));
    assert_eq!(d.categories.iter().map(|c| c.delta).sum::<i64>(), d.peak_allocated_delta);
    h.get_by_label("A: mem_adamw_b8.pickle  ->  B: mem_adamw_b16.pickle");
    h.get_by_label("swap A and B").click();
    until(&mut h, "swapped comparison", |a| {
        a.memory().unwrap().compare.result.as_ref().is_some_and(|r| r.a == "mem_adamw_b16.pickle")
    });
    let d2 = &h.state().memory().unwrap().compare.result.as_ref().unwrap().devices[0];
    assert_eq!(d2.peak_allocated_delta, -d.peak_allocated_delta);
}
