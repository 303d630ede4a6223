//! The XSpace (`.xplane.pb`) importer on mutated bytes (plain, or gzipped when the input
//! opens like gzip), built into memory, then the store opened and walked.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    strobe_fuzz::one_thread();
    let name = std::path::Path::new("fuzz-input.xplane.pb");
    let mut b = strobe_store::StoreBuilder::in_memory();
    let Ok(meta) = strobe_import::xspace::import_bytes(name, data, &mut b) else { return };
    let built = b.finish(&meta).expect("finishing an in-memory store cannot fail");
    let store = strobe_store::cache::open_built(built).expect("a store just built must open");
    strobe_fuzz::walk(&store);
});
