//! The memory-snapshot decoder, then the analysis and the memory pane's timeline and history
//! on whatever it accepts (none of them may panic on any snapshot the decoder returns). The
//! same bytes read by two threads (a split parse, at a point taken from the input) give what
//! the reader in order gives: the same snapshot, or the same error.
#![no_main]
use libfuzzer_sys::fuzz_target;
use strobe_import::memory_snapshot::{from_bytes, from_bytes_split_at};

fuzz_target!(|data: &[u8]| {
    strobe_fuzz::one_thread();
    let seq = from_bytes(data);
    let at = data.last().map_or(0, |&b| data.len() * (b as usize % 16) / 16);
    let split = from_bytes_split_at(data, Some(at));
    match (&seq, &split) {
        (Ok(a), Ok(b)) => assert!(
            serde_json::to_string(a).unwrap() == serde_json::to_string(b).unwrap(),
            "a split at {at} reads differently"
        ),
        (Err(a), Err(b)) => assert_eq!(a, b, "split at {at}"),
        _ => panic!("split at {at}: {:?} against {:?}", seq.as_ref().err(), split.as_ref().err()),
    }
    let Ok(snap) = seq else { return };
    let report = strobe_analysis::memory::analyse(&snap);
    let _ = strobe_analysis::memory::to_text(&report);
    // what the memory pane builds from it: each device's timeline, and its history walked to
    // the start and back (inputs are small: the walk is short)
    for d in snap.devices() {
        let tl = strobe_analysis::memory::AllocationTimeline::build(&snap, d);
        let _ = (tl.allocated_max(0, tl.len + 1), tl.reserved_range(0, tl.len + 1), tl.peak_in(0, tl.len + 1));
        let mut h = strobe_analysis::memory::AllocatorHistory::new(&snap, d);
        for k in (0..=h.len()).rev().chain(0..=h.len()) {
            h.seek(&snap, k);
        }
        let _ = (h.view(), h.free_figures());
    }
});
