use super::*;
use crate::test_util::{finished, span};
use strobe_model::{IdKey, LaneKind, SpanKind};
use strobe_store::StoreBuilder;

/// A CPU op `op` [0, 200] holding a launch [10, 20] and a `cudaDeviceSynchronize` [30, 160];
/// the launched kernel runs [50, 150] on an empty stream. `linked`: the launch and the kernel
/// share a correlation id.
fn launch_then_sync(linked: bool) -> Store {
    let mut b = StoreBuilder::in_memory();
    let cpu = b.lane(LaneKind::CpuThread { pid: IdKey::Num(1), tid: IdKey::Num(1) });
    let gpu = b.lane(LaneKind::GpuStream { device: 0, stream: 7 });
    let (op, launch, sync, kernel, cat) = (
        b.intern("aten::mm"),
        b.intern("cudaLaunchKernel"),
        b.intern("cudaDeviceSynchronize"),
        b.intern("gemm_kernel"),
        b.intern("c"),
    );
    let corr = if linked { 5 } else { 0 };
    b.push_span(span(cpu, 0, 200, op, cat, SpanKind::CpuOp)).unwrap();
    b.push_span(strobe_store::SpanInput { correlation: corr, ..span(cpu, 10, 20, launch, cat, SpanKind::CudaRuntime) })
        .unwrap();
    b.push_span(span(cpu, 30, 160, sync, cat, SpanKind::CudaRuntime)).unwrap();
    b.push_span(strobe_store::SpanInput { correlation: corr, ..span(gpu, 50, 150, kernel, cat, SpanKind::Kernel) })
        .unwrap();
    finished(b)
}

/// By hand (docs/critical_path.md's rules): op start →(10, CPU) launch start →(40, launch
/// overhead: the stream was empty) kernel start →(100, GPU compute) kernel end →(0, the sync
/// waited for it) sync end →(40, CPU: the op's tail) op end = 190 ns. The CPU-only way is
/// 10 + 10 + 10 + 0 (the sync's own time is a wait) + 40 = 70.
#[test]
fn a_launch_and_a_sync_by_hand() {
    let store = launch_then_sync(true);
    let cp = of_window(&store, 0, 200).unwrap();
    assert_eq!(cp.length_ns, 190);
    assert_eq!(cp.bounds, Bounds { cpu_ns: 50, gpu_compute_ns: 100, launch_overhead_ns: 40, ..Bounds::default() });
    let b = cp.bounds;
    let sum = b.cpu_ns + b.gpu_compute_ns + b.gpu_comm_ns + b.launch_overhead_ns + b.kernel_gap_ns + b.data_loading_ns;
    assert_eq!(sum, cp.length_ns);
    // every edge's time is the op's: the kernel was launched inside it
    assert_eq!(cp.top_ops.len(), 1);
    assert_eq!((cp.top_ops[0].name.as_str(), cp.top_ops[0].ns), ("aten::mm", 190));
    // op, launch, kernel, sync in start order (spans 0, 1, 3, 2)
    assert_eq!(cp.spans, vec![0, 1, 2, 3]);
}

#[test]
fn no_links_between_cpu_and_gpu_give_a_reason() {
    let store = launch_then_sync(false);
    let why = unavailable(&store).unwrap();
    assert!(why.contains("no correlation flows"), "{why}");
    let steps = [Step { name: "s".into(), start_ns: 0, dur_ns: 200, source: crate::steps::StepSource::ProfilerStep }];
    assert_eq!(of_steps(&store, &steps), vec![Err(why)]);
}

#[test]
fn a_step_with_no_gpu_work_has_a_note() {
    let store = launch_then_sync(true);
    // [25, 200]: the sync starts inside, the launch does not
    let why = of_window(&store, 25, 200).unwrap_err();
    assert!(why.contains("no GPU work"), "{why}");
}

#[test]
fn a_window_past_the_trace_has_a_note_not_a_panic() {
    let store = launch_then_sync(true);
    assert!(of_window(&store, 1_000, 2_000).is_err());
    assert!(of_window(&store, 200, 0).is_err());
}

/// Partial overlaps (a child outlasting its parent, as a cut-short or clock-skewed trace
/// has) and a kernel that starts before its launch still give a path, of edges ≥ 0.
#[test]
fn malformed_nesting_and_clocks_give_a_path_of_non_negative_edges() {
    let mut b = StoreBuilder::in_memory();
    let cpu = b.lane(LaneKind::CpuThread { pid: IdKey::Num(1), tid: IdKey::Num(1) });
    let gpu = b.lane(LaneKind::GpuStream { device: 0, stream: 7 });
    let (op, launch, kernel, cat) = (b.intern("aten::add"), b.intern("cudaLaunchKernel"), b.intern("k"), b.intern("c"));
    b.push_span(span(cpu, 0, 50, op, cat, SpanKind::CpuOp)).unwrap();
    b.push_span(span(cpu, 40, 90, op, cat, SpanKind::CpuOp)).unwrap();
    b.push_span(strobe_store::SpanInput { correlation: 9, ..span(cpu, 45, 60, launch, cat, SpanKind::CudaRuntime) })
        .unwrap();
    b.push_span(strobe_store::SpanInput { correlation: 9, ..span(gpu, 30, 70, kernel, cat, SpanKind::Kernel) })
        .unwrap();
    let store = finished(b);
    let cp = of_window(&store, 0, 100).unwrap();
    assert!(cp.length_ns > 0);
    let b = cp.bounds;
    assert!([b.cpu_ns, b.gpu_compute_ns, b.launch_overhead_ns, b.kernel_gap_ns].iter().all(|&x| x >= 0));
    assert_eq!(b.cpu_ns + b.gpu_compute_ns + b.launch_overhead_ns + b.kernel_gap_ns, cp.length_ns);
}

#[test]
fn the_text_line_names_shares_and_the_top_op() {
    let store = launch_then_sync(true);
    let cp = of_window(&store, 0, 200).unwrap();
    assert_eq!(
        text::line(&cp),
        "critical path 190 ns: 53 % GPU compute, 26 % CPU, 21 % launch overhead; top: aten::mm"
    );
}

/// A rank's figures hand their steps' attribution and paths over (moved, not copied) only once
/// computed and only where no clone of the figures shares them; a clone keeps its view whole.
#[test]
fn figures_hand_over_their_attribution_only_when_unshared() {
    let store = launch_then_sync(true);
    // the op is the step
    let rule = crate::steps::StepRule::from_pattern("aten::mm").unwrap();
    let mut figs = TraceFigures::new(rule, crate::efficiency::PeakOverride::default());
    assert!(figs.take_attribution().is_none(), "nothing computed yet");
    let paths = figs.critical_paths(&store).to_vec();
    let steps = figs.step_attributions(&store).len();
    assert!(steps == 1 && paths.len() == 1 && paths[0].is_some());
    let mut shared = figs.clone();
    assert!(shared.take_attribution().is_none(), "a clone shares them");
    assert_eq!(shared.critical_paths_ready().map(<[_]>::to_vec), Some(paths.clone()));
    assert_eq!(shared.step_attributions_ready().map(<[_]>::len), Some(steps));
    drop(shared);
    let (attributed, taken) = figs.take_attribution().expect("unshared now");
    assert_eq!((attributed.len(), taken), (steps, paths));
    assert!(figs.critical_paths_ready().is_none() && figs.step_attributions_ready().is_none());
}
