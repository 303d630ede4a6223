//! One frame of the timeline as data: `TimelineView::prepare` fills a `FrameDraw` (shapes in
//! paint order, text still to be laid out, the hovered item, the clickable links) without a
//! painter, fonts or input; `paint` hands it to egui.

use super::colors;
use super::hover::Hover;
use crate::commands::Command;
use egui::{Align2, Color32, FontId, Mesh, Pos2, Rect, Shape, Stroke, Ui};

/// The colours of the visuals the frame is drawn with.
#[derive(Clone, Copy, Debug)]
pub struct Palette {
    pub bg: Color32,
    pub grid: Color32,
    pub header: Color32,
    pub faint: Color32,
    pub text: Color32,
    pub strong: Color32,
    pub weak: Color32,
    pub separator: Color32,
    pub panel: Color32,
    /// The selected span's outline.
    pub selected: Color32,
    /// The selected span's flow arrows, and pipeline transfers (faint when not selected).
    pub flow: Color32,
    pub flow_faint: Color32,
    /// Marks and their labels.
    pub mark: Color32,
    /// The measure tool.
    pub measure: Color32,
    /// Counter lines and the allocated memory level.
    pub line: Color32,
    /// The critical path's outline.
    pub critical: Color32,
}

impl Palette {
    pub fn of(v: &egui::Visuals) -> Palette {
        Palette {
            bg: v.extreme_bg_color,
            grid: v.faint_bg_color.gamma_multiply(1.6),
            header: v.widgets.inactive.bg_fill,
            faint: v.faint_bg_color,
            text: v.text_color(),
            strong: v.strong_text_color(),
            weak: v.weak_text_color(),
            separator: v.widgets.noninteractive.bg_stroke.color,
            panel: v.panel_fill,
            // the accents are drawn over the plot's background: a light one needs them dark
            selected: if v.dark_mode { colors::SELECTED } else { colors::SELECTED_ON_LIGHT },
            flow: if v.dark_mode { Color32::WHITE } else { Color32::from_rgb(30, 30, 40) },
            flow_faint: if v.dark_mode {
                Color32::from_rgba_unmultiplied(230, 230, 240, 90)
            } else {
                Color32::from_rgba_unmultiplied(30, 30, 50, 110)
            },
            mark: if v.dark_mode { colors::MARK } else { colors::MARK_ON_LIGHT },
            measure: if v.dark_mode { colors::MEASURE } else { colors::MEASURE_ON_LIGHT },
            line: if v.dark_mode { colors::LINE } else { colors::LINE_ON_LIGHT },
            critical: if v.dark_mode { colors::CRITICAL } else { colors::CRITICAL_ON_LIGHT },
        }
    }
}

/// What `prepare` needs from the window: where the pane is, the pointer, the font's width.
#[derive(Clone, Copy, Debug)]
pub struct FrameInput {
    /// The whole pane: ruler on top, label column on the left, the plot.
    pub full: Rect,
    /// The pointer, when over the pane.
    pub pointer: Option<Pos2>,
    /// Width of one character of the 10-pt monospace font (lane and span labels).
    pub char_w: f32,
    pub palette: Palette,
}

impl FrameInput {
    pub fn new(ui: &Ui, full: Rect) -> FrameInput {
        let char_w = ui
            .fonts_mut(|f| {
                f.layout_no_wrap("0000000000".into(), FontId::monospace(11.0), Color32::WHITE).size().x / 10.0
            })
            .max(1.0);
        FrameInput { full, pointer: ui.input(|i| i.pointer.hover_pos()), char_w, palette: Palette::of(ui.visuals()) }
    }
}

/// The pane's parts on screen.
#[derive(Clone, Copy, Debug)]
pub struct Areas {
    pub full: Rect,
    pub ruler: Rect,
    /// Label column and plot, below the ruler.
    pub body: Rect,
    pub plot: Rect,
}

impl Areas {
    /// `label_w`: the label column's width (the user drags its edge).
    pub fn of(full: Rect, label_w: f32) -> Areas {
        let ruler = Rect::from_min_max(full.min, egui::pos2(full.max.x, full.min.y + super::RULER_H));
        let body = Rect::from_min_max(egui::pos2(full.min.x, ruler.max.y), full.max);
        let label_w = label_w.clamp(super::MIN_LABEL_W, (full.width() - 100.0).max(super::MIN_LABEL_W));
        let plot = Rect::from_min_max(egui::pos2(body.min.x + label_w, body.min.y), body.max);
        Areas { full, ruler, body, plot }
    }

    pub fn label_w(&self) -> f32 {
        self.plot.min.x - self.body.min.x
    }
}

/// Which clip rectangle a shape is drawn in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clip {
    /// The whole pane (labels, headers, ruler).
    Pane,
    /// The plot only (spans, series, flows).
    Plot,
}

/// A text still to be laid out by the painter's fonts.
#[derive(Clone, Debug)]
pub struct Text {
    pub pos: Pos2,
    pub align: Align2,
    pub text: String,
    pub font: FontId,
    pub color: Color32,
}

#[derive(Clone, Debug)]
pub enum Draw {
    Shape(Shape),
    Text(Text),
}

/// A clickable region drawn in the frame (the memory peak): its id salt, the accessible label
/// it reads as (a link), the tooltip and what a click asks for.
#[derive(Clone, Debug)]
pub struct Link {
    pub id: (&'static str, usize, i64),
    pub rect: Rect,
    pub label: Option<String>,
    pub tip: String,
    pub command: Command,
}

/// Counts from the last frame, for tests and the benchmark.
#[derive(Clone, Copy, Debug, Default)]
pub struct FrameStats {
    pub lanes_drawn: usize,
    /// Level-of-detail items drawn (a span, or a run of spans folded under a pixel).
    pub items: usize,
    pub folded: usize,
    pub labels: usize,
}

/// Everything one frame draws, in paint order, and what it found under the pointer.
#[derive(Debug, Default)]
pub struct FrameDraw {
    pub areas: Option<Areas>,
    pub items: Vec<(Clip, Draw)>,
    pub hover: Option<Hover>,
    pub links: Vec<Link>,
    pub stats: FrameStats,
}

impl FrameDraw {
    pub fn shape(&mut self, clip: Clip, s: impl Into<Shape>) {
        self.items.push((clip, Draw::Shape(s.into())));
    }

    pub fn text(
        &mut self,
        clip: Clip,
        pos: Pos2,
        align: Align2,
        text: impl Into<String>,
        font: FontId,
        color: Color32,
    ) {
        self.items.push((clip, Draw::Text(Text { pos, align, text: text.into(), font, color })));
    }

    pub fn rect_filled(&mut self, clip: Clip, r: Rect, c: Color32) {
        self.shape(clip, Shape::rect_filled(r, 0.0, c));
    }

    pub fn hline(&mut self, clip: Clip, x: egui::Rangef, y: f32, stroke: Stroke) {
        self.shape(clip, Shape::hline(x, y, stroke));
    }

    pub fn vline(&mut self, clip: Clip, x: f32, y: egui::Rangef, stroke: Stroke) {
        self.shape(clip, Shape::vline(x, y, stroke));
    }

    pub fn mesh(&mut self, clip: Clip, m: Mesh) {
        if !m.is_empty() {
            self.shape(clip, Shape::mesh(m));
        }
    }

    /// Hands the frame to egui's painter (text is laid out here).
    pub fn paint(self, ui: &Ui) {
        let Some(a) = self.areas else { return };
        let (pane, plot) = (ui.painter_at(a.full), ui.painter_at(a.plot));
        for (clip, d) in self.items {
            let p = if clip == Clip::Pane { &pane } else { &plot };
            match d {
                Draw::Shape(s) => {
                    p.add(s);
                }
                Draw::Text(t) => {
                    p.text(t.pos, t.align, t.text, t.font, t.color);
                }
            }
        }
    }
}
