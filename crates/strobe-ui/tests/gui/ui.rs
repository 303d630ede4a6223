//! Interaction tests with egui_kittest: the real app state, driven by clicks and keys, with
//! no display.

use crate::common::{app_with, harness, sample, step_until};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use std::path::PathBuf;
use strobe_ui::commands::Command;
use strobe_ui::{Settings, StrobeApp};

#[test]
fn opens_a_sample_and_draws_lanes() {
    let mut h = harness(app_with(&["ddp_rank0.json.gz"]));
    h.run_steps(2);
    let app = h.state();
    assert_eq!(app.ws.traces.len(), 1);
    assert!(app.timeline().stats.lanes_drawn >= 3, "lanes drawn: {:?}", app.timeline().stats);
    assert!(app.timeline().stats.items > 100, "items drawn: {:?}", app.timeline().stats);
    // the summary strip shows the report's headline idle % for GPU 0 (over the steps)
    let r = strobe_analysis::report::report(&app.ws.traces[0].store, 5);
    let idle = format!("idle {:.1}%", r.headline.devices[0].idle_pct);
    h.get_by_label(&idle);
    h.get_by_label(&r.headline.scope_text());
}

/// Steps the app until `n` traces are loaded (or 12 s pass).
fn wait_for_traces(h: &mut Harness<'static, StrobeApp>, n: usize) {
    for _ in 0..600 {
        h.step();
        if h.state().ws.traces.len() == n {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn async_loader_finishes() {
    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    let mut h =
        Harness::builder().with_size([1200.0, 800.0]).build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    let ctx = h.ctx.clone();
    h.state_mut().open_files(vec![sample("gpt_train.json.gz")], false, &ctx);
    wait_for_traces(&mut h, 1);
    assert_eq!(h.state().ws.traces.len(), 1, "errors: {:?}", h.state().errors());
}

#[test]
fn load_error_shows_in_window() {
    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    let mut h =
        Harness::builder().with_size([1200.0, 800.0]).build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    let ctx = h.ctx.clone();
    h.state_mut().open_files(vec![PathBuf::from("/nonexistent/trace.json")], false, &ctx);
    for _ in 0..200 {
        h.step();
        if !h.state().errors().is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    h.run_steps(2);
    assert_eq!(h.state().errors().len(), 1);
    h.get_by_label_contains("/nonexistent/trace.json");
}

#[test]
fn zoom_and_pan_keys_change_the_window() {
    let mut h = harness(app_with(&["gpt_train.json.gz"]));
    let w = h.state().timeline().plot_width;
    let before = h.state().timeline_state().view.window(w);
    for _ in 0..3 {
        h.key_press(egui::Key::W);
    }
    h.run_steps(2);
    let after_w = h.state().timeline_state().view.window(w);
    assert!(after_w.1 - after_w.0 < before.1 - before.0, "W zooms in: {before:?} -> {after_w:?}");
    h.key_press(egui::Key::S);
    h.run_steps(2);
    let after_s = h.state().timeline_state().view.window(w);
    assert!(after_s.1 - after_s.0 > after_w.1 - after_w.0, "S zooms out");
    h.key_press(egui::Key::D);
    h.run_steps(2);
    let after_d = h.state().timeline_state().view.window(w);
    assert!(after_d.0 > after_s.0, "D pans right");
    h.key_press(egui::Key::A);
    h.run_steps(2);
    let after_a = h.state().timeline_state().view.window(w);
    assert!(after_a.0 < after_d.0, "A pans left");
    // M marks a time
    h.key_press(egui::Key::M);
    h.run_steps(1);
    assert_eq!(h.state().timeline_state().marks.len(), 1);
}

/// Zoom and pan stop at the trace plus a tenth of it each side (a 4.6 s trace never shows
/// as a 401 s window), and Fit shows the recorded activity, not the profiler's own tail.
#[test]
fn zoom_and_pan_are_bounded_to_the_trace() {
    let mut h = harness(app_with(&["gpt_train.json.gz"]));
    let (a, b) = h.state().ws.extent().unwrap();
    // the extent is the activity's: the last GPU or CPU span's end, read from the trace here
    let st = &h.state().ws.traces[0].store;
    let last_real_end = (0..st.lanes.len() as u32)
        .filter(|&l| !matches!(&st.lanes[l as usize].kind, strobe_model::LaneKind::CpuThread { pid, .. } if strobe_model::profiler_pseudo_process(pid).is_some()))
        .map(|l| st.lane_index()[l as usize].max_end)
        .max()
        .unwrap();
    assert_eq!(b, last_real_end);
    let w = h.state().timeline().plot_width;
    for _ in 0..40 {
        h.key_press(egui::Key::S);
    }
    h.run_steps(2);
    let (w0, w1) = h.state().timeline_state().view.window(w);
    let margin = (b - a) / 10;
    assert!(w1 - w0 <= (b - a) + 2 * margin + 2_000, "zoomed out to {} ns for a {} ns trace", w1 - w0, b - a);
    for _ in 0..5 {
        h.key_press(egui::Key::W);
    }
    for _ in 0..200 {
        h.key_press(egui::Key::D);
    }
    h.run_steps(2);
    let (_, w1) = h.state().timeline_state().view.window(w);
    assert!(w1 <= b + margin + 2_000, "panned to {w1}, past the trace's end {b} + margin");
}

#[test]
fn search_highlights_and_steps() {
    let mut h = harness(app_with(&["ddp_rank0.json.gz"]));
    h.get_by_label("Search").focus();
    h.get_by_label("Search").type_text("ncclDevKernel");
    h.run_steps(2);
    let n = h.state().search().matches.len();
    assert_eq!(n, 30, "30 NCCL kernels in ddp_rank0 (strobe report)");
    assert!(h.state().search().highlight.active);
    h.get_by_label("30 matches");
    h.key_press(egui::Key::Enter);
    h.run_steps(3);
    let sel = h.state().sel.span.expect("Enter selects the first match");
    let st = &h.state().ws.traces[0].store;
    assert!(st.span_name(sel.span).starts_with("ncclDevKernel"));
    h.get_by_label("1 / 30 matches");
    // the selected match is in view
    let w = h.state().timeline().plot_width;
    let (a, b) = h.state().timeline_state().view.window(w);
    assert!(st.span_start(sel.span) >= a && st.span_end(sel.span) <= b);
}

#[test]
fn kernel_table_row_selects_and_details_show_it() {
    let mut h = harness(app_with(&["ddp_rank0.json.gz"]));
    let top = h.state().ws.traces[0].kernels()[0].name.clone();
    assert!(top.starts_with("ncclDevKernel_AllReduce"));
    // click the row's name cell
    h.get_by_label(&top).click();
    h.run_steps(3);
    let app = h.state();
    assert_eq!(app.sel.kernel.as_ref().map(|k| k.1.as_str()), Some(top.as_str()));
    let sel = app.sel.span.expect("jumps to the longest occurrence");
    let st = &app.ws.traces[0].store;
    assert_eq!(st.span_name(sel.span), top);
    let k = &app.ws.traces[0].kernels()[0];
    assert_eq!(st.span_end(sel.span) - st.span_start(sel.span), k.max_ns, "the longest occurrence");
    // details pane shows the kernel, its launch and the count
    h.get_by_label("Launched by");
    h.get_by_label("Kernel (all occurrences)");
    // the histogram of every occurrence: the kernel table's count, this one the longest
    h.get_by_label(&format!("All {} spans of this name", k.count));
    h.get_by_label_contains("this one is longer than 97 % of them");
    // the total shows in the table row and in the details pane
    assert!(h.get_all_by_label(&strobe_analysis::report::fmt_ns(k.total_ns)).count() >= 2);
}

#[test]
fn area_selection_lists_names() {
    let mut h = harness(app_with(&["ddp_rank0.json.gz"]));
    let (t0, t1) = h.state().ws.extent().unwrap();
    let id = h.state().ws.traces[0].id;
    let lanes: Vec<_> = (0..h.state().ws.traces[0].store.lanes.len() as u32).map(|l| (id, l)).collect();
    let ctx = h.ctx.clone();
    h.state_mut().apply(Command::AreaSelected { t0, t1, lanes }, &ctx);
    step_until(&mut h, |a| !a.area().busy());
    let rows = &h.state().area().rows;
    assert!(!rows.is_empty());
    let nccl: u64 = rows.iter().filter(|r| r.name.starts_with("ncclDevKernel_AllReduce")).map(|r| r.count).sum();
    assert_eq!(nccl, 30);
    let total: u64 = rows.iter().map(|r| r.count).sum();
    // pivot by name (a click, as a user does): one row per name, the same spans
    h.get_by_label("name").click();
    step_until(&mut h, |a| !a.area().busy());
    let rows = &h.state().area().rows;
    let names: std::collections::HashSet<&str> = rows.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(names.len(), rows.len(), "one row per name");
    assert_eq!(rows.iter().map(|r| r.count).sum::<u64>(), total);
    let nccl = rows.iter().find(|r| r.key.starts_with("ncclDevKernel_AllReduce")).unwrap();
    assert_eq!(nccl.count, 30);
    // by an arg: Kineto gives GPU work a "stream" arg; 30 events of the trace have
    // `args.stream == 17` (counted over the JSON with python: NCCL's 30 kernels)
    assert!(h.state().area().arg_keys.iter().any(|k| k == "stream"));
    h.state_mut().apply(Command::AreaPivot(strobe_ui::area::Pivot::Arg("stream".into())), &ctx);
    step_until(&mut h, |a| !a.area().busy());
    let rows = &h.state().area().rows;
    assert_eq!(rows.iter().map(|r| r.count).sum::<u64>(), total, "every span in some row, (none) included");
    let s17 = rows.iter().find(|r| r.key == "17").expect("a stream 17 row");
    assert_eq!(s17.count, 30, "{rows:?}");
}

#[test]
fn idle_breakdown_matches_report() {
    let app = app_with(&["ddp_rank0.json.gz", "ddp_rank1.json.gz"]);
    for t in &app.ws.traces {
        for g in t.gpu() {
            let d = t.idle().iter().find(|d| d.device == g.device).unwrap();
            assert_eq!(d.idle_ns, g.idle_ns, "gaps sum to report's idle");
            assert_eq!(d.host_wait_ns + d.kernel_wait_ns + d.other_ns, g.idle_ns);
        }
    }
}

#[test]
fn built_in_file_browser_opens_a_trace() {
    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    app.browser_mut().dir = sample("");
    app.browser_mut().show();
    let mut h =
        Harness::builder().with_size([1400.0, 900.0]).build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    h.run_steps(2);
    h.get_by_label_contains("gpt_train.json.gz").click();
    wait_for_traces(&mut h, 1);
    assert_eq!(h.state().ws.traces.len(), 1, "errors: {:?}", h.state().errors());
    assert!(!h.state().browser().open, "the browser closes after a pick");
    assert_eq!(h.state().settings.recent.len(), 1, "recent files remember it");
}

/// A trace cut short (a partial copy: half of the gzip stream) opens with what was read and
/// says so in the window for as long as it is open.
#[test]
fn truncated_trace_opens_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let gz = std::fs::read(sample("gpt_train.json.gz")).unwrap();
    let cut = dir.path().join("cut.json.gz");
    std::fs::write(&cut, &gz[..gz.len() / 2]).unwrap();
    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    app.open_blocking(&cut).expect("a cut trace opens");
    let mut h = harness(app);
    h.run_steps(2);
    let t = h.state().ws.traces[0].store.meta.load.truncated.clone().expect("marked truncated");
    assert!(t.events_read > 1000, "{t:?}");
    assert!(h.state().timeline().stats.items > 100, "what was read is drawn");
    h.get_by_label_contains(&format!("truncated at byte {}; {} events read", t.at_byte, t.events_read));
}

/// The memory water level of a `profile_memory=True` trace sits in its GPU's group, and its
/// peak label brings the moment of the peak into view.
#[test]
fn memory_water_level_peak_jumps_to_its_moment() {
    let mut h = harness(app_with(&["gpt_train.json.gz"]));
    h.run_steps(2);
    let peak = h.state().ws.traces[0].memory_peaks()[0].clone();
    assert_eq!(peak.device, 0);
    let rows = &h.state().timeline().layout.rows;
    let gpu = rows
        .iter()
        .position(
            |r| matches!(&r.kind, strobe_ui::timeline::RowKind::Header { label, .. } if label.starts_with("GPU 0")),
        )
        .unwrap();
    let mem = rows
        .iter()
        .position(|r| matches!(r.kind, strobe_ui::timeline::RowKind::MemoryLevel { ti: 0, device: 0 }))
        .expect("a water level row");
    let next_header = rows
        .iter()
        .skip(gpu + 1)
        .position(|r| matches!(r.kind, strobe_ui::timeline::RowKind::Header { .. }))
        .map(|k| k + gpu + 1)
        .unwrap_or(rows.len());
    assert!(mem > gpu && mem < next_header, "the row is in the GPU 0 group");
    // the label reads the peak the report computes (6695959552 bytes = 6.24 GiB in gpt_train)
    let label = format!("peak {:.2} GiB ▸", peak.peak_allocated_bytes.unwrap() as f64 / (1u64 << 30) as f64);
    h.get_by_label(&label).click();
    h.run_steps(3);
    let v = h.state().timeline_state().view;
    let (w0, w1) = v.window(h.state().timeline().plot_width);
    assert!(w0 <= peak.at_ns && peak.at_ns < w1, "peak at {} not in view {w0}..{w1}", peak.at_ns);
    assert!(w1 - w0 <= 2_000_001, "zoomed in: {}", w1 - w0);
}
