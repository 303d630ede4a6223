//! The step-time attribution of one trace (docs/attribution.md): each step's window on its GPU
//! split, instant by instant, into work (model at peak, model-op inefficiency, other work),
//! exposed comm and idle by cause; the parts are whole ns and add up to the step exactly.

use super::holders::{holders, Held, NameFlags};
use super::idle_causes::IdleCauser;
use super::rounding::whole;
use super::stretches::{Stretch, StretchKind};
use super::sweep::{device_lanes, sweep, WindowActivity};
use super::work_owners::{class_flops, class_label, other_name, runs_sorted, Owner, Owners};
use super::{Details, Evidence, Parts, StepBreakdown};
use crate::efficiency::{OpClass, OpRun, StepMfu};
use crate::figures::TraceFigures;
use crate::gpu_time::{Classifier, DeviceUnions};
use crate::steps::Step;
use rayon::prelude::*;
use strobe_store::timing::Phase;
use strobe_store::Store;

/// How many names `other_gpu_work_top` keeps.
pub const OTHER_TOP: usize = 8;

/// A step's breakdown and its non-work stretches (what the several-rank report reclassifies).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepAttribution {
    pub breakdown: StepBreakdown,
    pub stretches: Vec<Stretch>,
}

/// Every step of the trace, its time split into parts.
pub fn of_trace(store: &Store, figs: &TraceFigures) -> Vec<StepBreakdown> {
    let steps = figs.steps(store);
    let paths = figs.critical_paths(store);
    figs.step_attributions(store)
        .iter()
        .zip(paths.iter().cloned().chain(std::iter::repeat(None)))
        .enumerate()
        .map(|(i, (a, path))| {
            let mut b = StepBreakdown { critical_path: path, ..a.breakdown.clone() };
            b.notes.extend(overlap_notes(steps, i));
            b
        })
        .collect()
}

/// `steps` (a rank's, found by the figures' rule) split into parts, with their stretches.
pub fn of_steps(store: &Store, figs: &TraceFigures, steps: &[Step]) -> Vec<StepAttribution> {
    let mut attributed = attribute(store, figs, steps);
    add_overlap_notes(steps, &mut attributed);
    attributed
}

/// Each step of `steps` attributed on its own: every note but those on the steps beside it
/// (`add_overlap_notes`), which depend on the list the step is in.
pub fn attribute(store: &Store, figs: &TraceFigures, steps: &[Step]) -> Vec<StepAttribution> {
    // the op runs kept first, so the efficiency figures read them rather than find their own
    let runs = figs.op_runs(store);
    let eff = figs.efficiency(store);
    let unions = &figs.activity(store).unions;
    let _t = Phase::start("figures: step attribution");
    let mfu = crate::efficiency::step_mfu(store, runs, steps, &eff.device);
    let owners = Owners::new(runs);
    let lanes: Vec<Vec<u32>> = unions.iter().map(|u| device_lanes(store, u.device)).collect();
    // why no op has FLOPs, where the efficiency figures know (no framework ops in an nsys
    // export, no correlation flows…)
    let no_ops = runs.is_empty().then(|| eff.notes.first().cloned()).flatten();
    let sorted = runs_sorted(store, runs);
    let input = Input { store, runs, runs_sorted: sorted, owners: &owners, unions, lanes: &lanes, no_ops };
    // the steps are independent: attributed side by side, each worker with its own caches of
    // what names say (a cache only saves time, it decides nothing)
    steps
        .par_iter()
        .zip(mfu)
        .map_init(|| (Classifier::new(store), NameFlags::new()), |(c, n), (s, m)| one_step(&input, c, n, s, &m))
        .collect()
}

/// Notes on each step of `steps` that overlaps the steps beside it in the list.
pub fn add_overlap_notes(steps: &[Step], attributed: &mut [StepAttribution]) {
    for (i, a) in attributed.iter_mut().enumerate() {
        a.breakdown.notes.extend(overlap_notes(steps, i));
    }
}

struct Input<'a> {
    store: &'a Store,
    runs: &'a [OpRun],
    runs_sorted: bool,
    owners: &'a Owners<'a>,
    unions: &'a [DeviceUnions],
    lanes: &'a [Vec<u32>],
    no_ops: Option<String>,
}

/// Notes for step `i` overlapping the steps beside it.
fn overlap_notes(steps: &[Step], i: usize) -> Vec<String> {
    let s = &steps[i];
    steps
        .iter()
        .enumerate()
        .filter(|&(j, o)| j != i && o.start_ns < s.end_ns() && s.start_ns < o.end_ns() && o.dur_ns > 0)
        .map(|(_, o)| {
            format!(
                "overlaps step {}: each step's parts cover its own whole window, so their shared time counts in both",
                o.name
            )
        })
        .collect()
}

/// The device a step ran on: the one with most busy time in its window (the first on a tie or
/// where none has any).
fn step_device(unions: &[DeviceUnions], (a, b): (i64, i64)) -> Option<(usize, i64)> {
    let mut best: Option<(usize, i64)> = None;
    for (i, u) in unions.iter().enumerate() {
        let busy = crate::intervals::total_within(&u.busy, a, b);
        if best.is_none_or(|x| busy > x.1) {
            best = Some((i, busy));
        }
    }
    best
}

fn one_step(input: &Input, classes: &mut Classifier, names: &mut NameFlags, s: &Step, m: &StepMfu) -> StepAttribution {
    let store = input.store;
    let (a, b) = (s.start_ns, s.end_ns());
    let mut out = StepBreakdown { step: s.name.clone(), start_ns: a, dur_ns: s.dur_ns.max(0), ..Default::default() };
    let notes = &mut out.notes;
    if s.dur_ns <= 0 {
        notes.push("the step has no duration: every part is 0".into());
        return StepAttribution { breakdown: out, stretches: Vec::new() };
    }
    let Some((dev, busy)) = step_device(input.unions, (a, b)) else {
        notes.push("no GPU activity in this trace: the step's whole time is other idle".into());
        out.parts.idle_other_ns = s.dur_ns;
        let stretches = vec![Stretch { start: a, end: b, kind: StretchKind::IdleOther, held_by: None }];
        return StepAttribution { breakdown: out, stretches };
    };
    let union = &input.unions[dev];
    if busy == 0 {
        notes.push("no GPU work in this step: its whole time is GPU idle".into());
    }
    let others: Vec<i64> = input
        .unions
        .iter()
        .filter(|u| u.device != union.device && crate::intervals::total_within(&u.busy, a, b) > 0)
        .map(|u| u.device)
        .collect();
    if !others.is_empty() {
        notes.push(format!(
            "GPU work on devices {:?} too: the step is attributed on device {}, the busiest in it",
            others, union.device
        ));
    }
    if store.meta.load.truncated.is_some() && b > union.counts.end_ns {
        notes.push(
            "the trace was cut short: the step's time after the GPU's last recorded operation counts as other idle"
                .into(),
        );
    }
    let act = sweep(store, &input.lanes[dev], classes, (a, b));
    let (mut parts, details) = work_parts(input, &act, s, m, notes);
    let mut stretches = Vec::with_capacity(act.exposed_comm.len() + act.idle.len());
    stretches.extend(act.exposed_comm.iter().map(|&(s, e)| Stretch {
        start: s,
        end: e,
        kind: StretchKind::CommTransfer,
        held_by: None,
    }));
    let mut causer = IdleCauser::new(store, union, crate::idle::DEFAULT_THRESHOLD_NS);
    let mut held: Vec<Evidence> = Vec::new();
    names.for_step(&s.name);
    for &(a, e) in &act.idle {
        let (kind, lanes) = causer.cause(a, e);
        let pieces = match lanes {
            Some(l) => holders(store, l, (a, e), names),
            None => vec![Held { start: a, end: e, holder: None, sync: false }],
        };
        for p in pieces {
            let kind = if p.sync { StretchKind::IdleSync } else { kind };
            let held_by = match (kind, p.holder) {
                (StretchKind::IdleHost | StretchKind::IdleSync, Some(h)) => {
                    let name = store.span_name(h);
                    let i = match held.iter().position(|x| x.name == name) {
                        Some(i) => i,
                        None => {
                            held.push(Evidence { name: name.to_string(), ns: 0, span: Some(h), rank: None });
                            held.len() - 1
                        }
                    };
                    held[i].ns += p.end - p.start;
                    Some(i as u32)
                }
                _ => None,
            };
            stretches.push(Stretch { start: p.start, end: p.end, kind, held_by });
        }
    }
    stretches.sort_by_key(|x| (x.start, x.end));
    for st in &stretches {
        *st.kind.part(&mut parts) += st.end - st.start;
    }
    if !act.exposed_comm.is_empty() {
        notes.push("comm wait needs the other ranks' traces: one trace's exposed comm all counts as transfer".into());
    }
    // largest first; the stretches' indices follow the new order
    let mut order: Vec<usize> = (0..held.len()).collect();
    order.sort_by(|&x, &y| held[y].ns.cmp(&held[x].ns).then_with(|| held[x].name.cmp(&held[y].name)));
    let mut new_index = vec![0u32; held.len()];
    for (k, &i) in order.iter().enumerate() {
        new_index[i] = k as u32;
    }
    for st in &mut stretches {
        st.held_by = st.held_by.map(|i| new_index[i as usize]);
    }
    out.details = Details { idle_host_held_by: order.iter().map(|&i| held[i].clone()).collect(), ..details };
    settle(&mut parts, out.dur_ns, notes);
    out.parts = parts;
    StepAttribution { breakdown: out, stretches }
}

/// The work parts and their details: the work union's time shared among its spans' owners,
/// the model ops' part split into model at peak and inefficiency per class.
fn work_parts(input: &Input, act: &WindowActivity, s: &Step, m: &StepMfu, notes: &mut Vec<String>) -> (Parts, Details) {
    let store = input.store;
    // per class: time and the longest span; per other name: time and the longest span
    let mut model: Vec<(OpClass, f64, (i64, u32))> = Vec::new();
    let mut other: Vec<(String, f64, (i64, u32))> = Vec::new();
    // by what the name is made of (no string made per span), then by the name itself (two
    // makings of one name are one entry)
    let mut other_by_key: rustc_hash::FxHashMap<(bool, &str), usize> = Default::default();
    let mut other_index: rustc_hash::FxHashMap<String, usize> = Default::default();
    for &(span, share) in &act.work {
        let len = (store.span_end(span) - store.span_start(span), span);
        match input.owners.of(span) {
            Owner::Model(c) => match model.iter_mut().find(|x| x.0 == c) {
                Some(x) => {
                    x.1 += share;
                    x.2 = x.2.max(len);
                }
                None => model.push((c, share, len)),
            },
            owner => {
                let key = match owner {
                    Owner::Op(r) => (r.recompute, r.name.as_str()),
                    _ => (false, store.span_name(span)),
                };
                let i = *other_by_key.entry(key).or_insert_with(|| {
                    let name = other_name(store, span, owner);
                    *other_index.entry(name.clone()).or_insert_with(|| {
                        other.push((name, 0.0, len));
                        other.len() - 1
                    })
                });
                other[i].1 += share;
                other[i].2 = other[i].2.max(len);
            }
        }
    }
    let model_f: f64 = model.iter().map(|x| x.1).sum();
    let other_f: f64 = other.iter().map(|x| x.1).sum();
    let split = whole(&[model_f, other_f], act.work_ns);
    let (model_ns, other_ns) = (split[0], split[1]);
    let dur = s.dur_ns;
    let at_peak = m.mfu.map(|u| (u * dur as f64).round() as i64).unwrap_or(0).clamp(0, dur);
    if m.mfu.is_some_and(|u| u > 1.0) {
        notes.push("the step's MFU is above 100 % (the peak is below what its kernels achieved): model_at_peak_ns is capped at the step".into());
    }
    let mut parts = Parts { model_at_peak_ns: at_peak, other_gpu_work_ns: other_ns, ..Default::default() };
    if m.mfu.is_none() {
        notes.push(match m.peak_flops_per_s {
            None if model_ns > 0 || m.model_flops > 0.0 => format!(
                "no peak FLOP/s known for the device's {} unit (pass --peak-tflops): model_at_peak_ns is 0 and the model ops' GPU time all counts as inefficiency",
                m.unit.as_str()
            ),
            _ => match &input.no_ops {
                Some(why) => format!("model_at_peak_ns is 0 and the GPU work counts as other GPU work: {why}"),
                None => "no op of this step has a FLOP formula on recorded shapes (profile with record_shapes=True): model_at_peak_ns is 0 and its GPU work counts as other GPU work".into(),
            },
        });
    }
    // the model ops' time beyond their FLOPs at peak, per class: a class's own time less its
    // FLOPs at the step's peak (below 0 — its kernels ran outside the window — counts as 0)
    let peak = m.peak_flops_per_s.filter(|_| m.mfu.is_some());
    let flops = class_flops(store, input.runs, input.runs_sorted, (s.start_ns, s.end_ns()));
    let mut classes: Vec<(OpClass, f64, Option<u32>)> = model.iter().map(|x| (x.0, x.1, Some(x.2 .1))).collect();
    for (c, f) in &flops {
        let at = peak.map_or(0.0, |p| f / p * 1e9);
        match classes.iter_mut().find(|x| x.0 == *c) {
            Some(x) => x.1 -= at,
            None => classes.push((*c, -at, None)),
        }
    }
    let ineff = model_ns - at_peak;
    if ineff < 0 {
        notes.push(format!(
            "the step's model FLOPs at peak ({} ns) exceed its model ops' GPU time in the window ({} ns: their kernels ran past the step's end): the difference is taken from the other parts",
            at_peak, model_ns
        ));
    }
    parts.model_ops_inefficiency_ns = ineff.max(0);
    parts.other_gpu_work_ns += ineff.min(0);
    classes.retain(|x| x.1 > 0.0);
    let shares = whole(&classes.iter().map(|x| x.1).collect::<Vec<_>>(), parts.model_ops_inefficiency_ns);
    let mut by_class: Vec<Evidence> = classes
        .iter()
        .zip(shares)
        .filter(|(_, ns)| *ns > 0)
        .map(|(c, ns)| Evidence { name: class_label(c.0).to_string(), ns, span: c.2, rank: None })
        .collect();
    by_class.sort_by(|x, y| y.ns.cmp(&x.ns).then_with(|| x.name.cmp(&y.name)));
    let shares = whole(&other.iter().map(|x| x.1).collect::<Vec<_>>(), other_ns);
    let mut top: Vec<Evidence> = other
        .into_iter()
        .zip(shares)
        .filter(|(_, ns)| *ns > 0)
        .map(|(o, ns)| Evidence { name: o.0, ns, span: Some(o.2 .1), rank: None })
        .collect();
    top.sort_by(|x, y| y.ns.cmp(&x.ns).then_with(|| x.name.cmp(&y.name)));
    top.truncate(OTHER_TOP);
    let details = Details {
        mfu: m.mfu,
        model_flops: m.model_flops,
        inefficiency_by_class: by_class,
        other_gpu_work_top: top,
        ..Default::default()
    };
    (parts, details)
}

/// Makes the parts whole: none below 0 and their sum the step. A part driven below 0 (the
/// model at peak beyond the model ops' time) or a sum past the step is taken from the other
/// parts, the largest first; the model at peak (the MFU) last.
pub fn settle(parts: &mut Parts, dur_ns: i64, notes: &mut Vec<String>) {
    let mut v = parts.values();
    v.iter_mut().for_each(|x| *x = (*x).max(0));
    let mut excess = v.iter().sum::<i64>() - dur_ns;
    while excess > 0 {
        let Some(i) =
            (1..10).filter(|&i| v[i] > 0).max_by_key(|&i| (v[i], std::cmp::Reverse(i))).or((v[0] > 0).then_some(0))
        else {
            break;
        };
        let take = excess.min(v[i]);
        v[i] -= take;
        excess -= take;
    }
    if excess < 0 {
        // short of the step (cannot happen when the window is covered): the rest is other idle
        v[9] -= excess;
        notes.push(format!("{} ns of the step were not covered by any part: counted as other idle", -excess));
    }
    *parts = Parts::from_values(v);
}
