//! Edge cases on small hand-built stores: one rank, no steps, no NCCL, ranks with different
//! step sets, a planted straggler and ranks that take turns.

use super::align::Alignment;
use super::report::multi_rank_report;
use strobe_model::{DistributedInfo, IdKey, LaneKind, SourceFormat, SpanKind, TraceMeta};
use strobe_store::{Built, SpanInput, Store, StoreBuilder};

const NCCL: &str = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";

/// A rank with CPU steps (name, start, end) and GPU kernels (name, start, end); comm kernels
/// go on their own stream as NCCL puts them.
fn rank_store(rank: Option<i64>, steps: &[(&str, i64, i64)], kernels: &[(&str, i64, i64)]) -> Store {
    let mut b = StoreBuilder::in_memory();
    let cpu = b.lane(LaneKind::CpuThread { pid: IdKey::Num(1), tid: IdKey::Num(1) });
    let compute = b.lane(LaneKind::GpuStream { device: 0, stream: 7 });
    let comm = b.lane(LaneKind::GpuStream { device: 0, stream: 17 });
    let (ua, kc) = (b.intern("user_annotation"), b.intern("kernel"));
    let push = |b: &mut StoreBuilder, lane, name: &str, start, end, cat, kind| {
        let name = b.intern(name);
        b.push_span(SpanInput {
            lane,
            start,
            end,
            name,
            cat,
            kind,
            flags: 0,
            args: b"",
            correlation: 0,
            copy_dir: None,
        })
        .unwrap();
    };
    for &(n, s, e) in steps {
        push(&mut b, cpu, n, s, e, ua, SpanKind::UserAnnotation);
    }
    for &(n, s, e) in kernels {
        let lane = if n.starts_with("nccl") { comm } else { compute };
        push(&mut b, lane, n, s, e, kc, SpanKind::Kernel);
    }
    let mut meta = TraceMeta::new(SourceFormat::Kineto, "t");
    meta.distributed = rank.map(|r| DistributedInfo { rank: Some(r), ..Default::default() });
    match b.finish(&meta).unwrap() {
        Built::Memory(m) => Store::from_bytes(m).unwrap(),
        Built::File(p) => Store::open(&p).unwrap(),
    }
}

#[test]
fn one_rank_falls_back_and_flags_nobody() {
    let s = rank_store(Some(0), &[("ProfilerStep#1", 0, 1000)], &[("gemm", 0, 500), (NCCL, 500, 600)]);
    let r = multi_rank_report(&[("a", &s)], Alignment::CollectiveEnd, 5);
    assert_eq!(r.alignment.used, Alignment::Recorded);
    assert!(r.alignment.fallback_reason.as_deref().unwrap().contains("one rank"));
    assert_eq!(r.steps.len(), 1);
    let p = &r.steps[0].per_rank[0];
    assert_eq!(
        (p.dur_ns, p.compute_ns, p.comm_ns, p.exposed_comm_ns, p.idle_ns, p.wait_ns),
        (1000, 500, 100, 100, 400, 0)
    );
    assert_eq!(r.steps[0].straggler, None);
    assert!(r.stragglers.is_empty());
}

#[test]
fn no_steps_no_step_alignment() {
    let a = rank_store(Some(0), &[], &[(NCCL, 100, 200)]);
    let b = rank_store(Some(1), &[], &[(NCCL, 130, 230)]);
    let r = multi_rank_report(&[("a", &a), ("b", &b)], Alignment::StepStart, 5);
    assert_eq!(r.alignment.used, Alignment::Recorded);
    assert!(r.alignment.fallback_reason.as_deref().unwrap().contains("ProfilerStep"));
    assert!(r.steps.is_empty() && r.stragglers.is_empty());
    assert_eq!(r.collectives.len(), 1);
    assert_eq!((r.collectives[0].step.as_deref(), r.collectives[0].skew_ns), (None, 30));
    // by collective end instead: rank 1's clock is 30 ns ahead
    let r = multi_rank_report(&[("a", &a), ("b", &b)], Alignment::CollectiveEnd, 5);
    assert_eq!(r.alignment.offsets_ns, vec![0, -30]);
    assert_eq!(r.collectives[0].skew_ns, 0);
}

#[test]
fn no_nccl_no_collective_alignment_and_no_wait() {
    let a = rank_store(Some(0), &[("ProfilerStep#1", 0, 1000)], &[("gemm", 0, 500)]);
    let b = rank_store(Some(1), &[("ProfilerStep#1", 50, 1050)], &[("gemm", 50, 700)]);
    let r = multi_rank_report(&[("b", &b), ("a", &a)], Alignment::CollectiveEnd, 5);
    assert_eq!(r.alignment.used, Alignment::Recorded);
    assert!(r.alignment.fallback_reason.as_deref().unwrap().contains("NCCL"));
    assert_eq!(r.ranks.iter().map(|x| x.rank).collect::<Vec<_>>(), vec![0, 1]);
    assert!(r.collectives.is_empty());
    assert!(r.steps[0].per_rank.iter().all(|p| p.wait_ns == 0 && p.comm_ns == 0));
    assert_eq!(r.steps[0].straggler, None);
    let r = multi_rank_report(&[("b", &b), ("a", &a)], Alignment::StepStart, 5);
    assert_eq!(r.alignment.offsets_ns, vec![0, -50]);
}

#[test]
fn different_step_sets() {
    let a = rank_store(Some(0), &[("ProfilerStep#1", 0, 100), ("ProfilerStep#2", 100, 200)], &[]);
    let b = rank_store(Some(1), &[("ProfilerStep#2", 90, 190), ("ProfilerStep#3", 190, 290)], &[]);
    let r = multi_rank_report(&[("a", &a), ("b", &b)], Alignment::StepStart, 5);
    assert_eq!(r.alignment.basis, "start of ProfilerStep#2");
    assert_eq!(r.alignment.offsets_ns, vec![0, 10]);
    let names: Vec<(&str, Vec<i64>)> =
        r.steps.iter().map(|s| (s.name.as_str(), s.per_rank.iter().map(|p| p.rank).collect())).collect();
    assert_eq!(names, vec![("ProfilerStep#1", vec![0]), ("ProfilerStep#2", vec![0, 1]), ("ProfilerStep#3", vec![1])]);
}

/// Rank 1 runs a long GEMM before each step's collectives; rank 0 waits. In step 2 the ranks
/// take turns arriving last: nobody is flagged.
#[test]
fn planted_straggler_and_turn_taking() {
    let steps = [("ProfilerStep#1", 0, 10_000), ("ProfilerStep#2", 10_000, 20_000)];
    let a = rank_store(
        Some(0),
        &steps,
        &[
            ("gemm", 0, 1000),
            (NCCL, 1000, 5100),
            (NCCL, 5200, 5300),
            (NCCL, 5400, 5500),
            ("gemm", 10_000, 11_000),
            (NCCL, 11_000, 12_000),
            (NCCL, 12_500, 13_000),
            (NCCL, 14_000, 15_000),
        ],
    );
    let b = rank_store(
        Some(1),
        &steps,
        &[
            ("slow_gemm", 0, 5000),
            (NCCL, 5000, 5100),
            (NCCL, 5250, 5300),
            (NCCL, 5450, 5500),
            ("gemm", 10_000, 11_000),
            (NCCL, 11_500, 12_000),
            (NCCL, 12_000, 13_000),
            (NCCL, 14_500, 15_000),
        ],
    );
    let r = multi_rank_report(&[("a", &a), ("b", &b)], Alignment::CollectiveEnd, 5);
    assert_eq!(r.alignment.offsets_ns, vec![0, 0]);
    assert_eq!(r.steps[0].collective_skew_ns, vec![4000, 50, 50]);
    assert_eq!(r.steps[0].per_rank[0].wait_ns, 4100);
    assert_eq!(r.steps[0].straggler, Some(1));
    let ev = &r.straggler_steps[0];
    let before = ev.before.as_ref().unwrap();
    assert_eq!((before.window_start_ns, before.window_end_ns), (0, 5000));
    assert_eq!(before.top_kernels[0].name, "slow_gemm");
    assert_eq!(before.top_kernels[0].total_ns, 5000);
    // step 2: rank 1 last at 2 of 3 but waits 500 itself against rank 0's 1000 — under 10 %
    // of the median step (10 000)
    assert_eq!(r.steps[1].straggler, None);
    assert_eq!(r.rank_summary[1].wait.max_ns, 500);
}
