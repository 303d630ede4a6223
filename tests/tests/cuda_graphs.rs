//! CUDA graphs on real recordings (a torch.compile "reduce-overhead" training loop under
//! torch.profiler, and an nsys capture with node tracing of an MLP captured and replayed)
//! against figures computed independently by tests/expected/cuda_graphs_expected.py.

mod common;
use common::*;
use strobe_analysis::cuda_graphs::{cuda_graphs, GraphKey};

fn check(file: &str) {
    let store = load(file);
    let got = cuda_graphs(&store);
    let exp = &expected("cuda_graphs.expected.json")[file];
    assert_eq!(got.launches_without_gpu_work as u64, exp["launches_without_gpu_work"].as_u64().unwrap(), "{file}");
    let graphs = exp["graphs"].as_array().unwrap();
    assert_eq!(got.graphs.len(), graphs.len(), "{file}: graphs");
    let created = (0..store.span_count() as u32)
        .filter(|&s| store.span_name(s) == strobe_analysis::cuda_graphs::NODE_CREATED)
        .count();
    assert_eq!(created as u64, exp["node_creations"].as_u64().unwrap(), "{file}: graph node creations");
    for (g, e) in got.graphs.iter().zip(graphs) {
        let key = e["key"].as_array().unwrap();
        match (g.key, key[0].as_str().unwrap()) {
            (GraphKey::Id(id), "id") | (GraphKey::LowestNode(id), "lowest_node") => {
                assert_eq!(id, key[1].as_u64().unwrap(), "{file}")
            }
            (GraphKey::Kernels(_), "kernels") => assert_eq!(g.kernels_per_replay as u64, key[1].as_u64().unwrap()),
            (k, want) => panic!("{file}: graph told apart by {k:?}, expected by {want}"),
        }
        let what = format!("{file}: {}", g.label);
        let int = |k: &str| e[k].as_i64().unwrap_or_else(|| panic!("{k}"));
        assert_eq!(g.replays.len() as i64, int("replays"), "{what}: replays");
        assert_eq!(g.kernels_per_replay as i64, int("kernels_per_replay"), "{what}");
        assert_eq!(
            (g.total_ns, g.mean_ns, g.min_ns, g.max_ns),
            (int("total_ns"), int("mean_ns"), int("min_ns"), int("max_ns")),
            "{what}: GPU time per replay"
        );
        assert_eq!(g.mean_extent_ns, int("mean_extent_ns"), "{what}");
        assert_eq!(g.launch_cpu_ns, int("launch_cpu_ns"), "{what}");
        assert!((g.pct_gpu_time - e["pct_gpu_time"].as_f64().unwrap()).abs() < 1e-4, "{what}: {}", g.pct_gpu_time);
        assert_eq!(g.launched_from.as_deref(), e["launched_from"].as_str(), "{what}: the op around its launches");
        let nodes = e["nodes"].as_array().unwrap();
        assert_eq!(g.nodes.len(), nodes.len(), "{what}: nodes");
        for (n, en) in g.nodes.iter().zip(nodes) {
            assert_eq!(n.node_id, en["node_id"].as_u64(), "{what}");
            if let Some(name) = en["name"].as_str() {
                assert_eq!(n.name, name, "{what}");
            }
            assert_eq!(
                (n.count, n.total_ns),
                (en["count"].as_u64().unwrap(), en["total_ns"].as_i64().unwrap()),
                "{what}"
            );
            assert_eq!(
                n.captured_by.as_deref(),
                en["captured_by"].as_str(),
                "{what}: node {:?} captured by",
                n.node_id
            );
        }
        // every replay's launch and work is placed in it
        for (ri, r) in g.replays.iter().enumerate() {
            assert_eq!(got.place(r.launch).map(|p| p.replay as usize), Some(ri), "{what}");
            for &s in &r.spans {
                let p = got.place(s).unwrap();
                assert_eq!(&got.graphs[p.graph as usize].label, &g.label, "{what}");
                assert!(p.node.is_some(), "{what}: span {s} has no node");
            }
        }
    }
}

#[test]
fn torch_compile_reduce_overhead_replays_are_one_row_per_graph() {
    check("kineto_reduce_overhead.json.gz");
}

#[test]
fn nsys_node_trace_leads_each_node_back_to_its_capture() {
    check("nsys_cuda_graphs.sqlite");
    // the launch fans out to all of its replay's work through correlation links
    let store = load("nsys_cuda_graphs.sqlite");
    let g = cuda_graphs(&store);
    let r = &g.graphs[0].replays[0];
    let mut linked: Vec<u32> = store.launched_by(r.launch).collect();
    linked.sort();
    let mut spans = r.spans.clone();
    spans.sort();
    assert_eq!(linked, spans);
}

#[test]
fn a_node_table_that_cannot_be_read_is_a_note_not_an_error() {
    // the export with its node events' ids turned to text and a column dropped
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("odd_nodes.sqlite");
    std::fs::copy(sample("nsys_cuda_graphs.sqlite"), &file).unwrap();
    let c = rusqlite::Connection::open(&file).unwrap();
    c.execute_batch(
        "UPDATE CUDA_GRAPH_NODE_EVENTS SET graphNodeId = 'x' WHERE rowid % 2 = 0;
         ALTER TABLE CUDA_GRAPH_NODE_EVENTS DROP COLUMN originalGraphNodeId;",
    )
    .unwrap();
    drop(c);
    let store = load_in(&file, dir.path()).unwrap();
    // the graph is still found from its kernels, its replays and nodes whole
    let g = cuda_graphs(&store);
    assert_eq!(g.graphs.len(), 1);
    assert_eq!((g.graphs[0].replays.len(), g.graphs[0].nodes.len()), (20, 6));
    assert!(
        store.meta.load.notes.iter().any(|n| n.contains("CUDA_GRAPH_NODE_EVENTS rows without")),
        "{:?}",
        store.meta.load.notes
    );
    // a table without its node column: a note
    let file2 = dir.path().join("no_node_col.sqlite");
    std::fs::copy(sample("nsys_cuda_graphs.sqlite"), &file2).unwrap();
    let c = rusqlite::Connection::open(&file2).unwrap();
    c.execute_batch("ALTER TABLE CUDA_GRAPH_NODE_EVENTS DROP COLUMN graphNodeId;").unwrap();
    drop(c);
    let store = load_in(&file2, dir.path()).unwrap();
    assert!(
        store.meta.load.notes.iter().any(|n| n.contains("has no column graphNodeId")),
        "{:?}",
        store.meta.load.notes
    );
}
