//! What each allocation is: parameter, gradient, optimizer state, activation, temporary, input
//! batch, or other. The rules are docs/memory.md's ("Categories"); each allocation is given the
//! rule that decided it, so a figure can say why, and `other` is never a silent guess.
//!
//! Everything is decided on trace *positions* (entry indices), so the phases from
//! `external_annotations` (timestamps) and the phases inferred from frames (runs of entries)
//! are one kind of thing: a list of position ranges per phase kind.

use super::{device_trace, Allocation};
use serde::Serialize;
use strobe_model::memory::{Action, Frame, MemorySnapshot, StackId};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Parameter,
    Gradient,
    OptimizerState,
    Activation,
    Temporary,
    InputBatch,
    Other,
}

impl Category {
    pub const ALL: [Category; 7] = [
        Category::Parameter,
        Category::Gradient,
        Category::OptimizerState,
        Category::Activation,
        Category::Temporary,
        Category::InputBatch,
        Category::Other,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Parameter => "parameter",
            Category::Gradient => "gradient",
            Category::OptimizerState => "optimizer_state",
            Category::Activation => "activation",
            Category::Temporary => "temporary",
            Category::InputBatch => "input_batch",
            Category::Other => "other",
        }
    }
}

/// The rule that decided an allocation's category (docs/memory.md lists them in this order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    LibraryWorkspace,
    AccumulateGradFrame,
    BackwardOutlived,
    BackwardTemporary,
    OptimizerKept,
    OptimizerTemporary,
    OptimizerFreedLater,
    ZeroGradKept,
    ZeroGradTemporary,
    ForwardTemporary,
    ForwardFreedInBackward,
    ForwardFreedElsewhere,
    ParameterFrame,
    BeforeFirstForwardKept,
    BeforeFirstBackwardKept,
    BetweenPhasesTemporary,
    AliveAtForwardStart,
    OutsidePhasesUnexplained,
    BeforeHistoryWindow,
    NoPhases,
}

impl Rule {
    pub fn category(self) -> Category {
        match self {
            Rule::AccumulateGradFrame | Rule::BackwardOutlived | Rule::ZeroGradKept => Category::Gradient,
            Rule::OptimizerKept => Category::OptimizerState,
            Rule::BackwardTemporary
            | Rule::OptimizerTemporary
            | Rule::ZeroGradTemporary
            | Rule::ForwardTemporary
            | Rule::BetweenPhasesTemporary => Category::Temporary,
            Rule::ForwardFreedInBackward => Category::Activation,
            Rule::ParameterFrame | Rule::BeforeFirstForwardKept | Rule::BeforeFirstBackwardKept => Category::Parameter,
            Rule::AliveAtForwardStart => Category::InputBatch,
            Rule::LibraryWorkspace
            | Rule::OptimizerFreedLater
            | Rule::ForwardFreedElsewhere
            | Rule::OutsidePhasesUnexplained
            | Rule::BeforeHistoryWindow
            | Rule::NoPhases => Category::Other,
        }
    }
    pub fn text(self) -> &'static str {
        match self {
            Rule::LibraryWorkspace => "a cuBLAS / cuBLASLt workspace (kept per handle and stream)",
            Rule::AccumulateGradFrame => "made under AccumulateGrad",
            Rule::BackwardOutlived => "made in backward, outlived it",
            Rule::BackwardTemporary => "made and freed in the same backward",
            Rule::OptimizerKept => "made in an optimizer step, kept after it",
            Rule::OptimizerTemporary => "made and freed in the same optimizer step",
            Rule::OptimizerFreedLater => "made in an optimizer step, freed after it but before the end",
            Rule::ZeroGradKept => "made in zero_grad, kept after it",
            Rule::ZeroGradTemporary => "made and freed in the same zero_grad",
            Rule::ForwardTemporary => "made and freed in the same forward",
            Rule::ForwardFreedInBackward => "made in forward, freed in a backward",
            Rule::ForwardFreedElsewhere => "made in forward, not freed in a backward",
            Rule::ParameterFrame => "made by Module._apply / .to() / nn.init, alive to the end",
            Rule::BeforeFirstForwardKept => "made before the first forward, alive to the end",
            Rule::BeforeFirstBackwardKept => "made outside module calls before the first backward, alive to the end",
            Rule::BetweenPhasesTemporary => "made and freed between phases",
            Rule::AliveAtForwardStart => "made outside the phases, alive when a forward began",
            Rule::OutsidePhasesUnexplained => "made outside the phases, no rule fits",
            Rule::BeforeHistoryWindow => {
                "made before the recorded history began (a wrapped ring buffer, or a profile begun mid-run)"
            }
            Rule::NoPhases => "no phases: the snapshot has neither annotations nor frames to tell",
        }
    }
}

/// Where the phases came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseSource {
    /// `external_annotations` (record_function ranges recorded with the history).
    Annotations,
    /// Runs of entries made by the autograd engine and by torch.optim, from the stack frames.
    Frames,
    /// Neither: every allocation is `other`.
    None,
}

const ACCUMULATE_GRAD: u8 = 1;
const ENGINE: u8 = 2;
const OPTIM: u8 = 4;
const PARAM_MAKER: u8 = 8;
const HAS_FRAMES: u8 = 16;
const WORKSPACE: u8 = 32;
const MODULE_CALL: u8 = 64;

fn frame_hints(f: &Frame) -> u8 {
    let (n, file) = (f.name.as_str(), f.filename.replace('\\', "/"));
    let mut h = HAS_FRAMES;
    if n.contains("AccumulateGrad") {
        h |= ACCUMULATE_GRAD;
    }
    if n.contains("autograd::Engine::")
        || n == "_engine_run_backward"
        || (n == "backward" && (file.ends_with("torch/autograd/__init__.py") || file.ends_with("torch/_tensor.py")))
    {
        h |= ENGINE;
    }
    // cuBLAS / cuBLASLt keep a workspace per handle and stream, made on first use
    if n.contains("setWorkspaceForHandle") || n.contains("getCUDABlasLtWorkspace") {
        h |= WORKSPACE;
    }
    if file.contains("torch/optim/") {
        h |= OPTIM;
    }
    let module_py = file.ends_with("torch/nn/modules/module.py");
    if module_py && matches!(n, "_call_impl" | "_wrapped_call_impl") {
        h |= MODULE_CALL;
    }
    if (module_py && matches!(n, "_apply" | "to" | "cuda" | "to_empty"))
        || file.ends_with("torch/nn/init.py")
        || file.ends_with("torch/nn/parameter.py")
        || n == "reset_parameters"
        || (file.contains("torch/nn/modules/") && n == "__init__")
    {
        h |= PARAM_MAKER;
    }
    h
}

/// Position ranges `[start, end)` of each phase kind, merged and sorted.
#[derive(Clone, Debug, Default)]
struct Phases {
    forward: Vec<(u32, u32)>,
    backward: Vec<(u32, u32)>,
    optimizer: Vec<(u32, u32)>,
    zero_grad: Vec<(u32, u32)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Forward,
    Backward,
    Optimizer,
    ZeroGrad,
}

fn merged(mut v: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    v.retain(|r| r.1 > r.0);
    v.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(v.len());
    for r in v {
        match out.last_mut() {
            Some(l) if r.0 <= l.1 => l.1 = l.1.max(r.1),
            _ => out.push(r),
        }
    }
    out
}

/// The range of `v` holding position `p`.
fn range_at(v: &[(u32, u32)], p: u32) -> Option<(u32, u32)> {
    let i = v.partition_point(|r| r.0 <= p).checked_sub(1)?;
    (p < v[i].1).then_some(v[i])
}

impl Phases {
    /// The innermost kind at entry `p` (zero_grad inside an optimizer range is zero_grad).
    fn at(&self, p: u32) -> Option<(Kind, (u32, u32))> {
        [
            (Kind::ZeroGrad, &self.zero_grad),
            (Kind::Optimizer, &self.optimizer),
            (Kind::Backward, &self.backward),
            (Kind::Forward, &self.forward),
        ]
        .into_iter()
        .find_map(|(k, v)| range_at(v, p).map(|r| (k, r)))
    }
    fn is_empty(&self) -> bool {
        self.forward.is_empty() && self.backward.is_empty() && self.optimizer.is_empty()
    }
}

fn kind_of_name(name: &str) -> Option<Kind> {
    let l = name.to_ascii_lowercase();
    if l.contains("zero_grad") {
        Some(Kind::ZeroGrad)
    } else if l.starts_with("optimizer.step") || l.contains("optimizer") {
        Some(Kind::Optimizer)
    } else if l.contains("backward") {
        Some(Kind::Backward)
    } else if l.contains("forward") {
        Some(Kind::Forward)
    } else {
        None
    }
}

/// Decides the category of each allocation of one device.
pub struct Classifier {
    phases: Phases,
    pub source: PhaseSource,
    /// Per stack id.
    hints: Vec<u8>,
    /// The trace's length (positions of entries run 0 .. n).
    n: u32,
    /// The history is a wrapped ring buffer: what was made before it has no alloc entry.
    wrapped: bool,
    /// Freed at or after this position counts as kept to the end: the teardown after the last
    /// phase (a script that deletes its model before dumping) frees nothing the steps used.
    kept_from: u32,
    /// What the phases are, in words (said once per breakdown).
    pub note: String,
}

impl Classifier {
    pub fn new(s: &MemorySnapshot, device: i64) -> Classifier {
        Classifier::with_window(s, device, super::history_window(device_trace(s, device)).is_some())
    }

    /// `new`, told whether the device's history is a wrapped ring buffer (the report's
    /// `history_window`: finding it again is a pass over the whole trace).
    pub fn with_window(s: &MemorySnapshot, device: i64, wrapped: bool) -> Classifier {
        let trace = device_trace(s, device);
        let n = trace.len().min(u32::MAX as usize - 1) as u32;
        let fh: Vec<u8> = s.frames.iter().map(frame_hints).collect();
        let hints: Vec<u8> = s
            .stacks
            .iter()
            .map(|st| st.iter().fold(0u8, |h, &f| h | fh.get(f as usize).copied().unwrap_or(0)))
            .collect();
        let mut c = Classifier {
            phases: Phases::default(),
            source: PhaseSource::None,
            hints,
            n,
            wrapped,
            kept_from: n,
            note: String::new(),
        };
        let timed = !trace.is_empty() && trace.iter().all(|e| e.time_us().is_some());
        let ann: Vec<_> = s.external_annotations.iter().filter(|a| a.device == device).collect();
        if timed && !ann.is_empty() {
            let pos_before = |t: i64| trace.partition_point(|e| e.time < t) as u32;
            let pos_after = |t: i64| trace.partition_point(|e| e.time <= t) as u32;
            let mut open: Vec<(&str, u32)> = Vec::new();
            let mut ranges: Vec<(Kind, (u32, u32))> = Vec::new();
            for a in &ann {
                let Some(t) = a.time_us else { continue };
                if a.stage == "START" {
                    open.push((&a.name, pos_before(t)));
                } else if let Some(i) = open.iter().rposition(|(nm, _)| *nm == a.name) {
                    let (nm, p0) = open.remove(i);
                    if let Some(k) = kind_of_name(nm) {
                        ranges.push((k, (p0, pos_after(t))));
                    }
                }
            }
            // a range still open when the snapshot was taken lasts to its end
            for (nm, p0) in open {
                if let Some(k) = kind_of_name(nm) {
                    ranges.push((k, (p0, n)));
                }
            }
            let count = |k: Kind| ranges.iter().filter(|r| r.0 == k).count();
            let counts = [count(Kind::Forward), count(Kind::Backward), count(Kind::Optimizer), count(Kind::ZeroGrad)];
            let pick = |k: Kind| merged(ranges.iter().filter(|r| r.0 == k).map(|r| r.1).collect());
            c.phases = Phases {
                forward: pick(Kind::Forward),
                backward: pick(Kind::Backward),
                optimizer: pick(Kind::Optimizer),
                zero_grad: pick(Kind::ZeroGrad),
            };
            if !c.phases.is_empty() {
                c.source = PhaseSource::Annotations;
                let p = &c.phases;
                c.kept_from = p
                    .forward
                    .iter()
                    .chain(&p.backward)
                    .chain(&p.optimizer)
                    .chain(&p.zero_grad)
                    .map(|r| r.1)
                    .max()
                    .unwrap_or(n);
                c.note = format!(
                    "phases from record_function annotations: {} forward, {} backward, {} optimizer step, {} zero_grad range(s)",
                    counts[0], counts[1], counts[2], counts[3]
                );
            }
        }
        if c.source == PhaseSource::None {
            if c.hints.iter().any(|h| h & HAS_FRAMES != 0) {
                c.phases = c.frame_phases(s, device);
                c.source = PhaseSource::Frames;
                c.note = format!(
                    "{}: phases inferred from the stack frames ({} backward run(s) of the autograd engine, {} optimizer run(s) of torch.optim); forward ranges and input batches cannot be told",
                    if ann.is_empty() { "no record_function annotations" } else { "annotations name no forward, backward or optimizer phase, or the trace has no timestamps" },
                    c.phases.backward.len(),
                    c.phases.optimizer.len()
                );
            } else {
                c.note = "no record_function annotations and no stack frames: every allocation is other".into();
            }
        }
        if c.wrapped {
            c.note.push_str(
                "; the history misses the run's start (a wrapped ring buffer, or a profile begun mid-run): allocations made before it are other unless a frame says what they are (cuBLAS workspace, AccumulateGrad, Module._apply)",
            );
        }
        c
    }

    fn hint(&self, stack: StackId) -> u8 {
        self.hints.get(stack as usize).copied().unwrap_or(0)
    }

    /// Backward ranges: from an alloc under the autograd engine to the next alloc that is not
    /// (the frees right after the last gradient belong to that backward); optimizer ranges
    /// likewise for torch.optim frames.
    fn frame_phases(&self, s: &MemorySnapshot, device: i64) -> Phases {
        let trace = device_trace(s, device);
        let mut backward = Vec::new();
        let mut optimizer = Vec::new();
        let (mut bw, mut opt): (Option<u32>, Option<u32>) = (None, None);
        for (i, e) in trace.iter().enumerate().take(self.n as usize) {
            if e.action != Action::Alloc {
                continue;
            }
            let h = self.hint(e.stack);
            let i = i as u32;
            if h & ENGINE != 0 {
                bw.get_or_insert(i);
            } else if let Some(b) = bw.take() {
                backward.push((b, i));
            }
            if h & OPTIM != 0 && h & ENGINE == 0 {
                opt.get_or_insert(i);
            } else if let Some(o) = opt.take() {
                optimizer.push((o, i));
            }
        }
        if let Some(b) = bw {
            backward.push((b, self.n));
        }
        if let Some(o) = opt {
            optimizer.push((o, self.n));
        }
        Phases { forward: Vec::new(), backward: merged(backward), optimizer: merged(optimizer), zero_grad: Vec::new() }
    }

    /// The rule that decides allocation `a` (its category is `rule.category()`).
    pub fn rule(&self, a: &Allocation) -> Rule {
        let h = self.hint(a.stack);
        let kept = a.free_entry.is_none_or(|f| f >= self.kept_from);
        if h & WORKSPACE != 0 {
            return Rule::LibraryWorkspace;
        }
        if h & ACCUMULATE_GRAD != 0 && self.source != PhaseSource::None {
            return Rule::AccumulateGradFrame;
        }
        if h & PARAM_MAKER != 0 && h & (ENGINE | OPTIM) == 0 && kept {
            return Rule::ParameterFrame;
        }
        if self.source == PhaseSource::None {
            return Rule::NoPhases;
        }
        let Some(made) = a.alloc_entry else {
            if self.wrapped {
                return Rule::BeforeHistoryWindow;
            }
            return self.outside(None, a.free_entry, kept);
        };
        let freed = a.free_entry.unwrap_or(self.n);
        match self.phases.at(made) {
            Some((Kind::Backward, (_, end))) => {
                if kept || freed >= end {
                    Rule::BackwardOutlived
                } else {
                    Rule::BackwardTemporary
                }
            }
            Some((Kind::Optimizer, (_, end))) => {
                if kept {
                    Rule::OptimizerKept
                } else if freed < end {
                    Rule::OptimizerTemporary
                } else {
                    Rule::OptimizerFreedLater
                }
            }
            Some((Kind::ZeroGrad, (_, end))) => {
                if kept || freed >= end {
                    Rule::ZeroGradKept
                } else {
                    Rule::ZeroGradTemporary
                }
            }
            Some((Kind::Forward, (_, end))) => {
                if !kept && freed < end {
                    Rule::ForwardTemporary
                } else if !kept && range_at(&self.phases.backward, freed).is_some() {
                    Rule::ForwardFreedInBackward
                } else {
                    Rule::ForwardFreedElsewhere
                }
            }
            // frames only: a module call is a forward (its end is where the next window starts)
            None if self.source == PhaseSource::Frames && h & MODULE_CALL != 0 => {
                let p = &self.phases;
                let next = p.backward.iter().chain(&p.optimizer).map(|r| r.0).filter(|&s| s > made).min();
                if !kept && range_at(&p.backward, freed).is_some() {
                    Rule::ForwardFreedInBackward
                } else if !kept && next.is_none_or(|s| freed < s) {
                    Rule::ForwardTemporary
                } else {
                    Rule::ForwardFreedElsewhere
                }
            }
            None => self.outside(Some(made), a.free_entry, kept),
        }
    }

    /// An allocation made outside every phase (`made` None: before the trace).
    fn outside(&self, made: Option<u32>, freed: Option<u32>, kept: bool) -> Rule {
        let p = &self.phases;
        let m = made.unwrap_or(0);
        if self.source == PhaseSource::Frames {
            // no forward ranges: the first backward stands for the first step
            let first = p.backward.first().or(p.optimizer.first()).map_or(u32::MAX, |r| r.0);
            return match freed {
                None if m < first => Rule::BeforeFirstBackwardKept,
                Some(f) if range_at(&p.backward, f).is_some() && made.is_some() => Rule::ForwardFreedInBackward,
                Some(f) if !p.backward.iter().chain(&p.optimizer).any(|r| r.0 > m && r.0 <= f) => {
                    Rule::BetweenPhasesTemporary
                }
                _ => Rule::OutsidePhasesUnexplained,
            };
        }
        let first_forward = p.forward.first().map_or(u32::MAX, |r| r.0);
        let end = freed.unwrap_or(self.n);
        let forward_began_while_alive = p.forward.iter().any(|r| r.0 > m && r.0 <= end);
        if kept && m < first_forward {
            Rule::BeforeFirstForwardKept
        } else if forward_began_while_alive {
            Rule::AliveAtForwardStart
        } else if !kept && !p.forward.iter().chain(&p.backward).chain(&p.optimizer).any(|r| r.0 > m && r.0 <= end) {
            Rule::BetweenPhasesTemporary
        } else {
            Rule::OutsidePhasesUnexplained
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strobe_model::memory::{Annotation, TraceEntry};

    fn ann(stage: &str, name: &str, t: i64) -> Annotation {
        Annotation { stage: stage.into(), name: name.into(), device: 0, time_us: Some(t) }
    }
    fn e(action: Action, addr: u64, t: i64) -> TraceEntry {
        TraceEntry { addr, size: 64, time: t, stack: 0, stream: 0, extra: 0, action }
    }
    fn alloc(made: Option<u32>, freed: Option<u32>) -> Allocation {
        Allocation { addr: 0, size: 64, stream: 0, stack: 0, alloc_entry: made, free_entry: freed }
    }

    #[test]
    fn lifetimes_against_the_phases() {
        // entries at t = 0..20; forward [5, 8], backward [9, 12], step [13, 15], zero_grad [16, 17]
        let trace: Vec<TraceEntry> = (0..20).map(|t| e(Action::Alloc, t as u64, t)).collect();
        let s = MemorySnapshot {
            device_traces: vec![trace],
            external_annotations: vec![
                ann("START", "forward", 5),
                ann("END", "forward", 8),
                ann("START", "backward", 9),
                ann("END", "backward", 12),
                ann("START", "Optimizer.step#AdamW.step", 13),
                ann("END", "Optimizer.step#AdamW.step", 15),
                ann("START", "Optimizer.zero_grad#AdamW.zero_grad", 16),
                ann("END", "Optimizer.zero_grad#AdamW.zero_grad", 17),
            ],
            stacks: vec![vec![]],
            ..Default::default()
        };
        let c = Classifier::new(&s, 0);
        assert_eq!(c.source, PhaseSource::Annotations);
        let r = |m, f| c.rule(&alloc(m, f));
        assert_eq!(r(Some(1), None), Rule::BeforeFirstForwardKept);
        assert_eq!(r(Some(2), Some(10)), Rule::AliveAtForwardStart);
        assert_eq!(r(Some(2), Some(3)), Rule::BetweenPhasesTemporary);
        assert_eq!(r(Some(6), Some(7)), Rule::ForwardTemporary);
        assert_eq!(r(Some(6), Some(11)), Rule::ForwardFreedInBackward);
        assert_eq!(r(Some(6), None), Rule::ForwardFreedElsewhere);
        assert_eq!(r(Some(10), Some(11)), Rule::BackwardTemporary);
        assert_eq!(r(Some(10), Some(16)), Rule::BackwardOutlived);
        assert_eq!(r(Some(14), None), Rule::OptimizerKept);
        assert_eq!(r(Some(14), Some(14)), Rule::OptimizerTemporary);
        assert_eq!(r(Some(14), Some(17)), Rule::OptimizerFreedLater);
        // freed after the last phase: the script's teardown, kept as far as the steps go
        assert_eq!(r(Some(14), Some(18)), Rule::OptimizerKept);
        assert_eq!(r(Some(16), Some(16)), Rule::ZeroGradTemporary);
        assert_eq!(r(None, None), Rule::BeforeFirstForwardKept);
    }

    #[test]
    fn nothing_to_go_on_is_other() {
        let s = MemorySnapshot {
            device_traces: vec![vec![e(Action::Alloc, 1, 0)]],
            stacks: vec![vec![]],
            ..Default::default()
        };
        let c = Classifier::new(&s, 0);
        assert_eq!(c.source, PhaseSource::None);
        assert_eq!(c.rule(&alloc(Some(0), None)).category(), Category::Other);
    }
}
