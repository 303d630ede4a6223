//! Colours of memory pools, shared by the summary's pool table and the segment map so a pool
//! reads the same in both. The default pool has none: its segments look as they always did.

use egui::Color32;
use strobe_analysis::memory::pools::DEFAULT_POOL;

const PALETTE: [Color32; 4] = [
    Color32::from_rgb(0, 172, 156),
    Color32::from_rgb(236, 122, 36),
    Color32::from_rgb(220, 60, 120),
    Color32::from_rgb(120, 180, 60),
];

/// The pool's colour (its segments' outline), `None` for the default pool. Fixed by the id, so
/// it does not change with what else the snapshot holds.
pub fn pool_color(pool: (i64, i64)) -> Option<Color32> {
    if pool == DEFAULT_POOL {
        return None;
    }
    let k = pool.0.wrapping_mul(31).wrapping_add(pool.1).rem_euclid(PALETTE.len() as i64);
    Some(PALETTE[k as usize])
}

/// Inactive bytes a pool holds: its colour, dimmed (reserved and free, but only for that pool).
pub fn held_color(c: Color32) -> Color32 {
    let dim = |v: u8| (v as u16 * 2 / 5 + 24) as u8;
    Color32::from_rgb(dim(c.r()), dim(c.g()), dim(c.b()))
}

/// A small square of `c`, inline with text.
pub fn swatch(ui: &mut egui::Ui, c: Color32) -> egui::Response {
    let (r, resp) = ui.allocate_exact_size(egui::Vec2::splat(10.0), egui::Sense::hover());
    ui.painter().rect_filled(r, 1.0, c);
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_pool_and_mempool_differ_and_default_has_none() {
        assert_eq!(pool_color((0, 0)), None);
        assert_ne!(pool_color((1, 0)), pool_color((0, 1)));
        assert!(pool_color((-5, i64::MIN)).is_some(), "hostile ids wrap, no panic");
    }
}
