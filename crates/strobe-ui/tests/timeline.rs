//! The timeline pane with egui_kittest: keys and clicks on two aligned DDP ranks, where each
//! trace's own clock is offset from the shared axis the view is on.

use egui_kittest::Harness;
use std::path::PathBuf;
use strobe_model::SpanKind;
use strobe_ui::commands::Command;
use strobe_ui::workspace::SpanRef;
use strobe_ui::{Settings, StrobeApp};

fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces").join(name)
}

/// ddp_rank0 + ddp_rank1 with the ranks pane's alignment applied (collective ends: rank 1 is
/// moved by -8394 ns, tests/expected/ddp.ranks.json).
fn aligned_ranks() -> Harness<'static, StrobeApp> {
    let mut app = StrobeApp::new(None, Settings::default());
    app.loader.no_cache = true;
    for f in ["ddp_rank0.json.gz", "ddp_rank1.json.gz"] {
        app.open_blocking(&sample(f)).expect("open sample");
    }
    app.ranks.update_blocking(&app.ws);
    app.apply_rank_offsets();
    let mut h =
        Harness::builder().with_size([1600.0, 1000.0]).build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    h.run_steps(3);
    h
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
    h.state_mut().apply(Command::SelectSpan(SpanRef { trace: 1, span }), &ctx);
    h.run_steps(1);
    h.key_press(egui::Key::F);
    h.run_steps(2);
    let tl = &h.state().timeline;
    let (w0, w1) = tl.view.window(tl.plot_width);
    assert!(w0 <= a && b <= w1, "span {a}..{b} (shared axis) not in the view {w0}..{w1}");
    assert!(w1 - w0 < 4 * (b - a).max(1_000), "zoomed onto the span: window {} ns for {} ns", w1 - w0, b - a);
}
