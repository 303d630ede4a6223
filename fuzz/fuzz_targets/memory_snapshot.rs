//! The memory-snapshot decoder, then the analysis on whatever it accepts (the analysis
//! must not panic on any snapshot the decoder returns).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    strobe_fuzz::one_thread();
    let Ok(snap) = strobe_import::memory_snapshot::from_bytes(data) else { return };
    let report = strobe_analysis::memory::analyse(&snap);
    let _ = strobe_analysis::memory::to_text(&report);
});
