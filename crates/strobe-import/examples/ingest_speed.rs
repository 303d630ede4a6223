//! Ingest throughput of several files side by side, the same measurement as `strobe bench
//! ingest` (a fresh cache dir per run, median of runs) without building the viewer: for
//! comparing a Perfetto trace with the same trace as Kineto JSON.
//!
//!   cargo run --release -p strobe-import --example ingest_speed -- [--runs N] FILE...

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 3;
    if args.first().map(String::as_str) == Some("--runs") {
        runs = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(3);
        args.drain(..2);
    }
    println!("{:<40} {:>9} {:>11} {:>9} {:>9} {:>12}", "file", "MB", "events", "median s", "MB/s", "M events/s");
    for f in &args {
        let path = std::path::Path::new(f);
        let mb = std::fs::metadata(path)?.len() as f64 / 1e6;
        let mut secs = Vec::new();
        let mut events = 0;
        for _ in 0..runs.max(1) {
            let dir = std::env::temp_dir().join(format!("strobe-ingest-speed-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            let opts = strobe_import::LoadOptions::cached_in(dir.clone());
            let t = Instant::now();
            let store = strobe_import::load(path, &opts)?;
            secs.push(t.elapsed().as_secs_f64());
            events = store.meta.load.events;
            drop(store);
            let _ = std::fs::remove_dir_all(&dir);
        }
        secs.sort_by(f64::total_cmp);
        let s = secs[secs.len() / 2];
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        println!("{name:<40} {mb:>9.1} {events:>11} {s:>9.3} {:>9.0} {:>12.2}", mb / s, events as f64 / s / 1e6);
    }
    Ok(())
}
