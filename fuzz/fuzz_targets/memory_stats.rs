//! The `torch.cuda.memory_stats()` JSON reader, then its report.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(stats) = strobe_import::memory_snapshot::stats_from_bytes(data) else { return };
    let r = strobe_analysis::memory::stats_report(&stats);
    let _ = strobe_analysis::memory::stats_text(&r);
});
