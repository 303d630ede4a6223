//! One group's ranks × sequence-number grid: a row per member, a column per collective
//! sequence number, each cell coloured by what the matching found there.

use egui::{Color32, Pos2, Rect, Sense, Stroke, Vec2};
use strobe_analysis::flight_recorder::{cell, Cell, FrReport, GroupSummary};
use strobe_model::flight_recorder::FrDump;

pub const OK: Color32 = Color32::from_rgb(70, 130, 90);
pub const MISSING: Color32 = Color32::from_rgb(220, 60, 60);
pub const OP: Color32 = Color32::from_rgb(200, 80, 200);
pub const SIZE: Color32 = Color32::from_rgb(235, 150, 40);
pub const PENDING: Color32 = Color32::from_rgb(220, 200, 60);
pub const UNKNOWN: Color32 = Color32::from_gray(70);

const CELL: f32 = 22.0;
const LABEL_W: f32 = 64.0;
const HEADER_H: f32 = 18.0;

pub fn kind_colour(kind: &str) -> Color32 {
    match kind {
        "missing" => MISSING,
        "op" => OP,
        _ => SIZE,
    }
}

fn colour(c: Cell) -> Color32 {
    match c {
        Cell::Ok => OK,
        Cell::Missing => MISSING,
        Cell::Op => OP,
        Cell::Size => SIZE,
        Cell::NotCompleted => PENDING,
        Cell::Unknown => UNKNOWN,
    }
}

fn describe(c: Cell) -> &'static str {
    match c {
        Cell::Ok => "matched, completed",
        Cell::Missing => "never arrived",
        Cell::Op => "another op than the other ranks (desync)",
        Cell::Size => "other sizes or dtypes than the other ranks",
        Cell::NotCompleted => "arrived, not completed",
        Cell::Unknown => "no entry (no dump, or lost to the ring buffer)",
    }
}

pub fn legend(ui: &mut egui::Ui) {
    ui.horizontal_wrapped(|ui| {
        for c in [Cell::Ok, Cell::Missing, Cell::Op, Cell::Size, Cell::NotCompleted, Cell::Unknown] {
            let (r, _) = ui.allocate_exact_size(Vec2::splat(12.0), Sense::hover());
            ui.painter().rect_filled(r, 2.0, colour(c));
            ui.label(describe(c));
        }
    });
}

/// Draws the grid; returns the cell clicked, as (rank, seq), and where the first cell is and
/// the cells' size.
pub fn show(
    ui: &mut egui::Ui,
    report: &FrReport,
    g: &GroupSummary,
    dumps: &[FrDump],
    selected: Option<(u32, i64)>,
) -> (Option<(u32, i64)>, (Pos2, f32)) {
    let size = Vec2::new(LABEL_W + CELL * g.seqs.len() as f32, HEADER_H + CELL * g.members.len() as f32);
    let mut clicked = None;
    let mut origin = Pos2::ZERO;
    egui::ScrollArea::horizontal().id_salt(("fr_grid", &g.name)).show(ui, |ui| {
        let (rect, resp) = ui.allocate_exact_size(size, Sense::click());
        let painter = ui.painter_at(rect);
        origin = rect.min + Vec2::new(LABEL_W, HEADER_H);
        let font = egui::FontId::monospace(11.0);
        let text = ui.visuals().text_color();
        let at = |row: usize, col: usize| {
            Rect::from_min_size(
                Pos2::new(rect.left() + LABEL_W + CELL * col as f32, rect.top() + HEADER_H + CELL * row as f32),
                Vec2::splat(CELL),
            )
        };
        for (col, seq) in g.seqs.iter().enumerate() {
            let x = rect.left() + LABEL_W + CELL * (col as f32 + 0.5);
            painter.text(Pos2::new(x, rect.top()), egui::Align2::CENTER_TOP, seq.to_string(), font.clone(), text);
        }
        let mut hovered = None;
        for (row, &rank) in g.members.iter().enumerate() {
            let y = rect.top() + HEADER_H + CELL * (row as f32 + 0.5);
            painter.text(
                Pos2::new(rect.left() + 4.0, y),
                egui::Align2::LEFT_CENTER,
                format!("rank {rank}"),
                font.clone(),
                text,
            );
            let dump = dumps.iter().find(|d| d.rank == rank);
            for (col, &seq) in g.seqs.iter().enumerate() {
                let r = at(row, col).shrink(1.5);
                let c = cell(report, dump, &g.name, seq, rank);
                painter.rect_filled(r, 2.0, colour(c));
                if selected == Some((rank, seq)) {
                    painter.rect_stroke(r.expand(1.0), 2.0, Stroke::new(2.0, text), egui::StrokeKind::Outside);
                }
                if resp.hover_pos().is_some_and(|p| r.contains(p)) {
                    hovered = Some((rank, seq, c, dump));
                }
            }
        }
        if let Some((rank, seq, c, dump)) = hovered {
            let op = dump
                .and_then(|d| d.entries.iter().find(|e| e.group == g.name && !e.is_p2p && e.collective_seq_id == seq))
                .map(|e| e.op().to_string())
                .unwrap_or_else(|| "—".into());
            resp.clone().on_hover_text(format!("rank {rank}, seq {seq}: {op}\n{}", describe(c)));
            if resp.clicked() {
                clicked = Some((rank, seq));
            }
        }
    });
    (clicked, (origin, CELL))
}
