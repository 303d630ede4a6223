//! The memory pane with egui_kittest: open a snapshot pickle, see the summary, the
//! OOM verdict and the segment map.

use crate::common::{app_with, click_at, harness, mouse_button, sample};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use strobe_ui::app::BottomTab;
use strobe_ui::{Settings, StrobeApp};

#[test]
fn oom_snapshot_opens_in_the_memory_pane() {
    let h = harness(app_with(&["mem_oom.pickle"]));
    {
        let app = h.state();
        assert!(app.ws.traces.is_empty(), "a snapshot is not a timeline");
        assert_eq!(app.bottom_tab(), BottomTab::Memory);
        let p = app.memory().expect("memory pane");
        assert_eq!(app.ws.memory.as_ref().expect("snapshot document").report.devices.len(), 1);
        assert_eq!(p.segments.segments_drawn.min(1), 1, "segment rows drawn");
        assert!(p.segments.blocks_drawn > 0);
        assert_eq!(p.summary.ooms_shown, 1);
    }
    h.get_by_label("OOM at entry 4354: process_limit");
    h.get_by_label("peak reserved");
    h.get_by_label("Hover a block for its sizes and stack; click to pin it.");
}

#[test]
fn multi_device_snapshot_switches_devices() {
    let mut h = harness(app_with(&["mem_expandable_oom.pickle"]));
    h.get_by_label("GPU 1").click();
    h.run_steps(3);
    let p = h.state().memory().unwrap();
    assert_eq!(p.device, 1);
    assert_eq!(h.state().ws.memory.as_ref().unwrap().report.devices[1].ooms[0].verdict, "real_shortage");
    h.get_by_label("OOM at entry 421: real_shortage");
}

#[test]
fn a_snapshot_next_to_a_timeline_is_a_bottom_tab() {
    let mut h = harness(app_with(&["gpt_train.json.gz", "mem_train.pickle"]));
    h.run_steps(2);
    let app = h.state();
    assert_eq!(app.ws.traces.len(), 1);
    assert_eq!(app.bottom_tab(), BottomTab::Memory);
    assert!(app.memory().unwrap().segments.segments_drawn > 0);
    h.get_by_label("Memory");
}

#[test]
fn hostile_pickle_is_a_clear_error() {
    let dir = std::env::temp_dir().join(format!("strobe-mem-pane-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("evil.pickle");
    std::fs::write(&p, b"\x80\x02cposix\nsystem\n.").unwrap();
    let mut app = StrobeApp::new(None, Settings::default());
    let e = app.open_blocking(&p).unwrap_err();
    assert!(e.contains("evil.pickle") && e.contains("GLOBAL"), "{e}");
    assert!(app.memory().is_none() && app.ws.memory.is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

fn pane<'a>(h: &'a Harness<'static, StrobeApp>) -> &'a strobe_ui::memory::DeviceState {
    let p = h.state().memory().expect("memory pane");
    p.states[p.device].as_ref().expect("device state built")
}

#[test]
fn active_memory_timeline_draws_every_allocation_and_a_click_shows_its_stack() {
    let mut h = harness(app_with(&["mem_train.pickle"]));
    let (plot, allocs) = {
        let st = pane(&h);
        assert!(st.active.columns_drawn > 100, "one raster column per pixel");
        assert!(st.active.bands_painted > st.active.columns_drawn, "bands stacked in each column");
        // the oracle's count (tests/expected/mem_train.memory.json: "allocations")
        assert_eq!(st.timeline.allocs.len(), 1509);
        (st.active.plot_rect, st.timeline.allocs.len())
    };
    assert!(allocs > 0 && plot.width() > 100.0);
    // low in the middle of the plot: a band of an allocation alive there
    let pos = egui::pos2(plot.center().x, plot.max.y - 3.0);
    click_at(&mut h, pos);
    let st = pane(&h);
    let i = st.active.selected.expect("a band is selected");
    let k = st.history.position();
    let a = st.timeline.allocs[i];
    let born = a.alloc_entry.map_or(0, |e| e as usize + 1);
    let dies = a.free_entry.map_or(usize::MAX, |e| e as usize + 1);
    assert!(born <= k && k < dies, "selected allocation alive at the clicked position {k}: {a:?}");
    // the bands below it sum to less than the clicked height, and it covers that height
    let mut below = 0u64;
    let mut seen = false;
    st.timeline.alive_at(k, |j| {
        if j == i {
            seen = true;
        } else if !seen {
            below += st.timeline.allocs[j].size;
        }
    });
    assert!(seen);
    // 3 px above the bottom, with the y axis topped at 1.05 × the peak reserved (7444889600 B,
    // tests/expected/mem_train.memory.json)
    let clicked = 3.0 / plot.height() as f64 * 1.05 * 7444889600.0;
    let size = st.timeline.allocs[i].size as f64;
    assert!(below as f64 <= clicked && clicked < below as f64 + size + 1.0, "{below} + {size} vs {clicked}");
    h.get_by_label_contains("Allocation of");
    h.get_by_label_contains(&format!("Allocation of {} at 0x{:x}", strobe_analysis::memory::bytes(a.size), a.addr));
}

#[test]
fn arrow_keys_scrub_the_allocator_history() {
    let mut h = harness(app_with(&["mem_oom.pickle"]));
    let n = pane(&h).history.len();
    assert_eq!(pane(&h).history.position(), n, "starts at the final state");
    h.key_press(egui::Key::Home);
    h.run_steps(2);
    assert_eq!(pane(&h).history.position(), 0);
    assert_eq!(pane(&h).regions.len(), 0, "recording started before the first segment");
    assert_eq!(h.state().memory().unwrap().segments.segments_drawn, 0);
    for _ in 0..3 {
        h.key_press(egui::Key::ArrowRight);
        h.run_steps(1);
    }
    assert_eq!(pane(&h).history.position(), 3);
    h.get_by_label_contains("entry 2: ");
    h.key_press(egui::Key::ArrowLeft);
    h.run_steps(2);
    assert_eq!(pane(&h).history.position(), 2);
    h.key_press(egui::Key::End);
    h.run_steps(2);
    assert_eq!(pane(&h).history.position(), n);
    assert_eq!(pane(&h).regions.len(), 71, "the final 71 segments");
}

#[test]
fn oom_link_jumps_to_its_moment() {
    let mut h = harness(app_with(&["mem_frag_oom.pickle"]));
    h.key_press(egui::Key::Home);
    h.run_steps(2);
    h.get_by_label("OOM at entry 4610: fragmentation");
    h.get_by_label("Show this moment in the timeline").click();
    h.run_steps(3);
    let st = pane(&h);
    assert_eq!(st.history.position(), 4610, "the state the OOM saw");
    let (k0, k1) = st.active.view;
    assert!(k0 <= 4610.5 && 4610.5 <= k1, "the OOM is on screen: {k0}..{k1}");
    h.get_by_label_contains("entry 4609: ");
}

#[test]
fn brush_zooms_the_timeline_and_whole_trace_resets() {
    let mut h = harness(app_with(&["mem_train.pickle"]));
    let plot = pane(&h).active.plot_rect;
    let full = pane(&h).active.view;
    let (a, b) = (plot.min.x + plot.width() * 0.25, plot.min.x + plot.width() * 0.5);
    let y = plot.center().y;
    h.hover_at(egui::pos2(a, y));
    h.run_steps(1);
    mouse_button(&h, egui::pos2(a, y), true);
    h.run_steps(1);
    for x in [a + 10.0, (a + b) / 2.0, b] {
        h.hover_at(egui::pos2(x, y));
        h.run_steps(1);
    }
    mouse_button(&h, egui::pos2(b, y), false);
    h.run_steps(2);
    let (k0, k1) = pane(&h).active.view;
    let span = full.1 - full.0;
    assert!((k0 - span * 0.25).abs() < span * 0.01, "brush start {k0} of {span}");
    assert!((k1 - span * 0.5).abs() < span * 0.01, "brush end {k1} of {span}");
    // a raster may be on a worker (under load the last one took over a frame's budget)
    while pane(&h).active.raster_pending() {
        std::thread::sleep(std::time::Duration::from_millis(5));
        h.run_steps(1);
    }
    h.run_steps(1);
    let rasters = pane(&h).active.rasters_made;
    h.run_steps(3);
    assert_eq!(pane(&h).active.rasters_made, rasters, "an unchanged view is not rasterised again");
    h.get_by_label("Whole trace").click();
    h.run_steps(2);
    assert_eq!(pane(&h).active.view, full, "the whole trace again");
}

#[test]
fn clicking_a_block_pins_it_with_its_stack() {
    let mut h = harness(app_with(&["mem_oom.pickle"]));
    // the first row of the segment map: below the timeline, the history bar and the legend
    let node = h.get_by_label_contains("Segments (71)");
    let legend = node.rect();
    let pos = egui::pos2(legend.min.x + 8.0, legend.max.y + 12.0);
    click_at(&mut h, pos);
    let p = h.state().memory().unwrap();
    let pinned = p.segments.pinned.expect("a block pinned");
    let st = pane(&h);
    let first = &st.regions[0];
    assert_eq!(pinned, first.blocks[0].address, "the first block of the lowest-addressed segment");
    h.get_by_label_contains(", pinned");
    // its stack starts at the first Python frame outside the installed packages (found here
    // by reading the pickle's frames, not through Strobe's rule): the allocator's own C++
    // frames are folded, one click shows them
    let doc = h.state().ws.memory.as_ref().unwrap();
    let stack_id = st.regions[0].blocks[0].stack;
    let frames: Vec<_> = doc.snapshot.stack(stack_id).collect();
    let user = frames
        .iter()
        .find(|f| {
            f.filename.ends_with(".py") && !f.filename.contains("-packages/") && !f.filename.contains("/lib/python3")
        })
        .or_else(|| frames.iter().find(|f| f.filename.ends_with(".py")))
        .expect("a Python frame");
    let user_line = format!("{}  {}:{}", user.name, user.filename, user.line);
    let first_frame = format!("{}  {}:{}", frames[0].name, frames[0].filename, frames[0].line);
    assert!(frames[0].name.contains("unwind"), "the recorded stack starts in the unwinder: {first_frame}");
    h.get_by_label(&user_line);
    assert!(h.query_by_label(&first_frame).is_none(), "allocator frames folded");
    h.get_by_label_contains("allocator and interpreter frames hidden").click();
    h.run_steps(2);
    h.get_by_label(&first_frame);
}

#[test]
fn memory_stats_beside_the_snapshot_show_in_the_summary() {
    // the stats first: they wait for the snapshot
    let h = harness(app_with(&["mem_oom.memory_stats.json", "mem_oom.pickle"]));
    let stats = h.state().ws.memory_stats.as_ref();
    assert_eq!(stats.and_then(|s| s.num_alloc_retries), Some(2));
    h.get_by_label("torch.cuda.memory_stats()");
    h.get_by_label("2 / 1");
}

/// The raster (Fenwick sweeps, one per core) paints each pixel with the band the plain
/// interval-tree walk finds at that column's position and that row's height.
#[test]
fn raster_pixels_match_the_direct_walk() {
    use strobe_analysis::memory::AllocationTimeline;
    use strobe_ui::memory::{rasterize, timeline_band_color, RasterKey};
    let snap = strobe_import::memory_snapshot::import(&sample("mem_train.pickle")).unwrap();
    let tl = AllocationTimeline::build(&snap, 0);
    let (w, h) = (301usize, 97usize);
    let y_max = strobe_analysis::memory::replay(&snap, 0).peak_allocated() as f64 * 1.1;
    for (k0, k1) in [(0.0, tl.len as f64 + 1.0), (1800.0, 2100.5)] {
        let r = rasterize(&tl, &RasterKey { k0, k1, w, h, y_max, selected: None });
        let bpp = y_max / h as f64;
        let mut checked = 0;
        for x in (0..w).step_by(7) {
            let k = r.column_pos[x];
            for row in (0..h).step_by(5) {
                let y = ((row as f64 + 0.5) * bpp) as i64;
                let want = tl.band_at(k, y as f64).map(|i| timeline_band_color(&tl, i));
                let got = r.pixels[(h - 1 - row) * w + x];
                assert_eq!(got, want.unwrap_or(egui::Color32::TRANSPARENT), "column {x} (position {k}), row {row}");
                checked += want.is_some() as usize;
            }
        }
        assert!(checked > 50, "only {checked} painted pixels checked");
    }
}

/// A wrapped ring buffer (the last 2000 entries of mem_train, tests/tools/make_legacy_snapshots.py)
/// is said in the summary; the full recording of the same run is not.
#[test]
fn wrapped_ring_buffer_is_said_in_the_summary() {
    let h = harness(app_with(&["mem_train_wrapped.pickle"]));
    {
        let doc = h.state().ws.memory.as_ref().expect("snapshot document");
        let w = doc.report.devices[0].history_window.as_ref().expect("history window");
        assert_eq!(w.entries, 2000);
        assert_eq!(h.state().memory().expect("memory pane").summary.notes_shown, 1);
        h.get_by_label(&w.note);
    }
    h.get_by_label_contains("history covers the last ");
    h.get_by_label_contains("(2000 entries) of the run; figures before it are reconstructed from the final state");
    h.get_by_label_contains("max_entries=2000");
    let full = harness(app_with(&["mem_train.pickle"]));
    assert_eq!(full.state().memory().unwrap().summary.notes_shown, 0);
    assert!(full.query_by_label_contains("history covers the last").is_none());
}

/// A bare list of segments (torch.cuda.memory_snapshot()) has no trace: the pane still shows its
/// figures and segment map, with the layout notes.
#[test]
fn legacy_segment_list_shows_its_segment_map_and_notes() {
    let h = harness(app_with(&["mem_legacy_list.pickle"]));
    let doc = h.state().ws.memory.as_ref().expect("snapshot document");
    assert_eq!(doc.report.devices.len(), 2);
    assert_eq!(doc.report.devices[0].trace_entries, 0);
    let p = h.state().memory().expect("memory pane");
    assert!(p.segments.segments_drawn > 0 && p.segments.blocks_drawn > 0, "segment map drawn");
    assert!(p.summary.notes_shown >= 2);
    h.get_by_label_contains("bare list of segments");
    h.get_by_label("No allocation trace: the figures and the segment map are the final state.");
    h.get_by_label("peak reserved");
}

/// The real torch 2.0-era snapshot (blocks without address, a 1-entry trace) opens.
#[test]
fn real_legacy_snapshot_opens() {
    let h = harness(app_with(&["mem_yiyi_legacy.pickle"]));
    let doc = h.state().ws.memory.as_ref().expect("snapshot document");
    assert_eq!(doc.report.devices[0].segments, 266);
    let p = h.state().memory().expect("memory pane");
    assert!(p.segments.segments_drawn > 0);
    h.get_by_label_contains("without an address");
    h.get_by_label_contains("history covers the last 1 entry of the run");
}

/// A protocol-2 snapshot pickle with one device trace of `n` alloc/free pairs (each entry a
/// dict of the keys `torch.cuda.memory._dump_snapshot` writes), to make a file big enough that
/// reading it takes many frames.
fn write_synthetic_snapshot(path: &std::path::Path, n: usize) {
    fn s(out: &mut Vec<u8>, v: &str) {
        out.push(b'X'); // BINUNICODE
        out.extend_from_slice(&(v.len() as u32).to_le_bytes());
        out.extend_from_slice(v.as_bytes());
    }
    fn int(out: &mut Vec<u8>, v: i32) {
        out.push(b'J'); // BININT
        out.extend_from_slice(&v.to_le_bytes());
    }
    let mut out = vec![0x80, 2, b'}', b'('];
    s(&mut out, "segments");
    out.push(b']');
    s(&mut out, "device_traces");
    out.extend_from_slice(b"]]("); // the list of devices, device 0's list, MARK
    for i in 0..n {
        for action in ["alloc", "free_completed"] {
            out.extend_from_slice(b"}(");
            s(&mut out, "action");
            s(&mut out, action);
            s(&mut out, "addr");
            int(&mut out, 0x1000_0000 + (i % 4096) as i32 * 512);
            s(&mut out, "size");
            int(&mut out, 512);
            s(&mut out, "stream");
            int(&mut out, 0);
            s(&mut out, "time_us");
            int(&mut out, i as i32);
            s(&mut out, "frames");
            out.push(b']');
            out.push(b'u'); // SETITEMS
        }
    }
    out.extend_from_slice(b"ea"); // APPENDS to device 0's list, APPEND it to the devices
    out.extend_from_slice(b"u."); // SETITEMS on the root, STOP
    std::fs::write(path, out).unwrap();
}

/// Opening a snapshot goes through the loader: while a big one is read, frames keep coming
/// with a progress line, and Cancel stops it (nothing opens, the error says so).
#[test]
fn a_large_snapshot_loads_off_the_ui_thread_and_cancels() {
    let dir = std::env::temp_dir().join(format!("strobe-mem-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big.pickle");
    write_synthetic_snapshot(&big, 400_000); // ~78 MB
    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    let mut h =
        Harness::builder().with_size([1600.0, 1000.0]).build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    let ctx = h.ctx.clone();
    h.state_mut().open_files(vec![big.clone()], false, &ctx);
    assert!(h.state().loading(), "open_files returns at once; the snapshot is read on the loader");
    let mut frames_while_loading = 0;
    let mut seen_bytes = false;
    let mut frames = 0;
    // until the read has visibly started (a loaded machine may take a while to schedule it)
    while frames < 5 || (!seen_bytes && frames < 500) {
        h.step();
        frames += 1;
        frames_while_loading += h.state().loading() as u32;
        std::thread::sleep(std::time::Duration::from_millis(20));
        seen_bytes |= h.state().loader().jobs.first().is_some_and(|j| j.fraction() > 0.0);
    }
    assert_eq!(frames_while_loading, frames, "every frame ran while the snapshot loaded");
    h.get_by_label_contains("Loading ");
    h.get_by_label_contains("big.pickle");
    assert!(seen_bytes, "the progress bar moves as the pickle is read");
    h.get_by_label("Cancel").click();
    wait_until_loader_idle(&mut h);
    let app = h.state();
    assert!(!app.loading(), "cancel stops the read within seconds");
    assert!(app.memory().is_none() && app.ws.memory.is_none(), "a cancelled snapshot does not open");
    assert!(app.errors().iter().any(|e| e.contains("big.pickle") && e.contains("cancelled")), "{:?}", app.errors());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The synthetic snapshot is a real one: read to the end, its analysis counts its allocations.
#[test]
fn the_synthetic_snapshot_opens_through_the_loader() {
    let dir = std::env::temp_dir().join(format!("strobe-mem-small-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("small.pickle");
    write_synthetic_snapshot(&p, 3000);
    let mut app = StrobeApp::new(None, Settings::default());
    app.set_no_cache(true);
    let mut h =
        Harness::builder().with_size([1600.0, 1000.0]).build_ui_state(|ui, app: &mut StrobeApp| app.frame(ui), app);
    let ctx = h.ctx.clone();
    h.state_mut().open_files(vec![p, sample("mem_oom.memory_stats.json")], false, &ctx);
    wait_until_loader_idle(&mut h);
    h.run_steps(3);
    let app = h.state();
    assert!(app.errors().is_empty(), "{:?}", app.errors());
    assert_eq!(app.bottom_tab(), BottomTab::Memory);
    let doc = app.ws.memory.as_ref().expect("snapshot document");
    assert_eq!(doc.report.devices[0].trace_entries, 6000, "3000 allocs and 3000 frees");
    assert_eq!(doc.timelines[0].allocs.len(), 3000, "built on the loader");
    assert_eq!(app.ws.memory_stats.as_ref().and_then(|s| s.num_alloc_retries), Some(2));
    h.get_by_label("Memory snapshot: small.pickle");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Steps the app until its loader has nothing left to do (or 60 s pass).
fn wait_until_loader_idle(h: &mut Harness<'static, StrobeApp>) {
    let t0 = std::time::Instant::now();
    while t0.elapsed().as_secs() < 60 {
        h.step();
        if !h.state().loading() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
