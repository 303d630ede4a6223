//! Imports one Nsight Systems export the way `strobe` does (importer → store file in a temp
//! cache dir → mmapped store) and prints rows/s and peak memory (VmHWM).
//!
//! cargo run --release -p strobe-import --example nsys_bench -- FILE.sqlite

use std::path::Path;
use std::time::Instant;
use strobe_import::{nsys_sqlite, Progress};
use strobe_store::{cache, StoreBuilder};

fn status_kb(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let file = std::env::args().nth(1).ok_or("usage: nsys_bench FILE.sqlite")?;
    let path = Path::new(&file);
    let dir = tempfile::tempdir()?;
    let size = std::fs::metadata(path)?.len();
    let rss0 = status_kb("VmRSS:").unwrap_or(0);

    let t0 = Instant::now();
    let key = cache::source_key(path)?;
    let mut b = StoreBuilder::new(cache::output_for(Some(dir.path()), key))?;
    let progress = Progress::default();
    let meta = nsys_sqlite::import(path, &mut b, &progress)?;
    let t_import = t0.elapsed();
    let spans = b.span_count();
    let hwm_import = status_kb("VmHWM:").unwrap_or(0);
    let built = b.finish(&meta)?;
    let t_finish = t0.elapsed();
    let hwm_finish = status_kb("VmHWM:").unwrap_or(0);
    let store = cache::open_built(built)?;
    let t_total = t0.elapsed();
    let store_bytes: u64 =
        std::fs::read_dir(dir.path())?.filter_map(|e| e.ok()?.metadata().ok()).map(|m| m.len()).sum();

    let rows = meta.load.events;
    println!("input            {} ({:.1} MB)", file, size as f64 / 1e6);
    for (t, n) in &meta.load.by_category {
        println!("  {t:<40} {n:>10} rows");
    }
    println!("rows read        {rows}");
    println!(
        "spans            {spans} (store: {} spans, {} lanes, {} flows)",
        store.span_count(),
        store.lanes.len(),
        store.flows().len()
    );
    println!(
        "import (rows→builder)  {:>7.2} s  {:>10.0} rows/s",
        t_import.as_secs_f64(),
        rows as f64 / t_import.as_secs_f64()
    );
    println!(
        "total (→ open store)   {:>7.2} s  {:>10.0} rows/s",
        t_total.as_secs_f64(),
        rows as f64 / t_total.as_secs_f64()
    );
    println!("store build (finish)   {:>7.2} s", (t_finish - t_import).as_secs_f64());
    println!("store file       {:.1} MB", store_bytes as f64 / 1e6);
    println!(
        "peak RSS (VmHWM) after import {:.0} MB, after store build {:.0} MB, after open {:.0} MB (baseline {:.0} MB)",
        hwm_import as f64 / 1024.0,
        hwm_finish as f64 / 1024.0,
        status_kb("VmHWM:").unwrap_or(0) as f64 / 1024.0,
        rss0 as f64 / 1024.0
    );
    Ok(())
}
