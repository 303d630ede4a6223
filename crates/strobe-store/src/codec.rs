//! Compressed sections. An Nsight Systems export holds ~48 bytes a row and its store's
//! columns ~94: raw, its cache would be twice the export (it must stay ≤ 0.5×). A JSON
//! trace's ~200 bytes an event make its columns a third of the file, so its stores stay raw
//! and reopen with no copy; an importer asks for compression (`Output::compress_sections`).
//!
//! A compressed section is cut into chunks of `CHUNK` decoded bytes, each its own zstd frame,
//! so that both ways run on every core and a chunk's claimed size bounds what it may allocate.
//! Columns of sorted times and indices are delta-coded first (each word minus the word
//! `stride` before it, within its chunk): their differences are small and repeat, which
//! makes them compress 1.5–100× better than the values.
//!
//! ```text
//! [decoded length u64][chunk count u32][delta u32: word width in bytes (0, 4 or 8) | stride << 8]
//! [compressed length u32 × chunk count][frames …]
//! ```

use rayon::prelude::*;

/// `SectionEntry::codec` values.
pub const RAW: u32 = 0;
pub const ZSTD_CHUNKS: u32 = 1;

/// Decoded bytes per chunk (the last may be shorter). 1 MiB: twice zstd level 1's window,
/// so a chunk loses little ratio to its own frame; and as a chunk takes at least
/// `MIN_FRAME` + 4 bytes, a hostile header can claim at most ~87 Ki decoded bytes per byte
/// of its own.
pub(crate) const CHUNK: usize = 1 << 20;
/// No zstd frame is shorter (magic, frame header, one block header).
const MIN_FRAME: usize = 8;
/// zstd level 1: ~450 MB/s a core to write, ~1 GB/s to read; higher levels gain ~5 % of size
/// for twice the time, and the writing is after the answer, but not after the GUI's frame.
const LEVEL: i32 = 1;
const HEAD: usize = 16;
/// Sections shorter than this stay raw: a frame's overhead is not worth it.
pub const MIN_COMPRESSED: usize = 4096;

/// How a section's words are delta-coded before compression: the word width in bytes and
/// the stride in words (a record of several words compares each field with its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delta {
    pub width: u8,
    pub stride: u16,
}

impl Delta {
    pub const NONE: Delta = Delta { width: 0, stride: 0 };
    pub const I64: Delta = Delta { width: 8, stride: 1 };
    pub const U32: Delta = Delta { width: 4, stride: 1 };
    /// Records of `bytes` bytes, compared field by field in 8-byte words (a whole number of
    /// them, at most the 64 the reader takes).
    pub const fn records_of(bytes: usize) -> Delta {
        assert!(bytes.is_multiple_of(8) && bytes >= 8 && bytes <= 512, "records of whole 8-byte words");
        Delta { width: 8, stride: (bytes / 8) as u16 }
    }
    fn word(self) -> u32 {
        self.width as u32 | (self.stride as u32) << 8
    }
    fn from_word(w: u32) -> Option<Delta> {
        let d = Delta { width: (w & 0xff) as u8, stride: (w >> 8) as u16 };
        match (d.width, d.stride, w >> 24) {
            (0, 0, 0) => Some(d),
            (4 | 8, 1..=64, 0) => Some(d),
            _ => None,
        }
    }
}

/// `parts`, one after another, as a compressed section's bytes.
pub fn encode(parts: &[&[u8]], delta: Delta) -> std::io::Result<Vec<u8>> {
    debug_assert_eq!(Delta::from_word(delta.word()), Some(delta), "a delta coding the reader takes");
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let chunks = total.div_ceil(CHUNK);
    let frames: Vec<Vec<u8>> = (0..chunks)
        .into_par_iter()
        .map_init(
            || {
                // each frame carries its content's checksum (xxh64, ~10 GB/s): a section damaged
                // on disk fails to decode rather than reading as other values
                let c = zstd::bulk::Compressor::new(LEVEL).and_then(|mut c| {
                    c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))?;
                    Ok(c)
                });
                (c, Vec::with_capacity(CHUNK), Vec::with_capacity(zstd::zstd_safe::compress_bound(CHUNK)))
            },
            |(compressor, buf, packed), c| -> std::io::Result<Vec<u8>> {
                let compressor = compressor.as_mut().map_err(|e| std::io::Error::other(e.to_string()))?;
                gather(parts, c * CHUNK..((c + 1) * CHUNK).min(total), buf);
                encode_delta(buf, delta);
                // into a scratch buffer of the worst case, then copied out at its size: each
                // frame held until the section is assembled takes its size, not the bound
                packed.clear();
                compressor.compress_to_buffer(buf.as_slice(), packed)?;
                Ok(packed.clone())
            },
        )
        .collect::<std::io::Result<_>>()?;
    let mut out = Vec::with_capacity(HEAD + 4 * chunks + frames.iter().map(|f| f.len()).sum::<usize>());
    out.extend_from_slice(&(total as u64).to_le_bytes());
    out.extend_from_slice(&(chunks as u32).to_le_bytes());
    out.extend_from_slice(&delta.word().to_le_bytes());
    for f in &frames {
        let len = u32::try_from(f.len()).map_err(|_| std::io::Error::other("compressed chunk over 4 GiB"))?;
        out.extend_from_slice(&len.to_le_bytes());
    }
    for f in &frames {
        out.extend_from_slice(f);
    }
    Ok(out)
}

/// The decoded length a compressed section's header claims, its chunk table checked
/// against its bytes (so the claim is bounded by them), the frames not decoded.
pub fn decoded_len(payload: &[u8]) -> Result<usize, String> {
    frames(payload).map(|(total, _, _)| total)
}

/// A compressed section's header and chunk table, checked against its bytes: its decoded
/// length, delta coding, and each chunk's frame as a range of `payload` (chunk `c` decodes
/// to bytes `c * CHUNK..` of the section, and on its own: its delta coding restarts).
pub(crate) fn frame_table(payload: &[u8]) -> Result<(usize, Delta, Vec<std::ops::Range<usize>>), String> {
    let (total, delta, frames) = frames(payload)?;
    let base = payload.as_ptr() as usize;
    Ok((
        total,
        delta,
        frames.iter().map(|f| f.as_ptr() as usize - base..f.as_ptr() as usize - base + f.len()).collect(),
    ))
}

/// Chunk `frame` decoded into `dst`, the chunk's place (its whole length), delta coding undone.
pub(crate) fn decode_chunk(
    d: &mut zstd::bulk::Decompressor<'_>,
    frame: &[u8],
    dst: &mut [u8],
    delta: Delta,
) -> Result<(), String> {
    let n = d.decompress_to_buffer(frame, dst).map_err(|e| format!("compressed section: {e}"))?;
    if n != dst.len() {
        return Err("compressed section: a chunk shorter than its place".into());
    }
    decode_delta(dst, delta);
    Ok(())
}

/// A compressed section's header and chunk table: its decoded length, delta coding and
/// frames.
fn frames(payload: &[u8]) -> Result<(usize, Delta, Vec<&[u8]>), String> {
    let word = |at: usize, n: usize| -> Option<u64> {
        payload.get(at..at + n).map(|b| b.iter().rev().fold(0u64, |v, &x| v << 8 | x as u64))
    };
    let (Some(total), Some(chunks), Some(delta)) = (word(0, 8), word(8, 4), word(12, 4)) else {
        return Err("compressed section shorter than its header".into());
    };
    let delta = Delta::from_word(delta as u32).ok_or("compressed section: unknown delta coding")?;
    let total = usize::try_from(total).map_err(|_| "compressed section: longer than memory")?;
    let chunks = chunks as usize;
    let table_end = chunks.checked_mul(4).and_then(|n| n.checked_add(HEAD));
    let smallest = chunks.checked_mul(4 + MIN_FRAME);
    if total.div_ceil(CHUNK) != chunks || smallest.is_none_or(|n| n > payload.len()) {
        return Err("compressed section: chunk count and length disagree".into());
    }
    let mut frames = Vec::with_capacity(chunks);
    let mut at = table_end.ok_or("compressed section: chunk table past its end")?;
    for c in 0..chunks {
        let len = word(HEAD + 4 * c, 4).unwrap_or(0) as usize;
        if len < MIN_FRAME {
            return Err("compressed section: a frame too short to be one".into());
        }
        let end =
            at.checked_add(len).filter(|&e| e <= payload.len()).ok_or("compressed section: frame past its end")?;
        frames.push(&payload[at..end]);
        at = end;
    }
    if at != payload.len() {
        return Err("compressed section: bytes after its last frame".into());
    }
    Ok((total, delta, frames))
}

/// A compressed section's decoded bytes, in 8-aligned memory (the columns are cast from it),
/// with their length. The chunk table is checked against the payload before anything is
/// allocated, and the allocation is one that may fail (an error, not an abort); the store
/// also caps what all its sections may claim (`reader::decoded_cap`). The chunks are decoded
/// on every core (`on_threads`).
pub fn decode(payload: &[u8]) -> Result<(Vec<u64>, usize), String> {
    let (total, delta, frames) = frames(payload)?;
    let mut out = zeroed_words(total.div_ceil(8)).ok_or("compressed section: not enough memory to decode it")?;
    let bytes = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut out)[..total];
    huge_pages(bytes);
    let decode_run = |dst: &mut [u8], frames: &[&[u8]]| -> Result<(), String> {
        let mut d = zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?;
        for (dst, frame) in dst.chunks_mut(CHUNK).zip(frames) {
            decode_chunk(&mut d, frame, dst, delta)?;
        }
        Ok(())
    };
    // runs of a few chunks, taken in turn by this thread and helpers; the first error wins
    let runs: Vec<Run<'_, '_>> =
        bytes.chunks_mut(4 * CHUNK).zip(frames.chunks(4)).map(|r| std::sync::Mutex::new(Some(r))).collect();
    let failed = std::sync::Mutex::new(None);
    let work = || {
        for run in &runs {
            let taken = run.lock().ok().and_then(|mut r| r.take());
            if let Some((dst, fr)) = taken {
                if let Err(e) = decode_run(dst, fr) {
                    failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                }
            }
        }
    };
    if !on_threads(frames.len(), work) {
        return Err("decoder thread panicked".into());
    }
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok((out, total)),
    }
}

/// Runs `work` on this thread and on helpers, one more per core while each has at least 4
/// of `chunks` to decode (a thread costs about what a chunk does); false when a helper
/// panicked. Plain scoped threads, not rayon's: a section decoded on first use is decoded
/// while a rayon worker may wait on it, and such a worker must not be handed work that waits
/// on it again. A helper that cannot be started leaves its share to the others.
pub(crate) fn on_threads(chunks: usize, work: impl Fn() + Sync) -> bool {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let helpers = cores.min(chunks.div_ceil(4)).saturating_sub(1);
    std::thread::scope(|sc| {
        let started: Vec<_> =
            (0..helpers).filter_map(|_| std::thread::Builder::new().spawn_scoped(sc, &work).ok()).collect();
        work();
        started.into_iter().all(|h| h.join().is_ok())
    })
}

/// A run of chunks to decode, and where its bytes go: taken once, by whichever thread comes.
type Run<'a, 'b> = std::sync::Mutex<Option<(&'a mut [u8], &'a [&'b [u8]])>>;

/// `n` zeroed words, or None when the allocator refuses them (rather than aborting).
fn zeroed_words(n: usize) -> Option<Vec<u64>> {
    if n == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u64>(n).ok()?;
    // SAFETY: a non-zero-sized layout; the pointer, if not null, is a zeroed allocation of n
    // u64 by the global allocator with `Vec`'s layout for that capacity, so `Vec` may own it.
    unsafe {
        let p = std::alloc::alloc_zeroed(layout) as *mut u64;
        (!p.is_null()).then(|| Vec::from_raw_parts(p, n, n))
    }
}

/// Asks for huge pages under the whole 2 MiB pages of `buf`, before it is first written: a
/// fresh buffer of hundreds of MB is otherwise faulted in 4 KiB at a time, a third of its
/// decoding time on this project's 2-core VM. A hint: refused or ignored harmlessly.
pub(crate) fn huge_pages(buf: &mut [u8]) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        const HUGE: usize = 2 << 20;
        let (at, end) = (buf.as_mut_ptr() as usize, buf.as_mut_ptr() as usize + buf.len());
        let (from, to) = (at.next_multiple_of(HUGE), end / HUGE * HUGE);
        if to > from {
            // SAFETY: advice on whole pages inside a buffer this function holds mutably; it
            // changes how they are backed, never their contents (all zero, not yet touched).
            unsafe {
                libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = buf;
}

/// Bytes `range` of the concatenation of `parts`, into `buf`.
fn gather(parts: &[&[u8]], range: std::ops::Range<usize>, buf: &mut Vec<u8>) {
    buf.clear();
    let mut base = 0;
    for p in parts {
        let (b, e) = (base, base + p.len());
        base = e;
        if e <= range.start || b >= range.end {
            continue;
        }
        buf.extend_from_slice(&p[range.start.max(b) - b..range.end.min(e) - b]);
    }
}

fn encode_delta(buf: &mut [u8], d: Delta) {
    match d.width {
        8 => delta_words::<8>(buf, d.stride as usize, true),
        4 => delta_words::<4>(buf, d.stride as usize, true),
        _ => {}
    }
}

fn decode_delta(buf: &mut [u8], d: Delta) {
    match d.width {
        8 => delta_words::<8>(buf, d.stride as usize, false),
        4 => delta_words::<4>(buf, d.stride as usize, false),
        _ => {}
    }
}

/// Each whole `W`-byte little-endian word minus (`forward`) or plus the word `stride` before
/// it, wrapping; the first `stride` words and a tail shorter than a word stay as they are.
fn delta_words<const W: usize>(buf: &mut [u8], stride: usize, forward: bool) {
    let n = buf.len() / W;
    let get = |b: &[u8], i: usize| -> u64 {
        let mut w = [0u8; 8];
        w[..W].copy_from_slice(&b[i * W..i * W + W]);
        u64::from_le_bytes(w)
    };
    let put = |b: &mut [u8], i: usize, v: u64| b[i * W..i * W + W].copy_from_slice(&v.to_le_bytes()[..W]);
    if forward {
        // backwards, so each word is taken from its unchanged predecessor
        for i in (stride..n).rev() {
            let v = get(buf, i).wrapping_sub(get(buf, i - stride));
            put(buf, i, v);
        }
    } else {
        for i in stride..n {
            let v = get(buf, i).wrapping_add(get(buf, i - stride));
            put(buf, i, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(parts: &[&[u8]], delta: Delta) -> Vec<u8> {
        let payload = encode(parts, delta).unwrap();
        let (words, len) = decode(&payload).unwrap();
        bytemuck::cast_slice::<u64, u8>(&words)[..len].to_vec()
    }

    proptest! {
        #[test]
        fn sections_come_back_as_written(
            parts in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..3000), 0..5),
            width in prop_oneof![Just(0u8), Just(4u8), Just(8u8)],
            stride in 1u16..8,
        ) {
            let delta = if width == 0 { Delta::NONE } else { Delta { width, stride } };
            let refs: Vec<&[u8]> = parts.iter().map(|p| p.as_slice()).collect();
            prop_assert_eq!(round_trip(&refs, delta), parts.concat());
        }

        #[test]
        fn a_damaged_section_is_refused_or_read_but_never_panics(
            flip in 0usize..400, byte in any::<u8>(), cut in 0usize..400,
        ) {
            let col: Vec<i64> = (0..300).map(|i| i * 1000 + (i % 7)).collect();
            let mut payload = encode(&[bytemuck::cast_slice(&col)], Delta::I64).unwrap();
            let n = payload.len();
            payload[flip % n] ^= byte;
            payload.truncate(n - cut % n);
            let _ = decode(&payload);
        }
    }

    #[test]
    fn sections_of_several_chunks_and_records_come_back() {
        // 3.5 chunks of sorted times, and 48-byte records whose chunks start mid-record
        let times: Vec<i64> = (0..(CHUNK * 7 / 16) as i64).map(|i| 1_700_000_000_000 + i * 37 + (i % 5)).collect();
        let bytes: &[u8] = bytemuck::cast_slice(&times);
        assert_eq!(round_trip(&[bytes], Delta::I64), bytes);
        let (a, b) = bytes.split_at(1000 * 8 + 3);
        assert_eq!(round_trip(&[a, b], Delta::records_of(48)), bytes);
        let packed = encode(&[bytes], Delta::I64).unwrap();
        assert!(packed.len() * 20 < bytes.len(), "sorted times shrink: {} of {}", packed.len(), bytes.len());
    }

    #[test]
    fn a_header_claiming_more_than_its_chunks_is_refused() {
        let mut payload = encode(&[&[7u8; 5000]], Delta::NONE).unwrap();
        payload[..8].copy_from_slice(&(u64::MAX).to_le_bytes());
        assert!(decode(&payload).is_err());
        payload[..8].copy_from_slice(&((CHUNK as u64) * 3).to_le_bytes());
        assert!(decode(&payload).is_err());
        payload[..8].copy_from_slice(&6000u64.to_le_bytes());
        assert!(decode(&payload).is_err(), "a chunk decoding short of its place");
    }
}
