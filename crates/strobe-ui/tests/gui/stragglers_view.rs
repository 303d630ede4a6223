//! The Stragglers section and the heat map's colours with egui_kittest, on the two DDP ranks
//! (rank 1 planted slow in ProfilerStep#3). Expected figures from tests/expected/ddp.ranks.json
//! (tests/expected/ranks_expected.py, independent).

use crate::common;

use egui_kittest::kittest::Queryable;
use strobe_ui::app::BottomTab;
use strobe_ui::ranks::{heat_map, Metric, Section};

fn harness() -> egui_kittest::Harness<'static, strobe_ui::StrobeApp> {
    let mut app = common::app_with_ranks(&["ddp_rank0.json.gz", "ddp_rank1.json.gz"]);
    app.set_bottom_tab(BottomTab::Ranks);
    common::harness(app)
}

#[test]
fn the_verdict_comes_first_and_a_finding_shows_its_step() {
    let want = common::expected("ddp.ranks.json");
    let mut h = harness();
    h.state_mut().ranks_mut().section = Section::Stragglers;
    h.run_steps(2);
    // room for both findings
    common::raise_bottom_panel(&mut h, 350.0);
    // the verdict line first: each straggling rank with its count of steps (the oracle's
    // steps, one each here: one-off), and the pattern, several ranks by turns
    let found: Vec<(String, i64)> = want["straggler_steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["step"].as_str().unwrap().to_string(), s["rank"].as_i64().unwrap()))
        .collect();
    assert_eq!(found, vec![("ProfilerStep#2".to_string(), 0), ("ProfilerStep#3".to_string(), 1)]);
    h.get_by_label(
        "Straggler: rank 0 in 1 of 3 steps (one-off), rank 1 in 1 of 3 steps (one-off) — several ranks by turns",
    );
    // each finding's figures as labelled rows, the oracle's numbers
    assert_eq!(h.get_all_by_label("others waited for it").count(), 2);
    for s in want["straggler_steps"].as_array().unwrap() {
        let ms = |k: &str| format!("{:.3} ms", s[k].as_i64().unwrap() as f64 / 1e6);
        h.get_by_label_contains(&format!("{} (median over the other ranks)", ms("median_others_wait_ns")));
    }
    // the bar: 10 % of the median step
    let bar = want["median_step_ns"].as_i64().unwrap() as f64 / 10.0 / 1e6;
    assert_eq!(h.get_all_by_label(&format!("{bar:.3} ms (others' wait less its own must reach it)")).count(), 2);
    // show in timeline: rank 1's ProfilerStep#3 fills the window
    let s3 = &want["steps"][1]["per_rank"][1];
    assert_eq!(want["steps"][1]["name"], "ProfilerStep#3");
    let (start, dur) = (s3["start_ns"].as_i64().unwrap(), s3["dur_ns"].as_i64().unwrap());
    let off = h.state().ws.traces[1].offset_ns;
    // the second finding's button: rank 1's ProfilerStep#3
    let at = h.get_all_by_label("show in timeline").nth(1).unwrap().rect().center();
    common::click_at(&mut h, at);
    let app = h.state();
    let (w0, w1) = app.timeline_state().view.window(app.timeline().plot_width);
    assert!(w0 <= start + off && start + off + dur <= w1, "step on screen: {w0}..{w1}");
    assert!(w1 - w0 < dur * 2, "zoomed to the step: {}", w1 - w0);
}

/// Each cell is coloured against its own step: the median of that step's ranks, as a share
/// of that step's median time. Two ranks: the median is their mean, so in a step the two
/// cells are mirror images, and a step where the ranks wait alike is grey for both.
#[test]
fn heat_map_cells_are_coloured_by_their_steps_spread() {
    let want = common::expected("ddp.ranks.json");
    let h = harness();
    let c = h.state().ranks().computed.as_ref().unwrap();
    let grey = heat_map::heat(0, 0, 1);
    for (si, step) in want["steps"].as_array().unwrap().iter().enumerate() {
        let per: Vec<(i64, i64)> = step["per_rank"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["wait_ns"].as_i64().unwrap(), p["dur_ns"].as_i64().unwrap()))
            .collect();
        assert_eq!(per.len(), 2);
        let median_wait = (per[0].0 + per[1].0) / 2;
        let median_dur = (per[0].1 + per[1].1) / 2;
        for (ri, (wait, _)) in per.iter().enumerate() {
            let cell = c.heat.cell(&c.report, ri, si).expect("every rank has every step");
            assert_eq!(cell.wait_ns, *wait);
            let got = c.heat.colour(Metric::Wait, si, cell);
            assert_eq!(got, heat_map::heat(*wait, median_wait, median_dur), "{} rank {ri}", step["name"]);
        }
        let spread = (per[0].0 - per[1].0).abs() as f64 / 2.0 / median_dur as f64;
        let cols: Vec<_> =
            (0..2).map(|ri| c.heat.colour(Metric::Wait, si, c.heat.cell(&c.report, ri, si).unwrap())).collect();
        if spread <= heat_map::NEUTRAL {
            assert_eq!(cols, vec![grey, grey], "{}: alike, grey", step["name"]);
        } else {
            let red = |c: egui::Color32| c.r() > c.g();
            assert!(red(cols[0]) != red(cols[1]), "{}: one red, one green: {cols:?}", step["name"]);
        }
    }
    // the rank that waited in ProfilerStep#2 is not the one that waited in ProfilerStep#3
    let red_in = |si: usize| {
        (0..2).find(|&ri| {
            let col = c.heat.colour(Metric::Wait, si, c.heat.cell(&c.report, ri, si).unwrap());
            col.r() > col.g() + 40
        })
    };
    assert_eq!((red_in(0), red_in(1)), (Some(1), Some(0)));
}
