//! The NVTX projection's drawing index (`workspace::NvtxGpu`): for any window, the ranges a
//! frame starts from by binary search are every range that reaches it, as a scan finds them;
//! each device's depth is its deepest range's.

use crate::common::app_before_the_figures_of;

#[test]
fn the_index_finds_every_range_that_reaches_a_window() {
    for file in ["nsys_ddp_2proc.sqlite", "gpt_train.json.gz", "ddp_rank0.json.gz"] {
        let app = app_before_the_figures_of(file);
        let t = &app.ws.traces[0];
        t.wait_for_analyses();
        let index = t.nvtx_gpu_index().expect("computed");
        assert!(!index.ranges.is_empty(), "{file}");
        let (t0, t1) = (t.t_min, t.t_max);
        let devices: Vec<i64> = index.depth.iter().map(|d| d.0).collect();
        for &dev in &devices {
            let (lo, ranges, max_end) = index.of_device(dev);
            assert!(ranges.iter().all(|p| p.device == dev));
            assert_eq!(index.ranges[lo].device, dev);
            let deepest = ranges.iter().map(|p| p.depth).max().unwrap();
            assert_eq!(index.depth.iter().find(|d| d.0 == dev).unwrap().1, deepest, "{file} device {dev}");
            // windows across the trace, from a hundredth of it to all of it
            for k in 0..200i64 {
                let w = (t1 - t0) / 100 * (1 + k % 100);
                let w0 = t0 + (t1 - t0) * ((k * 37) % 100) / 100;
                let w1 = w0 + w;
                let first = max_end.partition_point(|&e| e < w0);
                let scanned: Vec<usize> =
                    (0..ranges.len()).filter(|&i| ranges[i].end_ns >= w0 && ranges[i].start_ns <= w1).collect();
                let found: Vec<usize> = (first..ranges.len())
                    .take_while(|&i| ranges[i].start_ns <= w1)
                    .filter(|&i| ranges[i].end_ns >= w0)
                    .collect();
                assert_eq!(found, scanned, "{file} device {dev} window {w0}..{w1}");
            }
        }
    }
}
