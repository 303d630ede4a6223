//! Gzipped copies of the files users share open like the plain files (an SQLite export
//! through an inflated copy in the cache dir, never beside the input, never left half
//! written), and a file Strobe cannot read is refused saying what it is.

mod common;
use common::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use strobe_import::{open, LoadOptions, Source};

fn gzip_into(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let out = dir.join(name);
    let mut e = flate2::write::GzEncoder::new(std::fs::File::create(&out).unwrap(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap();
    out
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v = cache_files(dir);
    v.sort();
    v
}

fn trace(path: &Path, cache: &Path) -> strobe_store::Store {
    match open(path, &LoadOptions::cached_in(cache)) {
        Ok(Source::Trace(s)) => *s,
        Ok(_) => panic!("{}: not opened as a trace", path.display()),
        Err(e) => panic!("{e}"),
    }
}

/// Spans, their names and times, and counters: what must come out the same.
fn fingerprint(s: &strobe_store::Store) -> (usize, i64, Vec<String>, usize) {
    let n = s.span_count();
    let total: i64 = (0..n as u32).map(|i| s.span_end(i) - s.span_start(i)).sum();
    let mut names: Vec<String> = (0..n as u32).map(|i| s.span_name(i).to_string()).collect();
    names.sort();
    names.dedup();
    (n, total, names, s.counters.len())
}

#[test]
fn gzipped_sqlite_and_pftrace_open_like_the_plain_files() {
    let inputs = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    for name in ["nsys_gpt_single.sqlite", "pftrace_torch_train.pftrace"] {
        let plain = trace(&sample(name), &cache.path().join("plain"));
        let gz = gzip_into(inputs.path(), &format!("{name}.gz"), &std::fs::read(sample(name)).unwrap());
        let before = listing(inputs.path());
        let modified = std::fs::metadata(&gz).unwrap().modified().unwrap();
        let c = cache.path().join("gz");
        let s = trace(&gz, &c);
        assert_eq!(fingerprint(&s), fingerprint(&plain), "{name}.gz");
        // nothing written beside the input, which is left as it was
        assert_eq!(listing(inputs.path()), before, "{name}.gz: files beside the input");
        assert_eq!(std::fs::metadata(&gz).unwrap().modified().unwrap(), modified);
        assert!(listing(&c).iter().all(|f| !f.ends_with(".tmp")), "{name}.gz: temp files left: {:?}", listing(&c));
        // opened again: from the cache
        assert_eq!(fingerprint(&trace(&gz, &c)), fingerprint(&plain), "{name}.gz reopened");
    }
}

#[test]
fn a_cut_gzipped_sqlite_is_refused_and_leaves_no_copy() {
    let inputs = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let mut gz = Vec::new();
    let mut e = flate2::write::GzEncoder::new(&mut gz, flate2::Compression::fast());
    e.write_all(&std::fs::read(sample("nsys_gpt_single.sqlite")).unwrap()).unwrap();
    e.finish().unwrap();
    let cut = inputs.path().join("cut.sqlite.gz");
    std::fs::write(&cut, &gz[..gz.len() / 2]).unwrap();
    for _ in 0..2 {
        let err = open(&cut, &LoadOptions::cached_in(cache.path())).err().expect("a cut copy must not open");
        let msg = err.to_string();
        assert!(msg.contains("cut.sqlite.gz") && msg.contains("gzip stream breaks"), "{msg}");
        assert_eq!(listing(cache.path()), Vec::<String>::new(), "nothing left in the cache");
    }
}

#[test]
fn gzipped_pickle_and_ncu_report_open_like_the_plain_files() {
    let inputs = tempfile::tempdir().unwrap();
    let opts = LoadOptions::in_memory();
    let gz = gzip_into(inputs.path(), "ncu_esmm.ncu-rep.gz", &std::fs::read(sample("ncu_esmm.ncu-rep")).unwrap());
    match (open(&sample("ncu_esmm.ncu-rep"), &opts), open(&gz, &opts)) {
        (Ok(Source::Ncu(a)), Ok(Source::Ncu(b))) => assert_eq!(a, b),
        _ => panic!("ncu report and its gzipped copy"),
    }
    // named anything: what is inside decides
    let gz = gzip_into(inputs.path(), "snapshot.bin.gz", &std::fs::read(sample("mem_train.pickle")).unwrap());
    match (open(&sample("mem_train.pickle"), &opts), open(&gz, &opts)) {
        (Ok(Source::MemorySnapshot(a)), Ok(Source::MemorySnapshot(b))) => {
            assert_eq!((a.segments.len(), a.device_traces.len()), (b.segments.len(), b.device_traces.len()));
            assert_eq!(
                a.device_traces.iter().map(Vec::len).sum::<usize>(),
                b.device_traces.iter().map(Vec::len).sum::<usize>()
            );
        }
        _ => panic!("snapshot and its gzipped copy"),
    }
}

#[test]
fn an_unreadable_file_is_refused_saying_what_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let zstd = dir.path().join("trace.json.zst");
    std::fs::write(&zstd, [0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x05, 0x29, 0, 0]).unwrap();
    let zip = dir.path().join("traces.zip");
    std::fs::write(&zip, b"PK\x03\x04\x14\x00\x00\x00\x08\x00rest of a zip").unwrap();
    let proto = dir.path().join("profile.pb");
    std::fs::write(&proto, [0x08, 0x96, 0x01, 0x12, 0x02, b'a', b'b', 0x18, 0x01]).unwrap();
    let unknown_gz = gzip_into(dir.path(), "data.gz", b"\x00\x01\x02 not anything");
    let sqlite_gz = gzip_into(dir.path(), "other.gz", b"SQLite format 3\0 but cut after its magic");
    let zstd_gz = gzip_into(dir.path(), "x.gz", &[0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0]);
    for (f, want) in [
        (&zstd, "a zstd archive"),
        (&zip, "a ZIP archive"),
        (&proto, "a protobuf of unknown kind"),
        (&unknown_gz, "a gzip file of unknown contents"),
        (&zstd_gz, "a gzipped zstd archive"),
    ] {
        let msg =
            open(f, &LoadOptions::in_memory()).err().unwrap_or_else(|| panic!("{} opened", f.display())).to_string();
        assert!(msg.contains(want), "{}: {msg}", f.display());
        assert!(!msg.contains("chrome trace"), "{msg}");
        let msg = strobe_import::load(f, &LoadOptions::in_memory()).err().unwrap().to_string();
        assert!(msg.contains(want), "{}: {msg}", f.display());
    }
    // a gzipped SQLite database that is not a whole export: an error naming the file
    let cache = tempfile::tempdir().unwrap();
    let msg = open(&sqlite_gz, &LoadOptions::cached_in(cache.path())).err().expect("not an export").to_string();
    assert!(msg.contains("other.gz"), "{msg}");
    assert!(listing(cache.path()).iter().all(|f| !f.ends_with(".tmp")));
}
