//! Span lanes: every visible lane's level-of-detail items become quads of one mesh, a label
//! where a span is wide enough, outlines for matches and the selection, and the hit test. A
//! lane row is as tall as its spans nest; its tooltip names the span or the folded run.

use super::colors::{folded_color, lerp, MATCH};
use super::frame::{Clip, FrameStats, Palette};
use super::hover::Hover;
use super::rows::RowCtx;
use super::{View, ROW_H};
use crate::commands::{Highlight, Selection};
use crate::workspace::{Trace, TraceId, Workspace};
use egui::{pos2, vec2, Align2, Color32, FontId, Mesh, Pos2, Rect};
use strobe_analysis::report::fmt_ns;
use strobe_model::SpanKind;
use strobe_store::LodItem;

/// Space under a lane's deepest spans.
const LANE_PAD: f32 = 3.0;

/// How tall a lane is whose spans nest `depths` deep.
pub fn height(depths: u32) -> f32 {
    depths as f32 * ROW_H + LANE_PAD
}

/// What every lane of a frame is drawn against.
pub struct LaneCtx<'a> {
    /// The label column and the plot, below the ruler.
    pub body: Rect,
    pub plot: Rect,
    /// The pointer, when over the body.
    pub pointer: Option<Pos2>,
    pub char_w: f32,
    pub pal: Palette,
    pub hl: &'a Highlight,
    pub sel: &'a Selection,
    /// A lane just revealed (trace, lane) and how strongly it is tinted now.
    pub flash: Option<(TraceId, u32, u8)>,
}

/// The spans of a frame's lanes, collected before they are handed to the painter.
#[derive(Default)]
pub struct LanePainter {
    pub mesh: Mesh,
    pub labels: Vec<(Pos2, String, Color32)>,
    pub outlines: Vec<(Rect, Color32, f32)>,
    pub stats: FrameStats,
    pub hover: Option<Hover>,
}

impl LanePainter {
    /// Lane `lane` of trace `t` (index `ti`) with its top at `y0`, hidden above `top` (a lane
    /// scrolled partly away shows its deeper rows); `view` is the trace's clock.
    pub fn draw_lane(&mut self, cx: &LaneCtx, t: &Trace, ti: usize, lane: u32, (y0, top): (f32, f32), view: &View) {
        let st = &*t.store;
        let plot = cx.plot;
        let (w0, w1) = view.window(plot.width());
        let npp_i = (view.npp.floor() as i64).max(1);
        let (l, r) = (plot.min.x - 2.0, plot.max.x + 2.0);
        let sel_span = cx.sel.span.filter(|s| s.trace == t.id).map(|s| s.span);
        let (hl, bg, char_w) = (cx.hl, cx.pal.bg, cx.char_w);
        let hl_mask = hl.mask(t.id);
        // one borrow per collection, not of `self`, inside the per-item closure (it is the hot loop)
        let LanePainter { mesh, labels, outlines, stats, hover } = self;
        st.lod_query(lane, w0 - npp_i, w1 + npp_i, npp_i, |depth, it| {
            let x0 = view.x_of(it.start, plot.min.x).max(l);
            let mut x1 = view.x_of(it.end, plot.min.x).min(r);
            if x1 - x0 < 1.0 {
                x1 = x0 + 1.0;
            }
            let y = y0 + depth as f32 * ROW_H + 1.0;
            if y + ROW_H - 2.0 <= top {
                return; // its depth is scrolled away
            }
            let cut = y < top;
            let rect = Rect::from_min_max(pos2(x0, y.max(top)), pos2(x1, y + ROW_H - 2.0));
            // name and kind come with the item: the span itself is looked up only for the
            // selection and the hover (following it per item is most of a whole-trace frame)
            // (and read alone: a compressed store decodes the one chunk it sits in)
            let span_of = || st.member_span(lane, it.member);
            let mut c = t.color(it.name, SpanKind::from_u8(it.kind as u8));
            stats.items += 1;
            let matched = hl.active && hl_mask.get(it.name as usize).copied().unwrap_or(false);
            if it.count > 1 {
                stats.folded += 1;
                let dens = it.busy as f32 / (it.end - it.start).max(1) as f32;
                c = folded_color(c, dens, bg);
                if hl.active && !matched {
                    c = lerp(bg, c, 0.3);
                }
                mesh.add_colored_rect(rect, c);
                // hatch: "many small things here"
                if rect.width() >= 6.0 {
                    let dark = lerp(c, bg, 0.55);
                    let mut x = (rect.min.x / 4.0).ceil() * 4.0;
                    while x < rect.max.x - 1.0 {
                        mesh.add_colored_rect(Rect::from_min_max(pos2(x, rect.min.y), pos2(x + 1.0, rect.max.y)), dark);
                        x += 4.0;
                    }
                }
            } else {
                if hl.active && !matched {
                    c = lerp(bg, c, 0.3);
                }
                mesh.add_colored_rect(rect, c);
                if !cut && rect.width() > 3.0 * char_w + 6.0 {
                    let n = ((rect.width() - 4.0) / char_w) as usize;
                    let txt = truncate(st.string(it.name), n);
                    if !txt.is_empty() {
                        labels.push((pos2(rect.min.x.max(plot.min.x) + 2.0, rect.center().y), txt, Color32::BLACK));
                    }
                }
            }
            if matched {
                outlines.push((rect.expand(0.5), MATCH, 1.5));
            }
            if it.count == 1 && sel_span.is_some() && sel_span == span_of() {
                outlines.push((rect.expand(1.0), cx.pal.selected, 2.0));
            }
            if let Some(p) = cx.pointer {
                if rect.expand2(vec2(0.5, 0.0)).contains(p) {
                    if let Some(span) = span_of() {
                        *hover = Some(Hover::Item { ti, item: it, span });
                    }
                }
            }
        });
    }
}

/// A lane row: its name in the gutter (with the trace's, pinned), the flash of a lane just
/// revealed, and its spans.
pub fn draw_row(rc: &mut RowCtx, lane: u32, pinned: bool) {
    let (cx, t, (y0, y1)) = (rc.cx, rc.trace, rc.y);
    let (body, plot, pal) = (cx.body, cx.plot, cx.pal);
    rc.lp.stats.lanes_drawn += 1;
    let lane_name = &t.store.lanes[lane as usize].name;
    let name = if pinned { format!("{} · {lane_name}", t.label) } else { lane_name.clone() };
    let lab = truncate(&name, ((plot.min.x - body.min.x - 28.0) / (cx.char_w * 1.1)) as usize);
    // the part of the row on screen; its name stays in view while the lane's top is scrolled
    // away, and leaves with the lane's last row
    let shown0 = y0.max(rc.top);
    let label_y = shown0.min(y1 - ROW_H);
    let at = pos2(body.min.x + 28.0, label_y + ROW_H / 2.0);
    if pinned {
        let band = Rect::from_min_max(pos2(body.min.x, shown0), pos2(plot.min.x, y1));
        rc.fd.rect_filled(Clip::Pane, band, pal.faint);
    }
    if let Some((_, _, alpha)) = cx.flash.filter(|&(id, l, _)| id == t.id && l == lane) {
        let band = Rect::from_min_max(pos2(body.min.x, shown0), pos2(body.max.x, y1));
        rc.fd.rect_filled(Clip::Pane, band, Color32::from_rgba_unmultiplied(255, 220, 90, alpha));
    }
    if label_y >= rc.top {
        rc.fd.text(Clip::Pane, at, Align2::LEFT_CENTER, lab, FontId::monospace(11.0), pal.text);
    }
    rc.separator();
    rc.lp.draw_lane(cx, t, rc.ti, lane, (y0, rc.top), &rc.view);
}

/// The tooltip of a span, or of a run of folded spans (`span`: the longest).
pub fn item_text(ws: &Workspace, ti: usize, item: LodItem, span: u32) -> String {
    let st = &*ws.traces[ti].store;
    let m = st.span_meta(span);
    if item.count > 1 {
        format!(
            "{} spans folded here\nbusy {} of {}\nlongest: {} ({})\ndouble-click to zoom in",
            item.count,
            fmt_ns(item.busy),
            fmt_ns(item.end - item.start),
            st.span_name(span),
            fmt_ns(item.longest)
        )
    } else {
        format!(
            "{}\n{:?} · {}{}",
            st.span_name(span),
            SpanKind::from_u8(m.kind),
            fmt_ns(item.end - item.start),
            crate::collective_bandwidth::tooltip(ws, ti, span)
        )
    }
}

pub fn truncate(s: &str, max_chars: usize) -> String {
    if max_chars == 0 {
        return String::new();
    }
    let mut it = s.char_indices();
    match it.nth(max_chars) {
        None => s.to_string(),
        Some(_) => {
            let cut = s.char_indices().nth(max_chars.saturating_sub(1)).map(|(i, _)| i).unwrap_or(s.len());
            format!("{}…", &s[..cut])
        }
    }
}
