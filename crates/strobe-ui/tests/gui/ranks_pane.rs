//! Ranks side by side with egui_kittest: two DDP ranks open, the Ranks tab shows
//! the alignment, the rank × step heat map with the straggler starred, a cell click shows that
//! rank's step in the timeline, the stragglers' evidence and the A/B diff. Expected figures
//! from tests/expected/ddp.ranks.json (tests/expected/ranks_expected.py, independent).

use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use std::path::PathBuf;
use strobe_ui::app::BottomTab;
use strobe_ui::ranks::Section;
use strobe_ui::timeline::GroupKey;
use strobe_ui::{Settings, StrobeApp};

use crate::common;
use crate::common::{sample, trace_id};

fn expected() -> serde_json::Value {
    common::expected("ddp.ranks.json")
}

fn harness() -> Harness<'static, StrobeApp> {
    // rank 1 first: the workspace puts ranks in rank order whatever order they arrive in
    let mut app = common::app_with_ranks(&["ddp_rank1.json.gz", "ddp_rank0.json.gz"]);
    app.set_bottom_tab(BottomTab::Ranks);
    common::harness(app)
}

#[test]
fn two_ranks_are_aligned_and_the_straggler_is_starred() {
    let h = harness();
    let want = expected();
    let app = h.state();
    assert_eq!(app.ws.traces.len(), 2);
    let c = app.ranks().computed.as_ref().expect("ranks computed");
    assert_eq!(c.report.ranks.iter().map(|r| r.rank).collect::<Vec<_>>(), vec![0, 1]);
    assert_eq!(
        c.trace_of_rank,
        vec![Some(app.ws.traces[0].id), Some(app.ws.traces[1].id)],
        "rank 0 is the first trace"
    );
    // collective-end alignment: the oracle's offsets, applied to the traces the timeline draws
    let offs: Vec<i64> =
        want["offsets"]["collective_end"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
    assert_eq!(app.ws.traces[0].offset_ns, offs[0]);
    assert_eq!(app.ws.traces[1].offset_ns, offs[1]);
    // the heat map cell of the planted straggler (rank 1, ProfilerStep#3: 60.350 ms) is starred
    h.get_by_label("ProfilerStep#3 rank 1: 60.350 *");
    h.get_by_label("ProfilerStep#3 rank 0: 58.669");
    h.get_by_label("ProfilerStep#4 rank 1: 37.740");
    h.get_by_label_contains("rank 1: -0.008 ms");
}

#[test]
fn clicking_a_cell_shows_that_ranks_step_in_the_timeline() {
    let mut h = harness();
    let want = expected();
    let s3 = &want["steps"][1]["per_rank"][1];
    assert_eq!(want["steps"][1]["name"], "ProfilerStep#3");
    let (start, dur) = (s3["start_ns"].as_i64().unwrap(), s3["dur_ns"].as_i64().unwrap());
    let off = h.state().ws.traces[1].offset_ns;
    let id = trace_id(&h, 1);
    h.state_mut().timeline_state_mut().collapsed.insert(GroupKey::Trace(id));
    h.get_by_label("ProfilerStep#3 rank 1: 60.350 *").click();
    h.run_steps(3);
    let app = h.state();
    let (w0, w1) = app.timeline_state().view.window(app.timeline().plot_width);
    assert!(w0 <= start + off && start + off + dur <= w1, "step on screen: {w0}..{w1}");
    assert!(w1 - w0 < dur * 2, "zoomed to the step, not the whole trace: {}", w1 - w0);
    assert!(!app.timeline_state().collapsed.contains(&GroupKey::Trace(trace_id(&h, 1))), "rank 1 expanded");
}

#[test]
fn stragglers_and_diff_sections() {
    let mut h = harness();
    h.state_mut().ranks_mut().section = Section::Stragglers;
    h.run_steps(2);
    h.get_by_label("ProfilerStep#3: rank 1 is the straggler (last at 10 of 10 collectives)");
    h.state_mut().ranks_mut().section = Section::Diff;
    h.run_steps(2);
    let d = h.state().ranks().computed.as_ref().unwrap().diff.as_ref().expect("two traces: a diff");
    // the planted extra matmuls: 24 launches only in rank 1, the largest |Δ| (oracle: ddp.diff.json)
    let top = &d.kernels[0];
    assert_eq!((top.count_a, top.count_b), (0, 24), "{}", top.name);
    assert!(top.name.starts_with("nvjet_sm90"), "{}", top.name);
    h.get_by_label_contains("(added)");
}

#[test]
fn collapsed_rank_is_a_summary_lane() {
    let mut h = harness();
    let id = trace_id(&h, 0);
    h.state_mut().timeline_state_mut().collapsed.insert(GroupKey::Trace(id));
    h.run_steps(2);
    let p1 = trace_id(&h, 1);
    let rows = &h.state().timeline().layout.rows;
    assert!(
        rows.iter().any(|r| matches!(r.kind, strobe_ui::timeline::RowKind::RankSummary { ti: 0 })),
        "rank 0 collapsed to its summary lane"
    );
    assert!(!rows.iter().any(|r| matches!(r.kind, strobe_ui::timeline::RowKind::Lane { ti: 0, .. })));
    // two ranks: rank 1's CPU groups start folded, so both GPUs fit on screen
    assert!(rows.iter().any(|r| matches!(
        &r.kind,
        strobe_ui::timeline::RowKind::Header { key: GroupKey::Process(id, 0), collapsed: true, .. } if *id == p1
    )));
}

#[test]
fn diff_aligns_the_two_timelines_at_a_chosen_step() {
    let mut h = harness();
    let want = expected();
    h.state_mut().ranks_mut().section = Section::Diff;
    h.run_steps(2);
    // the step's button (the diff table below lists a ProfilerStep#3 op too)
    h.get_by_role_and_label(egui::accesskit::Role::Button, "ProfilerStep#3").click_accesskit();
    h.run_steps(3);
    let s3 = &want["steps"][1]["per_rank"];
    let (a, b) = (s3[0]["start_ns"].as_i64().unwrap(), s3[1]["start_ns"].as_i64().unwrap());
    let app = h.state();
    assert_eq!(app.ws.traces[0].offset_ns, 0);
    assert_eq!(app.ws.traces[1].offset_ns, a - b, "ProfilerStep#3 starts together");
}

#[test]
fn queue_length_and_memcpy_bandwidth_are_counter_lanes() {
    let mut h = harness();
    let want = expected();
    // the group starts collapsed; a click on its header opens it
    let id = trace_id(&h, 0);
    h.state_mut().timeline_state_mut().collapsed.insert(GroupKey::Series(id));
    h.run_steps(2);
    let app = h.state();
    let series = app.ws.traces[0].series();
    let rows = app
        .timeline()
        .layout
        .rows
        .iter()
        .filter(|r| matches!(r.kind, strobe_ui::timeline::RowKind::Series { ti: 0, .. }));
    assert_eq!(rows.count(), series.len());
    // the oracle's per-stream maxima (tests/expected/ddp.ranks.json, ranks[0].hta.queue)
    for q in want["ranks"][0]["hta"]["queue"].as_array().unwrap() {
        let name = format!("queue length · GPU {} stream {}", q["device"], q["stream"]);
        let s = series.iter().find(|s| s.name == name).unwrap_or_else(|| panic!("{name}"));
        let max = s.vals.iter().copied().fold(f64::MIN, f64::max);
        assert_eq!(max as i64, q["max_len"].as_i64().unwrap(), "{name}");
    }
    assert!(series.iter().any(|s| s.name.starts_with("GB/s · GPU 0 Memcpy DtoH")));
}

/// What a window integration hands egui when a folder is dropped on it.
#[derive(Debug)]
struct DroppedFolder(PathBuf);

impl egui::DroppedFile for DroppedFolder {
    fn path(&self) -> &std::path::Path {
        &self.0
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        Err("a folder".into())
    }
}

#[test]
fn dropping_a_folder_opens_its_ranks_side_by_side() {
    let dir = std::env::temp_dir().join(format!("strobe-ranks-drop-{}", std::process::id()));
    let job = dir.join("job");
    std::fs::create_dir_all(&job).unwrap();
    for i in 0..2 {
        std::fs::copy(sample(&format!("ddp_rank{i}.json.gz")), job.join(format!("rank{i}.json.gz"))).unwrap();
    }
    std::fs::write(job.join("notes.txt"), "not a trace").unwrap();
    let mut app = StrobeApp::new(Some(dir.join("cache")), Settings::default());
    app.set_no_cache(true);
    let mut h =
        Harness::builder().with_size([1600.0, 1000.0]).build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    h.input_mut().dropped_files.push(std::sync::Arc::new(DroppedFolder(job.clone())));
    for _ in 0..1500 {
        h.step();
        let app = h.state();
        if app.ws.traces.len() == 2 && app.ranks().computed.is_some() && !app.ranks().busy() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let app = h.state();
    assert_eq!(app.ws.traces.len(), 2, "errors: {:?}", app.errors());
    assert_eq!(app.bottom_tab(), BottomTab::Ranks);
    let c = app.ranks().computed.as_ref().expect("ranks computed on the worker");
    assert_eq!(c.report.steps.iter().find(|s| s.name == "ProfilerStep#3").and_then(|s| s.straggler), Some(1));
    assert!(app.ws.traces[0].label.starts_with("rank 0"), "{}", app.ws.traces[0].label);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hta_tables_show_overlap_launches_and_kernel_types() {
    let mut h = harness();
    h.state_mut().ranks_mut().section = Section::Hta;
    h.run_steps(2);
    let report = |stem: &str| -> serde_json::Value {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../tests/expected/{stem}.report.json"));
        serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
    };
    for (rank, stem) in [(0usize, "ddp_rank0"), (1, "ddp_rank1")] {
        // comm–compute overlap: the single-trace oracle's (tests/expected/ddp_rankN.report.json)
        let want = report(stem)["gpus"][0]["overlap_pct"].as_f64().unwrap();
        let c = h.state().ranks().computed.as_ref().unwrap();
        assert!((c.report.comm_overlap[rank].overlap_pct - want).abs() < 1e-9, "rank {rank}");
        h.get_by_label(&format!("{want:.1}"));
    }
    h.get_by_label_contains("rank 0: compute");
    h.get_by_label_contains("rank 1: compute");
}

#[test]
fn bandwidth_per_group_follows_the_hta_tables() {
    let mut h = harness();
    h.state_mut().ranks_mut().section = Section::Hta;
    h.run_steps(2);
    let c = h.state().ranks().computed.as_ref().unwrap();
    // the DDP pair: one group, all-reduces in two size classes, on NVLink 4
    assert_eq!(c.report.comm_groups.len(), 2);
    let meds: Vec<String> =
        c.report.comm_groups.iter().map(|g| format!("{:.2}", g.busbw_median_gbps.unwrap())).collect();
    h.get_by_label("Collective bandwidth per process group");
    // the first row (the harness's pane is short: rows below its edge are not laid out) with
    // its median bus bandwidth and the link it is measured against
    assert!(h.query_all_by_label(&meds[0]).count() >= 1, "{}", meds[0]);
    assert!(h.query_all_by_label_contains("NVLink 4 (450.00)").count() >= 1);
}
