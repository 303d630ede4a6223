//! The attribution on small made-up traces: shares of overlapping streams, idle by cause with
//! the range that held the host, and the bad inputs (a step with no GPU work, no shapes,
//! overlapping steps, a trace cut short), each adding up, no part below 0, a note saying why.

use super::breakdown::settle;
use super::{Parts, StepBreakdown};
use crate::efficiency::PeakOverride;
use crate::figures::TraceFigures;
use crate::steps::StepRule;
use strobe_model::{IdKey, LaneKind, SourceFormat, SpanKind, TraceMeta, Truncation};
use strobe_store::{SpanInput, Store, StoreBuilder};

struct Trace {
    b: StoreBuilder,
    cpu: u32,
    corr: i64,
}

impl Trace {
    fn new() -> Trace {
        let mut b = StoreBuilder::in_memory();
        let cpu = b.lane(LaneKind::CpuThread { pid: IdKey::Num(1), tid: IdKey::Num(1) });
        Trace { b, cpu, corr: 0 }
    }

    fn cpu_span(&mut self, lane: u32, name: &str, kind: SpanKind, (s, e): (i64, i64), correlation: i64) {
        let (n, c) = (self.b.intern(name), self.b.intern("cpu"));
        let span = SpanInput {
            lane,
            start: s,
            end: e,
            name: n,
            cat: c,
            kind,
            flags: 0,
            args: b"",
            correlation,
            copy_dir: None,
        };
        self.b.push_span(span).unwrap();
    }

    fn annotation(&mut self, name: &str, at: (i64, i64)) {
        self.cpu_span(self.cpu, name, SpanKind::UserAnnotation, at, 0);
    }

    /// A kernel on `stream` launched by a 5 ns `cudaLaunchKernel` at `launch`.
    fn kernel(&mut self, stream: i64, name: &str, (s, e): (i64, i64), launch: i64) {
        self.corr += 1;
        let c = self.corr;
        self.cpu_span(self.cpu, "cudaLaunchKernel", SpanKind::CudaRuntime, (launch, launch + 5), c);
        let gpu = self.b.lane(LaneKind::GpuStream { device: 0, stream });
        let (n, k) = (self.b.intern(name), self.b.intern("kernel"));
        let span = SpanInput {
            lane: gpu,
            start: s,
            end: e,
            name: n,
            cat: k,
            kind: SpanKind::Kernel,
            flags: 0,
            args: b"",
            correlation: c,
            copy_dir: None,
        };
        self.b.push_span(span).unwrap();
    }

    fn store(self, cut_short: bool) -> Store {
        let mut meta = TraceMeta::new(SourceFormat::Kineto, "t");
        if cut_short {
            meta.load.truncated =
                Some(Truncation { at_byte: 100, events_read: 10, what: "the file ends inside an event".into() });
        }
        self.b.finish(&meta).unwrap().into_store().unwrap()
    }
}

fn breakdown(store: &Store, rule: StepRule) -> Vec<StepBreakdown> {
    TraceFigures::new(rule, PeakOverride::default()).step_breakdown(store).to_vec()
}

fn assert_whole(b: &StepBreakdown) {
    assert_eq!(b.parts.total(), b.dur_ns, "{}: {:?}", b.step, b.parts);
    assert!(b.parts.values().iter().all(|&p| p >= 0), "{}: {:?}", b.step, b.parts);
}

#[test]
fn overlapping_streams_share_each_instant_and_exposed_comm_is_transfer() {
    let mut t = Trace::new();
    t.annotation("ProfilerStep#1", (0, 1000));
    t.kernel(7, "gemm_a", (100, 400), 10);
    t.kernel(8, "gemm_b", (300, 600), 20);
    t.kernel(8, "ncclDevKernel_AllReduce", (600, 800), 30);
    let store = t.store(false);
    let b = &breakdown(&store, StepRule::default())[0];
    assert_whole(b);
    // 100..300 gemm_a alone, 300..400 both (50 each), 400..600 gemm_b alone
    let p = b.parts;
    assert_eq!((p.other_gpu_work_ns, p.comm_transfer_ns, p.comm_wait_ns), (500, 200, 0));
    let top: Vec<(&str, i64)> = b.details.other_gpu_work_top.iter().map(|e| (e.name.as_str(), e.ns)).collect();
    assert_eq!(top, vec![("gemm_a", 250), ("gemm_b", 250)]);
    // before the first and after the last GPU operation: no gap between two operations
    assert_eq!(p.idle_other_ns, 300);
    // no op with shapes: no model FLOPs, and the note says why
    assert_eq!((p.model_at_peak_ns, p.model_ops_inefficiency_ns), (0, 0));
    assert!(b.notes.iter().any(|n| n.contains("model_at_peak_ns is 0") && n.contains("no framework")), "{:?}", b.notes);
    assert!(b.notes.iter().any(|n| n.contains("comm wait needs the other ranks")), "{:?}", b.notes);
}

#[test]
fn idle_by_cause_a_step_without_gpu_work_and_a_trace_cut_short() {
    let mut t = Trace::new();
    for (i, s) in [0, 1_000_000, 2_000_000].into_iter().enumerate() {
        t.annotation(&format!("ProfilerStep#{}", i + 1), (s, s + 1_000_000));
    }
    t.kernel(7, "k1", (100_000, 200_000), 50_000);
    // 5 µs after k1: launch overhead
    t.kernel(7, "k2", (205_000, 300_000), 150_000);
    // launched long after k2 ended, while the thread loaded data, then synchronised
    t.annotation("data_loading", (300_000, 2_390_000));
    t.cpu_span(t.cpu, "cudaDeviceSynchronize", SpanKind::CudaRuntime, (2_390_000, 2_399_000), 0);
    t.kernel(7, "k3", (2_500_000, 2_600_000), 2_400_000);
    let store = t.store(true);
    let bs = breakdown(&store, StepRule::default());
    assert_eq!(bs.len(), 3);
    bs.iter().for_each(assert_whole);
    let (p1, p2, p3) = (bs[0].parts, bs[1].parts, bs[2].parts);
    assert_eq!(
        (p1.other_gpu_work_ns, p1.idle_launch_ns, p1.idle_host_ns, p1.idle_other_ns),
        (195_000, 5_000, 700_000, 100_000)
    );
    assert_eq!(bs[0].details.idle_host_held_by[0].name, "data_loading");
    // the second step has no GPU work: all of it host idle, held by the data loading
    assert_eq!(p2.idle_host_ns, 1_000_000);
    assert!(bs[1].notes.iter().any(|n| n.contains("no GPU work in this step")), "{:?}", bs[1].notes);
    assert_eq!(
        (bs[1].details.idle_host_held_by[0].name.as_str(), bs[1].details.idle_host_held_by[0].ns),
        ("data_loading", 1_000_000)
    );
    // the third: data loading, the sync, the launch; then the trace stops
    assert_eq!(p3.idle_sync_ns, 9_000);
    assert_eq!(p3.idle_host_ns, 390_000 + 1_000 + 100_000);
    assert_eq!(p3.other_gpu_work_ns, 100_000);
    assert_eq!(p3.idle_other_ns, 400_000);
    assert!(bs[2].notes.iter().any(|n| n.contains("cut short")), "{:?}", bs[2].notes);
    assert!(!bs[0].notes.iter().any(|n| n.contains("cut short")));
}

#[test]
fn overlapping_steps_each_add_up_and_say_so() {
    let mut t = Trace::new();
    let other = t.b.lane(LaneKind::CpuThread { pid: IdKey::Num(1), tid: IdKey::Num(2) });
    t.annotation("phase_a", (0, 600));
    t.cpu_span(other, "phase_b", SpanKind::UserAnnotation, (400, 1000), 0);
    t.kernel(7, "k", (100, 900), 50);
    let store = t.store(false);
    let bs = breakdown(&store, StepRule::from_pattern("phase_.*").unwrap());
    assert_eq!(bs.len(), 2);
    bs.iter().for_each(assert_whole);
    assert_eq!((bs[0].parts.other_gpu_work_ns, bs[1].parts.other_gpu_work_ns), (500, 500));
    assert!(bs[0].notes.iter().any(|n| n.contains("overlaps step phase_b")), "{:?}", bs[0].notes);
    assert!(bs[1].notes.iter().any(|n| n.contains("overlaps step phase_a")), "{:?}", bs[1].notes);
}

#[test]
fn a_trace_with_no_gpu_at_all_is_other_idle() {
    let mut t = Trace::new();
    t.annotation("ProfilerStep#1", (0, 1000));
    let store = t.store(false);
    let b = &breakdown(&store, StepRule::default())[0];
    assert_whole(b);
    assert_eq!(b.parts.idle_other_ns, 1000);
    assert!(b.notes.iter().any(|n| n.contains("no GPU activity")), "{:?}", b.notes);
}

#[test]
fn settle_takes_a_negative_part_from_the_largest_and_keeps_the_model_at_peak() {
    let mut notes = Vec::new();
    let mut p = Parts {
        model_at_peak_ns: 600,
        model_ops_inefficiency_ns: 0,
        other_gpu_work_ns: -100,
        idle_host_ns: 300,
        idle_other_ns: 200,
        ..Default::default()
    };
    settle(&mut p, 1000, &mut notes);
    assert_eq!(p.values().iter().sum::<i64>(), 1000);
    assert_eq!((p.model_at_peak_ns, p.other_gpu_work_ns, p.idle_host_ns, p.idle_other_ns), (600, 0, 200, 200));
    // short of the step: the rest is other idle, with a note
    let mut p = Parts { model_at_peak_ns: 100, ..Default::default() };
    settle(&mut p, 1000, &mut notes);
    assert_eq!(p.idle_other_ns, 900);
    assert_eq!(notes.len(), 1);
}
