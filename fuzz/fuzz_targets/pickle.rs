//! The safe pickle reader on raw bytes: a value arena or an error, never a panic, a hang or
//! an allocation beyond what the input declares and holds.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = strobe_import::pickle::parse(data, strobe_import::pickle::Limits::default());
});
