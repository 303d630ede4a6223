//! The window's layout as a user sees it while moving between tabs: the bottom panel keeps the
//! height it has (the user's, by dragging its edge), whatever the tab shows.

use crate::common::{app_with, harness};
use egui_kittest::kittest::Queryable;

/// The top edge of the bottom panel, read where a user sees it: the tab bar's "Notes" button.
fn tab_bar_top(h: &egui_kittest::Harness<'static, strobe_ui::StrobeApp>) -> f32 {
    h.get_by_label("Notes").rect().top()
}

#[test]
fn bottom_panel_height_does_not_follow_the_tab() {
    // two ranks: every tab has something to show, the Ranks and Load tabs a lot
    let mut h = harness(app_with(&["ddp_rank0.json.gz", "ddp_rank1.json.gz"]));
    let start = tab_bar_top(&h);
    for tab in ["Load summary", "Ranks", "Efficiency", "Area selection", "Notes", "Kernels"] {
        h.get_by_label(tab).click();
        h.run_steps(4);
        let top = tab_bar_top(&h);
        assert!((top - start).abs() < 0.5, "{tab}: the bottom panel moved from y={start} to y={top}");
    }
}

/// Every widget of every bottom tab has a name a screen reader can say, with two ranks open
/// (the kernel table then shows its trace picker). kittest checks this by itself only when
/// the app has settled, which depends on how fast the background analyses end; here it is
/// asked on every tab.
#[test]
fn every_bottom_tab_names_its_widgets() {
    let mut h = harness(app_with(&["ddp_rank0.json.gz", "ddp_rank1.json.gz"]));
    for tab in ["Kernels", "Load summary", "Ranks", "Efficiency", "Area selection", "Notes"] {
        h.get_by_label(tab).click();
        h.run_steps(4);
        h.check_accessibility();
    }
}
