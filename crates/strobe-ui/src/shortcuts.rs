//! Every key and mouse gesture, in one table: the `?` sheet draws it and docs/viewer.md
//! lists the same rows (a test keeps them in step).

/// (keys, what they do), in the order the sheet shows them.
pub const KEYS: &[(&str, &str)] = &[
    ("W / S", "zoom in / out at the pointer"),
    ("A / D", "pan left / right"),
    ("Ctrl + wheel (or pinch)", "zoom at the pointer"),
    ("wheel / drag", "scroll lanes / pan"),
    ("F", "fit the selected span and scroll to its row (or the area selection, or everything)"),
    (". / ,", "next / previous span on the selected span's lane (same depth)"),
    ("] / [", "follow the selected span's flow forward (launch to kernel) / back"),
    ("C", "outline the steps' critical paths on the timeline (View menu), or stop"),
    ("> / <", "next / previous span on the critical path (from the selected span, else from the window's left edge)"),
    ("M", "mark the time under the pointer (each mark shows its time and Δ from the previous)"),
    ("Shift + M", "add a named note at the pointer (named in the Notes tab)"),
    ("Shift + drag", "select an area: count and total per name per lane, pivot by name / lane / arg"),
    ("Ctrl + drag", "measure: snaps to span edges, shows the duration, copies it"),
    ("/ or Ctrl + F", "search (substring, or regex); Enter / Shift + Enter step through matches"),
    ("Ctrl + P", "find a track by name; pin it to the top"),
    ("drag the label column's edge", "widen or narrow the lane labels"),
    ("click a header", "fold / unfold a group"),
    ("double-click a span", "zoom to it"),
    ("right-click a span or a lane", "copy its name, find all of that name, pin the lane to the top or hide it"),
    ("Esc", "clear the selection; with nothing selected, or in the search box: end the search"),
    ("?", "this sheet"),
    ("Left / Right (memory pane)", "step the allocator history one entry (Shift: 100; Home / End)"),
    ("drag / wheel / double-click (memory timeline)", "brush-zoom / zoom / whole trace"),
];

/// The `?` sheet.
pub fn window(ctx: &egui::Context, open: &mut bool) {
    if !*open {
        return;
    }
    egui::Window::new("Keyboard and mouse").open(open).collapsible(false).default_width(560.0).show(ctx, |ui| {
        egui::Grid::new("shortcut_grid").num_columns(2).striped(true).show(ui, |ui| {
            for (k, what) in KEYS {
                ui.strong(*k);
                ui.label(*what);
                ui.end_row();
            }
        });
    });
}

#[cfg(test)]
mod tests {
    /// Every character of the sheet is in the fonts the window has (a missing glyph draws as
    /// an empty box): keys are spelled out where the fonts have no arrow.
    #[test]
    fn the_sheet_draws_with_the_bundled_fonts() {
        let ctx = egui::Context::default();
        // one frame loads the fonts; its font atlas upload is not needed here
        ctx.run_ui(Default::default(), |_| {}).textures_delta.clear();
        for (k, what) in super::KEYS {
            for font in [egui::TextStyle::Body.resolve(&ctx.global_style()), egui::FontId::proportional(14.0)] {
                let missing: String =
                    format!("{k}{what}").chars().filter(|c| !ctx.fonts_mut(|f| f.has_glyph(&font, *c))).collect();
                assert!(missing.is_empty(), "`{k}`: no glyph for {missing:?} in {font:?}");
            }
        }
    }

    #[test]
    fn docs_list_every_key() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/viewer.md")).unwrap();
        for (k, what) in super::KEYS {
            let row = format!("| {k} | {what} |");
            assert!(doc.contains(&row), "docs/viewer.md lacks the row `{row}`");
        }
    }
}
