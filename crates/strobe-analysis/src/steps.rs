//! Iterations ("steps"): the one model every analysis uses, whatever the format.
//!
//! Where steps come from, first that applies (docs/ranks.md, "Steps"):
//! 1. the user's pattern (`StepRule::pattern`, `--steps REGEX`): every CPU or NVTX range whose
//!    whole name it matches;
//! 2. Kineto `ProfilerStep#N` ranges on CPU threads (`profiler_step`);
//! 3. NVTX ranges whose names look like iterations (`step_3`, `iteration 3`, `train_step`,
//!    `ProfilerStep#3` under `emit_nvtx`, …: `is_iteration_name`) (`nvtx`);
//! 4. CPU annotation ranges (`record_function`) with such names, and JAX / TensorFlow
//!    `StepTraceAnnotation`s (a range with a `step_num` arg, named `train 3`: `step_num`)
//!    (`annotation`);
//! 5. XLA's step markers on a GPU (XProf's `Steps` line in an XSpace: `device_markers`);
//! 6. the period of the GPU work itself (`infer::inferred_steps`, `inferred`).
//!
//! Only the outermost matching ranges count (a `step_3` inside `train_step` is not a second
//! step), a name that repeats is numbered (`train_step (2)`), and where the trace holds a
//! `cudaProfilerStart`/`cudaProfilerStop` capture range, only the steps inside it are kept.

mod capture;
mod device_markers;
mod infer;
mod step_num;

pub use capture::{capture_range, CaptureRange};
pub use infer::inferred_steps;

use serde::Serialize;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

#[derive(Clone, Copy, Debug, Serialize, serde::Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StepSource {
    ProfilerStep,
    Nvtx,
    Annotation,
    Inferred,
}

impl StepSource {
    pub fn as_str(self) -> &'static str {
        match self {
            StepSource::ProfilerStep => "profiler_step",
            StepSource::Nvtx => "nvtx",
            StepSource::Annotation => "annotation",
            StepSource::Inferred => "inferred",
        }
    }
}

#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct Step {
    pub name: String,
    pub start_ns: i64,
    pub dur_ns: i64,
    pub source: StepSource,
}

impl Step {
    pub fn end_ns(&self) -> i64 {
        self.start_ns + self.dur_ns
    }
}

/// How steps are found: the built-in rules, or a user pattern that replaces them.
#[derive(Clone, Debug, Default)]
pub struct StepRule {
    pub pattern: Option<regex::Regex>,
}

impl StepRule {
    /// A rule from `--steps REGEX`; the pattern must match a range's whole name.
    pub fn from_pattern(p: &str) -> Result<StepRule, String> {
        regex::Regex::new(&format!("^(?:{p})$"))
            .map(|r| StepRule { pattern: Some(r) })
            .map_err(|e| format!("--steps {p:?}: not a valid regular expression: {e}"))
    }

    /// The pattern as text (None: the built-in rules): what says whether two rules are one.
    pub fn pattern_text(&self) -> Option<&str> {
        self.pattern.as_ref().map(|r| r.as_str())
    }
}

pub fn is_step_name(name: &str) -> bool {
    name.strip_prefix("ProfilerStep#").map(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).unwrap_or(false)
}

/// A name that reads as one training iteration: optional `train`/`training`/`fwd_bwd`-style
/// prefix, then `step`, `iter` or `iteration`, then optionally a number (`step_3`,
/// `iteration 3`, `Step #3`, `train_step`, `training_step_12`, `ProfilerStep#3`), any case.
/// Phases (`forward`, `optimizer.step`) are not iterations.
pub fn is_iteration_name(name: &str) -> bool {
    if is_step_name(name) {
        return true;
    }
    let l = name.trim().to_ascii_lowercase();
    let sep = |c: char| matches!(c, ' ' | '_' | '-' | '#' | ':' | '.' | '=');
    let mut rest = l.as_str();
    for prefix in ["training", "train"] {
        if let Some(r) = rest.strip_prefix(prefix) {
            rest = r.trim_start_matches(sep);
            break;
        }
    }
    let Some(after) = ["iteration", "iter", "step"].iter().find_map(|w| rest.strip_prefix(w)) else {
        return false;
    };
    let digits = after.trim_start_matches(sep);
    (after.is_empty() || !digits.is_empty()) && digits.bytes().all(|b| b.is_ascii_digit())
}

/// The number a step name ends with (`ProfilerStep#12` → 12, `train_step (3)` → 3), for
/// ordering steps by number; names without one sort last.
pub fn step_number(name: &str) -> u64 {
    let b = name.as_bytes();
    let end = b.iter().rposition(|c| c.is_ascii_digit()).map(|i| i + 1);
    let Some(end) = end else { return u64::MAX };
    let start = b[..end].iter().rposition(|c| !c.is_ascii_digit()).map(|i| i + 1).unwrap_or(0);
    name[start..end].parse().unwrap_or(u64::MAX)
}

/// Steps by the built-in rules, sorted by start.
pub fn steps(store: &Store) -> Vec<Step> {
    find_steps(store, &StepRule::default())
}

/// Steps by `rule`, sorted by start (then name).
pub fn find_steps(store: &Store, rule: &StepRule) -> Vec<Step> {
    find_steps_in(store, rule, capture_range(store).as_ref())
}

/// `find_steps` with the trace's capture range (`capture_range`) already found: only steps
/// inside it count.
pub fn find_steps_in(store: &Store, rule: &StepRule, capture: Option<&CaptureRange>) -> Vec<Step> {
    let cands = candidates(store, rule);
    let chosen: Vec<Candidate> = if rule.pattern.is_some() {
        cands
    } else {
        let of = |src: StepSource| cands.iter().filter(|c| c.source == src).cloned().collect::<Vec<_>>();
        [StepSource::ProfilerStep, StepSource::Nvtx, StepSource::Annotation]
            .into_iter()
            .map(of)
            .find(|v| !v.is_empty())
            .unwrap_or_default()
    };
    let inside = |s: i64, e: i64| capture.is_none_or(|c| s >= c.start_ns && e <= c.end_ns);
    let mut out = name_repeats(outermost(chosen));
    out.retain(|s| inside(s.start_ns, s.end_ns()));
    if out.is_empty() && rule.pattern.is_none() {
        // XLA's step markers on the device, then the GPU work's own period
        out = device_markers::device_steps(store);
        out.retain(|s| inside(s.start_ns, s.end_ns()));
    }
    if out.is_empty() && rule.pattern.is_none() {
        out = inferred_steps(store);
        out.retain(|s| inside(s.start_ns, s.end_ns()));
    }
    out.sort_by(|a, b| (a.start_ns, &a.name).cmp(&(b.start_ns, &b.name)));
    out
}

#[derive(Clone)]
struct Candidate {
    name: String,
    start: i64,
    end: i64,
    source: StepSource,
}

/// Every CPU or NVTX range that could be a step, with the source it would be.
fn candidates(store: &Store, rule: &StepRule) -> Vec<Candidate> {
    let wanted: Vec<bool> = (0..store.string_count() as u32)
        .map(|i| {
            let s = store.string(i);
            match &rule.pattern {
                Some(r) => r.is_match(s),
                None => is_iteration_name(s),
            }
        })
        .collect();
    let mut out = Vec::new();
    let mut step_nums = step_num::StepNums::new(store);
    for (lane, desc) in store.lanes.iter().enumerate() {
        let on_nvtx = match desc.kind {
            LaneKind::CpuThread { .. } => false,
            LaneKind::Nvtx { .. } => true,
            _ => continue,
        };
        let v = store.lane_spans(lane as u32);
        for (k, &sid) in v.span.iter().enumerate() {
            let m = store.span_meta(sid);
            if v.ends[k] <= v.starts[k] {
                continue;
            }
            if !wanted.get(m.name as usize).copied().unwrap_or(false) {
                if rule.pattern.is_none() && !on_nvtx {
                    if let Some(name) = step_nums.step_name(store, sid, m.name) {
                        let source = StepSource::Annotation;
                        out.push(Candidate { name, start: v.starts[k], end: v.ends[k], source });
                    }
                }
                continue;
            }
            let name = store.string(m.name);
            let kind = SpanKind::from_u8(m.kind);
            let source = if on_nvtx || kind == SpanKind::Nvtx {
                StepSource::Nvtx
            } else if is_step_name(name) {
                StepSource::ProfilerStep
            } else if kind == SpanKind::UserAnnotation || rule.pattern.is_some() {
                StepSource::Annotation
            } else {
                // an op or Python function named like a step (`train_step` as a Python
                // frame): the annotation rule's, as record_function would give
                StepSource::Annotation
            };
            out.push(Candidate { name: name.to_string(), start: v.starts[k], end: v.ends[k], source });
        }
    }
    out
}

/// Drops ranges lying inside another of the candidates, and exact duplicates (the same range
/// on two lanes keeps one).
fn outermost(mut c: Vec<Candidate>) -> Vec<Candidate> {
    c.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)).then(a.name.cmp(&b.name)));
    let mut out: Vec<Candidate> = Vec::with_capacity(c.len());
    let mut reach = i64::MIN;
    for x in c {
        if x.end <= reach {
            continue;
        }
        reach = x.end;
        out.push(x);
    }
    out
}

/// Numbers repeated names in time order (`train_step (1)`, `train_step (2)`, …) so that every
/// step has a name of its own.
fn name_repeats(c: Vec<Candidate>) -> Vec<Step> {
    let mut count: std::collections::HashMap<String, usize> = Default::default();
    for x in &c {
        *count.entry(x.name.clone()).or_default() += 1;
    }
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    c.into_iter()
        .map(|x| {
            let name = if count[&x.name] > 1 {
                let k = seen.entry(x.name.clone()).or_default();
                *k += 1;
                format!("{} ({k})", x.name)
            } else {
                x.name
            };
            Step { name, start_ns: x.start, dur_ns: x.end - x.start, source: x.source }
        })
        .collect()
}

/// Where the steps lie: the first step's start to the last one's end.
pub fn steps_window(steps: &[Step]) -> Option<(i64, i64)> {
    let s = steps.iter().map(|s| s.start_ns).min()?;
    let e = steps.iter().map(|s| s.end_ns()).max()?;
    Some((s, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iteration_names() {
        for n in
            ["step_3", "iteration 3", "ProfilerStep#3", "train_step", "Step #12", "training_step_4", "iter3", "step"]
        {
            assert!(is_iteration_name(n), "{n}");
        }
        for n in ["forward", "optimizer.step", "stepper", "step_3_fwd", "ProfilerStep#", "train", "steps"] {
            assert!(!is_iteration_name(n), "{n}");
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(step_number("ProfilerStep#12"), 12);
        assert_eq!(step_number("train_step (3)"), 3);
        assert_eq!(step_number("step"), u64::MAX);
    }

    #[test]
    fn user_pattern_matches_whole_names() {
        let r = StepRule::from_pattern("it\\d+").unwrap();
        let p = r.pattern.unwrap();
        assert!(p.is_match("it12"));
        assert!(!p.is_match("xit12"));
        assert!(StepRule::from_pattern("(").is_err());
    }
}
