//! Each analysis runs once per trace: a 2-rank pair opened in the viewer as a user opens it
//! (the loader's threads, then every pane's figures, the rank comparison and the pipeline),
//! read back from the timing log. Its own test binary: the log is the whole process's.

mod common;

use common::*;
use strobe_ui::app::{Settings, StrobeApp};

#[test]
fn opening_two_ranks_runs_each_analysis_once_per_trace() {
    strobe_store::timing::keep_lines();
    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    let mut h = harness(app);
    let ctx = h.ctx.clone();
    let files = vec![sample("ddp_rank0.json.gz"), sample("ddp_rank1.json.gz")];
    h.state_mut().open_files(files, true, &ctx);
    let settled = |a: &StrobeApp| {
        a.ws.traces.len() == 2
            && !a.loading()
            && a.ws.traces.iter().all(|t| !t.derived.pending())
            && a.ranks().computed.is_some()
            && !a.ranks().busy()
            && a.ws.pipeline_settled
    };
    step_until(&mut h, settled);
    assert!(settled(h.state()), "everything computed: errors {:?}", h.state().errors());
    // the panes read their figures: a few more frames, every tab drawn once
    use strobe_ui::app::BottomTab;
    for tab in [BottomTab::Efficiency, BottomTab::Ranks, BottomTab::Pipeline, BottomTab::Load, BottomTab::Kernels] {
        h.state_mut().set_bottom_tab(tab);
        h.run_steps(3);
    }

    let lines = strobe_store::timing::kept_lines();
    let count = |label: &str| lines.iter().filter(|l| l.starts_with(&format!("[timing] {label} "))).count();
    // every figure of a trace, and the rank comparison's own per-rank work: once per trace
    for label in [
        "figures: capture range",
        "figures: steps",
        "figures: gpu activity",
        "figures: kernel stats",
        "figures: memory peaks",
        "figures: step anomalies",
        "figures: op runs",
        "figures: efficiency",
        "figures: queue lengths",
        "figures: copy bandwidth",
        "ui: gpu time, bands",
        "ui: idle breakdown",
        "ui: nvtx projection",
        "ui: derived series",
        "ui: per-op links",
        "ranks: digest",
    ] {
        assert_eq!(count(label), 2, "{label}: once per trace\n{}", lines.join("\n"));
    }
    // the viewer draws the queue lengths: their summary is read off them, not found again;
    // nothing computes the report's idle totals, streams or single-trace report
    for label in ["figures: queue summary", "figures: idle totals", "figures: stream stats"] {
        assert_eq!(count(label), 0, "{label}: not computed\n{}", lines.join("\n"));
    }
    // the comparison and its pipeline: once for the pair
    assert_eq!(count("ranks: merge"), 1, "{}", lines.join("\n"));
    assert_eq!(count("ranks: pipeline"), 1, "{}", lines.join("\n"));
}
