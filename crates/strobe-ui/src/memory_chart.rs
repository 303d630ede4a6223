//! A memory chart drawn as Nsight Compute's Memory Workload Analysis draws it: the units left
//! to right (Kernel, L1/TEX, L2, DRAM) as boxes with their hit rate or throughput, and
//! between neighbours an arrow per direction, labelled with its bytes and % of the link's
//! peak; an arrow's thickness grows with its % of peak (ncu colours its links the same way).

use crate::units::si;
use egui::{Align2, Color32, FontId, Pos2, Rect, Stroke};
use strobe_analysis::ncu_detail::{MemoryFlow, MemoryWorkload};

const UNITS: [&str; 4] = ["kernel", "L1", "L2", "DRAM"];
const BOX_W: f32 = 56.0;
const BOX_H: f32 = 64.0;
const GAP: f32 = 124.0;
/// Room above and below the boxes for the arrows' labels.
const MARGIN: f32 = 16.0;

fn unit_title(u: &str) -> &'static str {
    match u {
        "kernel" => "Kernel",
        "L1" => "L1/TEX",
        "L2" => "L2",
        _ => "DRAM",
    }
}

/// Where the flow's arrow is drawn: its link's index (0: kernel–L1, 1: L1–L2, 2: L2–DRAM)
/// and whether it points left (towards the kernel).
fn link_of(f: &MemoryFlow) -> Option<(usize, bool)> {
    let a = UNITS.iter().position(|u| *u == f.from)?;
    let b = UNITS.iter().position(|u| *u == f.to)?;
    (a.abs_diff(b) == 1).then(|| (a.min(b), b < a))
}

fn flow_text(f: &MemoryFlow) -> String {
    let b = f.bytes.map(|b| si(b, "B")).unwrap_or_default();
    let p = f.pct_of_peak.map(|p| format!("{p:.1} %")).unwrap_or_default();
    match (b.is_empty(), p.is_empty()) {
        (false, false) => format!("{b} · {p}"),
        (false, true) => b,
        _ => p,
    }
}

pub fn chart(ui: &mut egui::Ui, m: &MemoryWorkload) {
    if m.flows.is_empty() {
        ui.weak("the report has no memory chart metrics");
        return;
    }
    let width = 4.0 * BOX_W + 3.0 * GAP + 8.0;
    let (rect, resp) = ui.allocate_exact_size(egui::vec2(width, BOX_H + 2.0 * MARGIN), egui::Sense::hover());
    let p = ui.painter_at(rect);
    let text = ui.visuals().text_color();
    let weak = ui.visuals().weak_text_color();
    let fill = ui.visuals().extreme_bg_color;
    let top = rect.top() + MARGIN;
    let box_rect = |i: usize| {
        Rect::from_min_size(Pos2::new(rect.left() + 4.0 + i as f32 * (BOX_W + GAP), top), egui::vec2(BOX_W, BOX_H))
    };
    for (i, u) in UNITS.iter().enumerate() {
        let r = box_rect(i);
        p.rect(r, 3.0, fill, Stroke::new(1.0, weak), egui::StrokeKind::Inside);
        p.text(
            r.center_top() + egui::vec2(0.0, 4.0),
            Align2::CENTER_TOP,
            unit_title(u),
            FontId::proportional(12.0),
            text,
        );
        let lines: Vec<String> = match *u {
            "L1" => [m.l1_hit_pct.map(|h| format!("hit {h:.0} %")), m.l1_pct.map(|t| format!("busy {t:.0} %"))]
                .into_iter()
                .flatten()
                .collect(),
            "L2" => [m.l2_hit_pct.map(|h| format!("hit {h:.0} %")), m.l2_pct.map(|t| format!("busy {t:.0} %"))]
                .into_iter()
                .flatten()
                .collect(),
            "DRAM" => m.dram_pct.map(|d| format!("busy {d:.0} %")).into_iter().collect(),
            _ => Vec::new(),
        };
        for (j, l) in lines.iter().enumerate() {
            let at = r.center_top() + egui::vec2(0.0, 24.0 + 14.0 * j as f32);
            p.text(at, Align2::CENTER_TOP, l, FontId::proportional(10.5), weak);
        }
    }
    let mut hover = Vec::new();
    for f in &m.flows {
        let Some((link, left)) = link_of(f) else { continue };
        let (a, b) = (box_rect(link), box_rect(link + 1));
        // Towards the kernel (loads, reads) in the upper half, labelled above; towards DRAM
        // (stores, writes) in the lower half, labelled below.
        let y = if left { a.top() + 20.0 } else { a.bottom() - 20.0 };
        let (x0, x1) = (a.right() + 3.0, b.left() - 3.0);
        let w = 1.0 + 5.0 * (f.pct_of_peak.unwrap_or(0.0) / 100.0).clamp(0.0, 1.0) as f32;
        let color = if left { Color32::from_rgb(66, 133, 244) } else { Color32::from_rgb(255, 127, 14) };
        let (from, to) = if left { (Pos2::new(x1, y), Pos2::new(x0, y)) } else { (Pos2::new(x0, y), Pos2::new(x1, y)) };
        p.arrow(from, to - from, Stroke::new(w, color));
        let t = flow_text(f);
        let (at, align) = if left {
            (Pos2::new((x0 + x1) / 2.0, y - 4.0), Align2::CENTER_BOTTOM)
        } else {
            (Pos2::new((x0 + x1) / 2.0, y + 4.0), Align2::CENTER_TOP)
        };
        p.text(at, align, &t, FontId::proportional(10.0), color);
        let peak = f.pct_of_peak.map(|p| format!(", {p:.1} % of the link's peak")).unwrap_or_default();
        let bytes = f.bytes.map(|b| si(b, "B")).unwrap_or_else(|| "-".into());
        hover.push(format!("{} → {} ({}): {bytes}{peak}", unit_title(f.from), unit_title(f.to), f.what));
    }
    resp.on_hover_text(hover.join("\n"));
}
