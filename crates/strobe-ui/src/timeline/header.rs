//! A group's header row: its band, a disclosure triangle and its label. A click on it folds
//! the group (`input`).

use super::frame::Clip;
use super::rows::RowCtx;
use egui::{pos2, Align2, FontId, Rect, Shape, Stroke};

pub const HEIGHT: f32 = 20.0;

/// The header of a group at nesting `level` (0: a trace); the triangle is painted: the
/// default fonts have no ▶/▼.
pub fn draw(rc: &mut RowCtx, label: &str, level: u8, collapsed: bool) {
    let (cx, (y0, y1)) = (rc.cx, rc.y);
    let body = cx.body;
    let rr = Rect::from_min_max(pos2(body.min.x, y0), pos2(body.max.x, y1));
    rc.fd.rect_filled(Clip::Pane, rr, if level == 0 { cx.pal.header } else { cx.pal.faint });
    let tx = body.min.x + 9.0 + 12.0 * level as f32;
    let ty = (y0 + y1) / 2.0;
    let tri = if collapsed {
        vec![pos2(tx - 3.0, ty - 5.0), pos2(tx + 4.0, ty), pos2(tx - 3.0, ty + 5.0)]
    } else {
        vec![pos2(tx - 5.0, ty - 3.0), pos2(tx + 5.0, ty - 3.0), pos2(tx, ty + 4.0)]
    };
    rc.fd.shape(Clip::Pane, Shape::convex_polygon(tri, cx.pal.text, Stroke::NONE));
    let font = FontId::proportional(if level == 0 { 13.0 } else { 12.0 });
    rc.fd.text(Clip::Pane, pos2(tx + 9.0, ty), Align2::LEFT_CENTER, label, font, cx.pal.strong);
}
