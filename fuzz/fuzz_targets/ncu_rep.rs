//! The native `.ncu-rep` reader, then the roofline analysis on what it accepts.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(rep) = strobe_import::ncu_rep::parse(data) else { return };
    let r = strobe_analysis::roofline::analyse(&rep);
    let _ = strobe_analysis::roofline::to_text(&r);
});
