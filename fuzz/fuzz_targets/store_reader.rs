//! The store reader on corrupt caches: the bytes as they are, then with the header's length
//! and section-table checksum made consistent (so mutations get past the checksum to the
//! structural checks). Whatever opens is walked like the viewer and the report walk it.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    strobe_fuzz::one_thread();
    if let Ok(store) = strobe_store::Store::from_bytes(data.to_vec()) {
        strobe_fuzz::walk(&store);
    }
    if let Some(fixed) = strobe_fuzz::with_consistent_header(data) {
        if let Ok(store) = strobe_store::Store::from_bytes(fixed) {
            strobe_fuzz::walk(&store);
        }
    }
});
