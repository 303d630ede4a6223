//! Each stage's microbatch work: forward, backward and weight-gradient ranges with their
//! microbatch number.
//!
//! From annotations where the framework writes them (CPU `record_function` or NVTX ranges,
//! outermost only): the user's pattern (`--microbatches REGEX`, with named groups `phase`, a
//! word starting with f, b, w or i: forward, backward, weight, backward-input, and `mb`, the
//! number) where given, instead of the built-in names, else the first of:
//! - torch.distributed.pipelining's runtime actions, `PP:<stage><F|B|I|W><mb>` (the stage
//!   is the chunk);
//! - names like `Forward 3`, `Backward 3` (torch.distributed.pipelining's single-stage
//!   schedules), `forward_microbatch_3`, `fwd_mb3`, `backward_weight 3`, any case.
//!
//! Where no range matches, from the transfers (`from_transfers`): the work between two
//! transfers, forward when it ends in a send downstream (or follows a receive from
//! upstream), backward when it ends in a send upstream (or follows one from downstream). A gap
//! that follows a receive of one phase and ends in a send of the other holds both (the last
//! stage's forward and backward of 1F1B, the first stage's backward then forward): it counts
//! as one of each, both over the same range.

use super::p2p::{Dir, P2pOp};
use regex::Regex;
use serde::Serialize;
use strobe_model::{LaneKind, SpanKind};
use strobe_store::Store;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Forward,
    Backward,
    Weight,
}

impl Phase {
    /// `F` / `B` / `W`, as the timeline labels them (`F3`).
    pub fn letter(self) -> char {
        match self {
            Phase::Forward => 'F',
            Phase::Backward => 'B',
            Phase::Weight => 'W',
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MicrobatchSource {
    Annotation,
    Transfers,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Microbatch {
    pub phase: Phase,
    pub index: u32,
    /// The model chunk (virtual stage) where the name says (`PP:4F3`).
    pub chunk: Option<u32>,
    /// The annotation span (None when found from the transfers).
    pub span: Option<u32>,
    pub start_ns: i64,
    pub end_ns: i64,
}

impl Microbatch {
    /// `F3`, `B3`, `W3`: the label on the timeline.
    pub fn label(&self) -> String {
        format!("{}{}", self.phase.letter(), self.index)
    }
}

/// How microbatch ranges are found: the built-in names, or a user pattern before them.
#[derive(Clone, Debug, Default)]
pub struct MicrobatchRule {
    pub pattern: Option<Regex>,
}

impl MicrobatchRule {
    /// A rule from `--microbatches REGEX`, instead of the built-in names: it must match a
    /// whole name and name the groups `phase` and `mb`.
    pub fn from_pattern(p: &str) -> Result<MicrobatchRule, String> {
        let r = Regex::new(&format!("^(?:{p})$"))
            .map_err(|e| format!("--microbatches {p:?}: not a valid regular expression: {e}"))?;
        let names: Vec<&str> = r.capture_names().flatten().collect();
        if !names.contains(&"phase") || !names.contains(&"mb") {
            return Err(format!("--microbatches {p:?}: needs the named groups (?P<phase>…) and (?P<mb>…)"));
        }
        Ok(MicrobatchRule { pattern: Some(r) })
    }
}

fn builtin() -> &'static [Regex; 2] {
    static R: std::sync::OnceLock<[Regex; 2]> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        [
            Regex::new(r"^PP:(?P<chunk>\d+)(?P<phase>F|B|I|W)(?P<mb>\d+)$").unwrap(),
            Regex::new(
                r"(?i)^(?P<phase>forward|backward[_ ]?weight|backward[_ ]?input|backward|fwd|bwd|wgrad|weight)[_ :#-]*(?:micro[_ ]?batch|mb|chunk)?[_ :#-]*(?P<mb>\d+)$",
            )
            .unwrap(),
        ]
    })
}

fn phase_of(word: &str) -> Option<Phase> {
    let l = word.to_ascii_lowercase();
    if l.contains("weight") || l.starts_with('w') {
        return Some(Phase::Weight);
    }
    match l.chars().next()? {
        'f' => Some(Phase::Forward),
        'b' | 'i' => Some(Phase::Backward),
        _ => None,
    }
}

/// The microbatch a range's name reads as, by `rule`'s pattern, else the built-in names.
pub fn parse_name(rule: &MicrobatchRule, name: &str) -> Option<(Phase, u32, Option<u32>)> {
    let rules: &[Regex] = match &rule.pattern {
        Some(p) => std::slice::from_ref(p),
        None => builtin(),
    };
    for r in rules {
        if let Some(c) = r.captures(name) {
            let phase = phase_of(c.name("phase")?.as_str())?;
            let mb = c.name("mb")?.as_str().parse().ok()?;
            let chunk = c.name("chunk").and_then(|m| m.as_str().parse().ok());
            return Some((phase, mb, chunk));
        }
    }
    None
}

/// The annotated microbatches of `store`, by start: outermost matching ranges of its CPU
/// threads and NVTX lanes (a `Forward 3` on the GPU-annotation lane repeats the CPU one).
pub fn annotated(store: &Store, rule: &MicrobatchRule) -> Vec<Microbatch> {
    let parsed: Vec<Option<(Phase, u32, Option<u32>)>> =
        (0..store.string_count() as u32).map(|i| parse_name(rule, store.string(i))).collect();
    let mut out = Vec::new();
    for (lane, desc) in store.lanes.iter().enumerate() {
        if !matches!(desc.kind, LaneKind::CpuThread { .. } | LaneKind::Nvtx { .. }) {
            continue;
        }
        let v = store.lane_spans(lane as u32);
        let mut reach = i64::MIN;
        for (k, &sid) in v.span.iter().enumerate() {
            let m = store.span_meta(sid);
            let kind = SpanKind::from_u8(m.kind);
            if !matches!(kind, SpanKind::UserAnnotation | SpanKind::Nvtx) {
                continue;
            }
            let Some(Some((phase, index, chunk))) = parsed.get(m.name as usize) else { continue };
            if v.starts[k] < reach || v.ends[k] <= v.starts[k] {
                continue; // inside an earlier match
            }
            reach = v.ends[k];
            out.push(Microbatch {
                phase: *phase,
                index: *index,
                chunk: *chunk,
                span: Some(sid),
                start_ns: v.starts[k],
                end_ns: v.ends[k],
            });
        }
    }
    out.sort_by_key(|m| (m.start_ns, m.end_ns));
    out
}

/// Microbatches from the transfers of one rank in one step `[t0, t1)`: the gaps between its
/// transfers (each transfer from its post to its completion), `up` / `down` the ranks of the
/// stages before and after it. Gaps that neither end in a send nor follow a receive (the
/// optimizer at the step's end) are not microbatch work. Numbered per phase in order.
pub fn from_transfers(ops: &[&P2pOp], up: Option<i64>, down: Option<i64>, t0: i64, t1: i64) -> Vec<Microbatch> {
    let mut v: Vec<&P2pOp> = ops.iter().copied().filter(|o| o.start_ns >= t0 && o.start_ns < t1).collect();
    v.sort_by_key(|o| o.start_ns);
    let mut out = Vec::new();
    let mut counts = [0u32; 2];
    let mut prev: Option<&P2pOp> = None;
    let mut cursor = t0;
    for i in 0..=v.len() {
        let next = v.get(i).copied();
        let end = next.map(|o| o.start_ns).unwrap_or(t1);
        if end > cursor {
            let by_next = next.and_then(|o| match (o.dir, o.peer) {
                (Dir::Send, p) if p.is_some() && p == down => Some(Phase::Forward),
                (Dir::Send, p) if p.is_some() && p == up => Some(Phase::Backward),
                _ => None,
            });
            let by_prev = prev.and_then(|o| match (o.dir, o.peer) {
                (Dir::Recv, p) if p.is_some() && p == up => Some(Phase::Forward),
                (Dir::Recv, p) if p.is_some() && p == down => Some(Phase::Backward),
                _ => None,
            });
            let phases: Vec<Phase> = match (by_prev, by_next) {
                (Some(a), Some(b)) if a != b => vec![a, b],
                (a, b) => b.or(a).into_iter().collect(),
            };
            for phase in phases {
                let c = &mut counts[(phase != Phase::Forward) as usize];
                out.push(Microbatch { phase, index: *c, chunk: None, span: None, start_ns: cursor, end_ns: end });
                *c += 1;
            }
        }
        if let Some(o) = next {
            // a receive's work begins when it completes; a send's when it was posted
            let done = if o.dir == Dir::Recv { o.flight_end_ns } else { o.end_ns };
            cursor = cursor.max(done);
            prev = Some(o);
        }
    }
    out
}
