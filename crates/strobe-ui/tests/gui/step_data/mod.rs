//! A step attribution made by hand over gpt_train.json.gz's real steps, for the Steps tab's
//! tests and snapshot while the analyses that compute it are elsewhere: each step split into
//! fixed shares (33 % model at peak, 20 % GEMM and 5 % attention inefficiency, 10 % other GPU
//! work in the optimizer, 14 % host idle held by the `data` range, 8 % launch overhead, the
//! rest other idle), its evidence real spans of the trace, its critical path the step's first
//! six kernels and its `data` range.
#![allow(dead_code)]

use strobe_analysis::attribution::{Bounds, CriticalPath, Details, Evidence, Parts, StepBreakdown};
use strobe_model::SpanKind;
use strobe_ui::step_view::StepFigures;
use strobe_ui::workspace::Trace;

pub struct Fixture {
    pub figs: StepFigures,
    /// Per step: its `data` range (the host-idle evidence).
    pub data: Vec<u32>,
    /// Per step: its `Optimizer.step#AdamW.step` range (the other-GPU-work evidence).
    pub optimizer: Vec<u32>,
    /// Every step's critical-path spans, by start.
    pub path: Vec<u32>,
}

fn pct(d: i64, p: i64) -> i64 {
    d * p / 100
}

/// The breakdown of `t`'s steps (its overview computed).
pub fn gpt_fixture(t: &Trace) -> Fixture {
    let st = &t.store;
    let spans: Vec<u32> = (0..st.span_count() as u32).collect();
    let in_step = |s: u32, a: i64, b: i64| st.span_start(s) >= a && st.span_start(s) < b;
    let (mut steps, mut data, mut optimizer, mut path) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, s) in t.steps().iter().enumerate() {
        let (a, b, d) = (s.start_ns, s.start_ns + s.dur_ns, s.dur_ns);
        let named = |n: &str| *spans.iter().find(|&&x| st.span_name(x) == n && in_step(x, a, b)).expect(n);
        let (data_span, opt_span) = (named("data"), named("Optimizer.step#AdamW.step"));
        let mut kernels: Vec<u32> =
            spans.iter().copied().filter(|&x| st.span_kind(x) == SpanKind::Kernel && in_step(x, a, b)).collect();
        kernels.sort_by_key(|&x| st.span_start(x));
        kernels.truncate(6);
        let mut on_path = kernels.clone();
        on_path.push(data_span);
        on_path.sort_by_key(|&x| st.span_start(x));
        let len = |x: u32| st.span_end(x) - st.span_start(x);
        let gpu: i64 = kernels.iter().map(|&k| len(k)).sum();
        let bounds = Bounds { gpu_compute_ns: gpu, data_loading_ns: len(data_span), ..Default::default() };
        let mut parts = Parts {
            model_at_peak_ns: pct(d, 33),
            model_ops_inefficiency_ns: pct(d, 20) + pct(d, 5),
            other_gpu_work_ns: pct(d, 10),
            idle_host_ns: pct(d, 14),
            idle_launch_ns: pct(d, 8),
            ..Default::default()
        };
        parts.idle_other_ns = d - parts.total();
        let ev = |name: &str, ns: i64, span: Option<u32>| Evidence { name: name.into(), ns, span, rank: None };
        let details = Details {
            mfu: Some(parts.model_at_peak_ns as f64 / d as f64),
            model_flops: 1.0e12,
            inefficiency_by_class: vec![ev("gemm", pct(d, 20), None), ev("attention", pct(d, 5), None)],
            other_gpu_work_top: vec![ev("Optimizer.step#AdamW.step", pct(d, 10), Some(opt_span))],
            comm_wait_on: Vec::new(),
            idle_host_held_by: vec![ev("data", pct(d, 14), Some(data_span))],
        };
        let critical_path = CriticalPath {
            length_ns: bounds.gpu_compute_ns + bounds.data_loading_ns,
            bounds,
            top_ops: vec![ev(st.span_name(kernels[0]), len(kernels[0]), Some(kernels[0]))],
            spans: on_path.clone(),
        };
        let notes = if i == 0 {
            vec!["2 ops had no recorded shapes: their time counts as other GPU work".into()]
        } else {
            Vec::new()
        };
        steps.push(StepBreakdown {
            step: s.name.clone(),
            rank: None,
            start_ns: a,
            dur_ns: d,
            parts,
            details,
            critical_path: Some(critical_path),
            notes,
        });
        data.push(data_span);
        optimizer.push(opt_span);
        path.extend(on_path);
    }
    path.sort_by_key(|&x| (st.span_start(x), x));
    let figs = StepFigures::new_sorted(steps, path.clone());
    Fixture { figs, data, optimizer, path }
}
