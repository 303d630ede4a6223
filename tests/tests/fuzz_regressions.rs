//! Inputs the fuzz campaign (fuzz/, docs/fuzzing.md) found to break a reader, replayed
//! byte for byte from fuzz/regressions/<target>/. Each test is named after what broke and
//! checks the reader now answers with an error or a result that keeps its own invariants.

use std::path::PathBuf;

fn regression(target: &str, name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions").join(target).join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A corrupt cache whose member-depth column (not scanned on open) names depth 16777216 in a
/// lane whose index says max_depth is small: the fine-resolution LOD query indexed its
/// per-depth folders with it and panicked. The fuzzer's input
/// (fuzz/regressions/store_reader/member_depth_past_lane_max_depth.store) was written in an
/// older store layout, so the same corruption is made here on a store of this build's layout:
/// a CPU call tree, then the first member's depth overwritten in the file's bytes.
#[test]
fn store_member_depth_past_lane_max_depth() {
    use strobe_model::{IdKey, LaneKind, SourceFormat, SpanKind, TraceMeta};
    let mut b = strobe_store::StoreBuilder::in_memory();
    let lane = b.lane(LaneKind::CpuThread { pid: IdKey::Num(1), tid: IdKey::Num(1) });
    let name = b.intern("op");
    for (start, end) in [(0, 100), (10, 50), (20, 30), (60, 90), (200, 300), (210, 220)] {
        let span = strobe_store::SpanInput {
            lane,
            start,
            end,
            name,
            cat: 0,
            kind: SpanKind::CpuOp,
            flags: 0,
            args: &[],
            correlation: 0,
            copy_dir: None,
        };
        b.push_span(span).unwrap();
    }
    let strobe_store::Built::Memory(mut bytes) = b.finish(&TraceMeta::new(SourceFormat::Chrome, "t")).unwrap() else {
        panic!("an in-memory builder builds in memory")
    };
    // the section table follows the header (read with the store's own types, not offsets)
    use strobe_store::format::{sid, Header, SectionEntry};
    let (hs, es) = (std::mem::size_of::<Header>(), std::mem::size_of::<SectionEntry>());
    let header: Header = bytemuck::pod_read_unaligned(&bytes[..hs]);
    let depth_col = (0..header.section_count as usize)
        .map(|i| bytemuck::pod_read_unaligned::<SectionEntry>(&bytes[hs + i * es..hs + (i + 1) * es]))
        .find(|e| e.id == sid::M_DEPTH)
        .map(|e| e.offset as usize)
        .expect("a member-depth section");
    bytes[depth_col..depth_col + 4].copy_from_slice(&(1u32 << 24).to_le_bytes());
    let store =
        strobe_store::Store::from_bytes(bytes).expect("the corrupt column is not one the open scans; the store opens");
    assert_eq!(store.lane_view(0).depth[0], 1 << 24, "the corruption is where the query reads it");
    let mut items = 0;
    for lane in 0..store.lanes.len() as u32 {
        let v = store.lane_view(lane);
        let (Some(&t0), Some(&t1)) = (v.starts.first(), v.ends.iter().max()) else { continue };
        store.lod_query(lane, t0, t1.max(t0 + 1), 1, |depth, item| {
            assert!(depth <= v.max_depth, "lane {lane}: item at depth {depth} past max_depth {}", v.max_depth);
            assert!((item.member as usize) < v.starts.len(), "lane {lane}: item names a missing member");
            items += 1;
        });
    }
    assert!(items > 0, "the intact lanes still answer");
}

/// A corrupt deflate stream that made a streaming (inflate-beside-parse) gzip reader wait
/// forever for bytes that never came (found by the gzip_json target in CI): it must end,
/// with an error naming the corruption.
#[test]
fn gzip_corrupt_deflate_stream_ends() {
    let bytes = regression("gzip_json", "streaming_inflate_hang.gz");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.json.gz");
        std::fs::write(&p, &bytes).unwrap();
        let opts = strobe_import::LoadOptions {
            cache_dir: Some(dir.path().to_path_buf()),
            no_cache: true,
            progress: None,
            defer_write: false,
            write_behind: false,
        };
        let r = strobe_import::open(&p, &opts).map(|_| ()).map_err(|e| e.to_string());
        let _ = tx.send(r);
    });
    let r = rx.recv_timeout(std::time::Duration::from_secs(60)).expect("the import ends");
    let e = r.expect_err("a corrupt deflate stream is an error");
    assert!(e.contains("corrupt"), "{e}");
}

/// A mutated nsys export whose runtime table claims a rowid near 2⁶² (an up-front
/// reservation sized by the rowid, even capped at 2²⁸ spans, asks for 15 GB) and whose page 55
/// holds a record header longer than its payload. The reservation is bounded by the file's size
/// (no row takes less than 8 bytes of it); the damaged record is an error naming the table,
/// the page and the row.
#[test]
fn nsys_huge_rowid_and_overlong_record_header() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge_rowid_reserve.sqlite");
    std::fs::write(&path, regression("nsys_sqlite", "huge_rowid_reserve.sqlite")).unwrap();
    let err = match strobe_import::nsys_sqlite::import_to_memory(&path) {
        Ok(_) => panic!("a damaged record must not import"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("CUPTI_ACTIVITY_KIND_RUNTIME") && err.contains("page 55, row 20"), "{err}");
}

/// A pickle opening with BINFLOAT (not a snapshot's dict or list): the split read skipped the
/// header check the sequential read makes, and gave another error. Both now say the same.
#[test]
fn split_snapshot_read_checks_the_header_too() {
    use strobe_import::memory_snapshot::{from_bytes, from_bytes_split_at};
    let data = regression("memory_snapshot", "split_skipped_the_header_check.pickle");
    let seq = from_bytes(&data).unwrap_err();
    assert!(seq.contains("not a pickle of a dict or list"), "{seq}");
    assert_eq!(from_bytes_split_at(&data, Some(data.len() / 2)).unwrap_err(), seq);
}

/// Corrupt caches on which the Ops table indexed past its arrays and panicked inside the
/// report: a span whose name id is past the string table
/// (fuzz/regressions/store_reader/span_name_past_string_table.store), and a kernel whose launch
/// names a span past the spans (launch_past_the_spans.store). The fuzz target reads them after
/// setting the header's version to this build's (its header repair), and so does this test. The
/// report now leaves such spans out of the Ops table.
#[test]
fn store_ops_table_ids_past_their_tables() {
    for name in ["span_name_past_string_table.store", "launch_past_the_spans.store"] {
        let mut bytes = regression("store_reader", name);
        let hs = std::mem::size_of::<strobe_store::format::Header>();
        let mut h: strobe_store::format::Header = bytemuck::pod_read_unaligned(&bytes[..hs]);
        h.version = strobe_store::format::VERSION;
        bytes[..hs].copy_from_slice(bytemuck::bytes_of(&h));
        let store =
            strobe_store::Store::from_bytes(bytes).unwrap_or_else(|e| panic!("{name}: the repaired header opens: {e}"));
        let r = strobe_analysis::report::report(&store, 10);
        let _ = strobe_analysis::report::to_text(&r);
    }
}
