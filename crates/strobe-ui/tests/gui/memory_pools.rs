//! Memory pools in the memory pane: a snapshot whose inactive memory sits mostly in a CUDA graph
//! pool and a MemPool names them in the summary (a row per pool and stream, the held bytes, the
//! default pool's fragmentation) and in the segment map (legend, outlines, the hovered gap);
//! and its layout as a PNG snapshot. Figures come from tests/expected (the Python oracle).

use crate::common::{app_with, expected, harness};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use strobe_ui::app::BottomTab;
use strobe_ui::StrobeApp;

const FILE: &str = "mem_pools_synthetic.pickle";

fn oracle() -> serde_json::Value {
    expected("mem_pools_synthetic.memory.json")["devices"][0].clone()
}

#[test]
fn pools_are_named_in_the_summary_and_the_segment_map() {
    let h = harness(app_with(&[FILE]));
    let w = oracle();
    let pools = w["pools"].as_array().unwrap();
    let pooled_segments: u64 =
        pools.iter().filter(|p| p["pool"] != serde_json::json!([0, 0])).map(|p| p["segments"].as_u64().unwrap()).sum();
    {
        let p = h.state().memory().expect("memory pane");
        assert_eq!(p.summary.pools_shown, pools.len(), "a row per pool and stream");
        assert_eq!(p.summary.pool_notes_shown, 2, "held by pools, and the side stream");
        assert_eq!(p.segments.pools_in_legend, [(0, 1), (1, 0)]);
        assert_eq!(p.segments.pool_segments_drawn as u64, pooled_segments);
    }
    h.get_by_label("Pools");
    h.get_by_label("held by other pools");
    h.get_by_label("fragmentation (default pool)");
    let frag = format!("{:.3}", w["fragmentation"].as_f64().unwrap());
    h.get_by_label(&frag);
    h.get_by_label("CUDA graph pool (1,0)");
    h.get_by_label("MemPool (0,1)");
    h.get_by_label("held by CUDA graph pool (1,0)");
    h.get_by_label_contains(&format!(
        "not reusable by ordinary allocations, and not fragmentation; fragmentation of the default pool {frag}"
    ));
    assert!(h.query_by_label("fragmentation").is_none(), "the plain label is for a default pool alone");
}

#[test]
fn a_free_gap_of_a_graph_pool_says_it_is_held() {
    let mut h = harness(app_with(&[FILE]));
    // the graph pool's 128 MiB segment, all of it free
    let row = {
        let st = h.state().memory().unwrap().states[0].as_ref().unwrap();
        st.regions
            .iter()
            .position(|r| r.pool == (1, 0) && r.blocks.len() == 1 && r.size == 128 << 20)
            .expect("the graph pool's free segment")
    };
    let legend = h.get_by_label_contains("Segments (11)").rect();
    h.hover_at(egui::pos2(legend.min.x + 8.0, legend.max.y + 12.0 + 18.0 * row as f32));
    h.run_steps(2);
    h.get_by_label_contains("free gap");
    h.get_by_label_contains("128.00 MiB, held for CUDA graph pool (1,0) only");
    h.get_by_label_contains(", CUDA graph pool (1,0)),");
}

#[test]
fn a_default_pool_alone_keeps_its_plain_summary() {
    let h = harness(app_with(&["mem_oom.pickle"]));
    let p = h.state().memory().unwrap();
    assert_eq!((p.summary.pools_shown, p.summary.pool_notes_shown), (0, 0));
    assert!(p.segments.pools_in_legend.is_empty());
    assert_eq!(p.segments.pool_segments_drawn, 0);
    h.get_by_label("fragmentation");
    assert!(h.query_by_label("Pools").is_none());
}

#[test]
fn memory_pane_pool_snapshot() {
    let Some(r) = crate::common::renderer("memory_pane_pool_snapshot") else { return };
    let mut app = app_with(&[FILE]);
    app.set_bottom_tab(BottomTab::Memory);
    let mut h = Harness::builder()
        .with_size([1600.0, 1000.0])
        .renderer(r)
        .build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    h.run_steps(4);
    h.snapshot("memory_pools");
}
