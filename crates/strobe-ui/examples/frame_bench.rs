//! Frame benchmark: `cargo run --release -p strobe-ui --example frame_bench -- [SPANS] [FRAMES]`
//! (default 10 000 000 spans, 30 frames per zoom). Builds a synthetic trace in memory, then
//! times one frame of the real timeline (shapes built headlessly, no window) for a 1920-px
//! plot at whole-trace, mid and deep zoom.

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000_000);
    let frames: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(30);
    let t = std::time::Instant::now();
    let store = strobe_ui::bench::synthetic_store(n);
    println!("built a synthetic trace of {} spans in {:.1} s", store.span_count(), t.elapsed().as_secs_f64());
    let res = strobe_ui::bench::frame_bench(store, 1920.0, frames);
    println!("{:<22} {:>12} {:>10} {:>10} {:>10} {:>14} {:>8} {:>8} {:>7}", "zoom", "window", "median ms", "p90 ms", "max ms", "tessellate ms", "items", "folded", "labels");
    for r in res {
        println!(
            "{:<22} {:>12} {:>10.2} {:>10.2} {:>10.2} {:>14.2} {:>8} {:>8} {:>7}",
            r.zoom,
            strobe_analysis::report::fmt_ns(r.window_ns),
            r.median_ms,
            r.p90_ms,
            r.max_ms,
            r.tessellate_median_ms,
            r.items,
            r.folded,
            r.labels
        );
    }
}
