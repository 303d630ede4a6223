//! What the fuzz targets share: importing chrome JSON from bytes into an in-memory store,
//! and reading a store back the way the viewer and `strobe report` do, so a store that the
//! reader accepts is also walked (lane views, LOD, flows, counters, names, the report).

use std::path::Path;
use strobe_import::{chrome_json, Progress};
use strobe_store::{Store, StoreBuilder};

/// Rayon on one thread: inputs are small, and a pool of 16 threads in each of 16 fuzzer
/// processes would only contend.
pub fn one_thread() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rayon::ThreadPoolBuilder::new().num_threads(1).build_global();
    });
}

/// A scratch file for readers that take a path, not bytes (SQLite): on tmpfs where there is
/// one, named by `target` and the process (fuzzer jobs run side by side).
pub fn scratch_file(target: &str) -> std::path::PathBuf {
    let dir = if Path::new("/dev/shm").is_dir() { std::path::PathBuf::from("/dev/shm") } else { std::env::temp_dir() };
    dir.join(format!("strobe-fuzz-{target}-{}.sqlite", std::process::id()))
}

/// The chrome/Kineto importer on `bytes` (plain or gzipped), built into memory, then the
/// built store opened and walked. An import error is fine; a store that fails to open after
/// a successful import is a bug (the importer wrote something its reader refuses).
pub fn chrome(bytes: &[u8]) {
    one_thread();
    let name = Path::new("fuzz-input.json");
    let mut b = StoreBuilder::in_memory();
    let Ok(meta) = chrome_json::import_bytes(name, bytes, &mut b, &Progress::default()) else { return };
    let built = b.finish(&meta).expect("finishing an in-memory store cannot fail");
    let store = strobe_store::cache::open_built(built).expect("a store just built must open");
    walk(&store);
}

/// The Perfetto protobuf importer on raw bytes (plain or gzipped), then the store read back.
pub fn perfetto(bytes: &[u8]) {
    one_thread();
    let name = Path::new("fuzz-input.pftrace");
    let mut b = StoreBuilder::in_memory();
    let Ok(meta) = strobe_import::perfetto_pb::import_bytes(name, bytes, &mut b, &Progress::default()) else { return };
    let built = b.finish(&meta).expect("finishing an in-memory store cannot fail");
    let store = strobe_store::cache::open_built(built).expect("a store just built must open");
    walk(&store);
}

/// Reads everything a viewer or report reads from `store`; bounded so a store with many
/// lanes or spans stays fast.
pub fn walk(store: &Store) {
    let lanes = store.lanes_in_order();
    for &lane in lanes.iter().take(64) {
        let v = store.lane_view(lane);
        let (t0, t1) = match (v.starts.first(), v.ends.iter().max()) {
            (Some(&a), Some(&b)) => (a, b.max(a.saturating_add(1))),
            _ => (0, 1),
        };
        let mut seen = 0usize;
        store.query_window(lane, t0, t1, |m| {
            seen += 1;
            if seen <= 256 {
                if let Some(&span) = v.span.get(m) {
                    let _ = store.span_name(span);
                    let _ = store.span_args(span);
                    let _ = store.span_kind(span);
                    let _ = store.flows_to(span).count();
                    let _ = store.flows_from(span).count();
                }
            }
        });
        let width = t1.saturating_sub(t0).max(1);
        for px in [1i64, 100, 2000] {
            let mut n = 0usize;
            store.lod_query(lane, t0, t1, (width / px).max(1), |_, item| {
                n += 1;
                // the timeline reads a drawn item's span alone: where the lane's column reads,
                // that one element is the same
                let one = store.member_span(lane, item.member);
                if let Some(&s) = v.span.get(item.member as usize) {
                    assert_eq!(one, Some(s), "member_span against the lane view");
                }
            });
        }
    }
    for c in store.counters.iter().take(64) {
        let (ts, vals) = store.counter_points(c);
        let _ = (ts.len(), vals.len());
    }
    for id in 0..store.string_count().min(256) {
        let _ = store.string(id as u32);
    }
    let r = strobe_analysis::report::report(store, 10);
    let _ = strobe_analysis::report::to_text(&r);
    // the window's overview projects the NVTX ranges of every trace it opens
    let _ = strobe_analysis::nvtx_gpu::by_name(&strobe_analysis::nvtx_gpu::project(store));
    // the several-rank report reads each trace's process groups, collective records and
    // point-to-point ops from Kineto args, and merges them (one rank here)
    let _ = strobe_analysis::ranks::comm_ops::comm_records(store);
    let _ = strobe_analysis::pipeline::p2p::p2p_ops(store);
    let m = strobe_analysis::ranks::report::multi_rank_report(
        &[("fuzz-input.json", store)],
        strobe_analysis::ranks::align::Alignment::Recorded,
        3,
    );
    let _ = strobe_analysis::ranks::report::to_text(&m);
}

/// The store file's section table checksum and length made to match its bytes, so that
/// mutations of the table and of the columns reach the reader's structural checks instead
/// of stopping at the checksum.
pub fn with_consistent_header(bytes: &[u8]) -> Option<Vec<u8>> {
    use strobe_store::format::{Header, SectionEntry, HEADER_LEN, MAX_SECTIONS};
    if bytes.len() < HEADER_LEN {
        return None;
    }
    let mut v = bytes.to_vec();
    let hs = std::mem::size_of::<Header>();
    let mut h: Header = bytemuck::pod_read_unaligned(&v[..hs]);
    let n = (h.section_count as usize).min(MAX_SECTIONS);
    h.section_count = n as u32;
    // this build's version too: a seed written before a layout bump still reaches the checks
    h.version = strobe_store::format::VERSION;
    h.file_len = v.len() as u64;
    h.table_hash = xxhash_rust::xxh3::xxh3_64(&v[hs..hs + n * std::mem::size_of::<SectionEntry>()]);
    v[..hs].copy_from_slice(bytemuck::bytes_of(&h));
    Some(v)
}
