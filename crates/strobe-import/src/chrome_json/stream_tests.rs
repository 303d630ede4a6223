//! The gzip path parses while it inflates: checked with a reader that holds back the second
//! half of a real trace's compressed bytes until the parse has produced events.

use super::import_gzip;
use crate::Progress;
use std::io::Read;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use strobe_store::StoreBuilder;

fn sample(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sample-traces").join(name)
}

/// Serves `bytes`, but past `gate` waits (up to 30 s) until `progress` counts an event.
struct Gated<'p> {
    bytes: Vec<u8>,
    pos: usize,
    gate: usize,
    progress: &'p Progress,
    /// Whether events had been parsed when the gate opened (false: it timed out).
    opened_by_events: &'p std::sync::atomic::AtomicBool,
}

impl Read for Gated<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.gate && self.gate > 0 {
            let t = Instant::now();
            while self.progress.events.load(Ordering::Relaxed) == 0 && t.elapsed() < Duration::from_secs(30) {
                std::thread::sleep(Duration::from_millis(2));
            }
            self.opened_by_events.store(self.progress.events.load(Ordering::Relaxed) > 0, Ordering::Relaxed);
            self.gate = 0;
        }
        let end = if self.gate > 0 { self.gate } else { self.bytes.len() };
        let n = buf.len().min(end - self.pos);
        buf[..n].copy_from_slice(&self.bytes[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[test]
fn events_are_parsed_before_the_stream_is_all_read() {
    let path = sample("gpt_train.json.gz");
    let bytes = std::fs::read(&path).unwrap();
    let progress = Progress::default();
    let opened = std::sync::atomic::AtomicBool::new(false);
    let gate = bytes.len() / 2;
    let len = bytes.len() as u64;
    let reader = Gated { bytes, pos: 0, gate, progress: &progress, opened_by_events: &opened };
    let mut b = StoreBuilder::in_memory();
    let meta = import_gzip(&path, reader, len, &mut b, &progress).unwrap();
    assert!(opened.load(Ordering::Relaxed), "no event was parsed from the first half of the stream");
    // the whole file still arrives: the same events as reading it at once
    let mut whole = StoreBuilder::in_memory();
    let mut text = Vec::new();
    flate2::read::MultiGzDecoder::new(&std::fs::read(&path).unwrap()[..]).read_to_end(&mut text).unwrap();
    let plain = super::import_bytes(&path, &text, &mut whole, &Progress::default()).unwrap();
    assert_eq!(meta.load.events, plain.load.events);
    assert!(meta.load.truncated.is_none());
}
