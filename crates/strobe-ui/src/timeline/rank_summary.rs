//! A folded trace (rank) as one row: per GPU compute / comm / memory busy and long idle gaps,
//! one strip each.

use super::bands::{draw_intervals, gap_iv};
use super::colors::{EXPOSED_COMM, IDLE, MEMORY_BUSY, OVERLAPPED};
use super::frame::Clip;
use super::rows::RowCtx;
use egui::{pos2, Align2, FontId};

pub const HEIGHT: f32 = 22.0;
/// The row's gutter label while the overview is measured.
pub const PENDING_LABEL: &str = "GPU busy";

pub fn draw(rc: &mut RowCtx) {
    let (cx, t, tv, (y0, y1)) = (rc.cx, rc.trace, &rc.view, rc.y);
    let (body, plot) = (cx.body, cx.plot);
    rc.fd.text(
        Clip::Pane,
        pos2(body.min.x + 28.0, (y0 + y1) / 2.0),
        Align2::LEFT_CENTER,
        "GPU: compute / comm / memory / idle",
        FontId::proportional(11.0),
        cx.pal.weak,
    );
    let mesh = &mut rc.lp.mesh;
    let strip = (y1 - y0 - 2.0) / 4.0;
    let id = |iv: &(i64, i64)| *iv;
    for u in t.unions() {
        for (k, (iv, c)) in
            [(&u.compute, OVERLAPPED), (&u.comm, EXPOSED_COMM), (&u.memory, MEMORY_BUSY)].into_iter().enumerate()
        {
            let a = y0 + 1.0 + strip * k as f32;
            draw_intervals(mesh, iv, id, tv, plot, (a, a + strip - 0.5), c);
        }
        if let Some(gaps) = t.long_gaps(u.device) {
            let a = y0 + 1.0 + strip * 3.0;
            draw_intervals(mesh, gaps, gap_iv, tv, plot, (a, a + strip - 0.5), IDLE);
        }
    }
    rc.separator();
}
