//! An Nsight Systems export in which two processes ran GPU work opens as two ranks, as
//! `strobe report` reads it: a trace per process, each with its own steps (against
//! tests/expected/nsys_ddp_2proc.json, from tests/expected/nsys_2proc_expected.py: SQL over the
//! export's NVTX ranges per process), told apart in the ranks pane, and a session of it
//! reopens each rank's folds on that rank.

use crate::common::*;
use strobe_ui::commands::Command;
use strobe_ui::timeline::GroupKey;
use strobe_ui::{Settings, StrobeApp};

const FILE: &str = "nsys_ddp_2proc.sqlite";

#[test]
fn each_process_is_a_rank_with_its_own_steps() {
    let h = harness(app_with_ranks(&[FILE]));
    let app = h.state();
    assert_eq!(app.ws.traces.len(), 2, "errors: {:?}", app.errors());
    let exp = expected("nsys_ddp_2proc.json");
    let ranks = exp["ranks"].as_array().unwrap();
    // rank order is the export's process order (both processes share GPU 0)
    let mut pids: Vec<i64> = ranks.iter().map(|r| r["pid"].as_i64().unwrap()).collect();
    pids.sort();
    for (i, t) in app.ws.traces.iter().enumerate() {
        assert_eq!(t.label, format!("rank {i} · {FILE}"), "the label the ranks pane settled on");
        let want = ranks.iter().find(|r| r["pid"].as_i64() == Some(pids[i])).unwrap()["steps"].as_array().unwrap();
        let got = t.steps();
        assert_eq!(got.len(), want.len(), "rank {i}");
        for (g, w) in got.iter().zip(want) {
            assert_eq!(g.name, w["name"].as_str().unwrap(), "rank {i}");
            assert_eq!((g.start_ns, g.dur_ns), (w["start_ns"].as_i64().unwrap(), w["dur_ns"].as_i64().unwrap()));
        }
        // the process's own CPU threads only
        let procs = strobe_ui::timeline::layout::Groups::of(t).procs;
        assert!(procs.iter().all(|(label, _)| label.contains(&format!("pid {}", pids[i]))), "{procs:?}");
    }
    // the ranks pane holds both, each its own
    let c = app.ranks().computed.as_ref().expect("the comparison is computed");
    assert_eq!(c.report.ranks.len(), 2);
    let ids: Vec<_> = c.trace_of_rank.iter().map(|t| t.unwrap()).collect();
    assert_ne!(ids[0], ids[1], "each rank its own trace");
}

#[test]
fn a_session_of_it_reopens_each_rank_as_it_was() {
    let mut h = harness(app_with_ranks(&[FILE]));
    let r1 = trace_id(&h, 1);
    let ctx = h.ctx.clone();
    h.state_mut().timeline_state_mut().collapsed.insert(GroupKey::Gpu(r1, 0));
    h.run_steps(2);
    let before = h.state().session();
    assert_eq!(before.files.len(), 2, "the file once per rank: {:?}", before.files);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("job.strobe");
    h.state_mut().apply(Command::SaveSession(Some(file.clone())), &ctx);

    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    let mut h2 = harness(app);
    let ctx2 = h2.ctx.clone();
    h2.state_mut().open_files(vec![file], true, &ctx2);
    step_until(&mut h2, |a| a.ws.traces.len() >= 2 && !a.loading() && !a.ranks().busy());
    h2.run_steps(3);
    let app = h2.state();
    assert_eq!(app.ws.traces.len(), 2, "opened once, two ranks: errors {:?}", app.errors());
    let after = app.session();
    assert_eq!(after.files, before.files);
    assert_eq!(after.folds, before.folds, "rank 1's GPU folded, on rank 1");
    assert!(app.timeline_state().collapsed.contains(&GroupKey::Gpu(app.ws.traces[1].id, 0)));
    assert!(!app.timeline_state().collapsed.contains(&GroupKey::Gpu(app.ws.traces[0].id, 0)));
}

#[test]
fn the_rank_comparison_waits_for_the_overviews() {
    // two ranks whose figures nobody computes yet: the comparison, which reads every rank
    // whole, does not take the cores from their overviews
    let mut app = app_before_the_figures_of("ddp_rank0.json.gz");
    app.add_trace(unanalysed("ddp_rank1.json.gz"));
    let mut h = harness(app);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while std::time::Instant::now() < until {
        h.step();
        assert!(h.state().ranks().busy(), "said to be coming");
        assert!(h.state().ranks().computed.is_none(), "not computed before the overviews");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for t in &h.state().ws.traces {
        t.wait_for_analyses();
    }
    step_until(&mut h, |a| !a.ranks().busy());
    assert_eq!(h.state().ranks().computed.as_ref().map(|c| c.report.ranks.len()), Some(2));
}
