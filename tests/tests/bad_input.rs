//! Hostile and broken inputs: each gives a clear error naming the file (or a clean empty
//! result), never a panic, and leaves no store behind in the cache dir.

mod common;
use common::*;
use std::io::Write;

fn write(dir: &std::path::Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// Loads `bytes` as file `name`; returns the error text (and checks no cache is left).
fn load_err(name: &str, bytes: &[u8]) -> String {
    let src = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let p = write(src.path(), name, bytes);
    let err = match load_in(&p, cache.path()) {
        Ok(_) => panic!("{name}: loaded without error"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains(name), "error does not name the file: {err}");
    assert!(cache_files(cache.path()).is_empty(), "{name}: cache left behind: {:?}", cache_files(cache.path()));
    err
}

fn load_ok(name: &str, bytes: &[u8]) -> strobe_store::Store {
    let src = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let p = write(src.path(), name, bytes);
    load_in(&p, cache.path()).unwrap_or_else(|e| panic!("{e}"))
}

fn real_trace_text() -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(sample("gpt_train.json.gz")).unwrap())
        .read_to_end_vec(&mut out);
    out
}

trait ReadAll {
    fn read_to_end_vec(self, out: &mut Vec<u8>);
}
impl<R: std::io::Read> ReadAll for R {
    fn read_to_end_vec(mut self, out: &mut Vec<u8>) {
        self.read_to_end(out).unwrap();
    }
}

/// Byte ranges of the events in `traceEvents`, read by serde_json (not Strobe's scanner).
fn event_ranges(text: &[u8]) -> Vec<(usize, usize)> {
    #[derive(serde::Deserialize)]
    struct Doc<'a> {
        #[serde(borrow, rename = "traceEvents")]
        events: Vec<&'a serde_json::value::RawValue>,
    }
    let doc: Doc = serde_json::from_slice(text).unwrap();
    let base = text.as_ptr() as usize;
    doc.events
        .iter()
        .map(|r| (r.get().as_ptr() as usize - base, r.get().as_ptr() as usize - base + r.get().len()))
        .collect()
}

/// A trace cut anywhere (a killed job, a partial copy) opens with every complete event before
/// the cut and says where it stopped.
#[test]
fn truncated_json_keeps_every_complete_event() {
    let t = real_trace_text();
    let ranges = event_ranges(&t);
    let (first, last) = (ranges[0].0, ranges.last().unwrap().1);
    let mut cuts: Vec<usize> = (1..12).map(|k| first + (last - first) * k / 12 + k * 7).collect();
    cuts.extend([4, first - 1, first + 1, ranges[5].1, ranges[5].1 + 1, last, last + 1, t.len() - 2, t.len() - 1]);
    for cut in cuts {
        let s = load_ok("cut.json", &t[..cut]);
        let tr = s.meta.load.truncated.as_ref().unwrap_or_else(|| panic!("cut at {cut}: not marked truncated"));
        let complete = ranges.iter().filter(|r| r.1 <= cut).count() as u64;
        assert_eq!(tr.events_read, complete, "cut at {cut}: {tr:?}");
        assert_eq!(s.meta.load.events, complete, "cut at {cut}");
        if let Some(r) = ranges.iter().find(|r| r.0 < cut && r.1 > cut) {
            assert_eq!(tr.at_byte, r.0 as u64, "cut at {cut} inside the event at {}: {tr:?}", r.0);
            assert!(tr.what.contains("inside an event"), "{tr:?}");
        }
    }
    // the whole file is not truncated
    assert!(load_ok("whole.json", &t).meta.load.truncated.is_none());
}

#[test]
fn truncated_gzip_keeps_what_inflated() {
    let t = real_trace_text();
    let ranges = event_ranges(&t);
    let g = std::fs::read(sample("gpt_train.json.gz")).unwrap();
    for k in [4, 2, 1] {
        let cut = g.len() - g.len() / (k + 1);
        let s = load_ok("cut.json.gz", &g[..cut]);
        let tr = s.meta.load.truncated.as_ref().expect("marked truncated");
        assert!(tr.what.contains("gzip stream ends early"), "{tr:?}");
        // what inflated is a prefix of the text: every event before the cut point is there
        let n = ranges.iter().filter(|r| r.1 as u64 <= tr.at_byte).count() as u64;
        assert_eq!(tr.events_read, n, "{tr:?}");
        assert!(n > 1000);
    }
    let e = load_err("empty.json.gz", &g[..10]);
    assert!(e.contains("gzip"), "{e}");
}

/// The gzip trailer's ISIZE is the length modulo 4 GiB, so for a trace of 4 GiB or more it
/// is smaller than the text: the importer must never size or stop the inflate by it. Here it
/// lies outright: every event of the stream is still read, checked
/// against the independent reading in tests/expected, with a note that the trailer does not
/// match rather than an error.
#[test]
fn gzip_trailer_that_lies_about_the_size() {
    let g = std::fs::read(sample("gpt_train.json.gz")).unwrap();
    let events = expected("gpt_train.chrome.json")["events"].as_u64().unwrap();
    let n = g.len();
    for isize in [0u32, 1, 4096] {
        let mut lie = g.clone();
        lie[n - 4..].copy_from_slice(&isize.to_le_bytes());
        let s = load_ok("lie.json.gz", &lie);
        assert_eq!(s.meta.load.events, events, "ISIZE {isize}");
        assert!(s.meta.load.truncated.is_none(), "{:?}", s.meta.load.truncated);
        assert!(s.meta.load.notes.iter().any(|x| x.contains("gzip trailer")), "{:?}", s.meta.load.notes);
    }
    // the same lie on the first of two members: what it inflated is kept (not an error), with
    // the note, and the second member is still read
    let mut two = g.clone();
    two[n - 4..].copy_from_slice(&7u32.to_le_bytes());
    two.extend_from_slice(&gz(b" "));
    let s = load_ok("lie2.json.gz", &two);
    assert_eq!(s.meta.load.events, events);
    assert!(s.meta.load.notes.iter().any(|x| x.contains("gzip trailer")), "{:?}", s.meta.load.notes);
}

/// Splits the real trace's text at event boundaries into gzip members, as `gzip -c a b c`
/// writes them (`gzip -d` reads the text back whole): the same events as the text read at
/// once (tests/expected), with nothing noted. An empty member in between changes nothing.
#[test]
fn multi_member_gzip() {
    let t = real_trace_text();
    let ranges = event_ranges(&t);
    let events = expected("gpt_train.chrome.json")["events"].as_u64().unwrap();
    let (a, b) = (ranges[ranges.len() / 3].0, ranges[2 * ranges.len() / 3].0 + 3);
    let mut three = gz(&t[..a]);
    three.extend(gz(b""));
    three.extend(gz(&t[a..b]));
    three.extend(gz(&t[b..]));
    let s = load_ok("three.json.gz", &three);
    assert_eq!(s.meta.load.events, events);
    assert!(s.meta.load.truncated.is_none(), "{:?}", s.meta.load.truncated);
    assert!(s.meta.load.notes.iter().all(|n| !n.contains("gzip")), "{:?}", s.meta.load.notes);
    // a trailer that does not match on the first member: noted, and the rest still read
    let mut lie = gz(&t[..a]);
    let n = lie.len();
    lie[n - 8] ^= 1;
    lie.extend(gz(&t[a..]));
    let s = load_ok("lie.json.gz", &lie);
    assert_eq!(s.meta.load.events, events);
    assert!(s.meta.load.notes.iter().any(|x| x.contains("gzip trailer of member 1")), "{:?}", s.meta.load.notes);
}

/// Bytes after the last member that are not gzip (zero padding, appended junk): gzip -d
/// inflates the file and ignores them with a warning; so does the import, with a note.
/// A second member cut inside its header is a cut stream, not junk.
#[test]
fn gzip_with_trailing_data() {
    let g = std::fs::read(sample("gpt_train.json.gz")).unwrap();
    let events = expected("gpt_train.chrome.json")["events"].as_u64().unwrap();
    for tail in [&b"\0\0\0\0\0\0\0\0\0\0\0\0"[..], b"garbage after the trace\n", b"x"] {
        let mut t = g.clone();
        t.extend_from_slice(tail);
        let s = load_ok("tail.json.gz", &t);
        assert_eq!(s.meta.load.events, events, "{tail:?}");
        assert!(s.meta.load.truncated.is_none(), "{tail:?}");
        assert!(s.meta.load.notes.iter().any(|x| x.contains("not gzip")), "{:?}", s.meta.load.notes);
    }
    let mut cut = g.clone();
    cut.extend_from_slice(&[0x1f, 0x8b, 8, 0]);
    let s = load_ok("cut2.json.gz", &cut);
    assert_eq!(s.meta.load.events, events);
    let tr = s.meta.load.truncated.as_ref().expect("a cut second member is a cut stream");
    assert!(tr.what.contains("gzip stream ends early"), "{tr:?}");
}

/// Every way a damaged gzip file can stop the inflater ends the import: the real trace's
/// compressed bytes cut, or overwritten over a short window, at offsets spread over the
/// file (including the header and the trailer). Each import must return within a minute,
/// opening with what inflated or failing with an error that names the file.
#[test]
fn every_damaged_gzip_ends() {
    let g = std::fs::read(sample("gpt_train.json.gz")).unwrap();
    let n = g.len();
    let mut at: Vec<usize> = (0..16).map(|k| n * k / 16 + 13 * k).collect();
    at.extend([1, 3, 9, 10, 11, n - 9, n - 8, n - 5, n - 1]);
    for &p in &at {
        let mut flipped = g.clone();
        for b in &mut flipped[p..(p + 24).min(n)] {
            *b ^= 0xa5;
        }
        for (what, bytes) in [("cut", g[..p].to_vec()), ("flipped", flipped)] {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let src = tempfile::tempdir().unwrap();
                let cache = tempfile::tempdir().unwrap();
                let path = write(src.path(), "damaged.json.gz", &bytes);
                let _ = tx.send(load_in(&path, cache.path()).map(|s| s.meta.load.events).map_err(|e| e.to_string()));
            });
            let r = rx.recv_timeout(std::time::Duration::from_secs(60));
            match r {
                Err(_) => panic!("{what} at {p}: the import did not end"),
                Ok(Err(e)) => assert!(e.contains("damaged.json.gz"), "{what} at {p}: {e}"),
                Ok(Ok(_)) => {}
            }
        }
    }
}

#[test]
fn corrupt_gzip() {
    let mut g = std::fs::read(sample("gpt_train.json.gz")).unwrap();
    for b in &mut g[2000..2100] {
        *b ^= 0x5a;
    }
    let e = load_err("corrupt.json.gz", &g);
    assert!(e.contains("gzip"), "{e}");
}

#[test]
fn empty_file() {
    let e = load_err("empty.json", b"");
    assert!(e.contains("empty"), "{e}");
    let e = load_err("blank.json", b"   \n ");
    assert!(e.contains("empty"), "{e}");
}

#[test]
fn not_json() {
    let e = load_err("x.json", b"hello world");
    assert!(e.contains("not a chrome trace"), "{e}");
    let e = load_err("y.json", &gz(b"\x00\x01binary"));
    assert!(e.contains("y.json"), "{e}");
}

#[test]
fn zero_events_is_a_clean_empty_result() {
    for (name, text) in
        [("a.json", &b"[]"[..]), ("b.json", b"{\"traceEvents\": []}"), ("c.json", b"{\"traceEvents\": [],}")]
    {
        let s = load_ok(name, text);
        assert_eq!(s.span_count(), 0, "{name}");
        let r = strobe_analysis::report::report(&s, 20);
        assert!(r.gpus.is_empty() && r.top_kernels.is_empty(), "{name}");
    }
    // an object without traceEvents is no trace at all (a manifest, a config): said, not shown empty
    for (name, text) in [("d.json", &b"{}"[..]), ("manifest.json", b"{\"files\": [1, 2], \"version\": 3}")] {
        let e = load_err(name, text);
        assert!(e.contains("not a chrome trace") && e.contains("traceEvents"), "{e}");
    }
}

#[test]
fn wrong_types_nan_and_negative_times_are_counted_not_fatal() {
    let text = br#"{"traceEvents": [
        {"ph": "X", "name": "ok", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
        {"ph": "X", "name": "nan", "pid": 1, "tid": 1, "ts": NaN, "dur": 5},
        {"ph": "X", "name": "strts", "pid": 1, "tid": 1, "ts": "10", "dur": 5},
        {"ph": "X", "name": "neg", "pid": 1, "tid": 1, "ts": 10, "dur": -5},
        {"ph": "X", "name": "negts", "pid": 1, "tid": 1, "ts": -20, "dur": 5},
        {"ph": "X", "name": "obj", "pid": {"a": 1}, "tid": [1], "ts": 12, "dur": 1},
        {"ph": 7, "name": "badph", "ts": 1},
        {"ph": "X", "name": "inf", "pid": 1, "tid": 1, "ts": 1e999, "dur": 1},
        {"ph": "X", "name": "nodur", "pid": 1, "tid": 1, "ts": 1},
        {"ph": "C", "name": "ctr", "pid": 1, "ts": 3, "args": {"v": "x", "w": 2}}
    ]}"#;
    let s = load_ok("types.json", text);
    let names: Vec<&str> = (0..s.span_count() as u32).map(|i| s.span_name(i)).collect();
    assert!(names.contains(&"ok") && names.contains(&"negts") && names.contains(&"obj"), "{names:?}");
    assert!(!names.contains(&"nan") && !names.contains(&"neg") && !names.contains(&"inf"), "{names:?}");
    let sk = &s.meta.load.skipped;
    assert_eq!(sk.get("ts not a finite number"), Some(&3), "{sk:?}");
    assert_eq!(sk.get("negative duration"), Some(&1), "{sk:?}");
    assert_eq!(sk.get("no or unknown phase"), Some(&1), "{sk:?}");
    assert_eq!(sk.get("X event without dur"), Some(&1), "{sk:?}");
    assert_eq!(sk.get("counter value not a number"), Some(&1), "{sk:?}");
    assert_eq!(s.meta.load.events, 10);
}

#[test]
fn structurally_broken_event() {
    let e = load_err("broken.json", br#"{"traceEvents": [{"ph": "X", "ts" 1}]}"#);
    assert!(e.contains("at byte"), "{e}");
    let e = load_err("broken2.json", br#"[{"ph": "X"}, 5, {"ph": "X"}]"#);
    assert!(e.contains("expected an event object"), "{e}");
}

#[test]
fn invalid_utf8() {
    let mut t = br#"{"traceEvents": [{"ph": "X", "name": "a"#.to_vec();
    t.extend_from_slice(&[0xff, 0xfe]);
    t.extend_from_slice(br#"", "ts": 1, "dur": 1}]}"#);
    let e = load_err("utf8.json", &t);
    assert!(e.contains("UTF-8"), "{e}");
}

#[test]
fn deep_nesting_in_args_does_not_overflow() {
    let mut t = br#"[{"ph": "X", "name": "deep", "ts": 1, "dur": 1, "args": "#.to_vec();
    t.extend(std::iter::repeat_n(b'[', 200_000));
    t.extend(std::iter::repeat_n(b']', 200_000));
    t.extend_from_slice(b"}]");
    let s = load_ok("deep.json", &t);
    assert_eq!(s.span_count(), 1);
}

#[test]
fn corrupt_cache_is_rebuilt_not_trusted() {
    let cache = tempfile::tempdir().unwrap();
    let src = sample("perfetto_flow_events_json_v1.json");
    let a = load_in(&src, cache.path()).unwrap();
    let n = a.span_count();
    drop(a);
    let files = cache_files(cache.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let store = cache.path().join(&files[0]);
    // flip bytes in the middle and truncate: both must be caught
    let mut bytes = std::fs::read(&store).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    bytes.truncate(bytes.len() - 7);
    std::fs::write(&store, &bytes).unwrap();
    let b = load_in(&src, cache.path()).unwrap();
    assert_eq!(b.span_count(), n);
    // a store of another version is rebuilt too
    drop(b);
    let mut bytes = std::fs::read(&store).unwrap();
    bytes[8] = bytes[8].wrapping_add(1);
    std::fs::write(&store, &bytes).unwrap();
    let c = load_in(&src, cache.path()).unwrap();
    assert_eq!(c.span_count(), n);
}

#[test]
fn unwritable_cache_dir_falls_back_to_memory() {
    let src = sample("perfetto_flow_events_json_v1.json");
    let f = tempfile::NamedTempFile::new().unwrap();
    // a file where the cache dir should be: cannot create anything inside it
    let s = load_in(&src, &f.path().join("sub")).unwrap();
    assert_eq!(s.span_count(), 5);
}

#[test]
fn reopen_uses_the_cache_and_a_changed_source_rebuilds() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.json");
    std::fs::write(&p, br#"[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]"#).unwrap();
    assert_eq!(load_in(&p, cache.path()).unwrap().span_count(), 1);
    assert_eq!(cache_files(cache.path()).len(), 1);
    assert_eq!(load_in(&p, cache.path()).unwrap().span_count(), 1);
    assert_eq!(cache_files(cache.path()).len(), 1);
    std::fs::write(&p, br#"[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}, {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 3, "dur": 1}]"#).unwrap();
    assert_eq!(load_in(&p, cache.path()).unwrap().span_count(), 2);
}

#[test]
fn args_come_back_exactly_from_source_or_store() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let text = br#"[{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"shape": [[8, 1024], []], "s": "x\"y"}}]"#;
    let plain = dir.path().join("args.json");
    std::fs::write(&plain, text).unwrap();
    let zipped = dir.path().join("args.json.gz");
    std::fs::write(&zipped, gz(text)).unwrap();
    let want = r#"{"shape": [[8, 1024], []], "s": "x\"y"}"#;
    for p in [&plain, &zipped] {
        // built, then reopened from the cache
        for _ in 0..2 {
            let s = load_in(p, cache.path()).unwrap();
            assert_eq!(s.span_args(0), want, "{}", p.display());
        }
    }
}
