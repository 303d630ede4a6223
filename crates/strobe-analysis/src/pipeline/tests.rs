//! Hand-built pipelines: a perfect GPipe and a perfect 1F1B (every forward `TF`, every
//! backward `TB`, no transfer delay) must give the theoretical bubble (p−1)/(m+p−1) on every
//! stage; a data-parallel pair has no pipeline.

use super::analyze;
use super::microbatch::MicrobatchRule;
use super::schedule::Schedule;
use crate::ranks::RankTrace;
use crate::steps::{Step, StepSource};
use strobe_model::{DistributedInfo, IdKey, LaneKind, SourceFormat, SpanKind, TraceMeta};
use strobe_store::{SpanInput, Store, StoreBuilder};

const TF: i64 = 1_000_000;
const TB: i64 = 2_000_000;

/// One span of a rank: name, start, end, kind, args.
type Ev = (String, i64, i64, SpanKind, String);

fn store(rank: i64, evs: &[Ev]) -> Store {
    let mut b = StoreBuilder::in_memory();
    let cpu = b.lane(LaneKind::CpuThread { pid: IdKey::Num(1), tid: IdKey::Num(1) });
    let gpu = b.lane(LaneKind::GpuStream { device: 0, stream: 7 });
    let cat = b.intern("x");
    for (n, s, e, kind, args) in evs {
        let name = b.intern(n);
        let lane = if *kind == SpanKind::Kernel { gpu } else { cpu };
        b.push_span(SpanInput {
            lane,
            start: *s,
            end: *e,
            name,
            cat,
            kind: *kind,
            flags: 0,
            args: args.as_bytes(),
            correlation: 0,
            copy_dir: None,
        })
        .unwrap();
    }
    let mut meta = TraceMeta::new(SourceFormat::Kineto, "t");
    meta.distributed = Some(DistributedInfo { rank: Some(rank), ..Default::default() });
    b.finish(&meta).unwrap().into_store().unwrap()
}

fn call(name: &str, peer: usize, s: i64) -> Ev {
    (name.into(), s, s + 1, SpanKind::CpuOp, format!(r#"{{"Concrete Inputs": ["", "", "{peer}", "0"]}}"#))
}

/// Simulates `p` stages (stage s on rank `rank_of[s]`) running `m` microbatches in the order
/// each stage's schedule gives; every microbatch waits for its input from the neighbour and
/// receives it (1 ns call) at its start, sends its output (1 ns call) at its end.
fn simulate(p: usize, m: usize, rank_of: &[usize], one_f_one_b: bool) -> (Vec<Store>, i64) {
    let order = |s: usize| -> Vec<(bool, usize)> {
        if !one_f_one_b {
            return (0..m).map(|i| (true, i)).chain((0..m).map(|i| (false, i))).collect();
        }
        let w = (p - s - 1).min(m);
        let mut v: Vec<(bool, usize)> = (0..w).map(|i| (true, i)).collect();
        for i in 0..m - w {
            v.push((true, i + w));
            v.push((false, i));
        }
        v.extend((m - w..m).map(|i| (false, i)));
        v
    };
    let orders: Vec<Vec<(bool, usize)>> = (0..p).map(order).collect();
    // end times, found by relaxing until stable (dependencies run both ways)
    let mut fwd_end = vec![vec![i64::MAX; m]; p];
    let mut bwd_end = vec![vec![i64::MAX; m]; p];
    let mut starts = vec![vec![0i64; 2 * m]; p];
    for _ in 0..4 * p * m {
        for s in 0..p {
            let mut t = 0i64;
            for (k, &(f, i)) in orders[s].iter().enumerate() {
                let dep = match (f, s) {
                    (true, 0) => 0,
                    (true, _) => fwd_end[s - 1][i],
                    (false, _) if s == p - 1 => fwd_end[s][i],
                    (false, _) => bwd_end[s + 1][i],
                };
                if dep == i64::MAX {
                    break;
                }
                let st = t.max(dep);
                starts[s][k] = st;
                t = st + if f { TF } else { TB };
                if f {
                    fwd_end[s][i] = t;
                } else {
                    bwd_end[s][i] = t;
                }
            }
        }
    }
    let end = bwd_end.iter().flatten().copied().max().unwrap();
    let mut stores = Vec::new();
    for s in 0..p {
        let mut evs: Vec<Ev> = vec![("ProfilerStep#1".into(), 0, end, SpanKind::UserAnnotation, String::new())];
        for (k, &(f, i)) in orders[s].iter().enumerate() {
            let a = starts[s][k];
            let e = a + if f { TF } else { TB };
            let label = if f { format!("Forward {i}") } else { format!("Backward {i}") };
            evs.push((label, a, e, SpanKind::UserAnnotation, String::new()));
            let (from, to) = if f {
                (s.checked_sub(1), (s + 1 < p).then_some(s + 1))
            } else {
                ((s + 1 < p).then_some(s + 1), s.checked_sub(1))
            };
            if let Some(u) = from {
                evs.push(call("c10d::recv_", rank_of[u], a));
            }
            if let Some(d) = to {
                evs.push(call("c10d::send", rank_of[d], e - 1));
            }
        }
        evs.sort_by_key(|e| (e.1, -e.2));
        stores.push((rank_of[s], store(rank_of[s] as i64, &evs)));
    }
    stores.sort_by_key(|x| x.0);
    (stores.into_iter().map(|x| x.1).collect(), end)
}

fn steps_of(stores: &[Store], end: i64) -> Vec<Vec<Step>> {
    stores
        .iter()
        .map(|_| {
            vec![Step { name: "ProfilerStep#1".into(), start_ns: 0, dur_ns: end, source: StepSource::ProfilerStep }]
        })
        .collect()
}

/// Rank `i` is store `i` with its steps.
fn rank_traces<'a>(stores: &'a [Store], steps: &'a [Vec<Step>]) -> Vec<RankTrace<'a>> {
    stores
        .iter()
        .zip(steps)
        .enumerate()
        .map(|(r, (s, st))| RankTrace { rank: r as i64, source: "t", store: s, steps: st })
        .collect()
}

fn check_perfect(one_f_one_b: bool) {
    let (p, m) = (4usize, 8usize);
    let rank_of = [2usize, 0, 3, 1];
    let (stores, end) = simulate(p, m, &rank_of, one_f_one_b);
    // the textbook step: (m + p − 1) slots of one forward and one backward
    assert_eq!(end, (m + p - 1) as i64 * (TF + TB));
    let steps = steps_of(&stores, end);
    let ranks = rank_traces(&stores, &steps);
    let pl = analyze(&ranks, &MicrobatchRule::default()).expect("a pipeline");
    let r = &pl.report;
    assert_eq!(r.stage_order, rank_of.iter().map(|&x| x as i64).collect::<Vec<_>>());
    assert_eq!(r.schedule, if one_f_one_b { Schedule::OneFOneB } else { Schedule::Gpipe });
    assert_eq!(r.microbatches, m);
    let theo = 100.0 * (p - 1) as f64 / (m + p - 1) as f64;
    assert!((r.theoretical_bubble_pct.unwrap() - theo).abs() < 1e-9);
    for row in &r.steps[0].stages {
        assert_eq!((row.forward, row.backward), (m, m));
        // the 1 ns transfer calls inside the work are P2P time; the rest is the textbook bubble
        let calls = row.p2p_wait_total_ns;
        let neighbours = if row.stage == 0 || row.stage == p - 1 { 1 } else { 2 };
        assert_eq!(calls, 2 * m as i64 * neighbours);
        assert_eq!(row.work_ns, m as i64 * (TF + TB) - calls);
        assert_eq!(row.bubble_ns - calls, (p - 1) as i64 * (TF + TB), "stage {}", row.stage);
        assert!((row.bubble_pct - theo).abs() < 1e-3, "stage {}: {} vs {theo}", row.stage, row.bubble_pct);
        assert_eq!(row.warmup_ns + row.cooldown_ns + row.p2p_wait_ns + row.other_idle_ns, row.bubble_ns);
    }
    // the warm-up is the textbook one: stage s waits s forwards for its first input (and
    // its 1 ns receive call, which ends the wait)
    for row in &r.steps[0].stages {
        assert_eq!(row.warmup_ns, row.stage as i64 * TF + (row.stage > 0) as i64, "stage {}", row.stage);
    }
    assert_eq!(pl.pairs.len(), 2 * (p - 1) * m);
}

#[test]
fn perfect_1f1b_gives_the_theoretical_bubble() {
    check_perfect(true);
}

#[test]
fn perfect_gpipe_gives_the_theoretical_bubble() {
    check_perfect(false);
}

#[test]
fn all_reduce_pair_has_no_pipeline() {
    let nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
    let evs = |_: i64| -> Vec<Ev> {
        vec![
            ("ProfilerStep#1".into(), 0, 1000, SpanKind::UserAnnotation, String::new()),
            (nccl.into(), 100, 200, SpanKind::Kernel, String::new()),
        ]
    };
    let stores = [store(0, &evs(0)), store(1, &evs(1))];
    let steps = steps_of(&stores, 1000);
    let ranks = rank_traces(&stores, &steps);
    assert!(analyze(&ranks, &MicrobatchRule::default()).is_none());
}

#[test]
fn exchange_with_no_first_direction_is_no_order() {
    // both ranks send before they receive: neither feeds the other
    let evs = |peer: usize| -> Vec<Ev> {
        vec![
            ("ProfilerStep#1".into(), 0, 1000, SpanKind::UserAnnotation, String::new()),
            call("c10d::send", peer, 10),
            call("c10d::recv_", peer, 20),
        ]
    };
    let stores = [store(0, &evs(1)), store(1, &evs(0))];
    let steps = steps_of(&stores, 1000);
    let ranks = rank_traces(&stores, &steps);
    assert!(analyze(&ranks, &MicrobatchRule::default()).is_none());
}

#[test]
fn names_read_as_microbatches() {
    use super::microbatch::{parse_name, Phase};
    let d = MicrobatchRule::default();
    assert_eq!(parse_name(&d, "Forward 3"), Some((Phase::Forward, 3, None)));
    assert_eq!(parse_name(&d, "backward_microbatch_12"), Some((Phase::Backward, 12, None)));
    assert_eq!(parse_name(&d, "PP:4F3"), Some((Phase::Forward, 3, Some(4))));
    assert_eq!(parse_name(&d, "PP:1W0"), Some((Phase::Weight, 0, Some(1))));
    assert_eq!(parse_name(&d, "forward"), None);
    assert_eq!(parse_name(&d, "aten::linear"), None);
    let u = MicrobatchRule::from_pattern(r"mb(?P<mb>\d+)_(?P<phase>fwd|bwd)").unwrap();
    assert_eq!(parse_name(&u, "mb7_bwd"), Some((Phase::Backward, 7, None)));
    assert_eq!(parse_name(&u, "Forward 3"), None, "the user's pattern replaces the built-in names");
    assert!(MicrobatchRule::from_pattern(r"fwd(\d+)").is_err(), "groups are required");
}
