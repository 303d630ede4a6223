//! A series derived from the trace (queue length per stream, memcpy bandwidth), drawn as a
//! counter row.

use super::rows::RowCtx;

pub const HEIGHT: f32 = super::counters::HEIGHT;

/// The row of derived series `series` (an index into the trace's series).
pub fn draw(rc: &mut RowCtx, series: usize) {
    let d = &rc.trace.series()[series];
    super::counters::counter_row(rc.fd, rc.cx, &d.name, (d.ts.as_slice(), d.vals.as_slice()), &rc.view, rc.y);
}
