//! A store built with its big arrays in files' pages (`strobe_store::scratch`: what a build
//! does when memory is short) is byte for byte the store built on the heap, and leaves no file
//! behind. `STROBE_SCRATCH=file` forces the files (every array past a page), so the bundled
//! traces go through them; this test binary holds only this test, since the variable is the
//! process's.

mod common;
use common::{cache_files, sample};
use std::path::Path;
use strobe_import::LoadOptions;

/// Every file in `dir`, by name, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut names = cache_files(dir);
    names.sort();
    names.into_iter().map(|n| (n.clone(), std::fs::read(dir.join(&n)).unwrap())).collect()
}

#[test]
fn stores_built_in_file_pages_are_the_heaps_byte_for_byte() {
    let traces = [
        "gpt_train.json.gz",
        "ddp_rank0.json.gz",
        "catapult_flow.json",
        "export_flows_v2_counters.json",
        "nsys_ddp_2proc.sqlite",
        "nsys_gpt_single.sqlite",
        "nsys_fuser_h200.sqlite",
    ];
    let heap = tempfile::tempdir().unwrap();
    // SAFETY: this binary's only test; nothing else reads the environment meanwhile
    unsafe { std::env::set_var("STROBE_SCRATCH", "heap") };
    for t in traces {
        strobe_import::load(&sample(t), &LoadOptions::cached_in(heap.path().to_path_buf())).unwrap();
    }
    let in_files = tempfile::tempdir().unwrap();
    unsafe { std::env::set_var("STROBE_SCRATCH", "file") };
    let mut reports = Vec::new();
    for t in traces {
        let s = strobe_import::load(&sample(t), &LoadOptions::cached_in(in_files.path().to_path_buf())).unwrap();
        reports.push(serde_json::to_value(strobe_analysis::report::report(&s, 10)).unwrap());
    }
    unsafe { std::env::remove_var("STROBE_SCRATCH") };
    let (a, b) = (files(heap.path()), files(in_files.path()));
    assert_eq!(a.iter().map(|f| &f.0).collect::<Vec<_>>(), b.iter().map(|f| &f.0).collect::<Vec<_>>());
    assert!(a.iter().filter(|f| f.0.ends_with(".strobe")).count() >= traces.len());
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{name}: the store built in file pages differs from the heap's");
    }
    // and the stores answer as the heap's do (the pending store read its columns from files)
    for (t, r) in traces.iter().zip(reports) {
        let s = strobe_import::load(&sample(t), &LoadOptions::in_memory()).unwrap();
        assert_eq!(serde_json::to_value(strobe_analysis::report::report(&s, 10)).unwrap(), r, "{t}");
    }
}
