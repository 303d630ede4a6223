//! Times the memory-snapshot reader: `cargo run --release -p strobe-import --example mem_parse FILE...`
//! (peak memory: run under `/usr/bin/time -v`).
fn main() {
    for a in std::env::args().skip(1) {
        let p = std::path::Path::new(&a);
        let len = std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let t = std::time::Instant::now();
        match strobe_import::memory_snapshot::import(p) {
            Ok(s) => {
                let dt = t.elapsed().as_secs_f64();
                let entries: usize = s.device_traces.iter().map(|t| t.len()).sum();
                println!(
                    "{a}: {:.1} MB in {:.3} s = {:.0} MB/s; {} segments, {} entries, {} stacks, {} frames",
                    len as f64 / 1e6,
                    dt,
                    len as f64 / 1e6 / dt,
                    s.segments.len(),
                    entries,
                    s.stacks.len(),
                    s.frames.len()
                );
            }
            Err(e) => println!("{e}"),
        }
    }
}
