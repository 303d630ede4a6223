//! Pipeline parallelism in the viewer with egui_kittest, on the 4 recorded 1F1B
//! ranks (tests/tools/record_pp4.py runs stages 0..3 on ranks 1, 3, 0, 2): the timeline stacks
//! the ranks in stage order with the stage on each header, the shaded bubble parts add up to
//! the figures, the Pipeline tab shows the stage × step heat map and a click on a cell shows
//! that stage's rank and step. Expected figures: tests/expected/pp4_1f1b.pipeline.json
//! (tests/expected/pipeline_expected.py, from the raw Kineto events).

use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use strobe_ui::app::BottomTab;
use strobe_ui::timeline::{GroupKey, RowKind};
use strobe_ui::StrobeApp;

use crate::common;

fn expected() -> serde_json::Value {
    common::expected("pp4_1f1b.pipeline.json")
}

fn i(v: &serde_json::Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// The 4 ranks opened in file order, the ranks' alignment and the pipeline settled.
fn harness() -> Harness<'static, StrobeApp> {
    let files: Vec<String> = (0..4).map(|r| format!("pp4_1f1b_rank{r}.json.gz")).collect();
    let names: Vec<&str> = files.iter().map(String::as_str).collect();
    let mut app = common::app_with_ranks(&names);
    app.settle_pipeline_blocking(&egui::Context::default());
    common::harness(app)
}

/// The rank each trace header of the timeline stands for, top to bottom, and its label.
fn headers(app: &StrobeApp) -> Vec<(i64, String)> {
    let rank = |id| app.ws.trace(id).and_then(|t| t.store.meta.distributed.as_ref()?.rank).unwrap();
    app.timeline()
        .layout
        .rows
        .iter()
        .filter_map(|r| match &r.kind {
            RowKind::Header { key: GroupKey::Trace(id), label, .. } => Some((rank(*id), label.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn ranks_stack_in_stage_order_with_the_stage_on_each_header() {
    let h = harness();
    let want = expected();
    let order: Vec<i64> = want["stage_order"].as_array().unwrap().iter().map(i).collect();
    assert_eq!(order, vec![1, 3, 0, 2], "the recording's placement (record_pp4.py)");
    let app = h.state();
    // the workspace keeps rank order; the timeline stacks by stage
    let ws_ranks: Vec<i64> =
        app.ws.traces.iter().map(|t| t.store.meta.distributed.as_ref().unwrap().rank.unwrap()).collect();
    assert_eq!(ws_ranks, vec![0, 1, 2, 3]);
    let hs = headers(app);
    assert_eq!(hs.iter().map(|h| h.0).collect::<Vec<_>>(), order, "{hs:?}");
    for (stage, (rank, label)) in hs.iter().enumerate() {
        assert!(label.starts_with(&format!("stage {stage} · rank {rank}")), "{label}");
    }
    // each stage has its strip of microbatches and bubbles under its step strip
    let strips = app.timeline().layout.rows.iter().filter(|r| matches!(r.kind, RowKind::Pipeline { .. })).count();
    assert_eq!(strips, 4);
    // the Pipeline tab opened by itself: a pipeline is what these traces are about
    assert_eq!(app.bottom_tab(), BottomTab::Pipeline);
}

#[test]
fn the_shaded_bubble_parts_are_the_figures() {
    let h = harness();
    let want = expected();
    let pv = h.state().ws.pipeline.clone().expect("a pipeline");
    let total = |v: &[(i64, i64)]| v.iter().map(|x| x.1 - x.0).sum::<i64>();
    for (si, ws) in want["steps"].as_array().unwrap().iter().enumerate() {
        for w in ws["stages"].as_array().unwrap() {
            let k = pv.index_of_rank(i(&w["rank"])).unwrap();
            let pr = &pv.pipeline.ranks[k];
            assert_eq!(pr.stage as i64, i(&w["stage"]));
            let b = &pr.bubbles[si];
            let ctx = format!("{} stage {}", ws["name"], pr.stage);
            assert_eq!(b.step, ws["name"].as_str().unwrap());
            assert_eq!(b.t1 - b.t0, i(&w["step_ns"]), "{ctx}");
            assert_eq!(total(&b.work), i(&w["work_ns"]), "{ctx} work");
            assert_eq!(total(&b.warmup), i(&w["warmup_ns"]), "{ctx} warm-up");
            assert_eq!(total(&b.cooldown), i(&w["cooldown_ns"]), "{ctx} cool-down");
            assert_eq!(total(&b.p2p_wait), i(&w["p2p_wait_ns"]), "{ctx} P2P wait");
            // the parts and the work tile the step: nothing shaded twice, nothing left out
            let parts =
                total(&b.work) + total(&b.warmup) + total(&b.cooldown) + total(&b.p2p_wait) + total(&b.other_idle);
            assert_eq!(parts, b.t1 - b.t0, "{ctx}");
            // labelled microbatches: 8 forward and 8 backward start in the step
            let n = pr.microbatches.iter().filter(|m| m.start_ns >= b.t0 && m.start_ns < b.t1).count() as i64;
            assert_eq!(n, i(&w["forward"]) + i(&w["backward"]), "{ctx}");
        }
    }
}

#[test]
fn pipeline_tab_is_a_stage_by_step_heat_map() {
    let h = harness();
    let want = expected();
    let steps = want["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3, "ProfilerStep#2..4");
    let mut cells = 0;
    for s in steps {
        for w in s["stages"].as_array().unwrap() {
            let label = format!(
                "{} stage {} rank {}: {:.1} %",
                s["name"].as_str().unwrap(),
                i(&w["stage"]),
                i(&w["rank"]),
                w["bubble_pct"].as_f64().unwrap()
            );
            h.get_by_label(&label);
            cells += 1;
        }
    }
    assert_eq!(cells, 4 * steps.len());
    assert_eq!(
        h.query_all_by_label_contains(" rank ").filter(|n| format!("{n:?}").contains(" %")).count(),
        cells,
        "one cell per stage and step, no more"
    );
    h.get_by_label_contains("1F1B schedule");
    h.get_by_label_contains(&format!("theoretical bubble {:.1} %", want["theoretical_bubble_pct"].as_f64().unwrap()));
    h.get_by_label_contains("(p−1)/(m+p−1)");
    h.get_by_label_contains(&format!(
        "bottleneck: stage {} (rank {})",
        i(&want["bottleneck_stage"]),
        i(&want["bottleneck_rank"])
    ));
}

#[test]
fn clicking_a_cell_shows_that_stages_rank_and_step() {
    let mut h = harness();
    let want = expected();
    let s = &want["steps"][1];
    let name = s["name"].as_str().unwrap();
    let w = &s["stages"][2];
    let (stage, rank) = (i(&w["stage"]), i(&w["rank"]));
    let id =
        h.state().ws.traces.iter().find(|t| t.store.meta.distributed.as_ref().unwrap().rank == Some(rank)).unwrap().id;
    // the other ranks open (so the timeline is taller than its area and can scroll), this one folded
    let others: Vec<_> = h.state().ws.traces.iter().map(|t| t.id).filter(|&x| x != id).collect();
    for x in others {
        h.state_mut().timeline_state_mut().collapsed.remove(&GroupKey::Trace(x));
    }
    h.state_mut().timeline_state_mut().collapsed.insert(GroupKey::Trace(id));
    h.run_steps(2);
    let label = format!("{name} stage {stage} rank {rank}: ");
    let at = h.get_by_label_contains(&label).rect().center();
    common::click_at(&mut h, at);
    let app = h.state();
    let t = app.ws.trace(id).unwrap();
    let step = t.steps().iter().find(|x| x.name == name).unwrap();
    assert_eq!(step.dur_ns, i(&w["step_ns"]), "the oracle's step");
    let (a, b) = t.range_to_shared((step.start_ns, step.start_ns + step.dur_ns));
    let (w0, w1) = app.timeline_state().view.window(app.timeline().plot_width);
    assert!(w0 <= a && b <= w1, "the step on screen: {w0}..{w1} vs {a}..{b}");
    assert!(w1 - w0 < (b - a) * 2, "zoomed to the step: {}", w1 - w0);
    assert!(!app.timeline_state().collapsed.contains(&GroupKey::Trace(id)), "its rank expanded");
    // its header scrolled to the top
    let header = app
        .timeline()
        .layout
        .rows
        .iter()
        .find(|r| matches!(r.kind, RowKind::Header { key: GroupKey::Trace(x), .. } if x == id))
        .unwrap();
    assert_eq!(app.timeline_state().scroll_y, header.y);
}
