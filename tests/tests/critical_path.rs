//! The critical path of each step (docs/critical_path.md) against the independent oracle
//! `tests/expected/critical_path_expected.py` (the same rules over the raw Kineto JSON), and
//! on a trace cut short.
//!
//! Tolerances: the oracle converts each microsecond decimal to ns exactly as the importer is
//! documented to; a path's length and each bound may still differ by 1 µs (a different
//! rounding of one edge, or a tie between two equally long paths broken otherwise); the top
//! op's name must agree.

mod common;
use common::*;
use strobe_analysis::attribution::critical_path::{of_steps, unavailable};
use strobe_analysis::figures::TraceFigures;

const TOLERANCE_NS: i64 = 1_000;

fn check(trace: &str, oracle: &str) {
    let store = load(trace);
    let figs = TraceFigures::default();
    let steps = figs.steps(&store).to_vec();
    let got = of_steps(&store, &steps);
    let want = expected(oracle);
    let want = want.as_array().unwrap();
    assert_eq!(steps.len(), want.len(), "{trace}: steps");
    assert!(!want.is_empty());
    for ((s, g), w) in steps.iter().zip(&got).zip(want) {
        assert_eq!(s.name, w["step"].as_str().unwrap());
        let cp = g.as_ref().unwrap_or_else(|e| panic!("{trace} {}: {e}", s.name));
        let close = |a: i64, b: &serde_json::Value, what: &str| {
            let b = b.as_i64().unwrap();
            assert!((a - b).abs() <= TOLERANCE_NS, "{trace} {} {what}: strobe {a} oracle {b}", s.name);
        };
        close(cp.length_ns, &w["length_ns"], "length");
        let b = &cp.bounds;
        let wb = &w["bounds"];
        close(b.cpu_ns, &wb["cpu_ns"], "cpu");
        close(b.gpu_compute_ns, &wb["gpu_compute_ns"], "gpu compute");
        close(b.gpu_comm_ns, &wb["gpu_comm_ns"], "gpu comm");
        close(b.launch_overhead_ns, &wb["launch_overhead_ns"], "launch overhead");
        close(b.kernel_gap_ns, &wb["kernel_gap_ns"], "kernel gaps");
        close(b.data_loading_ns, &wb["data_loading_ns"], "data loading");
        // the bounds add up to the length exactly
        let sum =
            b.cpu_ns + b.gpu_compute_ns + b.gpu_comm_ns + b.launch_overhead_ns + b.kernel_gap_ns + b.data_loading_ns;
        assert_eq!(sum, cp.length_ns, "{trace} {}", s.name);
        let top = &w["top_ops"][0];
        assert_eq!(cp.top_ops[0].name, top[0].as_str().unwrap(), "{trace} {}: top op", s.name);
        close(cp.top_ops[0].ns, &top[1], "top op ns");
        // the path's spans: in time order
        assert!(cp.spans.windows(2).all(|p| store.span_start(p[0]) <= store.span_start(p[1])));
        // the top op's evidence is a span of that name (the op its time is charged to)
        assert_eq!(store.span_name(cp.top_ops[0].span.unwrap()), cp.top_ops[0].name);
        assert!(!cp.spans.is_empty());
    }
}

#[test]
fn gpt_steps_match_the_oracle() {
    check("gpt_train.json.gz", "gpt_train.critical_path.json");
}

/// The DDP rank: the all-reduce step's path runs through the collective (GPU comm).
#[test]
fn ddp_steps_match_the_oracle() {
    check("ddp_rank0.json.gz", "ddp_rank0.critical_path.json");
    let store = load("ddp_rank0.json.gz");
    let figs = TraceFigures::default();
    let paths = figs.critical_paths(&store);
    assert!(paths.iter().flatten().any(|cp| cp.bounds.gpu_comm_ns > cp.length_ns / 2));
}

/// The GPT trace's text cut short (an unterminated JSON array, as a profiler killed mid-write
/// leaves it): at 60 % the GPU events (written last by Kineto) are all gone and every step
/// says so; at 90 % every step still has a path, its bounds ≥ 0 and adding up.
#[test]
fn a_trace_cut_short_gives_paths_or_notes() {
    use std::io::Read;
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(sample("gpt_train.json.gz")).unwrap())
        .read_to_end(&mut text)
        .unwrap();
    for tenths in [6, 9] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gpt_cut.json");
        std::fs::write(&path, &text[..text.len() * tenths / 10]).unwrap();
        let store = load_in(&path, dir.path()).unwrap();
        let figs = TraceFigures::default();
        let steps = figs.steps(&store).to_vec();
        assert_eq!(steps.len(), 3, "{tenths}");
        let got = of_steps(&store, &steps);
        if tenths == 6 {
            assert!(got.iter().all(|g| g.as_ref().is_err_and(|e| e.contains("no GPU ops"))), "{got:?}");
            continue;
        }
        for g in &got {
            let cp = g.as_ref().unwrap();
            assert!(cp.length_ns > 0);
            let b = &cp.bounds;
            let parts =
                [b.cpu_ns, b.gpu_compute_ns, b.gpu_comm_ns, b.launch_overhead_ns, b.kernel_gap_ns, b.data_loading_ns];
            assert!(parts.iter().all(|&x| x >= 0));
            assert_eq!(parts.iter().sum::<i64>(), cp.length_ns);
        }
    }
}

/// A trace with no GPU work at all (a generic chrome trace): a reason, for every step.
#[test]
fn a_trace_without_gpu_ops_says_so() {
    let store = load("catapult_flow.json");
    let why = unavailable(&store).expect("a reason");
    assert!(why.contains("no GPU ops"), "{why}");
}
