//! Flow binding rules of the trace-event format: a flow step binds to the slice enclosing its
//! timestamp on its thread, or (flow end without `"bp": "e"`) to the next slice that starts
//! at or after it.

use crate::format::LaneIndex;
use crate::interval;

/// The innermost member of the lane with start ≤ ts ≤ end (closed on the right, as catapult's
/// `findSliceAtTs`: a flow emitted just as its slice ends still binds to it); on equal depth
/// the later start wins. Returns the member index, which for primary lanes is the span id.
pub fn enclosing(
    li: &LaneIndex,
    m_start: &[i64],
    m_end: &[i64],
    m_max: &[i64],
    m_depth: &[u32],
    ts: i64,
) -> Option<u32> {
    let (b, e) = (li.member_begin as usize, li.member_end as usize);
    if b >= e || e > m_start.len() {
        return None;
    }
    // Fast path: flow events usually sit exactly at their slice's start (Kineto's ac2g and
    // fwdbwd do). Under proper nesting the deepest span starting at ts is the innermost one
    // enclosing it: anything that started earlier and still covers ts is an ancestor.
    let starts = &m_start[b..e];
    let mut i = starts.partition_point(|&s| s < ts);
    let mut best: Option<usize> = None;
    while i < starts.len() && starts[i] == ts {
        if best.map(|x| m_depth[b + i] >= m_depth[b + x]).unwrap_or(true) {
            best = Some(i);
        }
        i += 1;
    }
    if let Some(i) = best {
        return Some((b + i) as u32);
    }
    let deepest = |t0: i64, t1: i64| {
        let mut best: Option<usize> = None;
        interval::query(&m_start[b..e], &m_end[b..e], &m_max[b..e], t0, t1, |i| {
            if best.map(|x| m_depth[b + i] >= m_depth[b + x]).unwrap_or(true) {
                best = Some(i);
            }
        });
        best.map(|i| (b + i) as u32)
    };
    deepest(ts.saturating_sub(1), ts.saturating_add(1))
}

/// The first member starting at or after `ts` (the shallowest one if several start there).
pub fn next_starting(li: &LaneIndex, m_start: &[i64], m_depth: &[u32], ts: i64) -> Option<u32> {
    let (b, e) = (li.member_begin as usize, li.member_end as usize);
    if b >= e || e > m_start.len() {
        return None;
    }
    let i = m_start[b..e].partition_point(|&s| s < ts);
    if i == e - b {
        return None;
    }
    let t = m_start[b + i];
    let mut best = b + i;
    let mut j = b + i;
    while j < e && m_start[j] == t {
        if m_depth[j] < m_depth[best] {
            best = j;
        }
        j += 1;
    }
    Some(best as u32)
}
