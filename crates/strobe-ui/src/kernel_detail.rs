//! The kernel pane's sections for the selected launch, under its SOL bars and roofline: the
//! verdict paragraph, then Occupancy (theoretical vs achieved, the block limits with the
//! limiter marked), Stalls (a bar per reason, largest first, its meaning on hover), Memory
//! (hit rates, DRAM traffic and the ncu-style memory chart, `memory_chart`) and Rules (ncu's
//! rule results ranked by estimated speedup). Bars and small charts; a section the report
//! has no figures for says so rather than drawing zeros.

use crate::units::si;
use egui::{Color32, RichText};
use strobe_analysis::ncu_detail::{MemoryWorkload, Occupancy, Stall};
use strobe_analysis::roofline::KernelSol;
use strobe_model::ncu::NcuRule;

const THEORETICAL: Color32 = Color32::from_rgb(120, 144, 156);
const ACHIEVED: Color32 = Color32::from_rgb(66, 133, 244);
const LIMITER: Color32 = Color32::from_rgb(219, 68, 55);
const STALL: Color32 = Color32::from_rgb(255, 160, 0);
const SPEEDUP: Color32 = Color32::from_rgb(46, 160, 67);
/// Width of a section's column.
const COL_W: f32 = 360.0;

/// A labelled horizontal bar: `frac` of `width` filled, the figure written after it.
pub fn bar(ui: &mut egui::Ui, label: &str, frac: f64, color: Color32, figure: &str, width: f32) -> egui::Response {
    ui.horizontal(|ui| {
        ui.add_sized([110.0, 16.0], egui::Label::new(RichText::new(label).small()).truncate());
        let (rect, resp) = ui.allocate_exact_size(egui::vec2(width, 14.0), egui::Sense::hover());
        let p = ui.painter();
        p.rect_filled(rect, 2.0, ui.visuals().extreme_bg_color);
        let w = rect.width() * frac.clamp(0.0, 1.0) as f32;
        p.rect_filled(egui::Rect::from_min_size(rect.min, egui::vec2(w, rect.height())), 2.0, color);
        ui.label(RichText::new(figure).small().monospace());
        resp
    })
    .inner
}

fn section_title(ui: &mut egui::Ui, title: &str) {
    ui.label(RichText::new(title).strong());
}

fn absent(ui: &mut egui::Ui, what: &str) {
    ui.weak(format!("the report has no {what}"));
}

/// The paragraph and the four sections of launch `k`.
pub fn sections(ui: &mut egui::Ui, k: &KernelSol, gain_line: Option<String>) {
    if let Some(t) = &k.verdict_text {
        ui.label(RichText::new(t).color(crate::kernel_sol::verdict_color(k.verdict)));
    }
    if let Some(g) = gain_line {
        ui.label(RichText::new(g).strong());
    }
    ui.add_space(4.0);
    ui.horizontal_top(|ui| {
        column(ui, "Occupancy", COL_W, |ui| occupancy(ui, k.occupancy.as_ref()));
        ui.separator();
        column(ui, "Stalls", COL_W, |ui| stalls(ui, k));
        ui.separator();
        column(ui, "Memory", 610.0, |ui| memory(ui, k.memory.as_ref()));
    });
    ui.separator();
    section_title(ui, "Rules (ncu, by estimated speedup)");
    rules(ui, &k.rules);
}

fn column(ui: &mut egui::Ui, title: &str, width: f32, body: impl FnOnce(&mut egui::Ui)) {
    ui.vertical(|ui| {
        ui.set_width(width);
        section_title(ui, title);
        body(ui);
    });
}

fn occupancy(ui: &mut egui::Ui, o: Option<&Occupancy>) {
    let Some(o) = o else { return absent(ui, "occupancy metrics") };
    let pct = |v: Option<f64>| v.map(|v| format!("{v:.1} %")).unwrap_or_else(|| "-".into());
    if let Some(t) = o.theoretical_pct {
        bar(ui, "theoretical", t / 100.0, THEORETICAL, &pct(Some(t)), 160.0);
    }
    if let Some(a) = o.achieved_pct {
        bar(ui, "achieved", a / 100.0, ACHIEVED, &pct(Some(a)), 160.0);
    }
    if !o.block_limits.is_empty() {
        ui.label(RichText::new("blocks per SM, by limit (the smallest caps it)").small().weak());
        let max = o.block_limits.iter().map(|(_, v)| *v).fold(1.0, f64::max);
        let limiting: Vec<&str> = o.limiter.as_deref().map(|l| l.split('+').collect()).unwrap_or_default();
        for (name, v) in &o.block_limits {
            let c = if limiting.contains(&name.as_str()) { LIMITER } else { THEORETICAL };
            bar(ui, &name.replace('_', " "), v / max, c, &format!("{v:.0}"), 160.0);
        }
    }
    let mut facts = Vec::new();
    if let Some(r) = o.registers_per_thread {
        facts.push(format!("{r:.0} registers/thread"));
    }
    if let Some(s) = o.shared_mem_per_block_bytes {
        facts.push(format!("{} shared/block", si(s, "B")));
    }
    if let Some(w) = o.waves_per_sm {
        facts.push(format!("{w:.2} waves/SM"));
    }
    if !facts.is_empty() {
        ui.label(RichText::new(facts.join(" · ")).small());
    }
    if let Some(a) = &o.advice {
        ui.label(RichText::new(a).small().italics());
    }
}

fn stalls(ui: &mut egui::Ui, k: &KernelSol) {
    if k.stalls.is_empty() {
        return absent(ui, "stall reasons (warp state or PC sampling)");
    }
    let src = k.stall_source.map(|s| s.describe()).unwrap_or("");
    let samples = k.stall_samples.map(|n| format!(", {n:.0} samples")).unwrap_or_default();
    ui.label(RichText::new(format!("% of stalls, from {src}{samples}")).small().weak());
    let top = k.stalls.first().map(|s| s.pct).unwrap_or(100.0).max(1e-9);
    for s in k.stalls.iter().take(10) {
        stall_bar(ui, s, top);
    }
    if k.stalls.len() > 10 {
        let rest: f64 = k.stalls[10..].iter().map(|s| s.pct).sum();
        ui.weak(format!("{} more reasons, {rest:.1} %", k.stalls.len() - 10));
    }
}

fn stall_bar(ui: &mut egui::Ui, s: &Stall, top: f64) {
    bar(ui, &s.reason, s.pct / top, STALL, &format!("{:.1} %", s.pct), 150.0)
        .on_hover_text(format!("{}: {}", s.reason, s.meaning));
}

fn memory(ui: &mut egui::Ui, m: Option<&MemoryWorkload>) {
    let Some(m) = m else { return absent(ui, "memory workload metrics") };
    if let Some(h) = m.l1_hit_pct {
        bar(ui, "L1/TEX hit rate", h / 100.0, ACHIEVED, &format!("{h:.1} %"), 150.0);
    }
    if let Some(h) = m.l2_hit_pct {
        bar(ui, "L2 hit rate", h / 100.0, ACHIEVED, &format!("{h:.1} %"), 150.0);
    }
    if let Some(d) = m.dram_pct {
        bar(ui, "DRAM throughput", d / 100.0, THEORETICAL, &format!("{d:.1} %"), 150.0);
    }
    let mut facts = Vec::new();
    if let (Some(r), Some(w)) = (m.dram_read_bytes, m.dram_write_bytes) {
        facts.push(format!("DRAM read {} · write {}", si(r, "B"), si(w, "B")));
    }
    if let Some(b) = m.dram_bytes_per_s {
        facts.push(si(b, "B/s"));
    }
    if let Some(c) = m.shared_bank_conflicts {
        facts.push(format!("{c:.0} shared-memory bank conflicts"));
    }
    if !facts.is_empty() {
        ui.label(RichText::new(facts.join(" · ")).small());
    }
    crate::memory_chart::chart(ui, m);
}

fn rule_kind_color(kind: &str) -> Color32 {
    match kind {
        "OPT" => SPEEDUP,
        "WRN" => Color32::from_rgb(255, 160, 0),
        "ERR" => LIMITER,
        _ => Color32::GRAY,
    }
}

fn rules(ui: &mut egui::Ui, rules: &[NcuRule]) {
    if rules.is_empty() {
        return absent(ui, "rule results (export details with --print-details all, or open the .ncu-rep)");
    }
    for r in rules {
        ui.horizontal(|ui| {
            let (rect, _) = ui.allocate_exact_size(egui::vec2(80.0, 12.0), egui::Sense::hover());
            ui.painter().rect_filled(rect, 2.0, ui.visuals().extreme_bg_color);
            if let Some(p) = r.speedup_pct {
                let w = rect.width() * (p / 100.0).clamp(0.0, 1.0) as f32;
                let c = if r.speedup_type.as_deref() == Some("global") { SPEEDUP } else { SPEEDUP.gamma_multiply(0.5) };
                ui.painter().rect_filled(egui::Rect::from_min_size(rect.min, egui::vec2(w, rect.height())), 2.0, c);
            }
            let est = match (r.speedup_pct, r.speedup_type.as_deref()) {
                (Some(p), Some(t)) => format!("{p:.1} % {t}"),
                (Some(p), None) => format!("{p:.1} %"),
                _ => "—".into(),
            };
            ui.label(RichText::new(format!("{est:>14}")).small().monospace());
            ui.label(RichText::new(&r.kind).small().monospace().color(rule_kind_color(&r.kind)));
            ui.label(RichText::new(&r.name).small().strong());
        })
        .response
        .on_hover_text(&r.message);
        ui.label(RichText::new(&r.message).small().weak());
    }
}
