//! Compressed sections decoded on first use, chunk by chunk. A query decodes the chunks its
//! range falls in, not the whole column: a reopened store's first window query reads a
//! level of detail's few chunks and a frame the members it shows (on the 250 MB nsys
//! export, decoding whole sections made the first query 49 ms, 35 of them decoding its
//! level of detail whole). A section read whole is decoded on every core, as on open.
//!
//! A section's decoded bytes live in anonymous memory mapped at its full length on first
//! use: a page costs nothing until a chunk is written into it. Each chunk is written once,
//! inside its own `Once`, before any reader is handed a slice over it; slices are only ever
//! made over chunks whose `Once` has completed, so no reference overlaps a write.

use crate::codec::{self, Delta, CHUNK};
use crate::reader::Backing;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Once, OnceLock};

/// A lazy section's decoded bytes: an anonymous map (zero pages until written), or zeroed
/// words where no map can be had.
struct Buf {
    ptr: *mut u8,
    _map: Option<memmap2::MmapMut>,
    _words: Vec<u64>,
}

// SAFETY: `ptr` points into memory `Buf` owns and never moves (a map, or a Vec's heap
// buffer); its bytes are written only chunk by chunk inside each chunk's `Once`, and read
// only through slices over chunks whose `Once` has completed (`Lazy::bytes`).
unsafe impl Send for Buf {}
unsafe impl Sync for Buf {}

impl Buf {
    fn zeroed(len: usize) -> Buf {
        match memmap2::MmapMut::map_anon(len.max(1)) {
            Ok(mut m) => {
                codec::huge_pages(&mut m);
                Buf { ptr: m.as_mut_ptr(), _map: Some(m), _words: Vec::new() }
            }
            Err(_) => {
                let mut w = vec![0u64; len.div_ceil(8).max(1)];
                Buf { ptr: w.as_mut_ptr() as *mut u8, _map: None, _words: w }
            }
        }
    }
}

/// One compressed section left for its first use.
struct Section {
    id: usize,
    /// The section's compressed bytes: a range of the store's image.
    payload: Range<usize>,
    /// Each chunk's frame, a range of the payload.
    frames: Vec<Range<usize>>,
    delta: Delta,
    len: usize,
    buf: OnceLock<Buf>,
    chunks: Box<[Once]>,
    /// How many chunks are decoded: once all are, the store reads the section as a raw one.
    done: AtomicUsize,
}

/// A store's compressed sections not decoded on open.
pub(crate) struct Lazy {
    image: Arc<Backing>,
    sections: Vec<Option<Section>>,
    /// The store file, removed when a chunk fails to decode (so the next open rebuilds it).
    path: String,
    failed: AtomicBool,
}

impl Lazy {
    pub(crate) fn new(image: Arc<Backing>, path: &str) -> Lazy {
        Lazy { image, sections: Vec::new(), path: path.to_string(), failed: AtomicBool::new(false) }
    }

    /// Section `id`, whose compressed bytes are `payload` of the image, left for its first
    /// use; its header and chunk table are checked now. Returns its decoded length.
    pub(crate) fn add(&mut self, id: usize, payload: Range<usize>) -> Result<usize, String> {
        let bytes = self.image.bytes().get(payload.clone()).ok_or("compressed section past the file's end")?;
        let (len, delta, frames) = codec::frame_table(bytes)?;
        if self.sections.len() <= id {
            self.sections.resize_with(id + 1, || None);
        }
        let chunks = (0..frames.len()).map(|_| Once::new()).collect();
        self.sections[id] =
            Some(Section { id, payload, frames, delta, len, buf: OnceLock::new(), chunks, done: AtomicUsize::new(0) });
        Ok(len)
    }

    /// Bytes `r` of section `id`, their chunks decoded first (empty when `r` is not inside
    /// the section). A chunk that does not decode (a store damaged on disk) reads as zeros,
    /// and the store's file is removed so that the next open rebuilds it.
    pub(crate) fn bytes(&self, id: usize, r: Range<usize>) -> &[u8] {
        let Some(Some(s)) = self.sections.get(id) else { return &[] };
        if r.start >= r.end || r.end > s.len {
            return &[];
        }
        let buf = s.buf.get_or_init(|| Buf::zeroed(s.len));
        self.decode_chunks(s, buf, r.start / CHUNK..(r.end - 1) / CHUNK + 1);
        // SAFETY: inside the section's buffer (r.end ≤ len), over chunks whose `Once` has
        // completed: written once, never again, and published to this thread by the `Once`.
        unsafe { std::slice::from_raw_parts(buf.ptr.add(r.start), r.end - r.start) }
    }

    /// Section `id` whole, once every chunk of it is decoded (by reads of any ranges), so
    /// that the store can read it as it reads a raw section from then on.
    pub(crate) fn whole_if_done(&self, id: usize) -> Option<&[u8]> {
        let s = self.sections.get(id)?.as_ref()?;
        if s.done.load(Ordering::Acquire) < s.chunks.len() {
            return None;
        }
        let buf = s.buf.get()?;
        // SAFETY: every chunk's `Once` has completed (each counted in `done` after it wrote
        // its chunk; read here with Acquire): the whole buffer is written, never again.
        Some(unsafe { std::slice::from_raw_parts(buf.ptr, s.len) })
    }

    /// Chunks `cs` of `s` decoded where they are not yet: by this thread, and by helper
    /// threads when there are several (`codec::on_threads`).
    fn decode_chunks(&self, s: &Section, buf: &Buf, cs: Range<usize>) {
        // the common case, a read of chunks already there (a column read span by span), first:
        // no allocation
        if s.chunks.get(cs.clone()).is_some_and(|c| c.iter().all(Once::is_completed)) {
            return;
        }
        let missing: Vec<usize> = cs.filter(|&c| s.chunks.get(c).is_some_and(|o| !o.is_completed())).collect();
        if missing.is_empty() {
            return;
        }
        let _t = (missing.len() > 1).then(|| crate::timing::Phase::start("store: decode on first use"));
        let next = AtomicUsize::new(0);
        let work = || {
            let mut d = zstd::bulk::Decompressor::new().ok();
            while let Some(&c) = missing.get(next.fetch_add(1, Ordering::Relaxed)) {
                s.chunks[c].call_once(|| {
                    self.decode_chunk(s, buf, c, d.as_mut());
                    s.done.fetch_add(1, Ordering::Release);
                });
            }
        };
        // a helper that panicked leaves its chunk unwritten: never handed out as decoded
        assert!(codec::on_threads(missing.len(), work), "a chunk decoder thread panicked");
    }

    /// Chunk `c` of `s` into its place in `buf`; called once, inside the chunk's `Once`.
    fn decode_chunk(&self, s: &Section, buf: &Buf, c: usize, d: Option<&mut zstd::bulk::Decompressor<'_>>) {
        let at = c * CHUNK;
        let n = CHUNK.min(s.len - at);
        // SAFETY: chunk c's bytes, inside the buffer (at + n ≤ len); written only here, inside
        // the chunk's `Once`, and no slice over them exists before it completes.
        let dst = unsafe { std::slice::from_raw_parts_mut(buf.ptr.add(at), n) };
        let f = &s.frames[c];
        let frame = self.image.bytes().get(s.payload.start + f.start..s.payload.start + f.end).unwrap_or(&[]);
        let done = match d {
            Some(d) => codec::decode_chunk(d, frame, dst, s.delta),
            None => Err("no zstd decompressor".into()),
        };
        if let Err(e) = done {
            dst.fill(0);
            if !self.failed.swap(true, Ordering::Relaxed) {
                eprintln!(
                    "strobe: store {}: section {} chunk {c} does not decode ({e}): read as zeros",
                    self.path, s.id
                );
                if std::path::Path::new(&self.path).is_file() {
                    let _ = std::fs::remove_file(&self.path);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `Lazy` over one compressed section `id` of `col`, and the column's bytes.
    fn lazy_of(col: &[i64], damage_at: Option<usize>) -> (Lazy, Vec<u8>) {
        let raw: Vec<u8> = bytemuck::cast_slice(col).to_vec();
        let mut payload = codec::encode(&[&raw], Delta::I64).unwrap();
        if let Some(at) = damage_at {
            payload[at] ^= 0x5a;
        }
        let n = payload.len();
        let mut words = vec![0u64; n.div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..n].copy_from_slice(&payload);
        let mut lazy = Lazy::new(Arc::new(Backing::Owned(words, n)), "<test>");
        assert_eq!(lazy.add(3, 0..n).unwrap(), raw.len());
        (lazy, raw)
    }

    fn decoded(lazy: &Lazy) -> Vec<bool> {
        lazy.sections[3].as_ref().unwrap().chunks.iter().map(|o| o.is_completed()).collect()
    }

    #[test]
    fn a_range_decodes_only_its_chunks_and_reads_as_the_column() {
        // 5.5 chunks of sorted times
        let col: Vec<i64> = (0..(CHUNK * 11 / 16) as i64).map(|i| 1_700_000_000_000 + i * 29 + i % 3).collect();
        let (lazy, raw) = lazy_of(&col, None);
        assert_eq!(decoded(&lazy), vec![false; 6]);
        // a range across the boundary of chunks 2 and 3
        let r = 3 * CHUNK - 100..3 * CHUNK + 60;
        assert_eq!(lazy.bytes(3, r.clone()), &raw[r]);
        assert_eq!(decoded(&lazy), vec![false, false, true, true, false, false]);
        // ranges not inside the section read as nothing, and decode nothing
        assert!(lazy.bytes(3, raw.len() - 4..raw.len() + 4).is_empty());
        assert!(lazy.bytes(3, 10..10).is_empty());
        assert!(lazy.bytes(4, 0..8).is_empty());
        assert_eq!(decoded(&lazy), vec![false, false, true, true, false, false]);
        // the whole section, on several threads, around the chunks already there
        assert_eq!(lazy.bytes(3, 0..raw.len()), &raw[..]);
        assert_eq!(decoded(&lazy), vec![true; 6]);
        // the last byte, in the short last chunk
        assert_eq!(lazy.bytes(3, raw.len() - 1..raw.len()), &raw[raw.len() - 1..]);
    }

    #[test]
    fn a_damaged_chunk_reads_as_zeros_and_the_others_as_written() {
        let col: Vec<i64> = (0..(CHUNK * 3 / 8) as i64).map(|i| i * 1000 + i % 7).collect();
        let (clean, raw) = lazy_of(&col, None);
        let whole = clean.bytes(3, 0..raw.len());
        assert_eq!(whole, &raw[..]);
        // a byte in the last frame's compressed data (the section's tail)
        let n = clean.sections[3].as_ref().unwrap().payload.end;
        let (lazy, _) = lazy_of(&col, Some(n - 20));
        assert_eq!(lazy.bytes(3, 0..2 * CHUNK), &raw[..2 * CHUNK]);
        assert!(lazy.bytes(3, 2 * CHUNK..raw.len()).iter().all(|&b| b == 0));
        assert!(lazy.failed.load(Ordering::Relaxed));
    }
}
