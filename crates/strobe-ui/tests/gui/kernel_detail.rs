//! The kernel pane's sections for a selected launch (verdict paragraph, Occupancy, Stalls,
//! Memory with its chart, Rules) and "where a faster kernel pays most" weighed against the
//! steps of the trace open beside the report, reached from the Steps tab.

use crate::common::*;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use strobe_analysis::roofline::{analyse, RooflineReport};
use strobe_ui::app::BottomTab;
use strobe_ui::kernel_sol::KernelSolPane;

struct Sol {
    report: RooflineReport,
    pane: KernelSolPane,
}

fn rep_pane(name: &str) -> Harness<'static, Sol> {
    let r = strobe_import::ncu_rep::import(&sample(name)).unwrap_or_else(|e| panic!("{e}"));
    let report = analyse(&r);
    let s = Sol { pane: KernelSolPane::new(&report), report };
    let mut h = Harness::builder()
        .with_size([1600.0, 1400.0])
        .build_ui_state(|ui, s: &mut Sol| s.pane.report_ui(ui, &s.report), s);
    h.run_steps(3);
    h
}

#[test]
fn a_selected_launch_shows_its_sections() {
    let mut h = rep_pane("ncu_gpt.ncu-rep.gz");
    // Nothing selected: no sections.
    assert!(h.query_by_label("Occupancy").is_none());
    h.get_by_label("#19").click();
    h.run_steps(3);
    assert_eq!(h.state().pane.selected, Some(19));
    for title in ["Occupancy", "Stalls", "Memory", "Rules (ncu, by estimated speedup)"] {
        h.get_by_label(title);
    }
    let k = h.state().report.kernels[19].clone();
    // The paragraph, as the analysis wrote it, in the pane.
    let text = k.verdict_text.clone().expect("a verdict paragraph");
    assert!(text.starts_with("memory-bound: DRAM at 81 %"), "{text}");
    h.get_by_label(&text);
    // Occupancy bars, the limiter's limits, the stall reasons and the rules, by name.
    h.get_by_label("theoretical");
    h.get_by_label("achieved");
    h.get_by_label(&format!("{:.1} %", k.occupancy.as_ref().unwrap().achieved_pct.unwrap()));
    let top = &k.stalls[0];
    assert_eq!(top.reason, "long_scoreboard");
    h.get_by_label("long_scoreboard");
    h.get_by_label(&format!("{:.1} %", top.pct));
    for r in &k.rules {
        assert!(h.query_all_by_label(&r.name).next().is_some(), "rule {} shown", r.name);
    }
    // The memory figures' bars.
    h.get_by_label("L1/TEX hit rate");
    h.get_by_label("L2 hit rate");
    h.get_by_label("DRAM throughput");
}

#[test]
fn a_launch_without_the_sections_metrics_says_so() {
    // The A30 report has no stall metrics and no rule results.
    let mut h = rep_pane("ncu_flashattn_a30.ncu-rep");
    h.get_by_label("#0").click();
    h.run_steps(3);
    let k = &h.state().report.kernels[0];
    assert!(k.stalls.is_empty() && k.rules.is_empty());
    h.get_by_label("the report has no stall reasons (warp state or PC sampling)");
    h.get_by_label_contains("the report has no rule results");
}

/// The gains over gpt_train.json.gz's steps against the oracle
/// `tests/expected/ncu_gain_expected.py` (time per step per kernel name) and the detail
/// oracle's ncu estimates (`ncu_gpt.detail.json`), and the Steps tab's way there.
#[test]
fn gains_are_weighed_against_the_traces_steps() {
    let app = app_with(&["gpt_train.json.gz", "ncu_gpt.ncu-rep.gz"]);
    let mut h = harness_sized(app, [1600.0, 1000.0]);
    let per_step = expected("gpt_train.kernel_per_step.json");
    let detail = expected("ncu_gpt.detail.json");
    {
        let app = h.state();
        let report = &app.ws.ncu.as_ref().unwrap().report;
        let g = app.kernel_sol().unwrap().gains.as_ref().expect("gains over the linked trace");
        assert_eq!(g.steps, 3);
        let step = per_step["step_ns"].as_f64().unwrap();
        assert!((g.step_ns - step).abs() < 1.0, "{} vs {step}", g.step_ns);
        assert!(g.kernels.len() >= 10);
        for k in &g.kernels {
            let want = &per_step["kernels"][&k.timeline_name];
            let ns = want["ns_per_step"].as_f64().unwrap_or_else(|| panic!("{} not in the oracle", k.timeline_name));
            assert!((k.ns_per_step - ns).abs() <= 1e-6 * ns + 1.0, "{}: {} vs {ns}", k.timeline_name, k.ns_per_step);
            assert_eq!(k.calls_per_step, want["calls_per_step"].as_f64().unwrap(), "{}", k.timeline_name);
            // ncu's estimate: the launches' largest global estimates, weighted by duration
            let (mut num, mut den) = (0.0, 0.0);
            for &i in &k.launches {
                let e = &detail["kernels"][i]["estimated_speedup"];
                if let Some(p) = e["pct"][0].as_f64() {
                    let d = report.kernels[i].duration_ns.unwrap() as f64;
                    num += p * d;
                    den += d;
                }
            }
            if den > 0.0 {
                assert_eq!(k.gain_from, "ncu");
                let pct = num / den;
                assert!((k.ncu_speedup_pct.unwrap() - pct).abs() < 0.01, "{}", k.timeline_name);
                assert!((k.gain_ns - ns * pct / 100.0).abs() <= 1e-4 * ns + 1.0, "{}", k.timeline_name);
                assert!((k.gain_pct_of_step - k.gain_ns * 100.0 / step).abs() < 1e-3);
            } else {
                assert_eq!(k.gain_from, "roofline");
            }
        }
        let gains: Vec<f64> = g.kernels.iter().map(|k| k.gain_ns).collect();
        assert!(gains.windows(2).all(|w| w[0] >= w[1]), "largest gain first");
    }
    // The Steps tab links to the list.
    h.get_by_label("Steps").click();
    h.run_steps(3);
    assert_eq!(h.state().bottom_tab(), BottomTab::Steps);
    h.get_by_label("Where a faster kernel pays most (Nsight Compute)").click();
    h.run_steps(3);
    assert_eq!(h.state().bottom_tab(), BottomTab::KernelSol);
    h.get_by_label("Where a faster kernel pays most");
    let first = h.state().kernel_sol().unwrap().gains.as_ref().unwrap().kernels[0].clone();
    let step_ns = h.state().kernel_sol().unwrap().gains.as_ref().unwrap().step_ns;
    h.get_by_label(&first.sentence(step_ns));
}
