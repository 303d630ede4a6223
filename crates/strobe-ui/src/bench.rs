//! The frame benchmark: builds one frame of the real timeline headlessly (egui context, no
//! window) for a 1920-px plot at whole-trace, mid and deep zoom, and reports per-frame CPU
//! time. `synthetic_store` makes a big in-memory trace shaped like a training step loop:
//! compute kernels, NCCL and copies on a GPU, ops with launch calls on a CPU thread.

use crate::commands::{Command, Highlight, Selection};
use crate::timeline::{FrameInput, FrameStats, GroupKey, TimelineState, TimelineView, LABEL_W};
use crate::workspace::{Trace, Workspace};
use std::time::Instant;
use strobe_analysis::stats;
use strobe_model::{CopyDir, IdKey, LaneKind, SourceFormat, SpanKind, TraceMeta};
use strobe_store::{SpanInput, Store, StoreBuilder};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn range(&mut self, a: i64, b: i64) -> i64 {
        a + (self.next() % (b - a).max(1) as u64) as i64
    }
}

/// An in-memory trace of about `n` spans.
pub fn synthetic_store(n: usize) -> Store {
    synthetic_store_to(n, strobe_store::Output::memory())
}

/// The same trace written to `out` (a file for traces too big to hold in memory twice; the
/// store is then mapped, as the viewer maps a real one).
pub fn synthetic_store_to(n: usize, out: strobe_store::Output) -> Store {
    let mut b = StoreBuilder::new(out).expect("start synthetic store");
    b.reserve_spans(n + 16);
    let streams: Vec<u32> =
        [7, 9, 11, 13].iter().map(|&s| b.lane(LaneKind::GpuStream { device: 0, stream: s })).collect();
    let s17 = b.lane(LaneKind::GpuStream { device: 0, stream: 17 });
    let cpus: Vec<u32> =
        [100, 101].iter().map(|&t| b.lane(LaneKind::CpuThread { pid: IdKey::Num(100), tid: IdKey::Num(t) })).collect();
    let kernel_names: Vec<u32> =
        (0..300).map(|i| b.intern(&format!("void synthetic_kernel_{i}<float, {}>(Params)", i * 7 % 13))).collect();
    let op_names: Vec<u32> = (0..60).map(|i| b.intern(&format!("aten::op_{i}"))).collect();
    let launch = b.intern("cudaLaunchKernel");
    let nccl = b.intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
    let memcpy = b.intern("Memcpy HtoD (Pinned -> Device)");
    let (c_kernel, c_op, c_rt, c_copy) =
        (b.intern("kernel"), b.intern("cpu_op"), b.intern("cuda_runtime"), b.intern("gpu_memcpy"));
    let mut r = Rng(0x9E3779B97F4A7C15);
    // each "op" makes 4 spans: op, launch (CPU), kernel (GPU); every 16th op also an NCCL/copy.
    let mut t_cpu = 0i64;
    let mut t_gpu = 0i64;
    let mut pushed = 0usize;
    let mut step = 0usize;
    while pushed < n {
        step += 1;
        let cpu = cpus[step % cpus.len()];
        let s7 = streams[(step / 3) % streams.len()];
        let op_d = r.range(2_000, 12_000);
        let k = r.range(0, kernel_names.len() as i64) as usize;
        let op = op_names[k % op_names.len()];
        b.push_span(SpanInput {
            lane: cpu,
            start: t_cpu,
            end: t_cpu + op_d,
            name: op,
            cat: c_op,
            kind: SpanKind::CpuOp,
            flags: 0,
            args: b"",
            correlation: 0,
            copy_dir: None,
        })
        .unwrap();
        let ls = t_cpu + op_d / 3;
        let corr = pushed as i64 + 1;
        b.push_span(SpanInput {
            lane: cpu,
            start: ls,
            end: ls + 3_000,
            name: launch,
            cat: c_rt,
            kind: SpanKind::CudaRuntime,
            flags: 0,
            args: b"",
            correlation: corr,
            copy_dir: None,
        })
        .unwrap();
        // kernel durations: mostly short, a long tail
        let kd = match r.next() % 10 {
            0 => r.range(20_000, 200_000),
            1..=3 => r.range(3_000, 20_000),
            _ => r.range(500, 3_000),
        };
        let ks = t_gpu.max(ls + 4_000);
        b.push_span(SpanInput {
            lane: s7,
            start: ks,
            end: ks + kd,
            name: kernel_names[k],
            cat: c_kernel,
            kind: SpanKind::Kernel,
            flags: 0,
            args: b"",
            correlation: corr,
            copy_dir: None,
        })
        .unwrap();
        t_gpu = ks + kd + r.range(200, 3_000);
        pushed += 3;
        if pushed.is_multiple_of(48) {
            let d = r.range(20_000, 900_000);
            b.push_span(SpanInput {
                lane: s17,
                start: ks,
                end: ks + d,
                name: nccl,
                cat: c_kernel,
                kind: SpanKind::Kernel,
                flags: 0,
                args: b"",
                correlation: 0,
                copy_dir: None,
            })
            .unwrap();
            pushed += 1;
        } else if pushed % 48 == 24 {
            let d = r.range(2_000, 40_000);
            b.push_span(SpanInput {
                lane: s17,
                start: ks,
                end: ks + d,
                name: memcpy,
                cat: c_copy,
                kind: SpanKind::Memcpy,
                flags: 0,
                args: b"{\"bytes\": 1048576}",
                correlation: 0,
                copy_dir: Some(CopyDir::HtoD),
            })
            .unwrap();
            pushed += 1;
        }
        t_cpu += op_d + r.range(500, 5_000);
        if t_cpu + 200_000 < t_gpu {
            t_cpu = t_gpu - 200_000; // the CPU runs ahead of the GPU by a bounded queue
        }
    }
    let meta = TraceMeta::new(SourceFormat::Chrome, "synthetic");
    match b.finish(&meta).expect("build synthetic store") {
        strobe_store::Built::Memory(bytes) => Store::from_bytes(bytes).expect("open synthetic store"),
        strobe_store::Built::File(p) => Store::open(&p).expect("open synthetic store"),
    }
}

#[derive(Clone, Debug)]
pub struct FrameTiming {
    pub zoom: String,
    pub window_ns: i64,
    pub median_ms: f64,
    pub p90_ms: f64,
    pub max_ms: f64,
    /// Median of tessellating the frame's shapes into triangles (also CPU, before the GPU).
    pub tessellate_median_ms: f64,
    /// Median of the frame's first phase alone (`TimelineView::prepare`: no painter, no fonts).
    pub prepare_median_ms: f64,
    pub items: usize,
    pub folded: usize,
    pub labels: usize,
}

/// A headless egui context and what every frame of a benchmark is drawn with.
struct Rig<'a> {
    ctx: egui::Context,
    screen: egui::Rect,
    ws: &'a Workspace,
    sel: Selection,
    hl: Highlight,
    /// The view state the app would hold: the timeline's moves (`Command::SetView`) land here.
    st: TimelineState,
    sender: crate::commands::CommandSender,
    /// What `prepare` is handed in the timeline's frames (taken from a first frame).
    input: Option<FrameInput>,
}

/// One frame's times in ms.
struct Times {
    /// The whole frame: layout, input, prepare, paint (egui's shapes).
    build: f64,
    tessellate: f64,
}

impl<'a> Rig<'a> {
    fn new(ws: &'a Workspace, plot_width: f32) -> Rig<'a> {
        let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(plot_width + LABEL_W + 16.0, 1080.0));
        Rig {
            ctx: egui::Context::default(),
            screen,
            ws,
            sel: Selection::default(),
            hl: Highlight::default(),
            st: TimelineState::default(),
            sender: crate::commands::command_channel().0,
            input: None,
        }
    }

    fn frame(&mut self, tl: &mut TimelineView) -> Times {
        let input = egui::RawInput { screen_rect: Some(self.screen), ..Default::default() };
        let mut cmds: Vec<Command> = Vec::new();
        let want_input = self.input.is_none();
        let mut got = None;
        let t0 = Instant::now();
        let mut o = self.ctx.run_ui(input, |ui| {
            egui::CentralPanel::default().show(ui, |ui| {
                if want_input {
                    got = Some(FrameInput::new(ui, ui.available_rect_before_wrap()));
                }
                let shared = crate::view_ctx::Shared {
                    ws: self.ws,
                    sel: &self.sel,
                    highlight: &self.hl,
                    state: &self.st,
                    sender: &self.sender,
                };
                tl.ui(ui, &mut crate::view_ctx::ViewCtx::new(shared, &mut cmds))
            });
        });
        let build = t0.elapsed().as_secs_f64() * 1e3;
        for c in cmds {
            if let Command::SetView { view, scroll_y, .. } = c {
                (self.st.view, self.st.scroll_y, self.st.fit_pending) = (view, scroll_y, false);
            }
        }
        let t1 = Instant::now();
        // no painter here to upload textures to
        o.textures_delta.clear();
        std::hint::black_box(self.ctx.tessellate(o.shapes, o.pixels_per_point));
        let tessellate = t1.elapsed().as_secs_f64() * 1e3;
        self.input = self.input.or(got);
        Times { build, tessellate }
    }

    /// `frames` frames, panning a pixel after each: their times and the last frame's stats;
    /// then `prepare` alone over the same frames (apart, so it warms nothing for the others).
    fn pan_frames(&mut self, tl: &mut TimelineView, frames: usize) -> (Vec<Times>, Vec<f64>, FrameStats) {
        let start = self.st.view;
        let mut out = Vec::with_capacity(frames);
        let mut stats = tl.stats;
        for _ in 0..frames {
            out.push(self.frame(tl));
            stats = tl.stats;
            self.st.view.t0 += self.st.view.npp; // pan one pixel
        }
        let end = self.st.view;
        self.st.view = start;
        let mut prepare = Vec::with_capacity(frames);
        if let Some(fi) = self.input {
            for _ in 0..frames {
                let t = Instant::now();
                let fd = std::hint::black_box(tl.prepare(&self.st, self.ws, &self.sel, &self.hl, &fi));
                prepare.push(t.elapsed().as_secs_f64() * 1e3);
                drop(fd);
                self.st.view.t0 += self.st.view.npp;
            }
        }
        self.st.view = end;
        (out, prepare, stats)
    }
}

/// (median, p90, max) of one of the times.
fn spread(times: &[Times], f: impl Fn(&Times) -> f64) -> (f64, f64, f64) {
    stats::median_p90_max(&times.iter().map(f).collect::<Vec<f64>>())
}

/// Builds `frames` frames of the timeline at each zoom (whole trace, mid, 2 ms, deep) with a
/// `plot_width`-pixel plot, panning a pixel per frame; returns timings.
pub fn frame_bench(store: Store, plot_width: f32, frames: usize) -> Vec<FrameTiming> {
    let trace = Trace::new("synthetic".into(), store, &Default::default());
    // the frames are measured alone, with every row the figures add (bands, steps)
    trace.wait_for_analyses();
    let (t_min, t_max) = (trace.t_min, trace.t_max);
    let mut ws = Workspace::default();
    ws.add_trace(trace);
    let mut rig = Rig::new(&ws, plot_width);
    let mut tl = TimelineView::default();
    let span = t_max - t_min;
    let mid_c = t_min + span / 2;
    let zooms: Vec<(String, i64, i64)> = vec![
        ("whole trace".into(), t_min, t_max),
        ("mid (1/256 of trace)".into(), mid_c - span / 512, mid_c + span / 512),
        ("2 ms".into(), mid_c - 1_000_000, mid_c + 1_000_000),
        ("deep (50 µs)".into(), mid_c - 25_000, mid_c + 25_000),
    ];
    let mut out = Vec::new();
    // warm up fonts and layout
    rig.st.fit_pending = true;
    for _ in 0..3 {
        rig.frame(&mut tl);
    }
    for (label, a, b) in zooms {
        rig.st.view.origin = t_min;
        rig.st.view.fit(a, b, tl.plot_width);
        let (times, prepare, stats) = rig.pan_frames(&mut tl, frames.max(1));
        let (median_ms, p90_ms, max_ms) = spread(&times, |t| t.build);
        out.push(FrameTiming {
            zoom: label,
            window_ns: b - a,
            median_ms,
            p90_ms,
            max_ms,
            tessellate_median_ms: spread(&times, |t| t.tessellate).0,
            prepare_median_ms: stats::median(&prepare).unwrap_or(0.0),
            items: stats.items,
            folded: stats.folded,
            labels: stats.labels,
        });
    }
    out
}

#[derive(Clone, Debug)]
pub struct WorkspaceFrameTiming {
    pub situation: String,
    /// Rows laid out (headers, bands, lanes, counters) over all traces.
    pub rows: usize,
    pub median_ms: f64,
    pub p90_ms: f64,
    pub max_ms: f64,
    pub tessellate_median_ms: f64,
    pub prepare_median_ms: f64,
    pub lanes_drawn: usize,
    pub items: usize,
}

/// Frames of the timeline over a workspace of many open traces (one per rank), with a
/// `plot_width`-pixel plot, whole-trace view: every trace expanded (scrolled to the top, then
/// to the middle of the rows) and every trace collapsed to its header, panning a pixel per
/// frame. Same frame as `frame_bench` builds: the real `TimelineView::ui` in a headless egui
/// context, then tessellated.
pub fn workspace_frame_bench(ws: &Workspace, plot_width: f32, frames: usize) -> Vec<WorkspaceFrameTiming> {
    if ws.traces.is_empty() {
        return Vec::new();
    }
    let mut rig = Rig::new(ws, plot_width);
    let mut out = Vec::new();
    for (label, collapse, scroll_mid) in [
        ("whole trace, every rank expanded, top", false, false),
        ("whole trace, every rank expanded, middle", false, true),
        ("whole trace, every rank collapsed", true, false),
    ] {
        let mut tl = TimelineView::default();
        rig.st = TimelineState::default();
        if collapse {
            rig.st.collapsed.extend(ws.traces.iter().map(|t| GroupKey::Trace(t.id)));
        }
        for _ in 0..3 {
            rig.frame(&mut tl); // fonts, layout, the fit
        }
        if scroll_mid {
            rig.st.scroll_y = tl.layout.content_h / 2.0;
        }
        let (times, prepare, stats) = rig.pan_frames(&mut tl, frames.max(1));
        let (median_ms, p90_ms, max_ms) = spread(&times, |t| t.build);
        out.push(WorkspaceFrameTiming {
            situation: label.into(),
            rows: tl.layout.rows.len(),
            median_ms,
            p90_ms,
            max_ms,
            tessellate_median_ms: spread(&times, |t| t.tessellate).0,
            prepare_median_ms: stats::median(&prepare).unwrap_or(0.0),
            lanes_drawn: stats.lanes_drawn,
            items: stats.items,
        });
    }
    out
}

/// The calling thread's CPU time so far (ns), from Linux's /proc/thread-self/schedstat (its
/// first field is the time spent running, in ns); None elsewhere.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Frame times of the whole app while files open (`open_frames_bench`).
#[derive(Clone, Debug)]
pub struct OpenFrames {
    /// Frames while the loader worked, and after it finished.
    pub during: Vec<f64>,
    pub after: Vec<f64>,
    /// The UI thread's CPU time of the same frames (ms; empty where the OS can't say): on a
    /// busy machine wall time includes waiting for a core, CPU time is the frame's own work.
    pub during_cpu: Vec<f64>,
    pub after_cpu: Vec<f64>,
    /// From `open_files` to the loader idle (s); None when it timed out.
    pub load_s: Option<f64>,
    /// From `open_files` to the end of the first frame that drew an opened document (a
    /// trace's timeline, a snapshot's memory pane): the time to first frame a user waits.
    pub first_frame_s: Option<f64>,
    /// From `open_files` to the end of the first frame that drew every trace's overview
    /// (GPU time, idle breakdown, kernels, steps: what arrives behind the first frame); None
    /// without traces.
    pub overview_s: Option<f64>,
}

/// One frame of the whole app on `screen`, as eframe draws it (the app's `frame`, then
/// tessellation), `t0` its clock's origin: its wall time and the UI thread's CPU time in ms.
fn app_frame(ctx: &egui::Context, app: &mut crate::StrobeApp, screen: egui::Rect, t0: Instant) -> (f64, Option<f64>) {
    let f0 = Instant::now();
    let c0 = thread_cpu_ns();
    let input =
        egui::RawInput { screen_rect: Some(screen), time: Some(t0.elapsed().as_secs_f64()), ..Default::default() };
    let mut o = ctx.run_ui(input, |ui| app.frame(ui));
    o.textures_delta.clear();
    std::hint::black_box(ctx.tessellate(o.shapes, o.pixels_per_point));
    let cpu = c0.zip(thread_cpu_ns()).map(|(a, b)| b.saturating_sub(a) as f64 / 1e6);
    (f0.elapsed().as_secs_f64() * 1e3, cpu)
}

/// Opens `files` in a headless `StrobeApp` (a 1920×1080 screen) and runs its frames at
/// `hz` — the app's own `frame` then tessellation, as eframe would — while the loader works
/// on its threads and for `after` frames once it is done (the panes' first frames over the new
/// document, where rasters and layouts are made). Every frame's CPU time in ms.
pub fn open_frames_bench(
    files: Vec<std::path::PathBuf>,
    cache_dir: Option<std::path::PathBuf>,
    hz: f64,
    after: usize,
    timeout: std::time::Duration,
) -> OpenFrames {
    let ctx = egui::Context::default();
    let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1920.0, 1080.0));
    let mut app = crate::StrobeApp::new(cache_dir, crate::Settings::default());
    let t0 = Instant::now();
    app.open_files(files, false, &ctx);
    let period = std::time::Duration::from_secs_f64(1.0 / hz.max(1.0));
    let mut out = OpenFrames {
        during: Vec::new(),
        after: Vec::new(),
        during_cpu: Vec::new(),
        after_cpu: Vec::new(),
        load_s: None,
        first_frame_s: None,
        overview_s: None,
    };
    loop {
        let f0 = Instant::now();
        // there before the frame is built, so this frame draws it
        let overview_before = !app.ws.traces.is_empty() && app.ws.traces.iter().all(|t| t.derived.overview_ready());
        let (ms, cpu_ms) = app_frame(&ctx, &mut app, screen, t0);
        let (wall, cpu) = match out.load_s {
            None => (&mut out.during, &mut out.during_cpu),
            Some(_) => (&mut out.after, &mut out.after_cpu),
        };
        wall.push(ms);
        cpu.extend(cpu_ms);
        let ws = &app.ws;
        if out.first_frame_s.is_none() && (!ws.traces.is_empty() || ws.memory.is_some() || ws.ncu.is_some()) {
            // this frame was built from the document: it is on screen once tessellated
            out.first_frame_s = Some(t0.elapsed().as_secs_f64());
        }
        if out.overview_s.is_none() && overview_before {
            out.overview_s = Some(t0.elapsed().as_secs_f64());
        }
        if out.load_s.is_none() && !app.loader.busy() {
            out.load_s = Some(t0.elapsed().as_secs_f64());
        }
        let overview_due = out.overview_s.is_none() && !app.ws.traces.is_empty();
        if (out.after.len() >= after && !overview_due) || t0.elapsed() > timeout {
            break;
        }
        std::thread::sleep(period.saturating_sub(f0.elapsed()));
    }
    // the analyses thread goes on past the frames measured (the per-op figures of a 1 GB
    // trace take seconds): finished here, so a next run does not share the cores with it
    for t in &app.ws.traces {
        t.wait_for_analyses();
    }
    out
}

/// The ranks pane's heat map alone, headless, in a `size` window: `frames` frames, each
/// scrolled to the next `step` ranks down (wrapping), as a user paging through a thousand
/// ranks. Per frame: (build, tessellate) in ms; the first 3 frames (fonts) are left out.
pub fn heat_map_bench(
    report: strobe_analysis::ranks::report::MultiRankReport,
    size: (f32, f32),
    frames: usize,
    step: usize,
) -> Vec<(f64, f64)> {
    let n = report.ranks.len().max(1);
    let c = crate::ranks::Computed {
        heat: crate::ranks::heat_map::HeatIndex::new(&report),
        trace_of_rank: vec![None; report.ranks.len()],
        diff: None,
        from_summaries: true,
        report,
        pipeline: None,
    };
    let ctx = egui::Context::default();
    let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(size.0, size.1));
    let mut metric = crate::ranks::Metric::StepTime;
    let mut out = Vec::with_capacity(frames);
    for f in 0..frames + 3 {
        let input = egui::RawInput { screen_rect: Some(screen), ..Default::default() };
        let t0 = Instant::now();
        let mut o = ctx.run_ui(input, |ui| {
            egui::CentralPanel::default().show(ui, |ui| {
                std::hint::black_box(crate::ranks::heat_map::ui(ui, &c, &mut metric, Some(f * step % n)));
            });
        });
        let build = t0.elapsed().as_secs_f64() * 1e3;
        let t1 = Instant::now();
        o.textures_delta.clear();
        std::hint::black_box(ctx.tessellate(o.shapes, o.pixels_per_point));
        if f >= 3 {
            out.push((build, t1.elapsed().as_secs_f64() * 1e3));
        }
    }
    out
}

/// Frame times of the whole app while a new step rule is applied (`step_rule_frames_bench`).
pub struct StepRuleFrames {
    /// Each frame's wall and UI-thread CPU time (ms) from the change until its figures are in.
    pub wall: Vec<f64>,
    pub cpu: Vec<f64>,
    /// From the change to the first frame with every trace's steps, their anomalies and the
    /// per-op figures found again (s); None when it timed out.
    pub settle_s: Option<f64>,
}

/// Opens `files` in a headless `StrobeApp` (1920×1080), waits for every figure, then sets
/// the step rule to `pattern` (View ▸ Steps) and runs the app's frames at `hz` until the
/// figures under it are in: what a user sees while the steps are found again.
pub fn step_rule_frames_bench(
    files: Vec<std::path::PathBuf>,
    cache_dir: Option<std::path::PathBuf>,
    patterns: &[&str],
    hz: f64,
    timeout: std::time::Duration,
) -> Vec<StepRuleFrames> {
    let ctx = egui::Context::default();
    let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1920.0, 1080.0));
    let mut app = crate::StrobeApp::new(cache_dir, crate::Settings::default());
    let t0 = Instant::now();
    let frame = |app: &mut crate::StrobeApp| app_frame(&ctx, app, screen, t0);
    let settled = |app: &crate::StrobeApp| {
        !app.loader.busy() && !app.ws.traces.is_empty() && app.ws.traces.iter().all(|t| !t.derived.pending())
    };
    app.open_files(files, false, &egui::Context::default());
    while !settled(&app) && t0.elapsed() < timeout {
        frame(&mut app);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let period = std::time::Duration::from_secs_f64(1.0 / hz.max(1.0));
    let mut out = Vec::new();
    for p in patterns {
        let c0 = Instant::now();
        app.push(crate::commands::Command::SetStepPattern(p.to_string()));
        let mut r = StepRuleFrames { wall: Vec::new(), cpu: Vec::new(), settle_s: None };
        loop {
            let f0 = Instant::now();
            let (ms, cpu) = frame(&mut app);
            r.wall.push(ms);
            r.cpu.extend(cpu);
            if settled(&app) {
                r.settle_s = Some(c0.elapsed().as_secs_f64());
                break;
            }
            if c0.elapsed() > timeout {
                break;
            }
            std::thread::sleep(period.saturating_sub(f0.elapsed()));
        }
        out.push(r);
    }
    out
}
