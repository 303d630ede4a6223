//! Strobe's GUI. One module per pane (`timeline`, `kernel_table`, `details`, `search`,
//! `area`, `summary`, `file_browser`); `app` owns the workspace and the selection and applies
//! the commands panes emit once per frame. Views never parse files: `loader` opens every kind
//! of file (the importer's `open`) and runs the analyses (`strobe-analysis`) on its threads,
//! and the workspace holds what it made.

pub mod app;
pub mod area;
pub mod background;
pub mod bench;
pub mod collective_bandwidth;
pub mod collective_index;
pub mod commands;
pub mod details;
pub mod documents;
pub mod efficiency_pane;
pub mod figures;
pub mod file_browser;
pub mod flight_recorder_pane;
pub mod gaps_pane;
pub mod graph_details;
pub mod graph_table;
pub mod jobs;
pub mod kernel_detail;
pub mod kernel_gains;
pub mod kernel_sol;
pub mod kernel_table;
pub mod load_summary;
pub mod loader;
pub mod memory;
pub mod memory_chart;
pub mod name_line;
pub mod native_dialog;
pub mod notes;
pub mod op_table_pane;
pub mod panes;
pub mod pipeline;
pub mod ranks;
pub mod roofline_plot;
pub mod sample;
pub mod save_browser;
pub mod search;
pub mod session;
pub mod shortcuts;
pub mod step_view;
pub mod summary;
pub mod timeline;
pub mod trace_picker;
pub mod track_finder;
pub mod units;
pub mod view_ctx;
pub mod workspace;

pub use app::{Settings, StrobeApp};

use std::path::PathBuf;

/// How the viewer was asked to start.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Files to open; none opens the bundled sample trace.
    pub files: Vec<PathBuf>,
    pub cache_dir: Option<PathBuf>,
    /// Write a PNG of the window once loaded and laid out, then exit.
    pub screenshot: Option<PathBuf>,
    /// With `screenshot`: the window to show, in ms from the start of the trace(s).
    pub view_ms: Option<(f64, f64)>,
    /// With `screenshot`: select the kernel whose name contains this (highlight + its longest).
    pub select: Option<String>,
    /// Window size in points (default 1600×1000).
    pub size: Option<[f32; 2]>,
}

/// Runs the viewer until its window closes.
pub fn run(opts: RunOptions) -> anyhow::Result<()> {
    let files =
        if opts.files.is_empty() { vec![sample::materialize(opts.cache_dir.as_deref())?] } else { opts.files.clone() };
    let shot = opts.screenshot.clone();
    let size = opts.size.unwrap_or([1600.0, 1000.0]);
    let native = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default().with_title("Strobe").with_inner_size(size).with_drag_and_drop(true),
        persist_window: shot.is_none(),
        ..Default::default()
    };
    let state = opts.screenshot.clone().map(|p| app::ScreenshotState::new(p, opts.view_ms, opts.select.clone()));
    let done = state.as_ref().map(|s| s.done.clone());
    {
        let opts = opts.clone();
        let mut state = state;
        eframe::run_native(
            "Strobe",
            native,
            Box::new(move |cc| {
                if opts.screenshot.is_some() {
                    // a screenshot shows the default layout: panel sizes and tabs another
                    // session left in the user's app state must not change what it shows
                    cc.egui_ctx.memory_mut(|m| *m = egui::Memory::default());
                }
                let settings: Settings = if opts.screenshot.is_none() {
                    cc.storage.and_then(|s| eframe::get_value(s, "strobe_settings")).unwrap_or_default()
                } else {
                    Settings::default()
                };
                let last = session::Session::last_path().filter(|p| p.is_file());
                let restore = opts.files.is_empty() && opts.screenshot.is_none() && settings.restore_session;
                let mut app = StrobeApp::new(opts.cache_dir.clone(), settings);
                app.screenshot = state.take();
                match last.filter(|_| restore) {
                    // no files asked for: where the user left off
                    Some(p) => {
                        eprintln!("strobe: no file given: reopening the last session ({})", p.display());
                        app.open_files(vec![p], false, &cc.egui_ctx)
                    }
                    None => {
                        if opts.files.is_empty() {
                            eprintln!(
                                "strobe: no file given: showing the bundled sample trace ({}); `strobe FILE` opens yours",
                                files[0].display()
                            );
                            app.showing_sample(&files[0]);
                        }
                        app.open_files(files, false, &cc.egui_ctx)
                    }
                }
                Ok(Box::new(app))
            }),
        )
        .map_err(|e| anyhow::anyhow!("could not start the window: {e}"))?;
    }
    if let (Some(_), Some(done)) = (shot, done) {
        match done.lock().ok().and_then(|d| d.clone()) {
            Some(Ok(())) => {}
            Some(Err(e)) => anyhow::bail!("screenshot: {e}"),
            None => anyhow::bail!("screenshot: the window closed before a frame was captured"),
        }
    }
    Ok(())
}
