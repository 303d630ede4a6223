//! A pipeline stage's strip under its step strip: each microbatch's work as a box labelled
//! `F3` / `B3` where the label fits (forward blue, backward orange, weight-gradient purple),
//! and over it the stage's bubble in each step, as the analysis splits it
//! (`strobe_analysis::pipeline::bubbles`): warm-up / cool-down, P2P wait, other idle, each a
//! subtle shade of its own. A P2P wait inside a microbatch's range shades that part of its
//! box: the range holds the receive of its input. Hover names the part; a click on a box
//! selects its annotation.

use super::bands::draw_intervals;
use super::frame::Clip;
use super::hover::{find_containing, Hover};
use super::rows::RowCtx;
use crate::workspace::Workspace;
use egui::{pos2, Align2, Color32, FontId, Rect};
use strobe_analysis::pipeline::bubbles::BubbleIntervals;
use strobe_analysis::pipeline::microbatch::Phase;

pub const HEIGHT: f32 = 22.0;

/// The parts of a stage's bubble, as the analysis splits it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BubbleKind {
    Warmup,
    P2pWait,
    OtherIdle,
    Cooldown,
}

impl BubbleKind {
    pub const ALL: [BubbleKind; 4] =
        [BubbleKind::Warmup, BubbleKind::P2pWait, BubbleKind::OtherIdle, BubbleKind::Cooldown];

    pub fn name(self) -> &'static str {
        match self {
            BubbleKind::Warmup => "warm-up bubble",
            BubbleKind::P2pWait => "P2P wait",
            BubbleKind::OtherIdle => "other idle",
            BubbleKind::Cooldown => "cool-down bubble",
        }
    }

    pub fn explain(self) -> &'static str {
        match self {
            BubbleKind::Warmup => "the stage cannot run yet: from the step's start until its first work, or until its first input from the stage upstream arrived",
            BubbleKind::P2pWait => "waiting on a peer stage: in a send / receive call, or blocked on a receive",
            BubbleKind::OtherIdle => "neither microbatch work nor waiting on a peer (Python between ranges, launch gaps)",
            BubbleKind::Cooldown => "after the stage's last work in the step: the drain, send completions, the optimizer",
        }
    }

    /// The kind's colour (the strip's bottom edge, the legend).
    pub fn edge(self) -> Color32 {
        match self {
            // warm-up and cool-down are the schedule's bubble: one family
            BubbleKind::Warmup | BubbleKind::Cooldown => Color32::from_rgb(165, 135, 240),
            BubbleKind::P2pWait => Color32::from_rgb(240, 180, 60),
            BubbleKind::OtherIdle => Color32::from_rgb(175, 175, 175),
        }
    }

    /// A subtle wash of it, drawn over the background and over the boxes alike.
    pub fn color(self) -> Color32 {
        let e = self.edge();
        Color32::from_rgba_unmultiplied(e.r(), e.g(), e.b(), if self == BubbleKind::OtherIdle { 40 } else { 60 })
    }

    pub fn of(self, b: &BubbleIntervals) -> &[(i64, i64)] {
        match self {
            BubbleKind::Warmup => &b.warmup,
            BubbleKind::P2pWait => &b.p2p_wait,
            BubbleKind::OtherIdle => &b.other_idle,
            BubbleKind::Cooldown => &b.cooldown,
        }
    }
}

pub fn phase_color(p: Phase, index: u32) -> Color32 {
    // neighbouring microbatches alternate in lightness so their edges read
    let light = if index.is_multiple_of(2) { 0 } else { 22 };
    let (r, g, b) = match p {
        Phase::Forward => (50, 110, 185),
        Phase::Backward => (185, 105, 45),
        Phase::Weight => (130, 80, 170),
    };
    Color32::from_rgb(r + light, g + light, b + light)
}

/// The stage's strip, then the line under it.
pub fn draw(rc: &mut RowCtx) {
    draw_stage(rc);
    rc.separator();
}

fn draw_stage(rc: &mut RowCtx) {
    let (cx, ws, t, tv, (y0, y1), ti) = (rc.cx, rc.ws, rc.trace, &rc.view, rc.y, rc.ti);
    let (body, plot) = (cx.body, cx.plot);
    let Some((pv, k)) = ws.pipeline.as_ref().and_then(|p| Some((p, p.index_of(t.id)?))) else { return };
    let (pr, work) = (&pv.pipeline.ranks[k], &pv.work[k]);
    let lp = &mut *rc.lp;
    rc.fd.text(
        Clip::Pane,
        pos2(body.min.x + 28.0, (y0 + y1) / 2.0),
        Align2::LEFT_CENTER,
        format!("pipeline · stage {} · F / B", pr.stage),
        FontId::monospace(11.0),
        cx.pal.text,
    );
    let (w0, w1) = tv.window(plot.width());
    let boxes = (y0 + 2.0, y1 - 2.0);
    for (k, m) in pr.microbatches.iter().enumerate() {
        if m.end_ns <= w0 || m.start_ns >= w1 {
            continue;
        }
        let (xa, xb) = (tv.x_of(m.start_ns, plot.min.x), tv.x_of(m.end_ns, plot.min.x));
        let r = Rect::from_min_max(
            pos2(xa.max(plot.min.x - 1.0), boxes.0),
            pos2(xb.min(plot.max.x + 1.0).max(xa + 1.0), boxes.1),
        );
        // the range dim, its work (the range less its waits) solid: a forward that holds
        // the receive of its input shows where it waited
        let c = phase_color(m.phase, m.index);
        lp.mesh.add_colored_rect(r, c.gamma_multiply(0.35));
        let from = work.partition_point(|w| w.1 <= m.start_ns);
        for w in work[from..].iter().take_while(|w| w.0 < m.end_ns) {
            let (a, b) = (w.0.max(m.start_ns), w.1.min(m.end_ns));
            let (xa, xb) = (tv.x_of(a, plot.min.x).max(r.min.x), tv.x_of(b, plot.min.x).min(r.max.x));
            if xb > xa {
                lp.mesh.add_colored_rect(Rect::from_x_y_ranges(xa..=xb.max(xa + 1.0), r.y_range()), c);
            }
        }
        let label = m.label();
        let w = label.len() as f32 * cx.char_w;
        if r.width() >= w + 6.0 {
            let x = r.center().x - w / 2.0;
            lp.labels.push((pos2(x, r.center().y), label, Color32::WHITE));
        }
        if cx.pointer.is_some_and(|p| r.contains(p)) {
            lp.hover = Some(Hover::Microbatch { ti, index: k });
        }
    }
    let first = pr.bubbles.partition_point(|b| b.t1 <= w0);
    let id = |iv: &(i64, i64)| *iv;
    for (si, b) in pr.bubbles.iter().enumerate().skip(first).take_while(|(_, b)| b.t0 < w1) {
        // a faint wash over the row, and the kind's own colour along its bottom edge, where
        // it reads over a dim range as well as over the background
        for kind in BubbleKind::ALL {
            draw_intervals(&mut lp.mesh, kind.of(b), id, tv, plot, (y0 + 1.0, y1 - 1.0), kind.color());
            draw_intervals(&mut lp.mesh, kind.of(b), id, tv, plot, (y1 - 5.0, y1 - 1.0), kind.edge());
        }
        // a bubble wins over the box it shades: that part of the range is not work
        if let Some(p) = cx.pointer.filter(|p| p.y >= y0 && p.y < y1 && plot.contains(*p)) {
            let tp = tv.t_of(p.x, plot.min.x);
            for kind in BubbleKind::ALL {
                let ivs = kind.of(b);
                if let Some(i) = find_containing(ivs, id, tp, tv.npp) {
                    lp.hover = Some(Hover::Bubble { ti, step: si, kind, iv: ivs[i] });
                }
            }
        }
    }
}

/// The tooltip of a bubble part: what it is, and the stage's whole bubble in that step.
pub fn bubble_text(ws: &Workspace, ti: usize, step: usize, kind: BubbleKind, iv: (i64, i64)) -> String {
    use strobe_analysis::report::fmt_ns;
    let t = &ws.traces[ti];
    let Some(p) = &ws.pipeline else { return String::new() };
    let (Some(k), Some(pr)) = (p.index_of(t.id), p.rank_of(t.id)) else { return String::new() };
    let Some(b) = pr.bubbles.get(step) else { return String::new() };
    let mut s = format!(
        "{} · {}\nstage {} · rank {} · {}\n{}",
        kind.name(),
        fmt_ns(iv.1 - iv.0),
        pr.stage,
        pr.rank,
        b.step,
        kind.explain()
    );
    if let Some(row) = p.pipeline.report.steps.get(step).and_then(|r| r.stages.get(k)) {
        s.push_str(&format!(
            "\nthis stage in {}: bubble {} ({:.1} % of the step) = warm-up {} + P2P wait {} + other idle {} + cool-down {}",
            b.step,
            fmt_ns(row.bubble_ns),
            row.bubble_pct,
            fmt_ns(row.warmup_ns),
            fmt_ns(row.p2p_wait_ns),
            fmt_ns(row.other_idle_ns),
            fmt_ns(row.cooldown_ns)
        ));
    }
    s
}

/// The tooltip of a microbatch's box: its phase, chunk, stage, duration and range.
pub fn microbatch_text(ws: &Workspace, ti: usize, index: usize) -> String {
    let t = &ws.traces[ti];
    let Some(pr) = ws.pipeline.as_ref().and_then(|p| p.rank_of(t.id)) else { return String::new() };
    let Some(m) = pr.microbatches.get(index) else { return String::new() };
    let phase = match m.phase {
        Phase::Forward => "forward",
        Phase::Backward => "backward",
        Phase::Weight => "weight gradient",
    };
    let chunk = m.chunk.map(|c| format!(" · model chunk {c}")).unwrap_or_default();
    let name = m.span.map(|s| format!("\n{}", t.store.span_name(s))).unwrap_or_default();
    format!(
        "{} · {phase} of microbatch {}{chunk}\nstage {} · rank {} · {}{name}{}",
        m.label(),
        m.index,
        pr.stage,
        pr.rank,
        strobe_analysis::report::fmt_ns(m.end_ns - m.start_ns),
        if m.span.is_some() { "\nclick to select its range" } else { "\n(found from the transfers around it)" }
    )
}
