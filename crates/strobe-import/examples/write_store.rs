//! Imports one trace (chrome/Kineto JSON or an nsys SQLite export) and writes the built store
//! to a file, bypassing the cache: the fuzz campaign's store_reader seeds are made this way.
//!
//!     cargo run -p strobe-import --example write_store -- TRACE OUT.strobe

use std::path::PathBuf;
use strobe_import::{chrome_json, detect, nsys_sqlite, Format, Progress};
use strobe_store::{Built, StoreBuilder};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [src, dst] = args.as_slice() else {
        return Err("usage: write_store TRACE OUT.strobe".into());
    };
    let mut b = StoreBuilder::in_memory();
    let progress = Progress::default();
    let meta = match detect(src)? {
        // from bytes, so args are copied into the store rather than left as references into
        // the source file (a seed must not depend on where its source was)
        Some(Format::ChromeJson) => chrome_json::import_bytes(src, &std::fs::read(src)?, &mut b, &progress)?,
        Some(Format::NsysSqlite) => nsys_sqlite::import(src, &mut b, &progress)?,
        other => return Err(format!("{}: {other:?} is not a timeline this example imports", src.display()).into()),
    };
    match b.finish(&meta)? {
        Built::Memory(bytes) => std::fs::write(dst, bytes)?,
        Built::File(p) => std::fs::copy(p, dst).map(|_| ())?,
    }
    Ok(())
}
