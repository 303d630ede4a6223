//! The Nsight Systems SQLite importer on a mutated export: each input is written to a file
//! on tmpfs (SQLite reads files, not slices), imported into memory, and the store walked.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

fn scratch() -> &'static PathBuf {
    static PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| strobe_fuzz::scratch_file("nsys"))
}

fuzz_target!(|data: &[u8]| {
    strobe_fuzz::one_thread();
    let path = scratch();
    std::fs::write(path, data).expect("write the scratch export");
    if let Ok(store) = strobe_import::nsys_sqlite::import_to_memory(path) {
        strobe_fuzz::walk(&store);
    }
});
