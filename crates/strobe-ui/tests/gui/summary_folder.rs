//! A folder of rank summaries (`strobe summarize`) opened in the viewer: the ranks
//! views come from the summaries alone (no trace loads), with the figures the traces give
//! (tests/expected/ddp.ranks.json, tests/expected/ranks_expected.py, independent); a click on
//! a cell opens that rank's trace from the path its summary recorded and shows the step; a
//! rank whose trace is gone says so.

use egui_kittest::kittest::Queryable;
use std::path::{Path, PathBuf};
use strobe_analysis::ranks::report::RankOptions;
use strobe_store::Store;
use strobe_ui::{Settings, StrobeApp};

use crate::common;
use crate::common::sample;

fn summarize(traces: &[PathBuf], dir: &Path) {
    let opts = strobe_import::LoadOptions::in_memory();
    let stores: Vec<Store> = traces.iter().map(|p| strobe_import::load(p, &opts).unwrap()).collect();
    let names: Vec<String> = traces.iter().map(|p| p.display().to_string()).collect();
    let pairs: Vec<(&str, &Store)> = names.iter().map(String::as_str).zip(&stores).collect();
    strobe_cluster::summarize(&pairs, &RankOptions::default(), dir).unwrap();
}

fn app_on(dir: &Path) -> egui_kittest::Harness<'static, StrobeApp> {
    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    let ctx = egui::Context::default();
    app.open_files(vec![dir.to_path_buf()], true, &ctx);
    app.settle_ranks_blocking(&ctx);
    common::harness(app)
}

#[test]
fn summary_folder_gives_the_ranks_views_and_opens_a_rank_on_click() {
    let traces = [sample("ddp_rank0.json.gz"), sample("ddp_rank1.json.gz")];
    let dir = tempfile::tempdir().unwrap();
    summarize(&traces, dir.path());
    let mut h = app_on(dir.path());
    assert!(h.state().ws.traces.is_empty(), "no trace is loaded to show the summaries");
    let c = h.state().ranks().computed.as_ref().expect("merged");
    assert!(c.from_summaries);
    let want = common::expected("ddp.ranks.json");
    assert_eq!(c.report.ranks.len(), 2);
    // the straggler's cell, as on the traces (ranks_pane.rs): rank 1, ProfilerStep#3
    h.get_by_label("ProfilerStep#3 rank 1: 60.350 *");
    h.get_by_label("ProfilerStep#4 rank 0: 39.209");
    let s3 = &want["steps"][1]["per_rank"][1];
    let (start, dur) = (s3["start_ns"].as_i64().unwrap(), s3["dur_ns"].as_i64().unwrap());
    h.get_by_label("ProfilerStep#3 rank 1: 60.350 *").click();
    common::step_until(&mut h, |a| a.ws.traces.len() == 1 && !a.loading());
    h.run_steps(4);
    let app = h.state();
    assert_eq!(app.ws.traces.len(), 1, "rank 1's trace opened beside the summaries");
    assert!(app.ws.summaries.is_some(), "the summaries stay open");
    let t = &app.ws.traces[0];
    assert!(t.path.ends_with("ddp_rank1.json.gz"));
    let offs = want["offsets"]["collective_end"].as_array().unwrap();
    assert_eq!(t.offset_ns, offs[1].as_i64().unwrap(), "the rank's offset from the merge");
    let (w0, w1) = app.timeline_state().view.window(app.timeline().plot_width);
    assert!(w0 <= start + t.offset_ns && start + t.offset_ns + dur <= w1, "step on screen: {w0}..{w1}");
    assert!(w1 - w0 < dur * 2, "zoomed to the step");
}

#[test]
fn a_rank_whose_trace_is_gone_says_so() {
    let work = tempfile::tempdir().unwrap();
    let copy = work.path().join("gone_rank0.json.gz");
    std::fs::copy(sample("ddp_rank0.json.gz"), &copy).unwrap();
    let dir = tempfile::tempdir().unwrap();
    summarize(&[copy.clone(), sample("ddp_rank1.json.gz")], dir.path());
    std::fs::remove_file(&copy).unwrap();
    let mut h = app_on(dir.path());
    h.get_by_label("ProfilerStep#3 rank 0: 58.669").click();
    h.run_steps(3);
    let note = h.state().ranks().note.clone().unwrap_or_default();
    assert!(note.contains("is not on this machine") && note.contains("gone_rank0.json.gz"), "{note}");
    assert!(h.state().ws.traces.is_empty() && !h.state().loading());
}

/// The heat map of 200 ranks × 100 steps (20 000 cells) in a 1600×1000 window paints the
/// cells of the rows on screen only, as one mesh.
#[test]
fn many_ranks_paint_only_the_visible_cells() {
    let opts = strobe_import::LoadOptions::in_memory();
    let store = strobe_import::load(&sample("ddp_rank0.json.gz"), &opts).unwrap();
    let pairs: Vec<(&str, &Store)> = vec![("ddp_rank0.json.gz", &store)];
    let t = strobe_analysis::ranks::report::rank_digests(&pairs, &RankOptions::default()).remove(0).0;
    let job = strobe_cluster::synthetic::Job::with_straggler(200, 100, &t);
    let digests = (0..200).map(|r| strobe_cluster::synthetic::rank_digest(&t, &job, r).unwrap()).collect();
    let report = strobe_analysis::ranks::report::merge_digests(
        digests,
        strobe_analysis::ranks::align::Alignment::CollectiveEnd,
        &RankOptions::default(),
    );
    let c = strobe_ui::ranks::Computed {
        heat: strobe_ui::ranks::heat_map::HeatIndex::new(&report),
        trace_of_rank: vec![None; 200],
        diff: None,
        from_summaries: true,
        report,
        pipeline: None,
    };
    let ctx = egui::Context::default();
    let input = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1600.0, 1000.0))),
        ..Default::default()
    };
    let mut metric = strobe_ui::ranks::Metric::StepTime;
    let mut cells = 0;
    for _ in 0..2 {
        let mut out = ctx.run_ui(input.clone(), |ui| {
            egui::CentralPanel::default().show(ui, |ui| {
                strobe_ui::ranks::heat_map::ui(ui, &c, &mut metric, Some(100));
            });
        });
        out.textures_delta.clear();
        cells = out
            .shapes
            .iter()
            .filter_map(|s| match &s.shape {
                egui::Shape::Mesh(m) => Some(m.vertices.len() / 4),
                _ => None,
            })
            .sum::<usize>();
    }
    // 12-px rows in at most 60 % of 1000 px: about 50 rows of 100 steps, not 200
    assert!(cells >= 30 * 100, "{cells} cells painted");
    assert!(cells <= 60 * 100, "{cells} cells painted: the rows off screen too");
}
