//! Segment map: one row per segment (an expandable segment's adjacent mapped ranges are one
//! row), address-ordered, each block drawn to scale inside it (width ∝ bytes within the row),
//! coloured by state; the rounding waste of an allocated block (size − requested) is drawn
//! darker at its end. A segment of a pool other than the default one (a CUDA graph pool, a
//! MemPool) is outlined in the pool's colour and its free bytes drawn in that colour dimmed:
//! they are held for the pool, not free for ordinary allocations. It draws whatever allocator
//! state it is given — the final one, or the one the history scrubber replayed to.

use super::pool_style::{held_color, pool_color, swatch};
use egui::{Color32, Pos2, Rect, Sense, Stroke, Vec2};
use strobe_analysis::memory::pools::{pool_name, pool_origin};
use strobe_analysis::memory::{bytes, BlockView, RegionView};
use strobe_model::memory::{BlockState, MemorySnapshot};

#[derive(Default)]
pub struct SegmentMapView {
    /// Address of the block pinned by a click.
    pub pinned: Option<u64>,
    /// Every bar the full width (blocks still to scale within it); `None` = decide from the
    /// sizes: when the largest segment dwarfs the typical one, proportional bars of the small
    /// ones would be slivers.
    pub full_width: Option<bool>,
    /// Segments and blocks drawn in the last frame (tests read them).
    pub segments_drawn: usize,
    pub blocks_drawn: usize,
    /// Pools other than the default one named in the legend in the last frame (tests read it).
    pub pools_in_legend: Vec<(i64, i64)>,
    /// Segment rows drawn outlined in a pool's colour in the last frame.
    pub pool_segments_drawn: usize,
}

pub fn state_color(s: BlockState) -> Color32 {
    match s {
        BlockState::ActiveAllocated => Color32::from_rgb(66, 133, 244),
        BlockState::ActiveAwaitingFree => Color32::from_rgb(244, 180, 0),
        BlockState::Inactive => Color32::from_gray(70),
        BlockState::Unknown => Color32::from_rgb(120, 60, 60),
    }
}

const ROW_H: f32 = 16.0;

impl SegmentMapView {
    /// `highlight`: address of a block to outline (the history entry's block).
    pub fn ui(&mut self, ui: &mut egui::Ui, s: &MemorySnapshot, regions: &[RegionView], highlight: Option<u64>) {
        self.segments_drawn = 0;
        self.blocks_drawn = 0;
        let max = regions.iter().map(|r| r.size).max().unwrap_or(1).max(1);
        let sizes: Vec<u64> = regions.iter().map(|r| r.size).collect();
        let median = strobe_analysis::stats::median(&sizes).unwrap_or(1).max(1);
        let mut full = self.full_width.unwrap_or(max / median > 50);
        ui.horizontal(|ui| self.legend(ui, regions, &mut full));
        let (hovered, clicked) = self.segment_rows(ui, regions, highlight, full, max);
        if let Some(c) = clicked {
            self.pinned = if self.pinned == Some(c) { None } else { Some(c) };
        }
        ui.separator();
        self.details(ui, s, regions, hovered);
    }

    /// The title, the block states' colours and the full-width switch.
    fn legend(&mut self, ui: &mut egui::Ui, regions: &[RegionView], full: &mut bool) {
        ui.strong(format!("Segments ({}), address order", regions.len()));
        for (st, name) in [
            (BlockState::ActiveAllocated, "allocated"),
            (BlockState::ActiveAwaitingFree, "awaiting free"),
            (BlockState::Inactive, "free (cached)"),
        ] {
            let (r, _) = ui.allocate_exact_size(Vec2::splat(10.0), Sense::hover());
            ui.painter().rect_filled(r, 1.0, state_color(st));
            ui.label(name);
        }
        let mut pools: Vec<(i64, i64)> = regions.iter().map(|r| r.pool).filter(|&p| pool_color(p).is_some()).collect();
        pools.sort_unstable();
        pools.dedup();
        for &p in &pools {
            let c = pool_color(p).expect("filtered above");
            swatch(ui, held_color(c));
            ui.label(format!("held by {}", pool_name(p))).on_hover_text(pool_origin(p));
        }
        self.pools_in_legend = pools;
        if ui
            .checkbox(full, "full-width bars")
            .on_hover_text("each segment the full width; blocks to scale within it")
            .changed()
        {
            self.full_width = Some(*full);
        }
    }

    /// A bar per visible segment (to scale, or `full` width) with its blocks; returns the
    /// block under the pointer (segment, block) and the address of a block clicked.
    fn segment_rows(
        &mut self,
        ui: &mut egui::Ui,
        regions: &[RegionView],
        highlight: Option<u64>,
        full: bool,
        max: u64,
    ) -> (Option<(usize, usize)>, Option<u64>) {
        let mut hovered: Option<(usize, usize)> = None;
        let mut clicked: Option<u64> = None;
        let pinned = self.pinned;
        let (mut nseg, mut nblk, mut npool) = (0, 0, 0);
        egui::ScrollArea::vertical()
            .id_salt("mem_segment_map")
            .auto_shrink([false, true])
            .max_height((ui.available_height() - 90.0).max(60.0))
            .show_rows(ui, ROW_H + 2.0, regions.len(), |ui, range| {
                let width = ui.available_width().max(100.0);
                for ri in range {
                    let g = &regions[ri];
                    let (rect, resp) = ui.allocate_exact_size(Vec2::new(width, ROW_H), Sense::click());
                    let bar_w = if full { width - 4.0 } else { (width - 4.0) * (g.size as f64 / max as f64) as f32 };
                    let bar =
                        Rect::from_min_size(rect.min + Vec2::new(2.0, 1.0), Vec2::new(bar_w.max(2.0), ROW_H - 2.0));
                    let p = ui.painter_at(rect);
                    p.rect_filled(bar, 0.0, Color32::from_gray(40));
                    nseg += 1;
                    let scale = bar.width() as f64 / g.size.max(1) as f64;
                    let pool = pool_color(g.pool);
                    let hover_x = resp.hover_pos().map(|h| h.x);
                    for (bi, b) in g.blocks.iter().enumerate() {
                        let off = b.address.saturating_sub(g.address) as f64;
                        let r = paint_block(&p, b, bar, off, scale, pool.map(held_color));
                        let is_block = b.state != BlockState::Inactive;
                        if is_block && pinned == Some(b.address) {
                            p.rect_stroke(r, 0.0, Stroke::new(2.0, Color32::WHITE), egui::StrokeKind::Inside);
                        }
                        if highlight == Some(b.address) {
                            p.rect_stroke(r, 0.0, Stroke::new(2.0, Color32::YELLOW), egui::StrokeKind::Outside);
                        }
                        nblk += 1;
                        if let Some(hx) = hover_x {
                            if hx >= r.min.x && hx < r.max.x {
                                hovered = Some((ri, bi));
                                if resp.clicked() && is_block {
                                    clicked = Some(b.address);
                                }
                            }
                        }
                    }
                    if let Some(c) = pool {
                        p.rect_stroke(bar, 0.0, Stroke::new(1.5, c), egui::StrokeKind::Outside);
                        npool += 1;
                    }
                }
            });
        self.pool_segments_drawn = npool;
        self.segments_drawn = nseg;
        self.blocks_drawn = nblk;
        (hovered, clicked)
    }

    /// The hovered block, else the pinned one: its segment, sizes, state and stack.
    fn details(&self, ui: &mut egui::Ui, s: &MemorySnapshot, regions: &[RegionView], hovered: Option<(usize, usize)>) {
        let pinned_at = self.pinned.and_then(|a| {
            regions.iter().enumerate().find_map(|(ri, g)| {
                g.blocks.iter().position(|b| b.address == a && b.state != BlockState::Inactive).map(|bi| (ri, bi))
            })
        });
        let Some((ri, bi)) = hovered.or(pinned_at) else {
            ui.weak("Hover a block for its sizes and stack; click to pin it.");
            return;
        };
        let g = &regions[ri];
        let b = &g.blocks[bi];
        let pooled = g.pool != strobe_analysis::memory::pools::DEFAULT_POOL;
        let what = if b.state == BlockState::Inactive && pooled {
            format!("free gap 0x{:x}: {}, held for {} only", b.address, bytes(b.size), pool_name(g.pool))
        } else if b.state == BlockState::Inactive {
            format!("free gap 0x{:x}: {}", b.address, bytes(b.size))
        } else {
            format!(
                "block 0x{:x}: {} ({} requested, {} rounding), {:?}{}",
                b.address,
                bytes(b.size),
                bytes(b.requested),
                bytes(b.size - b.requested.min(b.size)),
                b.state,
                if Some((ri, bi)) == pinned_at { ", pinned" } else { "" }
            )
        };
        ui.label(format!(
            "segment 0x{:x} ({}, stream {}{}{}), {what}",
            g.address,
            bytes(g.size),
            g.stream,
            if g.expandable { ", expandable" } else { "" },
            if pooled { format!(", {}", pool_name(g.pool)) } else { String::new() }
        ));
        super::stack::ui(ui, s, b.stack, "segment_map", f32::INFINITY);
    }
}

/// One block of a segment's bar, `off` bytes into it at `scale` px a byte: its state's colour
/// (`held`, where free bytes belong to a pool other than the default one), the rounding past
/// what was requested darker, an edge where it is wide enough. Returns its rectangle.
fn paint_block(p: &egui::Painter, b: &BlockView, bar: Rect, off: f64, scale: f64, held: Option<Color32>) -> Rect {
    let x0 = bar.min.x + (off * scale) as f32;
    let x1 = bar.min.x + ((off + b.size as f64) * scale) as f32;
    let r = Rect::from_min_max(Pos2::new(x0, bar.min.y), Pos2::new(x1.max(x0 + 1.0), bar.max.y));
    let fill = match held {
        Some(c) if b.state == BlockState::Inactive => c,
        _ => state_color(b.state),
    };
    p.rect_filled(r, 0.0, fill);
    if b.state == BlockState::ActiveAllocated && b.requested < b.size {
        let xr = bar.min.x + ((off + b.requested as f64) * scale) as f32;
        if x1 - xr >= 1.0 {
            p.rect_filled(
                Rect::from_min_max(Pos2::new(xr, bar.min.y), Pos2::new(x1, bar.max.y)),
                0.0,
                Color32::from_rgb(30, 60, 120),
            );
        }
    }
    if x1 - x0 >= 3.0 {
        p.line_segment([Pos2::new(x0, bar.min.y), Pos2::new(x0, bar.max.y)], Stroke::new(1.0, Color32::BLACK));
    }
    r
}
