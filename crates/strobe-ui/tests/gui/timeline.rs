//! The timeline pane with egui_kittest: keys and clicks on two aligned DDP ranks, where each
//! trace's own clock is offset from the shared axis the view is on.

use egui::{vec2, Pos2, Rect};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use strobe_model::{IdKey, LaneKind, SpanKind};
use strobe_ui::commands::{Command, Highlight, Selection};
use strobe_ui::timeline::frame::Draw;
use strobe_ui::timeline::hover::Hover;
use strobe_ui::timeline::{
    FrameDraw, FrameInput, GroupKey, Palette, Row, RowKind, TimelineState, TimelineView, LABEL_W, ROW_H, RULER_H,
};
use strobe_ui::workspace::{SpanRef, Workspace};
use strobe_ui::{Settings, StrobeApp};

use crate::common;
use crate::common::{expected, sample};

/// ddp_rank0 + ddp_rank1 with the ranks pane's alignment applied (collective ends: rank 1 is
/// moved by -8394 ns, tests/expected/ddp.ranks.json).
fn aligned_ranks() -> Harness<'static, StrobeApp> {
    common::harness(common::app_with_ranks(&["ddp_rank0.json.gz", "ddp_rank1.json.gz"]))
}

/// F on a selected span of an aligned rank zooms to where that span is drawn (the shared axis),
/// not to its times on the rank's own clock.
#[test]
fn f_on_an_aligned_rank_frames_the_selected_span() {
    let mut h = aligned_ranks();
    let off = h.state().ws.traces[1].offset_ns;
    assert_ne!(off, 0, "rank 1 is aligned");
    // a kernel much shorter than the offset: F's padding alone cannot hide a missed offset
    let st = &h.state().ws.traces[1].store;
    let span = (0..st.span_count() as u32)
        .find(|&s| {
            let d = st.span_end(s) - st.span_start(s);
            st.span_kind(s) == SpanKind::Kernel && d > 0 && d * 10 < off.abs()
        })
        .expect("a short kernel on rank 1");
    let (a, b) = (st.span_start(span) + off, st.span_end(span) + off);
    let ctx = h.ctx.clone();
    let id = h.state().ws.traces[1].id;
    h.state_mut().apply(Command::SelectSpan(SpanRef { trace: id, span }), &ctx);
    h.run_steps(1);
    // Details reads the span's start on the ruler's axis: shifted by the alignment, from the
    // workspace's start
    let origin = h.state().ws.extent().unwrap().0;
    h.get_by_label(&strobe_analysis::report::fmt_ns(a - origin));
    h.key_press(egui::Key::F);
    h.run_steps(2);
    let tl = &h.state().timeline();
    let (w0, w1) = h.state().timeline_state().view.window(tl.plot_width);
    assert!(w0 <= a && b <= w1, "span {a}..{b} (shared axis) not in the view {w0}..{w1}");
    assert!(w1 - w0 < 4 * (b - a).max(1_000), "zoomed onto the span: window {} ns for {} ns", w1 - w0, b - a);
}

/// A frame of `tl` prepared without a window: a pane 1600 px wide and tall enough for every
/// row, the pointer at `pointer`.
fn prepare_all(
    (tl, st): (&mut TimelineView, &TimelineState),
    ws: &Workspace,
    sel: &Selection,
    pointer: Option<Pos2>,
) -> FrameDraw {
    let full = Rect::from_min_size(Pos2::ZERO, vec2(1600.0, tl.layout.content_h + RULER_H + 1.0));
    tl.place(full, st.label_w);
    let input = FrameInput { full, pointer, char_w: 6.0, palette: Palette::of(&egui::Visuals::dark()) };
    tl.prepare(st, ws, sel, &Highlight::default(), &input)
}

/// The first phase alone (no window, no painter): gpt_train's rows against the oracles
/// (tests/expected/gpt_train.report.json: its GPU streams and memory water level;
/// gpt_train.chrome.json: each CPU thread's nesting depth), then what a whole-trace frame draws.
#[test]
fn prepare_lays_out_and_draws_gpt_train() {
    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    app.open_blocking(&sample("gpt_train.json.gz")).expect("open sample");
    let ws = &app.ws;
    let st = &ws.traces[0].store;
    let mut tl = TimelineView::default();
    let mut state = TimelineState::default();
    tl.lay_out(&state, ws);
    tl.place(Rect::from_min_size(Pos2::ZERO, vec2(1600.0, tl.layout.content_h + RULER_H + 1.0)), state.label_w);
    let rows = tl.layout.rows.clone();
    let lane_kind = |r: &Row| match r.kind {
        RowKind::Lane { lane, .. } => Some(st.lanes[lane as usize].kind.clone()),
        _ => None,
    };
    // GPU 0's group: its band row, one lane per stream in stream order, its water level
    let report = expected("gpt_train.report.json");
    let gpu = rows
        .iter()
        .position(|r| matches!(r.kind, RowKind::Header { key: GroupKey::Gpu(id, 0), .. } if id == ws.traces[0].id))
        .unwrap();
    let end = gpu + 1 + rows[gpu + 1..].iter().position(|r| matches!(r.kind, RowKind::Header { .. })).unwrap();
    let group = &rows[gpu + 1..end];
    assert!(matches!(group[0].kind, RowKind::Bands { ti: 0, device: 0 }));
    let streams: Vec<(i64, i64)> = group
        .iter()
        .filter_map(|r| match lane_kind(r) {
            Some(LaneKind::GpuStream { device, stream }) => Some((device, stream)),
            _ => None,
        })
        .collect();
    let want: Vec<(i64, i64)> = report["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["device"].as_i64().unwrap(), s["stream"].as_i64().unwrap()))
        .collect();
    assert_eq!(streams, want);
    assert!(!report["gpus"][0]["memory"].is_null());
    assert!(matches!(group.last().unwrap().kind, RowKind::MemoryLevel { ti: 0, device: 0 }));
    // a CPU thread's lane is as tall as its nesting
    let chrome = expected("gpt_train.chrome.json");
    let mut checked = 0;
    for t in chrome["threads"].as_array().unwrap() {
        let (Some(pid), Some(tid)) = (t["pid"].as_i64(), t["tid"].as_i64()) else { continue };
        let want_h = (t["max_depth"].as_u64().unwrap() + 1) as f32 * ROW_H;
        let r = rows
            .iter()
            .find(|r| lane_kind(r) == Some(LaneKind::CpuThread { pid: IdKey::Num(pid), tid: IdKey::Num(tid) }));
        if let Some(r) = r {
            assert!(
                r.h >= want_h && r.h < want_h + ROW_H,
                "thread {pid}/{tid}: {} px for depth {}",
                r.h,
                t["max_depth"]
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 2, "both python threads of pid 632 are lanes");

    // whole trace: every lane is drawn, at most one item per pixel of each of its depth rows
    state.fit_all(ws, tl.plot_width);
    let fd = prepare_all((&mut tl, &state), ws, &Selection::default(), None);
    let lanes = rows.iter().filter(|r| matches!(r.kind, RowKind::Lane { .. })).count();
    assert_eq!(fd.stats.lanes_drawn, lanes);
    let depth_rows: f32 =
        rows.iter().filter(|r| matches!(r.kind, RowKind::Lane { .. })).map(|r| (r.h / ROW_H).floor()).sum();
    assert!(
        fd.stats.items >= lanes && fd.stats.items as f32 <= depth_rows * (1600.0 - LABEL_W + 4.0),
        "{:?}",
        fd.stats
    );
    assert!(fd.hover.is_none(), "no pointer, nothing hovered");

    // deep on the longest kernel: it is drawn whole, labelled, and the pointer over it hits it
    let k = &ws.traces[0].kernels()[0];
    let span = (0..st.span_count() as u32)
        .filter(|&s| st.span_kind(s) == SpanKind::Kernel && st.span_name(s) == k.name)
        .max_by_key(|&s| st.span_end(s) - st.span_start(s))
        .unwrap();
    let r = SpanRef { trace: ws.traces[0].id, span };
    let sel = Selection { span: Some(r), ..Default::default() };
    tl.reveal(&mut state, ws, r);
    let p = tl.span_pos(&state, ws, r).expect("the kernel is on screen");
    let fd = prepare_all((&mut tl, &state), ws, &sel, Some(p));
    match fd.hover {
        Some(Hover::Item { ti: 0, span: s, item }) => {
            assert_eq!(s, span);
            assert_eq!(item.count, 1);
        }
        h => panic!("hovered {h:?}"),
    }
    let label = fd.items.iter().any(|(_, d)| matches!(d, Draw::Text(t) if t.text.chars().count() > 3 && k.name.starts_with(t.text.trim_end_matches('…'))));
    assert!(label, "the kernel's name is drawn on it");
}
