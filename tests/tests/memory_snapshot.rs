//! Memory snapshots: exact figures against the independent Python oracle
//! (`tests/expected/memory_expected.py`, stdlib pickle with globals refused), peak reserved
//! against `memory_stats()`, and hostile pickles.

mod common;
use common::{expected, sample};
use std::path::PathBuf;
use strobe_analysis::memory::{analyse, replay, AllocationTimeline, AllocatorHistory, StackSweep};
use strobe_import::memory_snapshot;

const STEMS: [&str; 15] = [
    "mem_train",
    "mem_oom",
    "mem_frag",
    "mem_expandable_oom",
    "mem_silmont",
    "mem_cranberrii",
    "mem_frag_oom",
    "mem_cache_held_oom",
    // older layouts and a wrapped ring buffer (tests/tools/make_legacy_snapshots.py), and a
    // real torch 2.0-era snapshot whose blocks have no address
    "mem_legacy_list",
    "mem_legacy_history",
    "mem_legacy_traces",
    "mem_cpp_line",
    "mem_train_wrapped",
    "mem_yiyi_legacy",
    // a CUDA graph pool and a MemPool beside the default pool (tests/tools/make_pool_snapshot.py)
    "mem_pools_synthetic",
];

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a u64: {v}"))
}
fn i(v: &serde_json::Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an i64: {v}"))
}

#[test]
fn figures_match_the_python_oracle() {
    for stem in STEMS {
        let snap = memory_snapshot::import(&sample(&format!("{stem}.pickle"))).unwrap_or_else(|e| panic!("{e}"));
        let r = analyse(&snap);
        let want = expected(&format!("{stem}.memory.json"));
        let wd = want["devices"].as_array().unwrap();
        assert_eq!(r.devices.len(), wd.len(), "{stem}: devices");
        for (d, w) in r.devices.iter().zip(wd) {
            let ctx = format!("{stem} device {}", d.device);
            assert_eq!(d.device, i(&w["device"]), "{ctx}");
            assert_eq!(d.segments as u64, u(&w["segments"]), "{ctx}: segments");
            assert_eq!(d.blocks as u64, u(&w["blocks"]), "{ctx}: blocks");
            assert_eq!(d.reserved_bytes, u(&w["reserved_bytes"]), "{ctx}: reserved");
            assert_eq!(d.allocated_bytes, u(&w["allocated_bytes"]), "{ctx}: allocated");
            assert_eq!(d.active_awaiting_free_bytes, u(&w["active_awaiting_free_bytes"]), "{ctx}: awaiting free");
            assert_eq!(d.inactive_bytes, u(&w["inactive_bytes"]), "{ctx}: inactive");
            assert_eq!(d.largest_inactive_block, u(&w["largest_inactive_block"]), "{ctx}: largest inactive");
            assert!((d.fragmentation - w["fragmentation"].as_f64().unwrap()).abs() < 1e-12, "{ctx}: fragmentation");
            assert_eq!(d.rounding_waste_bytes, u(&w["rounding_waste_bytes"]), "{ctx}: rounding waste");
            let wp = w["pools"].as_array().unwrap_or_else(|| panic!("{ctx}: no pools: regenerate the oracle"));
            assert_eq!(d.pools.len(), wp.len(), "{ctx}: pools");
            for (p, x) in d.pools.iter().zip(wp) {
                let ctx = format!("{ctx} pool {:?} stream {}", p.pool, p.stream);
                assert_eq!((p.pool.0, p.pool.1), (i(&x["pool"][0]), i(&x["pool"][1])), "{ctx}: id");
                assert_eq!(p.stream, i(&x["stream"]), "{ctx}: stream");
                assert_eq!(p.segments as u64, u(&x["segments"]), "{ctx}: segments");
                assert_eq!(p.reserved_bytes, u(&x["reserved_bytes"]), "{ctx}: reserved");
                assert_eq!(p.allocated_bytes, u(&x["allocated_bytes"]), "{ctx}: allocated");
                assert_eq!(p.active_awaiting_free_bytes, u(&x["active_awaiting_free_bytes"]), "{ctx}: awaiting");
                assert_eq!(p.inactive_bytes, u(&x["inactive_bytes"]), "{ctx}: inactive");
                assert_eq!(p.largest_inactive_block, u(&x["largest_inactive_block"]), "{ctx}: largest inactive");
            }
            assert_eq!(d.pool_held_inactive_bytes, u(&w["pool_held_inactive_bytes"]), "{ctx}: held by pools");
            assert_eq!(d.trace_entries as u64, u(&w["trace_entries"]), "{ctx}: trace entries");
            assert_eq!(d.peak_allocated_bytes, i(&w["peak_allocated_bytes"]), "{ctx}: peak allocated");
            assert_eq!(d.peak_reserved_bytes, i(&w["peak_reserved_bytes"]), "{ctx}: peak reserved");
            let ww =
                w.get("history_window").unwrap_or_else(|| panic!("{ctx}: no history_window: regenerate the oracle"));
            match &d.history_window {
                None => assert!(ww.is_null(), "{ctx}: the oracle sees a history window: {ww}"),
                Some(h) => {
                    assert!(!ww.is_null(), "{ctx}: no history window in the oracle, Strobe says {h:?}");
                    assert_eq!(h.entries as u64, u(&ww["entries"]), "{ctx}: window entries");
                    assert_eq!(h.duration_us, ww["duration_us"].as_i64(), "{ctx}: window duration");
                    assert_eq!(h.untraced_block_frees as u64, u(&ww["untraced_block_frees"]), "{ctx}");
                    assert_eq!(h.untraced_segment_frees as u64, u(&ww["untraced_segment_frees"]), "{ctx}");
                    assert_eq!(h.first_untraced_entry as u64, u(&ww["first_untraced_entry"]), "{ctx}");
                    assert_eq!(h.full_ring_buffer, ww["full_ring_buffer"].as_bool().unwrap(), "{ctx}");
                }
            }
            let wo = w["ooms"].as_array().unwrap();
            assert_eq!(d.ooms.len(), wo.len(), "{ctx}: ooms");
            for (o, x) in d.ooms.iter().zip(wo) {
                assert_eq!(o.entry as u64, u(&x["entry"]), "{ctx}");
                assert_eq!(o.requested_bytes, u(&x["requested_bytes"]), "{ctx}");
                assert_eq!(o.device_free_bytes, u(&x["device_free_bytes"]), "{ctx}");
                assert_eq!(o.verdict, x["verdict"].as_str().unwrap(), "{ctx}");
                assert_eq!(o.evidence.allocated_bytes, i(&x["allocated_bytes"]), "{ctx}");
                assert_eq!(o.evidence.reserved_bytes, i(&x["reserved_bytes"]), "{ctx}");
                assert_eq!(o.evidence.largest_free_block, u(&x["largest_free_block"]), "{ctx}");
                assert_eq!(o.evidence.same_stream_free_bytes, u(&x["same_stream_free_bytes"]), "{ctx}");
                assert_eq!(o.evidence.pool_held_free_bytes, u(&x["pool_held_free_bytes"]), "{ctx}");
                assert!(!o.suggestion.is_empty());
            }
            // The active-memory timeline: every allocation, stacked to the replayed height.
            let tl = AllocationTimeline::build(&snap, d.device);
            let rp = replay(&snap, d.device);
            assert_eq!(tl.allocs.len() as u64, u(&w["allocations"]), "{ctx}: allocations");
            let mut peak = 0i64;
            for k in 0..=tl.len {
                let mut height = 0i64;
                tl.alive_at(k, |j| height += tl.allocs[j].size as i64);
                peak = peak.max(height);
                if k % 97 == 0 || k == tl.len {
                    assert_eq!(height, rp.allocated[k], "{ctx}: stack height at {k}");
                }
            }
            assert_eq!(peak, i(&w["peak_allocated_bytes"]), "{ctx}: tallest stack");
            assert_eq!(tl.allocated.values(), &rp.allocated[..], "{ctx}: drawn height = replay");
            // The sweep the raster uses agrees with the direct walk at every 50th position.
            let mut sw = StackSweep::new(&tl, 0);
            for k in (0..=tl.len).step_by(50) {
                sw.advance_to(k);
                assert_eq!(sw.total(), rp.allocated[k], "{ctx}: sweep total at {k}");
                for y in [0, sw.total() / 3, sw.total() - 1].into_iter().filter(|&y| y >= 0 && y < sw.total()) {
                    assert_eq!(sw.band_at(y), tl.band_at(k, y as f64), "{ctx}: band at {y} B, position {k}");
                }
            }
            // The allocator state replayed back to the start, the middle and the end.
            let mut h = AllocatorHistory::new(&snap, d.device);
            for (k, x) in w["history"].as_object().unwrap().iter().rev() {
                let k: usize = k.parse().unwrap();
                h.seek(&snap, k);
                let f = h.free_figures();
                let ctx = format!("{ctx} at entry {k}");
                assert_eq!(f.regions as u64, u(&x["regions"]), "{ctx}: regions");
                assert_eq!(f.reserved_bytes, u(&x["reserved_bytes"]), "{ctx}: reserved");
                assert_eq!(f.occupied_blocks as u64, u(&x["occupied_blocks"]), "{ctx}: blocks");
                assert_eq!(f.occupied_bytes, u(&x["occupied_bytes"]), "{ctx}: occupied bytes");
                assert_eq!(f.largest_free_block, u(&x["largest_free_block"]), "{ctx}: largest free");
                assert_eq!(f.pool_held_free_bytes, u(&x["pool_held_free_bytes"]), "{ctx}: held by pools");
                let by: Vec<(i64, u64)> = x["free_by_stream"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(s, v)| (s.parse().unwrap(), u(v)))
                    .collect::<std::collections::BTreeMap<_, _>>()
                    .into_iter()
                    .collect();
                assert_eq!(f.free_by_stream, by, "{ctx}: free by stream");
            }
        }
    }
}

/// Inactive bytes of a CUDA graph pool and a MemPool are held by them, not fragmentation: the
/// verdict names the pools and gives the default pool's own fragmentation (figures from the
/// oracle; the text from the rules in docs/memory.md).
#[test]
fn pool_held_memory_is_named_not_fragmentation() {
    let snap = memory_snapshot::import(&sample("mem_pools_synthetic.pickle")).unwrap();
    let r = analyse(&snap);
    let w = &expected("mem_pools_synthetic.memory.json")["devices"][0];
    let d = &r.devices[0];
    let frag = w["fragmentation"].as_f64().unwrap();
    // the device-wide figure the allocator's blocks alone would give is far higher
    let whole = 1.0 - u(&w["largest_inactive_block"]) as f64 / u(&w["inactive_bytes"]) as f64;
    assert!(whole > 0.6 && frag < 0.3, "whole {whole}, default pool {frag}");
    assert!((d.fragmentation - frag).abs() < 1e-12);
    assert_eq!(d.pool_notes.len(), 2, "{:?}", d.pool_notes);
    let held = strobe_analysis::memory::bytes(u(&w["pool_held_inactive_bytes"]));
    let note = &d.pool_notes[0];
    assert!(note.starts_with(&format!("{held} reserved but inactive is held by CUDA graph pool (1,0) (322.00 MiB) and MemPool (0,1) (224.00 MiB): not reusable by ordinary allocations")), "{note}");
    assert!(note.contains(&format!("fragmentation of the default pool {frag:.3}")), "{note}");
    assert_eq!(d.pool_notes[1], "20.00 MiB of the default pool's inactive memory sits in segments of stream 1562257984: only allocations on that stream reuse it.");
    let text = strobe_analysis::memory::to_text(&r);
    assert!(text.contains("fragmentation              0.273   (default pool)"), "{text}");
    assert!(text.contains("CUDA graph pool (1,0)"), "{text}");
    // the failed ordinary request: the MemPool's free bytes on its stream are not offered to it
    let o = &d.ooms[0];
    let wo = &w["ooms"][0];
    assert_eq!((o.verdict, wo["verdict"].as_str().unwrap()), ("cache_held", "cache_held"));
    assert_eq!(o.evidence.pool_held_free_bytes, u(&wo["pool_held_free_bytes"]));
    let held_free = strobe_analysis::memory::bytes(u(&wo["pool_held_free_bytes"]));
    assert!(
        o.suggestion.contains(&format!("{held_free} of it is held by CUDA graph pools or MemPools")),
        "{}",
        o.suggestion
    );
    // a default pool on one stream says nothing new
    let plain = analyse(&memory_snapshot::import(&sample("mem_oom.pickle")).unwrap());
    assert!(plain.devices[0].pool_notes.is_empty());
    assert!(!strobe_analysis::memory::to_text(&plain).contains("pool"));
}

/// Older layouts read as memory_viz reads them, each said in a note; figures are checked
/// against the oracle in `figures_match_the_python_oracle`.
#[test]
fn legacy_layouts_are_read_and_said() {
    let notes = |stem: &str| memory_snapshot::import(&sample(&format!("{stem}.pickle"))).unwrap().notes;
    let has = |n: &[String], what: &str| n.iter().any(|x| x.contains(what));
    // torch.cuda.memory_snapshot() pickled: a bare list, no trace, no requested sizes
    let list = memory_snapshot::import(&sample("mem_legacy_list.pickle")).unwrap();
    assert!(list.device_traces.is_empty());
    assert_eq!(list.segments.len(), 3);
    // blocks placed end to end from their segment's address
    let s0 = &list.segments[0];
    assert_eq!(s0.blocks[1].address, s0.address + s0.blocks[0].size);
    assert!(has(&list.notes, "bare list of segments"), "{:?}", list.notes);
    assert!(has(&list.notes, "without requested_size"), "{:?}", list.notes);
    assert!(has(&list.notes, "without an address"), "{:?}", list.notes);
    // 1.13 history: stacks from history[0]
    let hist = memory_snapshot::import(&sample("mem_legacy_history.pickle")).unwrap();
    assert!(has(&hist.notes, "newest history entry"), "{:?}", hist.notes);
    let b = &hist.segments[0].blocks[0];
    assert_eq!(hist.stack(b.stack).next().map(|f| f.name.as_str()), Some("forward"));
    assert!(!has(&hist.notes, "without requested_size"));
    // 2.0 dict with traces, no time_us
    let tr = memory_snapshot::import(&sample("mem_legacy_traces.pickle")).unwrap();
    assert_eq!(tr.device_traces.len(), 2);
    assert!(!has(&tr.notes, "bare list") && !has(&tr.notes, "no device_traces"));
    let oom = tr.device_traces[1].iter().find(|e| e.action == strobe_model::memory::Action::Oom).unwrap();
    assert_eq!(tr.device_free(oom), Some(40 << 20));
    // the real snapshot refused before: blocks without address, 1-entry trace
    let yiyi = memory_snapshot::import(&sample("mem_yiyi_legacy.pickle")).unwrap();
    assert!(has(&yiyi.notes, "without an address"), "{:?}", yiyi.notes);
    assert!(has(&notes("mem_yiyi_legacy"), "newest history entry"));
    // the modern samples need no note
    for stem in ["mem_train", "mem_oom", "mem_silmont", "mem_expandable_oom"] {
        assert!(notes(stem).is_empty(), "{stem}: {:?}", notes(stem));
    }
}

/// A C++ frame's line of 2**64 - 1 (a 9-byte LONG1) is clamped and noted; the rest is exact.
#[test]
fn wide_frame_lines_are_clamped_with_a_note() {
    let s = memory_snapshot::import(&sample("mem_cpp_line.pickle")).unwrap();
    let f = s.frames.iter().find(|f| f.name == "at::native::empty_cuda").expect("the C++ frame");
    assert_eq!(f.line, i64::MAX);
    assert!(s.notes.iter().any(|n| n.contains("1 frame line numbers") && n.contains("clamped")), "{:?}", s.notes);
}

/// Addresses and sizes never clamp: one wider than 64 bits is an error naming the field and byte.
#[test]
fn wide_addresses_are_errors_naming_field_and_byte() {
    // {'segments': [{'address': 2**64, 'total_size': 512, 'blocks': []}]}, protocol 4, by hand:
    // the LONG1 of 2**64 is 9 bytes 00 .. 00 01
    let mut b = b"\x80\x04}\x8c\x08segments]}(\x8c\x07address\x8a\x09".to_vec();
    let at = b.len() - 2;
    b.extend([0, 0, 0, 0, 0, 0, 0, 0, 1]);
    b.extend(b"\x8c\x0atotal_sizeM\x00\x02\x8c\x06blocks]uas.");
    let e = memory_snapshot::from_bytes(&b).unwrap_err();
    assert!(e.contains("segments[0]") && e.contains("'address'") && e.contains(&format!("pickle byte {at}")), "{e}");
    // 2**64 - 1 fits exactly
    let mut ok = b"\x80\x04}\x8c\x08segments]}(\x8c\x07address\x8a\x09".to_vec();
    ok.extend([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0]);
    ok.extend(b"\x8c\x0atotal_sizeK\x00\x8c\x06blocks]uas.");
    assert_eq!(memory_snapshot::from_bytes(&ok).unwrap().segments[0].address, u64::MAX);
    // a trace entry's size wider than 64 bits
    let mut t =
        b"\x80\x04}(\x8c\x08segments]\x8c\x0ddevice_traces]]}(\x8c\x06action\x8c\x05alloc\x8c\x04size\x8a\x09".to_vec();
    t.extend([0, 0, 0, 0, 0, 0, 0, 0, 1]);
    t.extend(b"uaau.");
    let e = memory_snapshot::from_bytes(&t).unwrap_err();
    assert!(e.contains("'size'") && e.contains("does not fit in 64 bits"), "{e}");
}

/// A ring buffer that wrapped (the last 2000 entries of mem_train, as max_entries=2000 keeps
/// them) is said in the report; no real sample recorded from the start is flagged.
#[test]
fn wrapped_ring_buffer_is_detected_and_said() {
    let r = analyse(&memory_snapshot::import(&sample("mem_train_wrapped.pickle")).unwrap());
    let w = r.devices[0].history_window.as_ref().expect("wrapped");
    assert!(w.full_ring_buffer && w.entries == 2000);
    assert!(w.note.starts_with("history covers the last "), "{}", w.note);
    assert!(w.note.ends_with("(2000 entries) of the run; figures before it are reconstructed from the final state"));
    let text = strobe_analysis::memory::to_text(&r);
    assert!(text.contains(&w.note) && text.contains("max_entries=2000"), "{text}");
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["devices"][0]["history_window"]["entries"], 2000);
    // the full recording of the same run is not flagged, nor any other real sample
    for stem in &STEMS[..8] {
        let r = analyse(&memory_snapshot::import(&sample(&format!("{stem}.pickle"))).unwrap());
        assert!(r.devices.iter().all(|d| d.history_window.is_none()), "{stem}");
    }
    // the wrapped trace replays to the same final state, and its start is the full one's state
    // at the cut (what the final state implies about blocks made before the ring's first entry)
    let full = memory_snapshot::import(&sample("mem_train.pickle")).unwrap();
    let cut = memory_snapshot::import(&sample("mem_train_wrapped.pickle")).unwrap();
    let (mut hf, mut hc) = (AllocatorHistory::new(&full, 0), AllocatorHistory::new(&cut, 0));
    hf.seek(&full, full.device_traces[0].len() - 2000);
    hc.seek(&cut, 0);
    assert_eq!(hc.free_figures().reserved_bytes, hf.free_figures().reserved_bytes);
    assert_eq!(hc.free_figures().occupied_blocks, hf.free_figures().occupied_blocks);
}

/// Scrubbing back and forth restores every state exactly (what an undo removed comes back).
#[test]
fn history_steps_back_and_forth_exactly() {
    for stem in ["mem_train", "mem_expandable_oom", "mem_frag"] {
        let snap = memory_snapshot::import(&sample(&format!("{stem}.pickle"))).unwrap();
        for d in snap.devices() {
            let mut h = AllocatorHistory::new(&snap, d);
            let n = h.len();
            let end = h.view();
            let mid_k = n / 3;
            h.seek(&snap, mid_k);
            let mid = h.view();
            h.seek(&snap, 0);
            h.seek(&snap, n);
            assert_eq!(h.view(), end, "{stem} device {d}: back at the end");
            h.seek(&snap, mid_k);
            assert_eq!(h.view(), mid, "{stem} device {d}: back at {mid_k}");
            for _ in 0..50.min(n - mid_k) {
                let p = h.position();
                h.seek(&snap, p + 1);
            }
            h.seek(&snap, mid_k);
            assert_eq!(h.view(), mid, "{stem} device {d}: 50 steps forward and back");
        }
    }
}

#[test]
fn real_fragmentation_and_cache_held_ooms() {
    // Recorded on an H200 by tests/tools/make_oom_snapshots.py: a 4 GiB request with 5 GiB
    // cached free in 5 MiB pieces, on the failing stream (frag) or on a side stream (cache_held).
    for (stem, verdict, same) in
        [("mem_frag_oom", "fragmentation", 5u64 << 30), ("mem_cache_held_oom", "cache_held", 0)]
    {
        let r = analyse(&memory_snapshot::import(&sample(&format!("{stem}.pickle"))).unwrap());
        let o = &r.devices[0].ooms[0];
        assert_eq!((o.verdict, o.requested_bytes), (verdict, 4 << 30), "{stem}");
        assert_eq!(o.evidence.largest_free_block, 5 << 20, "{stem}");
        assert_eq!(o.evidence.same_stream_free_bytes, same, "{stem}");
        assert!(o.device_free_bytes < o.requested_bytes, "{stem}: the device really ran out");
    }
}

#[test]
fn known_verdicts_and_layouts() {
    let oom = analyse(&memory_snapshot::import(&sample("mem_oom.pickle")).unwrap());
    assert_eq!(oom.devices[0].ooms.len(), 1);
    // set_per_process_memory_fraction(0.05): the device had plenty free.
    assert_eq!(oom.devices[0].ooms[0].verdict, "process_limit");
    assert_eq!(oom.devices[0].ooms[0].requested_bytes, 2 << 30);
    let exp = memory_snapshot::import(&sample("mem_expandable_oom.pickle")).unwrap();
    assert_eq!(exp.device_traces.len(), 4, "3 devices and an empty 4th list");
    assert!(exp.device_traces[3].is_empty());
    assert!(exp.segments.iter().all(|s| s.is_expandable));
    let r = analyse(&exp);
    assert_eq!(r.devices.iter().map(|d| d.device).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert_eq!(r.devices[1].ooms[0].verdict, "real_shortage");
    // Older layout: no allocator_settings, no time_us, no annotations.
    let old = memory_snapshot::import(&sample("mem_cranberrii.pickle")).unwrap();
    assert!(old.allocator_settings.is_none());
    assert!(old.device_traces[0].iter().all(|e| e.time_us().is_none()));
    let train = memory_snapshot::import(&sample("mem_train.pickle")).unwrap();
    assert_eq!(train.allocator_settings.as_ref().unwrap()["expandable_segments"], serde_json::json!(false));
    assert_eq!(train.external_annotations.len(), 56);
    // Frames are shared: far fewer distinct stacks than blocks + entries.
    let users = train.segments.iter().map(|s| s.blocks.len()).sum::<usize>() + train.device_traces[0].len();
    assert!(train.stacks.len() < users, "{} stacks for {users} users", train.stacks.len());
    let rp = replay(&train, 0);
    assert_eq!(rp.allocated.len(), train.device_traces[0].len() + 1);
    assert!(rp.time_us.iter().skip(1).all(|t| t.is_some()));
}

#[test]
fn peak_reserved_matches_memory_stats() {
    // All three recordings started before the first allocation.
    for stem in ["mem_train", "mem_oom", "mem_frag"] {
        let snap = memory_snapshot::import(&sample(&format!("{stem}.pickle"))).unwrap();
        let stats = memory_snapshot::import_stats(&sample(&format!("{stem}.memory_stats.json"))).unwrap();
        let r = analyse(&snap);
        assert_eq!(
            r.devices[0].peak_reserved_bytes as u64,
            stats.get_u64("reserved_bytes.all.peak").unwrap(),
            "{stem}"
        );
        assert_eq!(r.devices[0].reserved_bytes, stats.get_u64("reserved_bytes.all.current").unwrap(), "{stem}");
        // Requested bytes never exceed the rounded peak.
        assert!(
            r.devices[0].peak_allocated_bytes as u64 <= stats.get_u64("allocated_bytes.all.peak").unwrap(),
            "{stem}"
        );
    }
}

#[test]
fn gzipped_snapshot_reads_the_same() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("snap.pickle.gz");
    let mut e = flate2::write::GzEncoder::new(std::fs::File::create(&p).unwrap(), flate2::Compression::fast());
    e.write_all(&std::fs::read(sample("mem_silmont.pickle")).unwrap()).unwrap();
    e.finish().unwrap();
    assert_eq!(strobe_import::detect(&p).unwrap(), Some(strobe_import::Format::MemorySnapshot));
    let a = analyse(&memory_snapshot::import(&p).unwrap());
    let b = analyse(&memory_snapshot::import(&sample("mem_silmont.pickle")).unwrap());
    assert_eq!(serde_json::to_value(&a).unwrap(), serde_json::to_value(&b).unwrap());
}

#[test]
fn snapshot_is_detected_and_refused_as_a_timeline() {
    let p = sample("mem_train.pickle");
    assert_eq!(strobe_import::detect(&p).unwrap(), Some(strobe_import::Format::MemorySnapshot));
    let dir = tempfile::tempdir().unwrap();
    let e = common::load_in(&p, dir.path()).err().expect("must not load as a trace").to_string();
    assert!(e.contains("mem_train.pickle") && e.contains("memory snapshot"), "{e}");
    assert!(common::cache_files(dir.path()).is_empty());
}

fn hostile(name: &str, bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let p: PathBuf = dir.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    let e = memory_snapshot::import(&p).err().unwrap_or_else(|| panic!("{name}: must fail")).to_string();
    assert!(e.contains(name), "error must name the file: {e}");
    e
}

#[test]
fn hostile_pickles_give_clear_errors() {
    // GLOBAL os.system + REDUCE: the classic exploit.
    let e = hostile("global.pickle", b"\x80\x02cposix\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02Rq\x03.");
    assert!(e.contains("GLOBAL"), "{e}");
    // STACK_GLOBAL (protocol 4 form).
    let e = hostile("stack_global.pickle", b"\x80\x04\x8c\x02os\x8c\x06system\x93\x8c\x04true\x85R.");
    assert!(e.contains("STACK_GLOBAL"), "{e}");
    let e = hostile("reduce.pickle", b"\x80\x04N)R.");
    assert!(e.contains("REDUCE"), "{e}");
    let e = hostile("build.pickle", b"\x80\x04}}b.");
    assert!(e.contains("BUILD"), "{e}");
    // 100k nested MARKs.
    let mut deep = vec![0x80, 4];
    deep.extend(std::iter::repeat_n(b'(', 100_000));
    let e = hostile("deep.pickle", &deep);
    assert!(e.contains("nesting"), "{e}");
    // 100k nested lists (APPEND chain): parses without recursion, then is not a snapshot.
    let mut nested = vec![0x80, 4];
    nested.extend(std::iter::repeat_n(b']', 100_000));
    nested.extend(std::iter::repeat_n(b'a', 99_999));
    nested.push(b'.');
    let e = hostile("nested.pickle", &nested);
    assert!(e.contains("segments[0]: not a dict"), "{e}");
    // Declared lengths far beyond the file.
    let e = hostile("huge_str.pickle", b"\x80\x04\x8d\xff\xff\xff\xff\xff\xff\x00\x00abc.");
    assert!(e.contains("truncated"), "{e}");
    let e = hostile("huge_bytes.pickle", b"\x80\x04B\xff\xff\xff\xffabc.");
    assert!(e.contains("truncated"), "{e}");
    let e = hostile("huge_long.pickle", b"\x80\x04\x8b\xff\xff\xff\x7f\x00.");
    assert!(e.contains("truncated"), "{e}");
    // A real snapshot cut in half.
    let real = std::fs::read(sample("mem_silmont.pickle")).unwrap();
    let e = hostile("truncated.pickle", &real[..real.len() / 2]);
    assert!(e.contains("truncated"), "{e}");
    let e = hostile("empty.pickle", b"");
    assert!(e.contains("empty"), "{e}");
    // A plain-data pickle that is not a snapshot.
    let e = hostile("int.pickle", b"\x80\x04K\x01.");
    assert!(e.contains("not hold a dict"), "{e}");
    let e = hostile("list_of_ints.pickle", b"\x80\x04]\x94(K\x01e.");
    assert!(e.contains("segments[0]: not a dict"), "{e}");
    let e = hostile("nosegs.pickle", b"\x80\x04}\x94.");
    assert!(e.contains("segments"), "{e}");
    // Gzip that is corrupt.
    let e = hostile("bad.pickle.gz", b"\x1f\x8b\x08\x00garbage");
    assert!(e.contains("gzip"), "{e}");
    // memory_stats that is not an object.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("stats.json");
    std::fs::write(&p, b"[1,2]").unwrap();
    assert!(memory_snapshot::import_stats(&p).unwrap_err().to_string().contains("stats.json"));
}

#[test]
fn memory_stats_dump_is_detected_and_read() {
    for stem in ["mem_train", "mem_oom", "mem_frag"] {
        let p = sample(&format!("{stem}.memory_stats.json"));
        assert_eq!(strobe_import::detect(&p).unwrap(), Some(strobe_import::Format::MemoryStats), "{stem}");
        let raw: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        let r = strobe_analysis::memory::stats_report(&memory_snapshot::import_stats(&p).unwrap());
        let want = |k: &str| raw[k].as_u64();
        assert_eq!(r.allocated_bytes, want("allocated_bytes.all.current"), "{stem}");
        assert_eq!(r.reserved_peak_bytes, want("reserved_bytes.all.peak"), "{stem}");
        assert_eq!(r.inactive_split_bytes, want("inactive_split_bytes.all.current"), "{stem}");
        assert_eq!(r.num_ooms, want("num_ooms"), "{stem}");
        assert_eq!(r.num_alloc_retries, want("num_alloc_retries"), "{stem}");
        // the OOM recording says so in words
        assert_eq!(r.notes.iter().any(|n| n.contains("OOM")), stem == "mem_oom", "{stem}: {:?}", r.notes);
    }
    // a Kineto trace is still a trace
    assert_eq!(strobe_import::detect(&sample("gpt_train.json.gz")).unwrap(), Some(strobe_import::Format::ChromeJson));
}

/// The same snapshot pickled with protocol 0 (text opcodes, `L`-suffixed longs) and 1 reads the
/// same as protocol 2/4.
#[test]
fn every_pickle_protocol_reads_the_same() {
    let dir = tempfile::tempdir().unwrap();
    for stem in ["mem_legacy_traces", "mem_cpp_line"] {
        let src = sample(&format!("{stem}.pickle"));
        let want = serde_json::to_value(analyse(&memory_snapshot::import(&src).unwrap())).unwrap();
        for proto in 0..=5 {
            let out = dir.path().join(format!("{stem}.p{proto}.pickle"));
            // stdlib pickle re-dumps the plain data at each protocol (globals refused on load)
            let ok = std::process::Command::new("python3")
                .args(["-c", "import pickle,sys\nclass P(pickle.Unpickler):\n def find_class(s,m,n): raise ValueError(m)\nd=P(open(sys.argv[1],'rb')).load()\nopen(sys.argv[2],'wb').write(pickle.dumps(d,int(sys.argv[3])))"])
                .arg(&src)
                .arg(&out)
                .arg(proto.to_string())
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            if !ok {
                eprintln!("python3 not available: protocol {proto} not checked");
                return;
            }
            let got =
                analyse(&memory_snapshot::import(&out).unwrap_or_else(|e| panic!("{stem} protocol {proto}: {e}")));
            assert_eq!(serde_json::to_value(got).unwrap(), want, "{stem} protocol {proto}");
        }
    }
}

/// A snapshot's pickle read by two threads — the second from a batch boundary of the trace
/// on, reading what it refers to before that point from the file again — gives exactly the
/// snapshot the reader in order gives (every field: ids, stacks, frames, notes), wherever the
/// split falls. The split is used on the files with a trace of several batches.
#[test]
fn a_split_parse_reads_what_the_sequential_one_reads() {
    let before = strobe_import::pickle::chunks_spliced_on_this_thread();
    for stem in STEMS {
        let data = std::fs::read(sample(&format!("{stem}.pickle"))).unwrap();
        let want = serde_json::to_string(&memory_snapshot::from_bytes(&data).unwrap()).unwrap();
        for k in 0..10 {
            let at = data.len() * k / 10;
            let got =
                memory_snapshot::from_bytes_split_at(&data, Some(at)).unwrap_or_else(|e| panic!("{stem} @{at}: {e}"));
            assert!(serde_json::to_string(&got).unwrap() == want, "{stem}: split at {at} reads differently");
        }
    }
    let spliced = strobe_import::pickle::chunks_spliced_on_this_thread() - before;
    assert!(spliced >= 10, "the split was used {spliced} times");
}
