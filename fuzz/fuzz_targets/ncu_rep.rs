//! The native `.ncu-rep` reader (launches, metrics and rule results with their message
//! markup), then the roofline analysis and the per-launch detail on what it accepts: ranked
//! rules, occupancy, stalls, memory, the verdict paragraph, and the JSON and text reports.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(rep) = strobe_import::ncu_rep::parse(data) else { return };
    let r = strobe_analysis::roofline::analyse(&rep);
    let _ = strobe_analysis::roofline::to_text(&r);
    let _ = serde_json::to_string(&r);
    // The markup renderer on every rule message's raw text too (any bytes as text).
    let _ = strobe_import::ncu_rep::render_markup(&String::from_utf8_lossy(data));
});
