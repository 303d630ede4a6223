//! `strobe bench open`'s measurement on a real sample: the time to the first frame that draws
//! the opened trace, cold (fresh cache) and warm (the same cache again), and the frames around it.

mod common;

use std::time::Duration;
use strobe_ui::bench::open_frames_bench;

#[test]
fn first_frame_is_timed_cold_and_warm() {
    let cache = tempfile::tempdir().unwrap();
    let run = || {
        open_frames_bench(
            vec![common::sample("gpt_train.json.gz")],
            Some(cache.path().to_path_buf()),
            240.0,
            3,
            Duration::from_secs(120),
        )
    };
    let cold = run();
    let (first, load) = (cold.first_frame_s.expect("a frame drew the trace"), cold.load_s.expect("loaded"));
    assert!(first > 0.0 && first <= load + 0.5, "first frame {first} s, load {load} s");
    assert_eq!(cold.after.len(), 3);
    // the store is cached now: the warm open reaches its first frame sooner
    let warm = run();
    let warm_first = warm.first_frame_s.expect("a frame drew the trace");
    assert!(warm_first < first, "warm {warm_first} s vs cold {first} s");
}
