//! The flight-recorder reader on raw bytes (a pickle or JSON dump, plain or gzipped), then the
//! matching across two ranks of what it read (collectives and point-to-point pairs): a dump or
//! an error, never a panic or a hang.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::path::Path::new("rank_0");
    if let Ok(d) = strobe_import::flight_recorder::import_bytes(path, data, 0) {
        let mut other = d.clone();
        other.rank = 1;
        let r = strobe_analysis::flight_recorder::analyse(&[d, other]);
        let _ = strobe_analysis::flight_recorder::to_text(&r);
    }
});
