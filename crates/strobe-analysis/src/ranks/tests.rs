//! Edge cases on small hand-built stores: one rank, no steps, no NCCL, ranks with different
//! step sets, a planted straggler and ranks that take turns.

use super::align::Alignment;
use super::report::multi_rank_report;
use strobe_model::{DistributedInfo, IdKey, LaneKind, SourceFormat, SpanKind, TraceMeta};
use strobe_store::{SpanInput, Store, StoreBuilder};

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
    b.finish(&meta).unwrap().into_store().unwrap()
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
    assert!(r.alignment.fallback_reason.as_deref().unwrap().contains("no step common"));
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

/// FSDP-like: rank 1 joins every step's collective 3 µs late. Step k (of 4, each 10 µs) at
/// t = 10 000 k: rank 0's comm kernel runs [t+1000, t+4500), rank 1's [t+4000, t+4500) (they
/// end together: collective alignment gives offset 0). Rank 0 waits [t+1000, t+4000) = 3000.
///
/// - `hidden`: rank 0 computes [t, t+5000), so all 3000 of its wait lie under compute: exposed
///   0, nobody is flagged (the old total-wait rule, 3000 ≥ 10 % of 10 000, flagged rank 1 in
///   every step).
/// - `exposed`: rank 0's compute ends at t+1000, so the whole 3000 is exposed in every step:
///   rank 1 is flagged in all 4 steps, persistent.
/// - `one_off`: as `hidden`, except in step 3 rank 0's compute ends at t+1000: flagged there
///   only, one-off; its usual (median of 0, 0, 0, 3000) is 0.
fn fsdp_pair(exposed_in: &[i64]) -> super::report::MultiRankReport {
    let steps: Vec<(String, i64, i64)> =
        (1..=4).map(|k| (format!("ProfilerStep#{k}"), 10_000 * k, 10_000 * k + 10_000)).collect();
    let st: Vec<(&str, i64, i64)> = steps.iter().map(|(n, a, b)| (n.as_str(), *a, *b)).collect();
    let mut k0 = Vec::new();
    let mut k1 = Vec::new();
    for k in 1..=4 {
        let t = 10_000 * k;
        let compute_end = if exposed_in.contains(&k) { t + 1000 } else { t + 5000 };
        k0.push(("layer_gemm", t, compute_end));
        k0.push((NCCL, t + 1000, t + 4500));
        k1.push(("layer_gemm", t, t + 4000));
        k1.push((NCCL, t + 4000, t + 4500));
    }
    let a = rank_store(Some(0), &st, &k0);
    let b = rank_store(Some(1), &st, &k1);
    multi_rank_report(&[("a", &a), ("b", &b)], Alignment::CollectiveEnd, 5)
}

#[test]
fn hidden_wait_is_not_a_straggler() {
    let r = fsdp_pair(&[]);
    assert_eq!(r.alignment.offsets_ns, vec![0, 0]);
    assert_eq!(r.alignment.residual_ns, Some(0));
    for s in &r.steps {
        assert_eq!(s.per_rank[0].wait_ns, 3000, "{}: the old figure stays", s.name);
        assert_eq!(s.per_rank[0].exposed_wait_ns, 0, "{}", s.name);
        assert_eq!(s.straggler, None, "{}", s.name);
    }
    assert!(r.stragglers.is_empty());
    assert_eq!(r.straggler_pattern, super::straggler::StragglerPattern::None);
}

#[test]
fn exposed_wait_every_step_is_a_persistent_straggler() {
    use super::straggler::{StragglerKind, StragglerPattern};
    let r = fsdp_pair(&[1, 2, 3, 4]);
    for s in &r.steps {
        assert_eq!(s.per_rank[0].exposed_wait_ns, 3000, "{}", s.name);
        assert_eq!((s.straggler, s.straggler_kind), (Some(1), Some(StragglerKind::Persistent)), "{}", s.name);
        // own time: rank 0 10 000 − 3000 = 7000, rank 1 10 000: score 7000 / 10 000
        assert_eq!(s.per_rank[0].score, 1.0);
        assert!((s.per_rank[1].score - 0.7).abs() < 1e-12);
    }
    assert_eq!(r.straggler_pattern, StragglerPattern::Fixed);
    assert!(
        r.straggler_steps[0].evidence.contains("persistent: flagged in 4 of 4 steps"),
        "{}",
        r.straggler_steps[0].evidence
    );
}

#[test]
fn exposed_wait_in_one_step_is_a_one_off() {
    use super::straggler::StragglerKind;
    let r = fsdp_pair(&[3]);
    let flagged: Vec<(&str, Option<StragglerKind>)> =
        r.steps.iter().filter(|s| s.straggler == Some(1)).map(|s| (s.name.as_str(), s.straggler_kind)).collect();
    assert_eq!(flagged, vec![("ProfilerStep#3", Some(StragglerKind::OneOff))]);
    let ev = &r.straggler_steps[0];
    assert_eq!((ev.blamed_exposed_wait_ns, ev.own_exposed_wait_ns, ev.usual_blamed_ns), (3000, 0, 0));
}

/// Rank 1's clock reads 1 ms early while the collective ends together: after "recorded"
/// alignment the ends are 1 ms apart and the starts 997 µs (rank 0 at 1000, rank 1 at
/// 4000 − 1 000 000): the residual (1 ms) exceeds the only skew, so the comparison is refused;
/// collective alignment lines the ends up (residual 0) and is not.
#[test]
fn residual_above_the_skews_is_refused() {
    let steps = [("ProfilerStep#1", 0, 10_000)];
    let a = rank_store(Some(0), &steps, &[(NCCL, 1000, 4500)]);
    let b = rank_store(Some(1), &steps, &[(NCCL, 4000, 4500)]);
    let r = multi_rank_report(&[("a", &a), ("b", &b)], Alignment::Recorded, 5);
    assert_eq!(r.alignment.residual_ns, Some(0));
    assert!(r.alignment.refused.is_none());
    let shift = shifted(-1_000_000);
    let r = multi_rank_report(&[("a", &a), ("b", &shift)], Alignment::Recorded, 5);
    assert_eq!(r.alignment.residual_ns, Some(1_000_000));
    assert!(r.alignment.refused.as_deref().unwrap().contains("not aligned well enough"));
    assert!(r.straggler_steps.is_empty());
    let r = multi_rank_report(&[("a", &a), ("b", &shift)], Alignment::CollectiveEnd, 5);
    assert_eq!(r.alignment.residual_ns, Some(0));
    assert!(r.alignment.refused.is_none());
}

/// The rank-1 store above with every time moved by `d`.
fn shifted(d: i64) -> Store {
    rank_store(Some(1), &[("ProfilerStep#1", d, 10_000 + d)], &[(NCCL, 4000 + d, 4500 + d)])
}
