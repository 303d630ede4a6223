//! The harness every pane's test file shares: sample paths, the oracles' expected figures,
//! an app with files opened (as a user would: through the loader's opener, no cache), and a
//! kittest harness that runs the app's whole frame.
#![allow(dead_code)]

use egui_kittest::Harness;
use std::path::PathBuf;
use strobe_ui::workspace::TraceId;
use strobe_ui::{Settings, StrobeApp};

pub fn sample(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces").join(name)
}

/// tests/expected/NAME (written by the independent scripts in tests/expected/).
pub fn expected(name: &str) -> serde_json::Value {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/expected").join(name);
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// An app with `files` (under sample-traces/) opened on this thread, nothing cached.
pub fn app_with(files: &[&str]) -> StrobeApp {
    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    for f in files {
        app.open_blocking(&sample(f)).expect("load sample");
    }
    app
}

/// An app with `file` added as the loader hands it over: no figure computed (a test computes
/// them when it chooses, `Trace::wait_for_analyses`).
pub fn app_before_the_figures_of(file: &str) -> StrobeApp {
    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    app.add_trace(unanalysed(file));
    app
}

/// `file` (under sample-traces/) as the loader hands it over, no figure computed.
pub fn unanalysed(file: &str) -> strobe_ui::workspace::Trace {
    let opts = strobe_import::LoadOptions::in_memory();
    let Ok(strobe_import::Source::Trace(store)) = strobe_import::open(&sample(file), &opts) else {
        panic!("{file} is a trace")
    };
    strobe_ui::workspace::Trace::unanalysed(sample(file), *store, &ten_microseconds())
}

/// `app_with` plus the ranks pane's comparison and its clock alignment applied.
pub fn app_with_ranks(files: &[&str]) -> StrobeApp {
    let mut app = app_with(files);
    app.settle_ranks_blocking(&egui::Context::default());
    app
}

/// The app's whole frame in a 1600×1000 window, three frames run.
pub fn harness(app: StrobeApp) -> Harness<'static, StrobeApp> {
    harness_sized(app, [1600.0, 1000.0])
}

pub fn harness_sized(app: StrobeApp, size: [f32; 2]) -> Harness<'static, StrobeApp> {
    let mut h = Harness::builder().with_size(size).build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    h.run_steps(3);
    h
}

/// The id of the trace at position `i` (rank order).
pub fn trace_id(h: &Harness<'static, StrobeApp>, i: usize) -> TraceId {
    h.state().ws.traces[i].id
}

/// Steps the app until `done` holds (or 12 s pass).
pub fn step_until(h: &mut Harness<'static, StrobeApp>, done: impl Fn(&StrobeApp) -> bool) {
    for _ in 0..600 {
        h.step();
        if done(h.state()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The primary button pressed or released at `pos` (a drag is a press, moves, a release).
pub fn mouse_button(h: &Harness<'static, StrobeApp>, pos: egui::Pos2, pressed: bool) {
    h.event(egui::Event::PointerButton {
        pos,
        button: egui::PointerButton::Primary,
        pressed,
        modifiers: Default::default(),
    });
}

/// A mouse click at `p` as a user makes it: move there, press, release.
pub fn click_at(h: &mut Harness<'static, StrobeApp>, p: egui::Pos2) {
    h.event(egui::Event::PointerMoved(p));
    h.run_steps(1);
    for pressed in [true, false] {
        mouse_button(h, p, pressed);
        h.run_steps(1);
    }
    h.run_steps(2);
}

/// Drags the bottom panel's top edge (just above its tab bar) up by `dy` points, as a user
/// makes room for a long table.
pub fn raise_bottom_panel(h: &mut Harness<'static, StrobeApp>, dy: f32) {
    use egui_kittest::kittest::Queryable;
    let bar = h.get_by_label("Notes").rect();
    let edge = egui::pos2(bar.center().x + 300.0, bar.top() - 6.0);
    h.event(egui::Event::PointerMoved(edge));
    h.run_steps(1);
    mouse_button(h, edge, true);
    h.run_steps(1);
    for k in 1..=8 {
        h.event(egui::Event::PointerMoved(edge - egui::vec2(0.0, dy * k as f32 / 8.0)));
        h.run_steps(1);
    }
    mouse_button(h, edge - egui::vec2(0.0, dy), false);
    h.run_steps(2);
}

/// Figure settings with the default step rule and the 10 µs idle threshold.
pub fn ten_microseconds() -> strobe_ui::workspace::FigureSettings {
    strobe_ui::workspace::FigureSettings { idle_threshold_ns: 10_000, ..Default::default() }
}

/// egui_kittest's wgpu renderer (what `HarnessBuilder::wgpu` makes), or None where this
/// machine has no adapter: it panics then, so its creation is caught and the PNG snapshot
/// test that asked says it is skipped.
pub fn renderer(test: &str) -> Option<egui_kittest::wgpu::WgpuTestRenderer> {
    use std::io::Write;
    match std::panic::catch_unwind(egui_kittest::wgpu::WgpuTestRenderer::new) {
        Ok(r) => Some(r),
        Err(_) => {
            // straight to stderr, past the test harness's capture of a passing test's output
            let _ = writeln!(std::io::stderr(), "{test}: skipped: no renderer (wgpu found no adapter)");
            None
        }
    }
}
