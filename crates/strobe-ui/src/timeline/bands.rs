//! A GPU's band row (communication overlapped / exposed, long idle gaps) and the idle tint
//! behind its stream lanes; the interval drawing the summary and pipeline rows share.

use super::colors::{EXPOSED_COMM, IDLE, IDLE_TINT, OVERLAPPED};
use super::frame::Clip;
use super::hover::{find_containing, Hover};
use super::lanes::{LaneCtx, LanePainter};
use super::layout::{Row, RowKind};
use super::rows::RowCtx;
use super::View;
use crate::workspace::{Trace, Workspace};
use egui::{pos2, Align2, Color32, FontId, Mesh, Rect};
use std::collections::HashMap;
use strobe_analysis::idle::IdleGap;
use strobe_analysis::report::fmt_ns;
use strobe_model::LaneKind;

impl Trace {
    /// Idle gaps of `device` at least the threshold long.
    pub fn long_gaps(&self, device: i64) -> Option<&[IdleGap]> {
        self.derived.idle.get()?.long_gaps.iter().find(|(d, _)| *d == device).map(|(_, g)| g.as_slice())
    }
}

pub const HEIGHT: f32 = 22.0;
/// The row's gutter label while the overview is measured.
pub const PENDING_LABEL: &str = "comm / idle gaps";

pub(super) fn gap_iv(g: &IdleGap) -> (i64, i64) {
    (g.start, g.end)
}

/// Long idle gaps of each GPU marked across its stream lanes by their two edges only: a
/// filled tint over every lane read as busy spans (`top`: screen y of the lane
/// area's origin; `body`: the visible lane area).
pub fn device_tint(lp: &mut LanePainter, cx: &LaneCtx, ws: &Workspace, rows: &[Row], shared: &View, top: f32) {
    let (body, plot) = (cx.body, cx.plot);
    let mut dev_ranges: HashMap<(usize, i64), (f32, f32)> = HashMap::new();
    for r in rows {
        if let RowKind::Lane { ti, lane, pinned: false } = r.kind {
            if let LaneKind::GpuStream { device, .. } = ws.traces[ti].store.lanes[lane as usize].kind {
                let e = dev_ranges.entry((ti, device)).or_insert((f32::MAX, f32::MIN));
                e.0 = e.0.min(top + r.y);
                e.1 = e.1.max(top + r.y + r.h);
            }
        }
    }
    for ((ti, dev), (y0, y1)) in dev_ranges {
        if y1 < body.min.y || y0 > body.max.y {
            continue;
        }
        let t = &ws.traces[ti];
        let tv = shared.for_trace(t);
        let Some(gaps) = t.long_gaps(dev) else { continue };
        let (w0, w1) = tv.window(plot.width());
        let first = gaps.partition_point(|g| g.end <= w0);
        for g in gaps[first..].iter().take_while(|g| g.start < w1) {
            let (xa, xb) = (tv.x_of(g.start, plot.min.x), tv.x_of(g.end, plot.min.x));
            if xb - xa < 6.0 {
                continue; // too narrow to read two edges: the band row shows it
            }
            for x in [xa, xb - 1.0] {
                if x >= plot.min.x && x < plot.max.x {
                    let r = Rect::from_min_max(egui::pos2(x, y0), egui::pos2(x + 1.0, y1));
                    lp.mesh.add_colored_rect(r, IDLE_TINT);
                }
            }
        }
        if let Some(p) = cx.pointer.filter(|p| p.y >= y0 && p.y < y1 && plot.contains(*p)) {
            let tp = tv.t_of(p.x, plot.min.x);
            if let Some(g) = find_containing(gaps, gap_iv, tp, shared.npp * 2.0) {
                lp.hover = Some(Hover::Gap { ti, gap: gaps[g] });
            }
        }
    }
}

/// The band row of GPU `device`: overlapped / exposed communication above, long idle gaps below.
pub fn draw(rc: &mut RowCtx, device: i64) {
    let (cx, t, tv, (y0, y1)) = (rc.cx, rc.trace, &rc.view, rc.y);
    let (body, plot, pointer, weak) = (cx.body, cx.plot, cx.pointer, cx.pal.weak);
    let lx = body.min.x + 28.0;
    rc.fd.text(
        Clip::Pane,
        pos2(lx, y0 + 5.0),
        Align2::LEFT_CENTER,
        "comm: overlapped / exposed",
        FontId::proportional(11.0),
        weak,
    );
    // the threshold in force (View ▸ Idle threshold), where the gaps it makes are drawn
    let threshold = t.idle().iter().find(|d| d.device == device).map(|d| d.threshold_ns);
    let gaps_label = match threshold {
        Some(ns) => format!("idle gaps ≥ {}", crate::units::threshold_us(ns)),
        None => "idle gaps ≥ threshold".to_string(),
    };
    rc.fd.text(Clip::Pane, pos2(lx, y1 - 5.5), Align2::LEFT_CENTER, gaps_label, FontId::proportional(11.0), weak);
    let lp = &mut *rc.lp;
    let mid = (y0 + y1) / 2.0;
    let slack = tv.npp * 2.0;
    let id = |iv: &(i64, i64)| *iv;
    if let Some(b) = t.bands().iter().find(|b| b.device == device) {
        draw_intervals(&mut lp.mesh, &b.overlapped, id, tv, plot, (y0 + 1.0, mid), OVERLAPPED);
        draw_intervals(&mut lp.mesh, &b.exposed_comm, id, tv, plot, (y0 + 1.0, mid), EXPOSED_COMM);
        if let Some(p) = pointer.filter(|p| p.y >= y0 && p.y < mid && plot.contains(*p)) {
            let tp = tv.t_of(p.x, plot.min.x);
            if let Some(i) = find_containing(&b.overlapped, id, tp, slack) {
                lp.hover = Some(Hover::Band { device, overlapped: true, iv: b.overlapped[i] });
            } else if let Some(i) = find_containing(&b.exposed_comm, id, tp, slack) {
                lp.hover = Some(Hover::Band { device, overlapped: false, iv: b.exposed_comm[i] });
            }
        }
    }
    if let Some(gaps) = t.long_gaps(device) {
        draw_intervals(&mut lp.mesh, gaps, gap_iv, tv, plot, (mid, y1 - 1.0), IDLE);
        if let Some(p) = pointer.filter(|p| p.y >= mid && p.y < y1 && plot.contains(*p)) {
            let tp = tv.t_of(p.x, plot.min.x);
            if let Some(g) = find_containing(gaps, gap_iv, tp, slack) {
                lp.hover = Some(Hover::Gap { ti: rc.ti, gap: gaps[g] });
            }
        }
    }
}

/// The tooltip of a stretch of communication, overlapped by compute or exposed.
pub fn band_text(device: i64, overlapped: bool, iv: (i64, i64)) -> String {
    if overlapped {
        format!("GPU {device}: comm under compute for {}", fmt_ns(iv.1 - iv.0))
    } else {
        format!("GPU {device}: exposed comm (nothing computes under it) for {}", fmt_ns(iv.1 - iv.0))
    }
}

/// The tooltip of a long idle gap: how long, its cause, the spans around it and the launch
/// that ended it.
pub fn gap_text(ws: &Workspace, ti: usize, gap: &IdleGap) -> String {
    let st = &*ws.traces[ti].store;
    let mut s = format!("GPU idle {} — {}\n{}", fmt_ns(gap.end - gap.start), gap.cause.label(), gap.cause.explain());
    // what the thread the GPU waited on was doing (the Gaps tab's "held by"), first: the GPU
    // work on either side says less about why it sat idle
    let held = gap.next_launch.and_then(|l| {
        strobe_analysis::gaps::holding_span(st, &strobe_analysis::gaps::thread_lanes(st, l), gap.start, gap.end)
    });
    match held {
        Some(h) => s.push_str(&format!(
            "\nhost held by: {} ({} long)",
            st.span_name(h),
            fmt_ns(st.span_end(h) - st.span_start(h))
        )),
        None if gap.next_launch.is_some() => s.push_str("\nhost held by: nothing recorded on the launching thread"),
        None => {}
    }
    s.push_str(&format!("\nbetween: {} and {}", st.span_name(gap.prev_span), st.span_name(gap.next_span)));
    if let Some(l) = gap.next_launch {
        let dt = st.span_start(l) - gap.start;
        s.push_str(&format!(
            "\nlaunch: {} at {}{} from the gap's start",
            st.span_name(l),
            if dt >= 0 { "+" } else { "-" },
            fmt_ns(dt.abs())
        ));
    }
    s
}

/// Draws sorted disjoint intervals in O(pixels · log n): runs narrower than a pixel are
/// merged by jumping to the next pixel boundary.
pub fn draw_intervals<T>(
    mesh: &mut Mesh,
    ivs: &[T],
    iv: impl Fn(&T) -> (i64, i64),
    view: &View,
    plot: Rect,
    (y0, y1): (f32, f32),
    c: Color32,
) {
    let n = ivs.len();
    if n == 0 || y1 <= y0 {
        return;
    }
    let (w0, w1) = view.window(plot.width());
    let mut i = ivs.partition_point(|x| iv(x).1 <= w0);
    while i < n {
        let (s, e) = iv(&ivs[i]);
        if s >= w1 {
            break;
        }
        let x0 = view.x_of(s, plot.min.x).max(plot.min.x - 1.0);
        let mut xe = view.x_of(e, plot.min.x).max(x0 + 1.0);
        // one rect for a run of intervals whose gaps are under a pixel: dense busy stretches
        // (a GPU's union of kernels) cost one rect, not one per pixel
        let mut j = i + 1;
        while xe <= plot.max.x + 1.0 {
            let boundary = view.t_of(xe.floor() + 1.0, plot.min.x);
            // gallop from j: the next pixel's intervals are near, a search of the whole list
            // per pixel would cost log n each (64 ranks' summary lanes felt it)
            let mut hi = 1usize;
            while j + hi < n && iv(&ivs[j + hi - 1]).0 < boundary {
                hi *= 2;
            }
            let k = j + ivs[j..(j + hi).min(n)].partition_point(|x| iv(x).0 < boundary);
            if k == j {
                break;
            }
            xe = xe.max(view.x_of(iv(&ivs[k - 1]).1, plot.min.x));
            j = k;
        }
        mesh.add_colored_rect(Rect::from_min_max(pos2(x0, y0), pos2(xe.min(plot.max.x + 1.0), y1)), c);
        i = j;
    }
}
