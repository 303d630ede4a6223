//! The step strip at the top of a trace: one box per iteration with its name and duration,
//! coloured by how far it is from the median step (the heat map's scale: grey within ±2 %,
//! red slower, green faster), the odd steps (`strobe_analysis::anomalies`) outlined. Hover for
//! the evidence; a click shows the step.

use super::frame::Clip;
use super::hover::Hover;
use super::lanes::truncate;
use super::rows::RowCtx;
use crate::workspace::Workspace;
use egui::{pos2, Align2, Color32, FontId, Rect};
use strobe_analysis::report::fmt_ns;

pub const HEIGHT: f32 = 20.0;
/// The row's gutter label while the steps are looked for.
pub const PENDING_LABEL: &str = "steps";

/// The strip, then the line under it.
pub fn draw(rc: &mut RowCtx) {
    draw_steps(rc);
    rc.separator();
}

fn draw_steps(rc: &mut RowCtx) {
    let (cx, t, tv, (y0, y1), ti) = (rc.cx, rc.trace, &rc.view, rc.y, rc.ti);
    let (body, plot) = (cx.body, cx.plot);
    let lp = &mut *rc.lp;
    let steps = &t.steps();
    let source = steps.first().map(|s| s.source.as_str()).unwrap_or("");
    rc.fd.text(
        Clip::Pane,
        pos2(body.min.x + 28.0, (y0 + y1) / 2.0),
        Align2::LEFT_CENTER,
        format!("steps ({source})"),
        FontId::monospace(11.0),
        cx.pal.text,
    );
    let durs: Vec<i64> = steps.iter().map(|s| s.dur_ns).collect();
    let typical = strobe_analysis::stats::median(&durs).unwrap_or(1);
    // a set, not a scan of the anomalies per step: a long trace has thousands of each, and
    // the scan cost a whole-trace frame ~50 ms (the 250 MB nsys export: 54 ms a frame)
    let odd: std::collections::HashSet<&str> = t.step_anomalies().iter().map(|a| a.step.as_str()).collect();
    for (i, s) in steps.iter().enumerate() {
        let (xa, xb) = (tv.x_of(s.start_ns, plot.min.x), tv.x_of(s.start_ns + s.dur_ns, plot.min.x));
        if xb < plot.min.x || xa > plot.max.x {
            continue;
        }
        let r = Rect::from_min_max(
            pos2(xa.max(plot.min.x - 1.0), y0 + 2.0),
            pos2(xb.min(plot.max.x + 1.0).max(xa + 1.0), y1 - 2.0),
        );
        lp.mesh.add_colored_rect(r, crate::ranks::heat_map::heat(s.dur_ns, typical, typical));
        if odd.contains(s.name.as_str()) {
            lp.outlines.push((r, Color32::from_rgb(255, 90, 70), 2.0));
        }
        if r.width() > 40.0 {
            let label = format!("{} · {}", s.name, strobe_analysis::report::fmt_ns(s.dur_ns));
            let n = ((r.width() - 6.0) / cx.char_w) as usize;
            // with the spans' labels: drawn over the mesh
            lp.labels.push((pos2(r.min.x.max(plot.min.x) + 3.0, r.center().y), truncate(&label, n), Color32::WHITE));
        }
        if cx.pointer.is_some_and(|p| r.contains(p)) {
            lp.hover = Some(Hover::Step { ti, step: i });
        }
    }
}

/// The tooltip of a step: its duration beside the median step, and why it is odd if it is.
pub fn step_text(ws: &Workspace, ti: usize, step: usize) -> String {
    let steps = ws.traces[ti].steps();
    let Some(s) = steps.get(step) else { return String::new() };
    let durs: Vec<i64> = steps.iter().map(|s| s.dur_ns).collect();
    let typical = strobe_analysis::stats::median(&durs).unwrap_or(0);
    let mut out = format!(
        "{} ({}): {} · median step {}\nclick to show it",
        s.name,
        s.source.as_str(),
        fmt_ns(s.dur_ns),
        fmt_ns(typical)
    );
    for a in ws.traces[ti].step_anomalies().iter().filter(|a| a.step == s.name) {
        out.push_str(&format!("\n{}", a.evidence));
    }
    out
}
