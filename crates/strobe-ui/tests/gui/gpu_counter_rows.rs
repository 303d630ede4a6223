//! A GPU's own sampled counters (a PyTorch `.pftrace`'s "GPU / Counters / <gpu>" tracks: SM
//! active, DRAM throughput) are drawn in that GPU's group, under its lanes, not in a group of
//! their own (tests/expected/pftrace_torch_train.pftrace.json names them).

use egui::{vec2, Pos2, Rect};
use strobe_ui::timeline::{GroupKey, RowKind, TimelineState, TimelineView, RULER_H};
use strobe_ui::{Settings, StrobeApp};

use crate::common::{expected, sample};

#[test]
fn a_gpus_sampled_counters_are_rows_of_its_group() {
    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    app.open_blocking(&sample("pftrace_torch_train.pftrace")).expect("open sample");
    let ws = &app.ws;
    let (id, st) = (ws.traces[0].id, &ws.traces[0].store);
    let mut tl = TimelineView::default();
    let state = TimelineState::default();
    tl.lay_out(&state, ws);
    tl.place(Rect::from_min_size(Pos2::ZERO, vec2(1600.0, tl.layout.content_h + RULER_H + 1.0)), state.label_w);
    let rows = tl.layout.rows.clone();
    let header = |k: GroupKey| rows.iter().position(|r| matches!(r.kind, RowKind::Header { key, .. } if key == k));
    let group_of = |at: usize| {
        let end = at
            + 1
            + rows[at + 1..]
                .iter()
                .position(|r| matches!(r.kind, RowKind::Header { .. }))
                .unwrap_or(rows.len() - at - 1);
        &rows[at + 1..end]
    };
    let counters = |rs: &[strobe_ui::timeline::Row]| -> Vec<String> {
        rs.iter()
            .filter_map(|r| match r.kind {
                RowKind::Counter { series, .. } => Some(st.counters[series].name.clone()),
                _ => None,
            })
            .collect()
    };
    let gpu = header(GroupKey::Gpu(id, 0)).expect("GPU 0's group");
    let in_gpu = counters(group_of(gpu));
    let want = expected("pftrace_torch_train.pftrace.json");
    for name in want["gpu_counters"].as_object().unwrap().keys() {
        assert!(in_gpu.contains(name), "{name} in GPU 0's group: {in_gpu:?}");
    }
    // after the GPU's lanes
    let g = group_of(gpu);
    let first_counter = g.iter().position(|r| matches!(r.kind, RowKind::Counter { .. })).unwrap();
    assert!(g[first_counter..].iter().all(|r| matches!(r.kind, RowKind::Counter { .. })), "counters come last");
    // and not again in the trace's Counters group
    if let Some(c) = header(GroupKey::Counters(id)) {
        let elsewhere = counters(group_of(c));
        assert!(want["gpu_counters"].as_object().unwrap().keys().all(|n| !elsewhere.contains(n)), "{elsewhere:?}");
    }
}
