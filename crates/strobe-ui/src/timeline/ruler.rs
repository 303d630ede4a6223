//! The time ruler: tick spacing of 1-2-5 × 10^k ns chosen for ~110 px between labels, unit
//! (ns/µs/ms/s) chosen by the spacing, times shown relative to the view's origin (trace start).

use super::frame::{Clip, FrameDraw, Palette};
use super::View;
use egui::{pos2, Align2, FontId, Rect, Stroke};

/// (x, time relative to origin in ns, major) for each tick in the plot.
pub fn ticks(view: &View, plot: Rect) -> Vec<(f32, f64, bool)> {
    let target = 110.0 * view.npp;
    let mut step = 1.0f64;
    'outer: for e in 0..16 {
        for m in [1.0, 2.0, 5.0] {
            let s = m * 10f64.powi(e);
            if s >= target {
                step = s;
                break 'outer;
            }
        }
        step = 10f64.powi(e + 1);
    }
    let minor = step / 5.0;
    let t_left = view.t0;
    let t_right = view.t0 + plot.width() as f64 * view.npp;
    let mut out = Vec::new();
    let mut k = (t_left / minor).floor();
    while k * minor <= t_right && out.len() < 2000 {
        let t = k * minor;
        let x = plot.min.x + ((t - view.t0) / view.npp) as f32;
        let major = (k.rem_euclid(5.0)).abs() < 0.5;
        if x >= plot.min.x {
            out.push((x, t, major));
        }
        k += 1.0;
    }
    out
}

/// A tick label: the unit follows the magnitude of the time (62.2 ms, not 62200 µs), the
/// decimals follow the tick spacing so neighbouring labels differ.
pub fn fmt_rel(t: f64, step_hint: f64) -> String {
    let a = t.abs().max(step_hint);
    let (div, unit) = if a >= 1e9 {
        (1e9, "s")
    } else if a >= 1e6 {
        (1e6, "ms")
    } else if a >= 1e3 {
        (1e3, "µs")
    } else {
        (1.0, "ns")
    };
    let s = step_hint / div;
    let digits = if s >= 1.0 { 0 } else { ((-s.log10()).ceil() as usize).min(9) };
    format!("{:.digits$} {unit}", t / div)
}

pub fn draw(fd: &mut FrameDraw, pal: &Palette, ruler: Rect, plot: Rect, view: &View, ticks: &[(f32, f64, bool)]) {
    fd.rect_filled(Clip::Pane, ruler, pal.panel);
    let step = ticks.windows(2).find(|w| w[0].2).map(|w| (w[1].1 - w[0].1) * 5.0).unwrap_or(view.npp * 110.0);
    let col = pal.text;
    for &(x, t, major) in ticks {
        if x < plot.min.x || x > plot.max.x {
            continue;
        }
        let h = if major { 9.0 } else { 4.0 };
        fd.vline(Clip::Pane, x, ((ruler.max.y - h)..=ruler.max.y).into(), Stroke::new(1.0, col));
        if major {
            fd.text(
                Clip::Pane,
                pos2(x + 3.0, ruler.min.y + 2.0),
                Align2::LEFT_TOP,
                fmt_rel(t, step),
                FontId::monospace(11.0),
                col,
            );
        }
    }
    let (a, b) = view.window(plot.width());
    fd.text(
        Clip::Pane,
        pos2(ruler.min.x + 4.0, ruler.center().y),
        Align2::LEFT_CENTER,
        format!("window {}", strobe_analysis::report::fmt_ns(b - a)),
        FontId::proportional(11.0),
        pal.weak,
    );
    fd.hline(Clip::Pane, ruler.x_range(), ruler.max.y, Stroke::new(1.0, pal.separator));
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn labels() {
        assert_eq!(fmt_rel(62_200_000.0, 200_000.0), "62.2 ms");
        assert_eq!(fmt_rel(0.0, 50_000_000.0), "50 ms".replace("50", "0"));
        assert_eq!(fmt_rel(1_500.0, 500.0), "1.5 µs");
        assert_eq!(fmt_rel(62_000_005.0, 5.0), "62.000005 ms");
        assert_eq!(fmt_rel(2e9, 1e9), "2 s");
    }
}
