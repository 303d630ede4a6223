//! `strobe --screenshot` in a real window: needs a display (CI runs it under Xvfb:
//! `Xvfb :99 & DISPLAY=:99 cargo test -p strobe --test screenshot`); without one it says so
//! and passes. Checks that lanes were drawn, not a blank window.

use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn has_display() -> bool {
    std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some()
}

/// Distinct colours and share of non-background pixels in the timeline area.
fn timeline_stats(png: &std::path::Path) -> (usize, f64, (u32, u32)) {
    let img = image::open(png).expect("decode png").to_rgba8();
    let (w, h) = img.dimensions();
    // the timeline sits left of the details pane and above the kernel table
    let (x0, x1, y0, y1) = (w * 18 / 100, w * 74 / 100, h * 14 / 100, h * 68 / 100);
    let bg = *img.get_pixel(x1 - 2, y1 - 2);
    let mut colours = std::collections::HashSet::new();
    let (mut fg, mut all) = (0u64, 0u64);
    for y in y0..y1 {
        for x in x0..x1 {
            let p = *img.get_pixel(x, y);
            colours.insert(p.0);
            all += 1;
            if p != bg {
                fg += 1;
            }
        }
    }
    (colours.len(), fg as f64 / all as f64, (w, h))
}

/// `strobe --screenshot DIR/name ARGS...` in a fresh temp dir (its own cache); the PNG's path.
fn screenshot(name: &str, args: &[PathBuf]) -> PathBuf {
    let dir = tempfile::tempdir().unwrap().keep();
    let out = dir.join(name);
    let st = Command::new(env!("CARGO_BIN_EXE_strobe"))
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .arg("--screenshot")
        .arg(&out)
        .args(args)
        .status()
        .expect("run strobe");
    assert!(st.success(), "strobe --screenshot failed: {st}");
    out
}

fn shot(name: &str, extra: &[&str]) -> PathBuf {
    let mut args: Vec<PathBuf> = extra.iter().map(PathBuf::from).collect();
    args.push(repo().join("sample-traces/ddp_rank0.json.gz"));
    args.push(repo().join("sample-traces/ddp_rank1.json.gz"));
    screenshot(name, &args)
}

#[test]
fn screenshot_whole_trace_draws_lanes() {
    if !has_display() {
        eprintln!("skipped: no display (run under Xvfb)");
        return;
    }
    let png = shot("whole.png", &[]);
    let (colours, fg, (w, h)) = timeline_stats(&png);
    assert!(w >= 800 && h >= 600, "{w}x{h}");
    assert!(colours >= 30, "only {colours} colours: blank timeline?");
    assert!(fg > 0.05, "only {:.1}% of the timeline drawn", fg * 100.0);
}

#[test]
fn screenshot_deep_zoom_draws_lanes() {
    if !has_display() {
        eprintln!("skipped: no display (run under Xvfb)");
        return;
    }
    let png = shot("deep.png", &["--view", "62..63.2"]);
    let (colours, fg, _) = timeline_stats(&png);
    assert!(colours >= 30, "only {colours} colours: blank timeline?");
    assert!(fg > 0.05, "only {:.1}% of the timeline drawn", fg * 100.0);
}

#[test]
fn screenshot_ncu_kernel_pane() {
    if !has_display() {
        eprintln!("skipped: no display (run under Xvfb)");
        return;
    }
    let out = screenshot(
        "kernel_pane.png",
        &["--select".into(), "cunn_SoftMax".into(), repo().join("sample-traces/ncu_raw.csv")],
    );
    // The SOL table and the roofline fill the main area (same region the timeline uses).
    let (colours, fg, _) = timeline_stats(&out);
    assert!(colours >= 30, "only {colours} colours: blank kernel pane?");
    assert!(fg > 0.05, "only {:.1}% of the pane drawn", fg * 100.0);
}

#[test]
fn screenshot_memory_pane() {
    if !has_display() {
        eprintln!("skipped: no display (run under Xvfb)");
        return;
    }
    let out = screenshot("memory_pane.png", &[repo().join("sample-traces/mem_oom.pickle")]);
    // The summary and the segment map fill the main area while no timeline is open.
    let (colours, fg, _) = timeline_stats(&out);
    // the active-memory timeline's bands: many colours
    assert!(colours >= 30, "only {colours} colours: blank memory pane?");
    assert!(fg > 0.05, "only {:.1}% of the pane drawn", fg * 100.0);
}

#[test]
fn screenshot_folder_of_ranks() {
    if !has_display() {
        eprintln!("skipped: no display (run under Xvfb)");
        return;
    }
    let dir = tempfile::tempdir().unwrap().keep();
    let ranks = dir.join("job");
    std::fs::create_dir_all(&ranks).unwrap();
    for i in 0..4 {
        let src = repo().join(format!("sample-traces/ddp_rank{}.json.gz", i % 2));
        std::fs::copy(src, ranks.join(format!("rank{i}.json.gz"))).unwrap();
    }
    let out = screenshot("ranks.png", &[ranks]);
    // four collapsed ranks' summary lanes in the timeline
    let (colours, fg, _) = timeline_stats(&out);
    assert!(colours >= 8, "only {colours} colours: no summary lanes?");
    assert!(fg > 0.02, "only {:.1}% of the timeline drawn", fg * 100.0);
    // the Ranks tab's heat map below: the slow step's cells red, the fast step's green (each
    // ~20 % of a step from the median step, strobe_ui::ranks::heat_map::heat)
    let img = image::open(&out).unwrap().to_rgba8();
    let (w, h) = img.dimensions();
    let (mut green, mut red) = (0, 0);
    for y in h * 70 / 100..h {
        for x in 0..w {
            let [r, g, b, _] = img.get_pixel(x, y).0.map(i32::from);
            if r > g + 50 && r > b + 50 {
                red += 1;
            } else if g > r + 30 && g > b + 20 {
                green += 1;
            }
        }
    }
    assert!(green > 500 && red > 500, "heat map cells: {green} green, {red} red pixels");
}
