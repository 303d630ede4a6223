//! The Perfetto protobuf importer on raw bytes (plain or gzipped), then the built store read back.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| strobe_fuzz::perfetto(data));
