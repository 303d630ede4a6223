//! One fixed colour per attribution part (`PART_NAMES` order), the same in every step, trace
//! and theme family: the good part green, model-op losses amber, other GPU work blue,
//! communication red and orange, the pipeline violet, idle time in greys and muted hues. Each
//! colour has a darker twin for the light theme, so a bar reads on either background.

use egui::Color32;
use strobe_analysis::attribution::PART_NAMES;

const DARK: [Color32; PART_NAMES.len()] = [
    Color32::from_rgb(76, 175, 80),   // model at peak
    Color32::from_rgb(240, 180, 50),  // model-op inefficiency
    Color32::from_rgb(80, 150, 230),  // other GPU work
    Color32::from_rgb(230, 75, 65),   // comm wait
    Color32::from_rgb(245, 135, 60),  // comm transfer
    Color32::from_rgb(170, 110, 230), // pipeline bubble
    Color32::from_rgb(150, 160, 180), // host idle
    Color32::from_rgb(230, 120, 180), // sync idle
    Color32::from_rgb(170, 130, 95),  // launch overhead
    Color32::from_rgb(105, 105, 115), // other idle
];

const LIGHT: [Color32; PART_NAMES.len()] = [
    Color32::from_rgb(46, 140, 60),
    Color32::from_rgb(205, 140, 0),
    Color32::from_rgb(40, 110, 200),
    Color32::from_rgb(200, 45, 40),
    Color32::from_rgb(220, 100, 20),
    Color32::from_rgb(130, 70, 200),
    Color32::from_rgb(110, 120, 140),
    Color32::from_rgb(200, 70, 140),
    Color32::from_rgb(140, 95, 60),
    Color32::from_rgb(150, 150, 160),
];

/// The colour of part `i` (`PART_NAMES` order) on `dark` or light visuals.
pub fn part_color(i: usize, dark: bool) -> Color32 {
    let table = if dark { &DARK } else { &LIGHT };
    table.get(i).copied().unwrap_or(Color32::GRAY)
}

/// Text drawn on a part's colour: dark on the bright fills, white on the deep ones.
pub fn text_on(c: Color32) -> Color32 {
    let luma = 0.299 * c.r() as f32 + 0.587 * c.g() as f32 + 0.114 * c.b() as f32;
    if luma > 140.0 {
        Color32::from_rgb(20, 20, 24)
    } else {
        Color32::WHITE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No two parts share a colour, in either theme: the legend names each by its colour.
    #[test]
    fn every_part_has_its_own_colour() {
        for dark in [true, false] {
            let cs: Vec<Color32> = (0..PART_NAMES.len()).map(|i| part_color(i, dark)).collect();
            for (i, a) in cs.iter().enumerate() {
                for b in &cs[i + 1..] {
                    let d = (a.r() as i32 - b.r() as i32).abs()
                        + (a.g() as i32 - b.g() as i32).abs()
                        + (a.b() as i32 - b.b() as i32).abs();
                    assert!(d > 40, "{a:?} and {b:?} are too close (dark: {dark})");
                }
            }
        }
    }
}
