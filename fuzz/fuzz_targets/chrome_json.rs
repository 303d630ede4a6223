//! The chrome/Kineto JSON importer on raw bytes, then the built store read back.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| strobe_fuzz::chrome(data));
