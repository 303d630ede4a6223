//! The kernel (Nsight Compute) pane, driven with egui_kittest: sorting, selection from the
//! table, the roofline's points.

use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use std::path::PathBuf;
use strobe_analysis::roofline::{analyse, Verdict};
use strobe_ui::kernel_sol::{KernelSolPane, SolSort};

fn pane(name: &str) -> KernelSolPane {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces").join(name);
    let r = strobe_import::ncu_csv::import(&p).unwrap_or_else(|e| panic!("{e}"));
    KernelSolPane::new(analyse(&r))
}

fn harness(p: KernelSolPane) -> Harness<'static, KernelSolPane> {
    let mut h = Harness::builder().with_size([1600.0, 1000.0]).build_ui_state(|ui, p: &mut KernelSolPane| p.ui(ui), p);
    h.run_steps(3);
    h
}

#[test]
fn h200_raw_pane_sorts_selects_and_plots() {
    let mut h = harness(pane("ncu_raw.csv"));
    // Default order: longest first (log_softmax, launch 19).
    assert_eq!(h.state().sort, SolSort::Duration);
    assert_eq!(h.state().order()[0], 19);
    // Kernels with FMA FLOPs and DRAM traffic are points; GEMMs (tensor cores only) are not.
    let with_flops = h.state().report.kernels.iter().filter(|k| k.flops_per_s.unwrap_or(0.0) > 0.0 && k.arithmetic_intensity.unwrap_or(0.0) > 0.0).count();
    assert!(with_flops >= 10, "{with_flops}");
    assert_eq!(h.state().plotted, with_flops);
    h.get_by_label("FP32 FMA ceiling");

    h.get_by_label("by verdict").click();
    h.run_steps(2);
    assert_eq!(h.state().sort, SolSort::Verdict);
    let order = h.state().order();
    let first = &h.state().report.kernels[order[0]];
    assert_eq!(first.verdict, Some(Verdict::UnderSaturated));

    h.get_by_label("#19").click();
    h.run_steps(2);
    assert_eq!(h.state().selected, Some(19));
    // The selection line shows the kernel's figures.
    let _ = h.query_all_by(|n| n.value().is_some_and(|l| l.contains("cunn_SoftMaxForward") && l.contains("verdict memory_bound"))).next().expect("selection figures shown");
}

#[test]
fn details_pane_without_flops_draws_no_points() {
    let mut h = harness(pane("ncu_details.csv"));
    h.run_steps(2);
    assert_eq!(h.state().plotted, 0);
    assert_eq!(h.state().report.kernels.len(), 20);
    // Ceilings from the published H200 peaks.
    h.get_by_label("DRAM ceiling");
}

#[test]
fn old_export_without_ceilings() {
    let mut h = harness(pane("ncu_xplacer_cfd_097K.log"));
    h.get_by_label("by launch id").click();
    h.run_steps(2);
    assert_eq!(h.state().order()[0], 0);
    assert_eq!(h.state().plotted, 0);
}

#[test]
fn app_opens_an_ncu_export_in_the_kernel_pane() {
    use strobe_ui::app::BottomTab;
    use strobe_ui::{Settings, StrobeApp};
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces");
    let mut app = StrobeApp::new(None, Settings::default());
    app.loader.no_cache = true;
    let err = app.open_blocking(&dir.join("ncu_llmperf_raw_error_only.csv")).unwrap_err();
    assert!(err.contains("only errors"), "{err}");
    assert!(app.kernel_sol.is_none());
    app.open_blocking(&dir.join("ncu_raw.csv")).unwrap();
    assert!(app.ws.traces.is_empty());
    assert_eq!(app.bottom_tab, BottomTab::KernelSol);
    let mut h = Harness::builder().with_size([1600.0, 1000.0]).build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    h.run_steps(3);
    h.get_by_label("by verdict").click();
    h.run_steps(2);
    assert_eq!(h.state().kernel_sol.as_ref().unwrap().sort, SolSort::Verdict);
    h.get_by_label("Kernel SOL (ncu)");
}

#[test]
fn linked_with_the_timeline_by_kernel_name() {
    use strobe_ui::commands::Command;
    use strobe_ui::{Settings, StrobeApp};
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces");
    let mut app = StrobeApp::new(None, Settings::default());
    app.loader.no_cache = true;
    app.open_blocking(&dir.join("gpt_train.json.gz")).unwrap();
    app.open_blocking(&dir.join("ncu_raw.csv")).unwrap();
    // ncu and Kineto demangle differently; the match key bridges them.
    let m = strobe_ui::app::match_timeline_kernel(&app.ws, &app.kernel_sol.as_ref().unwrap().report.kernels[19].name).expect("log_softmax on the timeline");
    assert!(m.1.contains("at::native::(anonymous namespace)::cunn_SoftMaxForward"), "{}", m.1);
    let mut h = Harness::builder().with_size([1600.0, 1000.0]).build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    h.run_steps(3);
    // Pane → timeline: picking launch #8 (second nvjet TNT) selects that kernel name on the timeline.
    h.get_by_label("#8").click();
    h.run_steps(3);
    let nvjet = h.state().kernel_sol.as_ref().unwrap().report.kernels[8].name.clone();
    assert_eq!(h.state().sel.kernel.as_ref().map(|k| k.1.clone()), Some(nvjet));
    assert_eq!(h.state().kernel_sol.as_ref().unwrap().selected, Some(8), "the picked launch stays selected");
    // Timeline / kernel table → pane.
    h.state_mut().push(Command::SelectKernel { trace: 0, name: m.1.clone() });
    h.run_steps(2);
    assert_eq!(h.state().kernel_sol.as_ref().unwrap().selected, Some(19));
}

#[test]
fn kernel_table_shows_sol_columns() {
    use strobe_ui::app::BottomTab;
    use strobe_ui::{Settings, StrobeApp};
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces");
    let mut app = StrobeApp::new(None, Settings::default());
    app.loader.no_cache = true;
    app.open_blocking(&dir.join("gpt_train.json.gz")).unwrap();
    app.open_blocking(&dir.join("ncu_raw.csv")).unwrap();
    app.bottom_tab = BottomTab::Kernels;
    app.kernels.filter = "cunn_SoftMaxForward".into();
    let sol = app.kernels.sol.as_ref().unwrap();
    let kineto = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)";
    assert_eq!(sol.get(kineto).and_then(|c| c.verdict), Some(Verdict::MemoryBound));
    let mut h = Harness::builder().with_size([1600.0, 1000.0]).build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    h.run_steps(3);
    h.get_by_label("Verdict (ncu)");
    h.get_by_label("memory_bound");
    h.get_by_label("25 / 81");
}
