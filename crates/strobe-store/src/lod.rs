//! Level of detail. A view at `r` ns per pixel cannot show spans narrower than a pixel, so
//! runs of them (gaps below `r`) fold into one item carrying how many spans and how much
//! busy time it covers. Per lane and depth, a pyramid of pre-folded levels (widths 4× apart)
//! keeps whole-trace zoom at O(pixels) instead of O(spans).

use bytemuck::{Pod, Zeroable};

/// One drawable item: a span itself (`count == 1`) or a folded run of narrow spans.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct LodItem {
    pub start: i64,
    pub end: i64,
    /// Σ duration of the spans folded here (≤ end − start when they leave gaps).
    pub busy: i64,
    /// Duration of the longest span folded here: it names and colours the item.
    pub longest: i64,
    pub count: u32,
    /// Lane-relative member index of the longest span (of the span itself when count == 1).
    pub member: u32,
    /// The longest span's name and `SpanKind` byte, copied here so that drawing a whole-trace
    /// frame reads only the level's items: following `member` to the span and its metadata is
    /// two random reads per item over columns of hundreds of MB, most of a frame's time.
    pub name: u32,
    pub kind: u32,
}

impl LodItem {
    pub fn single(start: i64, end: i64, member: u32, name: u32, kind: u8) -> LodItem {
        let d = end - start;
        LodItem { start, end, busy: d, longest: d, count: 1, member, name, kind: kind as u32 }
    }

    pub fn is_folded(&self) -> bool {
        self.count > 1
    }
}

/// One stored level: the items of one depth of one lane folded at width `1 << width_log2`.
/// `width_log2 == 0` marks the raw level: the depth's member indices (DEPTH_MEMBERS).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct LodLevel {
    pub depth: u32,
    pub width_log2: u32,
    pub item_begin: u64,
    pub item_end: u64,
}

/// Finest folded level: 256 ns. Finer views read the raw level.
pub const FIRST_LEVEL_LOG2: u32 = 8;
/// Each stored level is 4× coarser than the one before.
pub const LEVEL_STEP_LOG2: u32 = 2;
/// A level is stored only if it has at most half the previous stored level's items; otherwise
/// the previous level serves. That bounds all levels together to the span count, and a query
/// reads at most twice the items the skipped level would have given it.
const KEEP_RATIO: f64 = 0.5;

/// Streaming folder: feed items in start order, get items at most ~2 per `width`.
pub struct Folder {
    width: i64,
    run: Option<LodItem>,
}

impl Folder {
    pub fn new(width: i64) -> Folder {
        Folder { width: width.max(1), run: None }
    }

    /// The folding rule. `count_push` repeats it on bounds alone (a proptest holds the two
    /// equal): a `Folder` generic over what it folds cost the level of detail's counting pass
    /// 30 ms more on the 1.08 GB trace, so the two stay apart.
    #[inline]
    pub fn push(&mut self, it: LodItem, out: &mut impl FnMut(LodItem)) {
        if it.end - it.start >= self.width {
            if let Some(r) = self.run.take() {
                out(r);
            }
            out(it);
            return;
        }
        match &mut self.run {
            Some(r) if it.start < r.end.saturating_add(self.width) => {
                r.end = r.end.max(it.end);
                r.busy += it.busy;
                r.count += it.count;
                if it.longest > r.longest {
                    r.longest = it.longest;
                    r.member = it.member;
                    r.name = it.name;
                    r.kind = it.kind;
                }
            }
            _ => {
                if let Some(r) = self.run.take() {
                    out(r);
                }
                self.run = Some(it);
            }
        }
    }

    pub fn finish(&mut self, out: &mut impl FnMut(LodItem)) {
        if let Some(r) = self.run.take() {
            out(r);
        }
    }
}

/// Builds the stored levels of one depth of one lane from its spans in start order (`n` of
/// them). Returns (width_log2, items) per stored level. A level is kept only when it folds
/// the previous kept one (or the raw spans) by at least a half.
///
/// Every level is folded from the one before (items in order, so a level's folder can take
/// them as the level below lets them out): all levels come out of one pass over the spans,
/// and no level is held in memory to feed the next. A first pass only counts each level's
/// items, which decides the kept levels; the second stores just those, each in a vector of its
/// exact size. Levels that are not kept (most of them when spans are wider than the finest
/// widths, as runtime calls and kernels are) are never written, and nothing grows by copying.
/// The counting pass reads only `bounds`, the spans' (start, end) in the same order: what
/// folds depends on nothing else, and an item's name and kind are reads elsewhere.
pub fn build_depth_levels<I: Iterator<Item = LodItem>, B: Iterator<Item = (i64, i64)>>(
    spans: impl Fn() -> I,
    bounds: impl FnOnce() -> B,
    n: usize,
    span_extent: i64,
    scratch: &crate::scratch::ScratchDir,
) -> Vec<(u32, crate::scratch::Scratch<LodItem>)> {
    // the levels that can be computed: up to the first as wide as the whole lane
    let mut computable = 1;
    while !is_widest(level_width_log2(computable - 1), span_extent) {
        computable += 1;
    }
    let counts = count_cascade(bounds(), computable);

    // which levels are kept: the first level is always computed; each next one only while
    // the one before is not the last (one item left, or wider than the extent)
    let mut kept: Vec<Option<usize>> = vec![None; computable];
    let mut stored: Vec<(u32, crate::scratch::Scratch<LodItem>)> = Vec::new();
    let mut prev_stored_len = n;
    for (k, &len) in counts.iter().enumerate() {
        let e = level_width_log2(k);
        if (len as f64) <= KEEP_RATIO * prev_stored_len as f64 {
            prev_stored_len = len;
            kept[k] = Some(stored.len());
            stored.push((e, scratch.with_capacity(len)));
        }
        if len <= 1 || is_widest(e, span_extent) {
            break;
        }
    }
    let Some(top) = kept.iter().rposition(Option::is_some) else { return stored };
    run_cascade(&spans, top + 1, &mut |k, it| {
        if let Some(s) = kept[k] {
            stored[s].1.push(it);
        }
    });
    stored
}

/// The width of folded level `k` (0: the finest), as a power of two.
fn level_width_log2(k: usize) -> u32 {
    FIRST_LEVEL_LOG2 + LEVEL_STEP_LOG2 * k as u32
}

/// Whether a level of width `1 << e` is the last one folded: it is wider than the lane's
/// extent (or at 2^60, past any trace).
fn is_widest(e: u32, span_extent: i64) -> bool {
    (1i64 << e) > span_extent || e >= 60
}

/// Folds `spans` through `levels` folders, each fed what the one below lets out, and hands
/// every item a level lets out to `emit(level, item)`, in order within each level.
fn run_cascade<I: Iterator<Item = LodItem>>(
    spans: &impl Fn() -> I,
    levels: usize,
    emit: &mut impl FnMut(usize, LodItem),
) {
    let mut folders: Vec<Folder> = (0..levels).map(|k| Folder::new(1i64 << level_width_log2(k))).collect();
    for it in spans() {
        cascade_push(&mut folders, 0, it, emit);
    }
    // a level's last run goes up before the level above finishes
    for k in 0..levels {
        let (f, rest) = folders[k..].split_first_mut().expect("k < levels");
        f.finish(&mut |x| {
            emit(k, x);
            cascade_push(rest, k + 1, x, emit);
        });
    }
}

/// How many items each of `levels` levels lets out for spans with these (start, end): what
/// `run_cascade` emits per level, folding bounds alone (`Folder`'s rule on 16 bytes an item
/// instead of 48).
fn count_cascade(bounds: impl Iterator<Item = (i64, i64)>, levels: usize) -> Vec<usize> {
    let mut folders: Vec<BoundsFolder> =
        (0..levels).map(|k| BoundsFolder { width: 1i64 << level_width_log2(k), run: None, count: 0 }).collect();
    for (s, e) in bounds {
        count_push(&mut folders, s, e);
    }
    for k in 0..levels {
        let (f, rest) = folders[k..].split_first_mut().expect("k < levels");
        if let Some((s, e)) = f.run.take() {
            f.count += 1;
            count_push(rest, s, e);
        }
    }
    folders.iter().map(|f| f.count).collect()
}

/// `Folder` reduced to what decides the folding: the pending run's bounds, and a count of
/// what it let out.
struct BoundsFolder {
    width: i64,
    run: Option<(i64, i64)>,
    count: usize,
}

/// `Folder::push` on bounds: into `folders[0]`, and what it lets out on up.
#[inline]
fn count_push(folders: &mut [BoundsFolder], s: i64, e: i64) {
    let Some((f, rest)) = folders.split_first_mut() else { return };
    if e - s >= f.width {
        if let Some((rs, re)) = f.run.take() {
            f.count += 1;
            count_push(rest, rs, re);
        }
        f.count += 1;
        count_push(rest, s, e);
        return;
    }
    match &mut f.run {
        Some((_, re)) if s < re.saturating_add(f.width) => *re = (*re).max(e),
        _ => {
            if let Some((rs, re)) = f.run.take() {
                f.count += 1;
                count_push(rest, rs, re);
            }
            f.run = Some((s, e));
        }
    }
}

/// Pushes `it` into `folders[0]` (level `k`), and what it lets out on up.
#[inline]
fn cascade_push(folders: &mut [Folder], k: usize, it: LodItem, emit: &mut impl FnMut(usize, LodItem)) {
    let Some((f, rest)) = folders.split_first_mut() else { return };
    f.push(it, &mut |x| {
        emit(k, x);
        cascade_push(rest, k + 1, x, emit);
    });
}

/// Picks the coarsest stored level not coarser than `ns_per_px`.
pub fn pick_level(levels: &[LodLevel], depth: u32, ns_per_px: i64) -> Option<&LodLevel> {
    levels
        .iter()
        .filter(|l| l.depth == depth && l.width_log2 > 0 && (1i64 << l.width_log2) <= ns_per_px)
        .max_by_key(|l| l.width_log2)
}

/// Index of the first item that may overlap `t0`, in items sorted by start whose ends are
/// (nearly) sorted too — true within one depth, where spans nest rather than overlap.
pub fn first_overlapping(items: &[LodItem], t0: i64) -> usize {
    let mut i = items.partition_point(|x| x.start < t0);
    // walk back over items that start before t0 but still reach into the window
    while i > 0 && items[i - 1].end > t0 {
        i -= 1;
    }
    // also catch a zero-length item exactly at t0 just before i
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The levels as defined: each folded from the whole item list of the one before, every
    /// level held, the kept ones chosen after.
    fn levels_one_at_a_time(spans: &[LodItem], span_extent: i64) -> Vec<(u32, Vec<LodItem>)> {
        let fold = |items: &[LodItem], e: u32| {
            let mut out = Vec::new();
            let mut f = Folder::new(1i64 << e);
            for it in items {
                f.push(*it, &mut |x| out.push(x));
            }
            f.finish(&mut |x| out.push(x));
            out
        };
        let mut levels = Vec::new();
        let mut prev_stored_len = spans.len();
        let mut e = FIRST_LEVEL_LOG2;
        let mut cur = fold(spans, e);
        loop {
            let done = cur.len() <= 1 || (1i64 << e) > span_extent || e >= 60;
            if (cur.len() as f64) <= KEEP_RATIO * prev_stored_len as f64 {
                prev_stored_len = cur.len();
                levels.push((e, cur.clone()));
            }
            if done {
                return levels;
            }
            cur = fold(&cur, e + LEVEL_STEP_LOG2);
            e += LEVEL_STEP_LOG2;
        }
    }

    fn spans_of(raw: &[(i64, i64)]) -> Vec<LodItem> {
        let mut t = 0;
        raw.iter()
            .enumerate()
            .map(|(i, &(gap, len))| {
                t += gap;
                LodItem::single(t, t + len, i as u32, (i % 7) as u32, (i % 3) as u8)
            })
            .collect()
    }

    proptest! {
        #[test]
        fn one_pass_cascade_gives_the_levels_folded_one_at_a_time(
            raw in prop::collection::vec((0i64..5_000, 0i64..20_000), 0..400),
            far in 0i64..40,
        ) {
            let mut spans = spans_of(&raw);
            // a few spans far out, so that many levels are computed and some are not kept
            if let Some(last) = spans.last().copied() {
                let t = last.end + (1i64 << far);
                spans.push(LodItem::single(t, t + 300, spans.len() as u32, 1, 0));
            }
            let extent = spans.iter().map(|s| s.end).max().unwrap_or(0) - spans.first().map_or(0, |s| s.start);
            let got = build_depth_levels(|| spans.iter().copied(), || spans.iter().map(|s| (s.start, s.end)), spans.len(), extent, &crate::scratch::ScratchDir::heap());
            let got: Vec<(u32, Vec<LodItem>)> = got.into_iter().map(|(e, v)| (e, v.to_vec())).collect();
            prop_assert_eq!(got, levels_one_at_a_time(&spans, extent));
        }
    }

    proptest! {
        /// Folding bounds alone counts what the full cascade lets out at every level.
        #[test]
        fn bounds_count_as_the_cascade_emits(
            raw in prop::collection::vec((0i64..5_000, 0i64..20_000), 0..400),
            levels in 1usize..12,
        ) {
            let spans = spans_of(&raw);
            let mut want = vec![0usize; levels];
            run_cascade(&|| spans.iter().copied(), levels, &mut |k, _| want[k] += 1);
            prop_assert_eq!(count_cascade(spans.iter().map(|s| (s.start, s.end)), levels), want);
        }
    }

    #[test]
    fn wide_spans_keep_no_fine_level_and_nested_widths_fold_once_each() {
        // 1000 spans of 1 ms, 1 ms apart: no level below 1 ms folds anything, so none is kept;
        // the 4 ms level folds runs of them
        let spans: Vec<LodItem> =
            (0..1000).map(|i| LodItem::single(i * 2_000_000, i * 2_000_000 + 1_000_000, i as u32, 0, 0)).collect();
        let extent = spans.last().unwrap().end;
        let got = build_depth_levels(
            || spans.iter().copied(),
            || spans.iter().map(|s| (s.start, s.end)),
            spans.len(),
            extent,
            &crate::scratch::ScratchDir::heap(),
        );
        let got: Vec<(u32, Vec<LodItem>)> = got.into_iter().map(|(e, v)| (e, v.to_vec())).collect();
        assert_eq!(got, levels_one_at_a_time(&spans, extent));
        assert!(got.iter().all(|(e, _)| (1i64 << e) > 1_000_000), "{:?}", got.iter().map(|l| l.0).collect::<Vec<_>>());
        let (_, first) = &got[0];
        assert_eq!(first.iter().map(|x| x.count as usize).sum::<usize>(), 1000);
        assert!(first.len() <= 500);
    }
}
