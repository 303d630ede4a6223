//! What the allocated bytes at one trace position are made of: per category (with the rules
//! that decided them) and per source line (the first user frame of each allocation's stack).
//! Sizes are requested bytes, the replay's unit, so the categories add up to the replayed
//! allocated bytes at that position.

use super::categories::{Category, Classifier, PhaseSource, Rule};
use super::frames::{first_user_frame, short_name};
use super::AllocationTimeline;
use rustc_hash::FxHashMap;
use serde::Serialize;
use strobe_model::memory::{Frame, MemorySnapshot, StackId};

#[derive(Clone, Debug, Serialize)]
pub struct PeakBreakdown {
    /// The trace position (after that many entries) the breakdown is of.
    pub position: usize,
    pub allocated_bytes: i64,
    pub phases: PhaseSource,
    /// Which rules were open to the classification (where the phases came from).
    pub note: String,
    /// Every category, in a fixed order; they add up to `allocated_bytes`.
    pub categories: Vec<CategoryBytes>,
    /// By first user frame, largest first.
    pub by_source: Vec<SourceBytes>,
}

#[derive(Clone, Debug, Serialize)]
pub struct CategoryBytes {
    pub category: Category,
    pub bytes: i64,
    pub count: usize,
    /// The rules that put bytes here, largest first.
    pub rules: Vec<RuleBytes>,
}

#[derive(Clone, Debug, Serialize)]
pub struct RuleBytes {
    pub rule: Rule,
    pub text: &'static str,
    pub bytes: i64,
    pub count: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct SourceBytes {
    /// `function file:line` of the first user frame, or `(no stack)`.
    pub frame: String,
    pub function: String,
    pub file: String,
    pub line: i64,
    pub bytes: i64,
    pub count: usize,
    /// The category holding most of this line's bytes.
    pub category: Category,
    /// Its bytes per category (those it has), largest first.
    pub categories: Vec<(Category, i64)>,
    /// Indices into the timeline's allocations, largest first (links to the timeline).
    #[serde(skip)]
    pub allocations: Vec<usize>,
}

/// `function file:line` of the first user frame of `stack`.
pub fn source_of(s: &MemorySnapshot, stack: StackId) -> Option<&Frame> {
    let frames: Vec<&Frame> = s.stack(stack).collect();
    first_user_frame(&frames).map(|i| frames[i])
}

pub fn frame_label(f: Option<&Frame>) -> String {
    label(f.map(|f| (f.name.as_str(), f.filename.as_str(), f.line)))
}

/// `function file:line`; a C++ frame without its parameter list, and without a file where the
/// binary had no line table (`??`).
fn label(f: Option<(&str, &str, i64)>) -> String {
    match f {
        Some((name, file, _)) if file.is_empty() || file == "??" => short_name(name).to_string(),
        Some((name, file, line)) => format!("{} {file}:{line}", short_name(name)),
        None => "(no stack)".into(),
    }
}

/// The breakdown of the allocations alive at position `k` of `tl`.
pub fn breakdown_at(s: &MemorySnapshot, tl: &AllocationTimeline, c: &Classifier, k: usize) -> PeakBreakdown {
    let mut alive = Vec::new();
    tl.alive_at(k, |i| alive.push(i));
    // per category: bytes, count, and bytes and count per rule
    type Cat = (i64, usize, FxHashMap<Rule, (i64, usize)>);
    let mut cats: FxHashMap<Category, Cat> = FxHashMap::default();
    // per source: bytes, count, per-category bytes, allocations
    type Src = (i64, usize, [i64; 7], Vec<usize>);
    let mut srcs: FxHashMap<Option<(String, String, i64)>, Src> = FxHashMap::default();
    let mut frame_of: FxHashMap<StackId, Option<(String, String, i64)>> = FxHashMap::default();
    let mut total = 0i64;
    for &i in &alive {
        let a = &tl.allocs[i];
        let size = a.size as i64;
        total = total.wrapping_add(size);
        let rule = c.rule(a);
        let cat = rule.category();
        let e = cats.entry(cat).or_default();
        e.0 += size;
        e.1 += 1;
        let r = e.2.entry(rule).or_default();
        r.0 += size;
        r.1 += 1;
        let key = frame_of
            .entry(a.stack)
            .or_insert_with(|| source_of(s, a.stack).map(|f| (f.name.clone(), f.filename.clone(), f.line)))
            .clone();
        let src = srcs.entry(key).or_insert_with(|| (0, 0, [0; 7], Vec::new()));
        src.0 += size;
        src.1 += 1;
        src.2[cat as usize] += size;
        src.3.push(i);
    }
    let categories = Category::ALL
        .iter()
        .map(|&cat| {
            let (bytes, count, rules) = cats.remove(&cat).unwrap_or_default();
            let mut rules: Vec<RuleBytes> = rules
                .into_iter()
                .map(|(rule, (bytes, count))| RuleBytes { rule, text: rule.text(), bytes, count })
                .collect();
            rules.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.rule.cmp(&b.rule)));
            CategoryBytes { category: cat, bytes, count, rules }
        })
        .collect();
    let mut by_source: Vec<SourceBytes> = srcs
        .into_iter()
        .map(|(key, (bytes, count, per_cat, mut allocations))| {
            let category = Category::ALL
                .iter()
                .copied()
                .max_by_key(|&c| (per_cat[c as usize], -(c as i64)))
                .unwrap_or(Category::Other);
            allocations.sort_by(|&x, &y| tl.allocs[y].size.cmp(&tl.allocs[x].size).then(x.cmp(&y)));
            let (function, file, line) = key.clone().unwrap_or_default();
            let frame = label(key.as_ref().map(|_| (function.as_str(), file.as_str(), line)));
            let mut categories: Vec<(Category, i64)> =
                Category::ALL.iter().map(|&c| (c, per_cat[c as usize])).filter(|x| x.1 != 0).collect();
            categories.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            SourceBytes { frame, function, file, line, bytes, count, category, categories, allocations }
        })
        .collect();
    by_source.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.frame.cmp(&b.frame)));
    PeakBreakdown { position: k, allocated_bytes: total, phases: c.source, note: c.note.clone(), categories, by_source }
}

/// The breakdown at the first position where allocated bytes peak.
pub fn peak_breakdown(s: &MemorySnapshot, tl: &AllocationTimeline, c: &Classifier) -> PeakBreakdown {
    let k = tl.peak_in(0, tl.len + 1);
    breakdown_at(s, tl, c, k)
}
