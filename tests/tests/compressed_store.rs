//! An Nsight Systems export's store is written compressed (the cache must stay ≤ 0.5×
//! the export) and reads as the raw store of the same export does; a JSON trace's store stays
//! raw. A compressed section damaged on disk is refused on open, or reads as zeros (and the
//! store is removed, to be rebuilt), never a panic.

mod common;
use common::{assert_same_reads, cache_files, sample};
use std::path::{Path, PathBuf};
use strobe_import::LoadOptions;
use strobe_store::format::{sid, Header, SectionEntry};
use strobe_store::Store;

fn cached(dir: &Path) -> LoadOptions {
    LoadOptions::cached_in(dir.to_path_buf())
}

fn in_memory() -> LoadOptions {
    LoadOptions::in_memory()
}

fn store_files(dir: &Path) -> Vec<PathBuf> {
    cache_files(dir).into_iter().filter(|n| n.ends_with(".strobe")).map(|n| dir.join(n)).collect()
}

/// The section table of a store file, read from the bytes as `format` lays it out.
fn sections(bytes: &[u8]) -> Vec<SectionEntry> {
    let count = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let at = std::mem::size_of::<Header>();
    (0..count)
        .map(|i| {
            let e = &bytes[at + 24 * i..at + 24 * i + 24];
            let word = |a: usize, n: usize| e[a..a + n].iter().rev().fold(0u64, |v, &x| v << 8 | x as u64);
            SectionEntry { id: word(0, 4) as u32, codec: word(4, 4) as u32, offset: word(8, 8), len: word(16, 8) }
        })
        .collect()
}

#[test]
fn an_nsys_store_is_compressed_below_half_its_export_and_reads_as_the_raw_one() {
    for name in [
        "nsys_gpt_single.sqlite",
        "nsys_fuser_h200.sqlite",
        "nsys_ddp_2proc.sqlite",
        "nsys_pipit_saxpy_mpi.sqlite",
        "nsys_uvmtorch_cpu_only.sqlite",
        "nsys_fx_v2_tables.sqlite",
    ] {
        let path = sample(name);
        // an in-memory build is never compressed: the reference
        let raw = strobe_import::load(&path, &in_memory()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let built = strobe_import::load(&path, &cached(dir.path())).unwrap();
        // the second load reads the cache: sections decoded on open and on first use
        let reopened = strobe_import::load(&path, &cached(dir.path())).unwrap();
        assert_same_reads(&raw, &built, name);
        assert_same_reads(&raw, &reopened, name);
        let r = |s: &Store| serde_json::to_value(strobe_analysis::report::report(s, 10)).unwrap();
        assert_eq!(r(&raw), r(&reopened), "{name}: the report");

        let files = store_files(dir.path());
        assert_eq!(files.len(), 1, "{name}");
        let bytes = std::fs::read(&files[0]).unwrap();
        let export = std::fs::metadata(&path).unwrap().len();
        assert!((bytes.len() as u64) * 2 <= export, "{name}: store {} bytes for an export of {export}", bytes.len());
        // the span columns, when worth it, are compressed; the tiny ones are not
        let table = sections(&bytes);
        let start = table.iter().find(|e| e.id == sid::M_START).unwrap();
        assert_eq!(start.codec, (raw.span_count() * 8 >= 4096) as u32, "{name}: {start:?}");
        assert!(table.iter().all(|e| e.codec == 0 || e.len >= 16), "{name}");
    }
}

#[test]
fn a_json_traces_store_stays_raw() {
    let dir = tempfile::tempdir().unwrap();
    strobe_import::load(&sample("gpt_train.json.gz"), &cached(dir.path())).unwrap();
    let bytes = std::fs::read(&store_files(dir.path())[0]).unwrap();
    assert!(sections(&bytes).iter().all(|e| e.codec == 0));
}

#[test]
fn a_store_written_behind_reads_as_a_finished_one_and_writes_the_same_file() {
    for name in ["nsys_gpt_single.sqlite", "nsys_fuser_h200.sqlite"] {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let done = strobe_import::load(&sample(name), &cached(a.path())).unwrap();
        let behind =
            strobe_import::load(&sample(name), &LoadOptions { write_behind: true, ..cached(b.path()) }).unwrap();
        assert!(behind.is_pending(), "{name}");
        assert!(store_files(b.path()).is_empty(), "{name}: nothing cached before write_pending");
        // its level of detail is built: the same levels, and the same items at every zoom,
        // as the finished store's
        for lane in 0..done.lanes.len() as u32 {
            assert_eq!(done.lane_view(lane).levels, behind.lane_view(lane).levels, "{name}");
            let li = done.lane_index()[lane as usize];
            for px in [1i64 << 10, 1 << 16, 1 << 22, (li.max_end - li.min_start).max(1)] {
                let items = |st: &Store| {
                    let mut v = Vec::new();
                    st.lod_query(lane, li.min_start, li.max_end, px, |d, it| v.push((d, it)));
                    v
                };
                assert_eq!(items(&done), items(&behind), "{name} lane {lane} at {px} ns/px");
            }
        }
        assert_same_reads(&done, &behind, name);
        behind.write_pending().unwrap();
        assert!(!behind.is_pending());
        let (x, y) = (store_files(a.path()), store_files(b.path()));
        assert_eq!(y.len(), 1, "{name}");
        assert!(std::fs::read(&x[0]).unwrap() == std::fs::read(&y[0]).unwrap(), "{name}: files differ");
    }
    // a JSON trace's store is not compressed: it is finished and written at once
    let dir = tempfile::tempdir().unwrap();
    let json =
        strobe_import::load(&sample("gpt_train.json.gz"), &LoadOptions { write_behind: true, ..cached(dir.path()) })
            .unwrap();
    assert!(!json.is_pending() && store_files(dir.path()).len() == 1);
}

/// A copy of the store built from `name` with one byte flipped in the middle of section `id`.
fn damaged(name: &str, id: u32, dir: &Path) -> (Store, PathBuf) {
    let src = tempfile::tempdir().unwrap();
    let reference = strobe_import::load(&sample(name), &cached(src.path())).unwrap();
    let mut bytes = std::fs::read(&store_files(src.path())[0]).unwrap();
    let e = sections(&bytes).into_iter().find(|e| e.id == id).unwrap();
    assert_eq!(e.codec, 1, "section {id} is compressed");
    bytes[(e.offset + e.len / 2) as usize] ^= 0x5a;
    let out = dir.join(format!("damaged-{id}.strobe"));
    std::fs::write(&out, bytes).unwrap();
    (reference, out)
}

#[test]
fn a_damaged_compressed_section_is_refused_or_reads_as_zeros() {
    let dir = tempfile::tempdir().unwrap();
    // decoded on open (its members index the spans): the store is refused, saying why
    let (_, p) = damaged("nsys_gpt_single.sqlite", sid::M_SPAN, dir.path());
    let err = Store::open(&p).err().expect("a damaged member-to-span map is refused").to_string();
    assert!(err.contains("damaged-") && err.contains("section"), "{err}");
    // decoded on first use: the store opens, the column reads as zeros of its length, and
    // the analyses run on it without a panic
    for id in [sid::M_END, sid::LOD_ITEMS, sid::FLOWS, sid::SPAN_ARGS] {
        let (reference, p) = damaged("nsys_gpt_single.sqlite", id, dir.path());
        let store = Store::open(&p).unwrap();
        assert_eq!(store.span_count(), reference.span_count());
        let _ = strobe_analysis::report::report(&store, 10);
        // every zoom, so that every level (and so every chunk) of the level of detail is read
        for lane in 0..store.lanes.len() as u32 {
            for k in 0..48 {
                store.lod_query(lane, i64::MIN / 2, i64::MAX / 2, 1i64 << k, |_, _| {});
            }
        }
        for s in 0..store.span_count() as u32 {
            let _ = store.span_args(s);
            let _ = store.flows_from(s).count();
        }
        assert!(!p.exists(), "section {id}: the damaged store is removed, so that the next open rebuilds it");
    }
}
