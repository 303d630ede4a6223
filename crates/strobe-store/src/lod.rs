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
pub fn build_depth_levels(
    spans: impl Iterator<Item = LodItem>,
    n: usize,
    span_extent: i64,
) -> Vec<(u32, Vec<LodItem>)> {
    let mut levels: Vec<(u32, Vec<LodItem>)> = Vec::new();
    let mut prev_stored_len = n;
    let mut e = FIRST_LEVEL_LOG2;
    // first level straight from the spans
    let mut cur = {
        let mut next = Vec::new();
        let mut f = Folder::new(1i64 << e);
        for it in spans {
            f.push(it, &mut |x| next.push(x));
        }
        f.finish(&mut |x| next.push(x));
        next
    };
    loop {
        let done = cur.len() <= 1 || (1i64 << e) > span_extent || e >= 60;
        let keep = (cur.len() as f64) <= KEEP_RATIO * prev_stored_len as f64;
        if keep {
            prev_stored_len = cur.len();
        }
        let mut next = Vec::new();
        if !done {
            let mut f = Folder::new(1i64 << (e + LEVEL_STEP_LOG2));
            for it in &cur {
                f.push(*it, &mut |x| next.push(x));
            }
            f.finish(&mut |x| next.push(x));
        }
        if keep {
            levels.push((e, std::mem::take(&mut cur)));
        }
        if done {
            break;
        }
        cur = next;
        e += LEVEL_STEP_LOG2;
    }
    levels
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
