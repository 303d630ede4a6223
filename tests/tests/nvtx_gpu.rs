//! record_function / NVTX ranges projected onto the GPU against
//! tests/expected/nvtx_gpu_expected.py (stdlib Python over the trace's JSON: the GPU events
//! whose launch, on any thread of the range's process, starts inside the range).

mod common;
use common::*;

#[test]
fn gpt_train_phases_on_the_gpu() {
    let exp = expected("gpt_train.nvtx_gpu.json");
    let store = load("gpt_train.json.gz");
    let got = strobe_analysis::nvtx_gpu::project(&store);
    let want = exp.as_array().unwrap();
    assert_eq!(want.len(), 9, "forward, backward, optimizer in three steps");
    for w in want {
        let name = w["name"].as_str().unwrap();
        let cpu_start = w["cpu_start_ns"].as_i64().unwrap();
        let g = got
            .iter()
            .find(|p| {
                p.name == name && store.span_start(p.span) == cpu_start && p.device == w["device"].as_i64().unwrap()
            })
            .unwrap_or_else(|| panic!("{name} at {cpu_start} not projected"));
        assert_eq!(g.gpu_spans as i64, w["gpu_spans"].as_i64().unwrap(), "{name}");
        assert_eq!((g.start_ns, g.end_ns), (w["start_ns"].as_i64().unwrap(), w["end_ns"].as_i64().unwrap()), "{name}");
        assert_eq!(g.gpu_ns, w["gpu_ns"].as_i64().unwrap(), "{name}");
    }
    // the backward's kernels come from autograd's own thread, not the one that opened the
    // range: they are projected all the same
    let bwd = got.iter().find(|p| p.name == "backward").unwrap();
    assert!(bwd.gpu_spans > 100, "{bwd:?}");
    // nested ranges sit below their parents on the device's rows
    let step = got.iter().find(|p| p.name.starts_with("ProfilerStep#")).expect("the step range is projected too");
    let fwd =
        got.iter().find(|p| p.name == "forward" && p.start_ns >= step.start_ns && p.end_ns <= step.end_ns).unwrap();
    assert!(fwd.depth > step.depth);
    let by = strobe_analysis::nvtx_gpu::by_name(&got);
    let f = by.iter().find(|r| r.name == "forward").unwrap();
    let want_f: i64 = want.iter().filter(|w| w["name"] == "forward").map(|w| w["gpu_ns"].as_i64().unwrap()).sum();
    assert_eq!((f.count, f.gpu_ns), (3, want_f));
}
