//! Depth of the spans of one lane: true nesting depth on CPU threads, first free row on GPU
//! streams and copy engines.
//!
//! Real traces are not always properly nested. Kineto starts a `record_function` range
//! (`ProfilerStep#3`, `forward`) inside the Python call that opens it
//! (`_record_function_enter_new`) and ends it long after that call returned; a child often
//! ends a hair after its parent (rounding, or PyTorch's own overlapping ranges). A plain
//! stack of open ends puts a span that outlives its parent on top of the parent's entry, so
//! every later span nests under it and the thread becomes a staircase (depth 196 for step 40
//! of a long trace).
//!
//! The rule here, for a span S that starts inside an open span P but ends after it:
//! - if at least half of S lies inside P (`P.end − S.start ≥ S.end − P.end`), S is P's child
//!   whose end, for nesting, is clipped to P's end (a near-miss end: rounding);
//! - otherwise S only starts inside P: P (and P's open descendants) are closed for nesting at
//!   S's start, and S becomes a child of the innermost span that holds it, i.e. P's sibling
//!   (the `ProfilerStep#N` case: every step on one row);
//! - a span that never ends (an unclosed `B`) has no overhang to judge: it is a child of the
//!   innermost open span.
//!
//! Open ends are kept clipped to their parent's, so the stack's ends never grow upwards and a
//! span that outlives its parent can never hold later spans down. Perfetto counts such spans
//! as misplaced ends; here each case is counted (`Crossings`) for the load summary.

/// Improperly nested spans met on one lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Crossings {
    /// Spans mostly inside their parent, ending after it: kept as its child.
    pub clipped: u64,
    /// Spans mostly after the span they started in: placed beside it instead.
    pub reparented: u64,
    /// The first reparented span and the span it started in (lane-local member indices).
    pub example: Option<(u32, u32)>,
}

impl Crossings {
    pub fn add(&mut self, o: &Crossings) {
        self.clipped += o.clipped;
        self.reparented += o.reparented;
        if self.example.is_none() {
            self.example = o.example;
        }
    }
}

/// Assigns depth to a lane's spans (sorted by start, longer first on ties). `pack` puts
/// overlapping spans on the first free row (GPU streams, copy engines: overlap there is clock
/// jitter or concurrency, not nesting); otherwise depth is nesting depth by the rule above.
/// `open_ended[i]` marks a span whose end is unknown (it never closed).
pub fn assign_depth(
    start: &[i64],
    end: &[i64],
    open_ended: impl Fn(usize) -> bool,
    depth: &mut [u32],
    pack: bool,
) -> Crossings {
    let mut c = Crossings::default();
    if pack {
        let mut row_end: Vec<i64> = Vec::new();
        for i in 0..start.len() {
            let r = row_end.iter().position(|&e| e <= start[i]).unwrap_or(row_end.len());
            if r == row_end.len() {
                row_end.push(end[i]);
            } else {
                row_end[r] = end[i];
            }
            depth[i] = r as u32;
        }
        return c;
    }
    // (end clipped to the parent's, member index) of the open spans, outermost first
    let mut stack: Vec<(i64, u32)> = Vec::new();
    for i in 0..start.len() {
        let (s, e) = (start[i], end[i]);
        while stack.last().is_some_and(|&(top_end, _)| top_end <= s) {
            stack.pop();
        }
        while let Some(&(top_end, top)) = stack.last() {
            if e <= top_end || open_ended(i) {
                break;
            }
            if top_end - s >= e - top_end {
                c.clipped += 1;
                break;
            }
            c.reparented += 1;
            if c.example.is_none() {
                c.example = Some((i as u32, top));
            }
            stack.pop();
        }
        depth[i] = stack.len() as u32;
        let clipped_end = stack.last().map_or(e, |&(top_end, _)| e.min(top_end));
        stack.push((clipped_end, i as u32));
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depths(spans: &[(i64, i64)]) -> (Vec<u32>, Crossings) {
        let mut v: Vec<(i64, i64)> = spans.to_vec();
        v.sort_by_key(|&(s, e)| (s, std::cmp::Reverse(e)));
        let (st, en): (Vec<i64>, Vec<i64>) = v.iter().copied().unzip();
        let mut d = vec![0; st.len()];
        let c = assign_depth(&st, &en, |_| false, &mut d, false);
        (d, c)
    }

    #[test]
    fn proper_nesting_is_plain_depth() {
        let (d, c) = depths(&[(0, 100), (10, 50), (20, 30), (60, 90)]);
        assert_eq!(d, vec![0, 1, 2, 1]);
        assert_eq!(c, Crossings::default());
    }

    #[test]
    fn near_miss_end_stays_a_child_and_holds_nothing_down() {
        // child ends 1 ns after its parent; the next top-level span must be back at depth 0
        let (d, c) = depths(&[(0, 100), (50, 101), (100, 200), (150, 160)]);
        assert_eq!(d, vec![0, 1, 0, 1]);
        assert_eq!((c.clipped, c.reparented), (1, 0));
    }

    #[test]
    fn range_opened_inside_a_call_is_its_sibling() {
        // main [0,1000) › enter [10,20) in which step [15,400) starts; step 2 [400,800)
        // starts inside its own enter call [395,405): both steps at depth 1
        let (d, c) = depths(&[(0, 1000), (10, 20), (15, 400), (30, 40), (395, 405), (400, 800), (500, 600)]);
        assert_eq!(d, vec![0, 1, 1, 2, 2, 1, 2]);
        assert_eq!((c.clipped, c.reparented), (1, 1));
    }

    #[test]
    fn a_chain_of_overlaps_is_no_staircase() {
        // each span starts just before the previous one ends: all on one row
        let spans: Vec<(i64, i64)> = (0..200).map(|k| (k * 100, k * 100 + 101)).collect();
        let (d, c) = depths(&spans);
        assert!(d.iter().all(|&x| x == 0), "{d:?}");
        assert_eq!(c.reparented, 199);
    }

    #[test]
    fn unclosed_span_nests_where_it_began() {
        let st = [0, 10];
        let en = [100, 1_000_000];
        let mut d = [0, 0];
        let c = assign_depth(&st, &en, |i| i == 1, &mut d, false);
        assert_eq!(d, [0, 1]);
        assert_eq!(c, Crossings::default());
    }
}
