//! The page-by-page SQLite reader (`strobe_import::sqlite_file`) on a mutated database file:
//! every page is tried as a table root, its leaves walked and every row's columns read.
//! SQLite itself never looks at the pages first here, so this reaches damage that the
//! `nsys_sqlite` target's schema probe would refuse before the reader runs.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;

fn scratch() -> &'static PathBuf {
    static PATH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| strobe_fuzz::scratch_file("pages"))
}

fuzz_target!(|data: &[u8]| {
    let path = scratch();
    std::fs::write(path, data).expect("write the scratch database");
    let Ok(f) = strobe_import::sqlite_file::SqliteFile::open(path) else { return };
    let mut scratch = strobe_import::sqlite_file::Scratch::default();
    for root in 1..=f.page_count().min(64) {
        let Ok(leaves) = f.table_leaves(root) else { continue };
        for leaf in leaves {
            let _ = f.scan_leaf(leaf, strobe_import::sqlite_file::MAX_COLS, &mut scratch, |_, rec| {
                for i in 0..strobe_import::sqlite_file::MAX_COLS {
                    std::hint::black_box(rec.value(i));
                }
                true
            });
        }
    }
});
