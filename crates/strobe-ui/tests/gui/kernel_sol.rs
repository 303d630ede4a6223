//! The kernel (Nsight Compute) pane, driven with egui_kittest: sorting, selection from the
//! table, the roofline's points.

use crate::common;

use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use std::path::PathBuf;
use strobe_analysis::roofline::RooflineReport;
use strobe_analysis::roofline::{analyse, Verdict};
use strobe_ui::kernel_sol::{KernelSolPane, SolSort};

/// The pane beside its report (the workspace's `NcuDoc` in the app).
struct Sol {
    report: RooflineReport,
    pane: KernelSolPane,
}

impl Sol {
    fn order(&self) -> Vec<usize> {
        self.pane.order(&self.report)
    }
}

impl std::ops::Deref for Sol {
    type Target = KernelSolPane;
    fn deref(&self) -> &KernelSolPane {
        &self.pane
    }
}

fn pane(name: &str) -> Sol {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces").join(name);
    let r = strobe_import::ncu_csv::import(&p).unwrap_or_else(|e| panic!("{e}"));
    let report = analyse(&r);
    Sol { pane: KernelSolPane::new(&report), report }
}

fn harness(p: Sol) -> Harness<'static, Sol> {
    let mut h = Harness::builder()
        .with_size([1600.0, 1000.0])
        .build_ui_state(|ui, s: &mut Sol| s.pane.report_ui(ui, &s.report), p);
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
    let with_flops = h
        .state()
        .report
        .kernels
        .iter()
        .filter(|k| k.flops_per_s.unwrap_or(0.0) > 0.0 && k.arithmetic_intensity.unwrap_or(0.0) > 0.0)
        .count();
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
    let _ = h
        .query_all_by(|n| {
            n.value().is_some_and(|l| l.contains("cunn_SoftMaxForward") && l.contains("verdict memory_bound"))
        })
        .next()
        .expect("selection figures shown");
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
    app.set_no_cache(true);
    let err = app.open_blocking(&dir.join("ncu_llmperf_raw_error_only.csv")).unwrap_err();
    assert!(err.contains("only errors"), "{err}");
    assert!(app.kernel_sol().is_none());
    app.open_blocking(&dir.join("ncu_raw.csv")).unwrap();
    assert!(app.ws.traces.is_empty());
    assert_eq!(app.bottom_tab(), BottomTab::KernelSol);
    let mut h =
        Harness::builder().with_size([1600.0, 1000.0]).build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    h.run_steps(3);
    h.get_by_label("by verdict").click();
    h.run_steps(2);
    assert_eq!(h.state().kernel_sol().unwrap().sort, SolSort::Verdict);
    // the pane fills the window; a timeline's controls are not shown without a timeline
    h.get_by_label("Kernels (Nsight Compute)");
    assert!(h.query_by_label("Search").is_none());
    assert!(h.query_by_label("Load summary").is_none());
}

#[test]
fn linked_with_the_timeline_by_kernel_name() {
    use strobe_ui::commands::Command;
    use strobe_ui::{Settings, StrobeApp};
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces");
    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    app.open_blocking(&dir.join("gpt_train.json.gz")).unwrap();
    app.open_blocking(&dir.join("ncu_raw.csv")).unwrap();
    // ncu and Kineto demangle differently; the match key bridges them.
    let m = strobe_ui::app::match_timeline_kernel(&app.ws, &app.ws.ncu.as_ref().unwrap().report.kernels[19].name)
        .expect("log_softmax on the timeline");
    assert!(m.1.contains("at::native::(anonymous namespace)::cunn_SoftMaxForward"), "{}", m.1);
    let mut h =
        Harness::builder().with_size([1600.0, 1000.0]).build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    h.run_steps(3);
    // room for the whole launch table
    common::raise_bottom_panel(&mut h, 450.0);
    // Pane → timeline: picking launch #8 (second nvjet TNT) selects that kernel name on the timeline.
    h.get_by_label("#8").click();
    h.run_steps(3);
    let nvjet = h.state().ws.ncu.as_ref().unwrap().report.kernels[8].name.clone();
    assert_eq!(h.state().sel.kernel.as_ref().map(|k| k.1.clone()), Some(nvjet));
    assert_eq!(h.state().kernel_sol().unwrap().selected, Some(8), "the picked launch stays selected");
    // Timeline / kernel table → pane.
    let id = h.state().ws.traces[0].id;
    h.state_mut().push(Command::SelectKernel { trace: id, name: m.1.clone() });
    h.run_steps(2);
    assert_eq!(h.state().kernel_sol().unwrap().selected, Some(19));
}

#[test]
fn kernel_table_shows_sol_columns() {
    use strobe_ui::app::BottomTab;
    use strobe_ui::{Settings, StrobeApp};
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces");
    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    app.open_blocking(&dir.join("gpt_train.json.gz")).unwrap();
    app.open_blocking(&dir.join("ncu_raw.csv")).unwrap();
    app.set_bottom_tab(BottomTab::Kernels);
    app.kernels_mut().filter = "cunn_SoftMaxForward".into();
    let sol = app.kernels().sol.as_ref().unwrap();
    let kineto = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)";
    assert_eq!(sol.get(kineto).and_then(|c| c.verdict), Some(Verdict::MemoryBound));
    let mut h =
        Harness::builder().with_size([1600.0, 1000.0]).build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    h.run_steps(3);
    h.get_by_label("Verdict (ncu)");
    // ncu's measured FLOP/s beside the trace's shape-based columns
    h.get_by_label("TFLOP/s (ncu)");
    h.get_by_label("TFLOP/s");
    h.get_by_label("memory_bound");
    h.get_by_label("25 / 81");
}

#[test]
fn launches_link_to_timeline_spans_by_name_and_order() {
    use strobe_ui::commands::Command;
    use strobe_ui::workspace::SpanRef;
    use strobe_ui::{Settings, StrobeApp};
    // The same GPT model, but another process run (one layer, bf16) than the timeline's
    // (six layers, AMP): launches match by name and launch order within the forward.
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces");
    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    app.open_blocking(&dir.join("gpt_train.json.gz")).unwrap();
    app.open_blocking(&dir.join("ncu_raw.csv")).unwrap();
    let st = app.ws.traces[0].store.clone();
    // The trace's kernels by start time (one device, one stream).
    let seq = strobe_analysis::ncu_match::device_kernel_sequences(&st).remove(0).1;
    let name = |sid: u32| st.string(st.span_meta(sid).name).to_string();
    assert!(name(seq[0]).contains("arange_cuda_out") && name(seq[8]).starts_with("cudnn_generated_fort_native_sdpa"));
    assert!(name(seq[117]).contains("cunn_SoftMaxForward"), "{}", name(seq[117]));
    let id = app.ws.traces[0].id;
    let span = |i: usize| SpanRef { trace: id, span: seq[i] };

    let mut h =
        Harness::builder().with_size([1600.0, 1000.0]).build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    h.run_steps(3);
    common::raise_bottom_panel(&mut h, 450.0);
    {
        let p = h.state().kernel_sol().unwrap();
        // The capture starts at the step's first kernel (arange); its first layer's launches
        // are the first layer's kernels, in order; the head (lm_head GEMM, log_softmax) is
        // the forward's, after the timeline's six layers.
        assert_eq!(p.links[0], Some(span(0)));
        assert_eq!(&p.links[2..=3], &[Some(span(1)), Some(span(2))], "the two embedding gathers");
        assert_eq!(
            &p.links[6..=8],
            &[Some(span(7)), Some(span(8)), Some(span(10))],
            "QKV GEMM, attention, projection GEMM"
        );
        assert_eq!(p.links[16], Some(span(115)));
        assert_eq!(p.links[19], Some(span(117)));
        // The ncu run's extra copy after arange has no timeline kernel.
        assert_eq!(p.links[1], None);
        assert!(p.links.iter().flatten().count() >= 17);
    }
    h.get_by_label_contains("launches matched to timeline kernels by name and launch order");
    // The kernel table's SOL columns come from the linked launches.
    let sm19 = h.state().ws.ncu.as_ref().unwrap().report.kernels[19].sm_pct;
    assert_eq!(h.state().kernels().sol.as_ref().unwrap().get(&name(seq[117])).unwrap().sm_pct, sm19);

    // Timeline → pane: a mouse click on a kernel span selects its launch; the QKV and
    // projection GEMMs share a name but not a launch.
    click_span(&mut h, span(8));
    assert_eq!(h.state().sel.span, Some(span(8)), "the click hit the attention kernel");
    assert_eq!(h.state().kernel_sol().unwrap().selected, Some(7));
    click_span(&mut h, span(10));
    assert_eq!(h.state().sel.span, Some(span(10)));
    assert_eq!(h.state().kernel_sol().unwrap().selected, Some(8));
    // The same through the command the click turns into.
    h.state_mut().push(Command::SelectSpan(span(117)));
    h.run_steps(2);
    assert_eq!(h.state().kernel_sol().unwrap().selected, Some(19));
    h.get_by_label_contains("selected launch: linked to its timeline span");
    // A kernel outside the profiled window (next step's attention) selects its kernel's
    // first launch.
    let later = (200..seq.len()).find(|&i| name(seq[i]) == name(seq[8])).expect("a later attention kernel");
    h.state_mut().push(Command::SelectSpan(span(later)));
    h.run_steps(2);
    assert_eq!(h.state().kernel_sol().unwrap().selected, Some(7));

    // Pane → timeline: clicking launch #6 (the QKV GEMM) selects and reveals its span, not
    // the longest kernel of that name.
    h.get_by_label("#6").click();
    h.run_steps(3);
    assert_eq!(h.state().sel.span, Some(span(7)));
    assert_eq!(h.state().kernel_sol().unwrap().selected, Some(6));
    assert_eq!(h.state().sel.kernel.as_ref().map(|k| k.1.clone()), Some(name(seq[7])), "its kernel is highlighted");
    let (w0, w1) = h.state().timeline_state().view.window(h.state().timeline().plot_width);
    assert!(w0 <= st.span_start(seq[7]) && st.span_end(seq[7]) <= w1, "revealed");
    h.get_by_label("#19").click();
    h.run_steps(3);
    assert_eq!(h.state().sel.span, Some(span(117)));
    assert_eq!(h.state().kernel_sol().unwrap().selected, Some(19));
}

/// Zooms the timeline onto a span (without selecting it) and clicks it with the mouse.
fn click_span(h: &mut Harness<'static, strobe_ui::StrobeApp>, r: strobe_ui::workspace::SpanRef) {
    let st = h.state().ws.trace(r.trace).unwrap().store.clone();
    let (a, b) = (st.span_start(r.span), st.span_end(r.span));
    let d = (b - a).max(1);
    h.state_mut().push(strobe_ui::commands::Command::ZoomTo { t0: a - d, t1: b + d });
    h.run_steps(2);
    let p = h.state().timeline().span_pos(h.state().timeline_state(), &h.state().ws, r).expect("the span is on screen");
    common::click_at(h, p);
}
