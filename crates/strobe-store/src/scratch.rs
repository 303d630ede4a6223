//! A growable array of plain values whose pages belong to a file, not to the process's heap.
//!
//! A store's build holds every span several times over (staged in push order, then as columns
//! in lane order, then the flows and the level of detail): for an nsys export that is ~100
//! bytes a row, twice the export itself. Kept in anonymous memory, all of it must fit in RAM
//! (most machines have no swap). Kept in the pages of an unlinked file in the cache dir, the
//! kernel can write it out and read it back when memory is short, as it does with the mapped
//! input. The file is unlinked from the start (deleted with its last handle, never left behind
//! by a crash). A build's own arrays live far less than the 30 s after which the kernel writes
//! dirty pages back unasked, so they are dropped unwritten; a store answered before its file is
//! written (`finish_deferred`, `finish_write_behind`) keeps reading its columns from memory
//! while it is open, and in files those pages are written back once, then clean page cache.
//!
//! A file's pages cost more than the heap's (a 4 kB page fault each, against the heap's 2 MB
//! ones: +12–17 % on a 1 GB Kineto ingest, +20 % on a 250 MB nsys export's; `MAP_POPULATE`
//! made it worse), so an array moves to a file only when memory is short: when it would take
//! the process's heap past half of the memory it may use (RAM available, or its cgroup's
//! limit). An importer whose build holds more than its source asks for files whatever the
//! memory (`FilePolicy::WhenBig`: the nsys export's). `STROBE_SCRATCH=file` or `heap` forces
//! either. Without a directory (a store built in memory, or a file that cannot be made) the
//! array is a plain `Vec`.

use crate::spare_maps::{Spare, SpareMaps, SpareRef};
use std::fs::File;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::{Arc, Weak};

/// Arrays below this many bytes stay on the heap when memory is short: a file and a map for
/// each small lane or table would cost more than they save.
const FILE_MIN_BYTES: usize = 4 << 20;
/// The same for files by choice (`FilePolicy::WhenBig`): lower, because a pending store's
/// smaller columns live through the first answer's analyses (at 4 MB, an nsys export's
/// report peaked 25 MB higher).
const FILE_MIN_BYTES_BY_CHOICE: usize = 256 << 10;

pub struct Scratch<T: bytemuck::Pod> {
    backing: Backing<T>,
    /// Where the file is made once the array is big enough; `None` for the heap only (or
    /// after a file failed).
    dir: Option<std::path::PathBuf>,
    policy: FilePolicy,
    file: Option<File>,
    /// The build's freed maps (`spare_maps`): where this one's map goes when it is dropped,
    /// and where a file-backed array first looks for one.
    spares: Option<SpareRef>,
    /// In a map, the bytes past `max(len, dirty_end)` are zero; those before it may hold old
    /// values (a spare's, or values cut off by shrinking).
    dirty_end: usize,
}

enum Backing<T> {
    Heap(Vec<T>),
    /// The first `len` values of the pages of `Scratch::file`, mapped whole.
    Map {
        map: memmap2::MmapMut,
        len: usize,
        _t: PhantomData<T>,
    },
}

/// Where a build's scratch arrays live: a directory (the cache dir) or the heap.
#[derive(Clone, Debug, Default)]
pub struct ScratchDir {
    path: Option<std::path::PathBuf>,
    policy: FilePolicy,
    spares: Option<SpareRef>,
}

/// When an array of a directory goes to a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FilePolicy {
    /// When memory is short (`wants_file`).
    #[default]
    WhenShort,
    /// Once past 256 kB, whatever the memory: for a source whose build holds
    /// more than the source itself (an Nsight Systems export's rows become spans, runtime
    /// calls and links: 2.4× the export), so that reading it needs no more than half its
    /// size in RAM. `STROBE_SCRATCH=heap` overrides it.
    WhenBig,
    /// Once past a page, whatever the memory or `STROBE_SCRATCH` (the tests of the file
    /// backing).
    Always,
}

impl ScratchDir {
    pub fn heap() -> ScratchDir {
        ScratchDir { path: None, policy: FilePolicy::WhenShort, spares: None }
    }

    /// Arrays in files in `dir` when memory is short (`wants_file`).
    pub fn at(dir: &Path) -> ScratchDir {
        ScratchDir { path: Some(dir.to_path_buf()), policy: FilePolicy::WhenShort, spares: None }
    }

    /// The same directory, its arrays going to files by `policy`.
    pub fn with_policy(self, policy: FilePolicy) -> ScratchDir {
        ScratchDir { policy, ..self }
    }

    /// The same directory, its arrays' maps kept in `spares` when freed and taken from it
    /// when made (while `spares` lives: a build's).
    pub(crate) fn sharing(self, spares: &Arc<SpareMaps>) -> ScratchDir {
        ScratchDir { spares: Some(Arc::downgrade(spares)), ..self }
    }

    pub fn new_array<T: bytemuck::Pod>(&self) -> Scratch<T> {
        Scratch::new_in(self)
    }

    pub fn with_capacity<T: bytemuck::Pod>(&self, n: usize) -> Scratch<T> {
        let mut s = Scratch::new_in(self);
        s.reserve(n);
        s
    }
}

impl<T: bytemuck::Pod> Default for Scratch<T> {
    fn default() -> Self {
        Scratch::new_in(&ScratchDir::heap())
    }
}

impl<T: bytemuck::Pod> Scratch<T> {
    pub fn new_in(dir: &ScratchDir) -> Scratch<T> {
        assert!(std::mem::size_of::<T>() > 0 && std::mem::align_of::<T>() <= 4096);
        Scratch {
            backing: Backing::Heap(Vec::new()),
            dir: dir.path.clone(),
            policy: dir.policy,
            file: None,
            spares: dir.spares.clone(),
            dirty_end: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        match &self.backing {
            Backing::Heap(v) => v.len(),
            Backing::Map { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Values that fit without growing.
    #[inline]
    pub fn capacity(&self) -> usize {
        match &self.backing {
            Backing::Heap(v) => v.capacity(),
            Backing::Map { map, .. } => map.len() / std::mem::size_of::<T>(),
        }
    }

    /// Room for `extra` more values (grown by doubling, as a `Vec`).
    pub fn reserve(&mut self, extra: usize) {
        let need = self.len().checked_add(extra).expect("scratch array length overflow");
        if need > self.capacity() {
            self.grow_to(need.max(self.capacity() * 2).max(64));
        }
    }

    #[cold]
    fn grow_to(&mut self, values: usize) {
        let size = std::mem::size_of::<T>();
        let bytes = values.checked_mul(size).expect("scratch array size overflow");
        let len = self.len();
        let to_file = self.to_file(bytes);
        if to_file && self.file.is_none() {
            if let Some(spare) = self.spares.as_ref().and_then(Weak::upgrade).and_then(|p| p.take(bytes)) {
                let mut map = spare.map;
                if let Backing::Heap(v) = &self.backing {
                    map[..len * size].copy_from_slice(bytemuck::cast_slice(v));
                }
                self.backing = Backing::Map { map, len, _t: PhantomData };
                self.file = Some(spare.file);
                self.dirty_end = spare.written;
                return;
            }
        }
        if let Some(dir) = self.dir.as_deref().filter(|_| to_file) {
            // page multiple: the map's length is the capacity
            match grow_file(dir, &mut self.file, bytes.div_ceil(4096) * 4096) {
                Ok(mut map) => {
                    // a map's pages are the file's: a bigger map sees them, nothing copied
                    if let Backing::Heap(v) = &self.backing {
                        map[..len * size].copy_from_slice(bytemuck::cast_slice(v));
                    }
                    self.backing = Backing::Map { map, len, _t: PhantomData };
                    return;
                }
                Err(_) => {
                    // no file here: the heap from now on
                    self.dir = None;
                    self.file = None;
                }
            }
        }
        if let Backing::Map { .. } = &self.backing {
            let v = self.as_slice().to_vec();
            self.backing = Backing::Heap(v);
            self.file = None;
        }
        if let Backing::Heap(v) = &mut self.backing {
            v.reserve_exact(values - v.len());
        }
    }

    /// Whether the array, grown to `bytes`, goes to (or stays in) a file.
    fn to_file(&self, bytes: usize) -> bool {
        if self.dir.is_none() {
            return false;
        }
        let forced = forced_backing();
        let policy = match (self.policy, forced) {
            (FilePolicy::Always, _) | (_, Some(true)) => FilePolicy::Always,
            (FilePolicy::WhenBig, Some(false)) => FilePolicy::WhenShort,
            (p, _) => p,
        };
        // forced, every array past a page goes to a file (so that small traces test the path)
        let min = match policy {
            FilePolicy::Always => 4096,
            FilePolicy::WhenBig => FILE_MIN_BYTES_BY_CHOICE,
            FilePolicy::WhenShort => FILE_MIN_BYTES,
        };
        if bytes < min {
            return false;
        }
        if policy != FilePolicy::WhenShort {
            // files by choice keep the heap as small as a short run's: what is freed goes
            // back as it would then (and measured peaks under `STROBE_SCRATCH=file` are those
            // of a short run)
            crate::purge::memory_is_short();
            return true;
        }
        let more = bytes.saturating_sub(self.len() * std::mem::size_of::<T>());
        self.in_file() || (forced.is_none() && wants_file(more))
    }

    /// `n` zero values: on the heap from the allocator's zeroed pages (fresh pages are not
    /// written again), in a file from its sparse pages.
    pub fn zeroed(dir: &ScratchDir, n: usize) -> Scratch<T> {
        let mut s = Scratch::new_in(dir);
        if s.to_file(n * std::mem::size_of::<T>()) {
            s.resize_zeroed(n);
        } else {
            s.backing = Backing::Heap(bytemuck::zeroed_vec(n));
        }
        s
    }

    /// The `n` values of `items`, made on all cores, with room for `capacity` (≥ n). On the
    /// heap they are written once (no zeroing first).
    pub fn par_collected(
        dir: &ScratchDir,
        capacity: usize,
        items: impl rayon::iter::IndexedParallelIterator<Item = T>,
    ) -> Scratch<T>
    where
        T: Send,
    {
        use rayon::prelude::*;
        let n = items.len();
        let mut s = dir.with_capacity(capacity.max(n));
        match &mut s.backing {
            Backing::Heap(v) => v.par_extend(items),
            Backing::Map { .. } => {
                // every value is written below: old bytes need no zeroing first
                s.set_len_to_overwrite(n);
                s.as_mut_slice().par_iter_mut().zip(items).for_each(|(d, x)| *d = x);
            }
        }
        s
    }

    #[inline]
    pub fn push(&mut self, x: T) {
        // one match on the way that does not grow (a span's build pushes to five arrays)
        let size = std::mem::size_of::<T>();
        match &mut self.backing {
            Backing::Heap(v) if v.len() < v.capacity() => v.push(x),
            Backing::Map { map, len, .. } if (*len + 1) * size <= map.len() => {
                map[*len * size..(*len + 1) * size].copy_from_slice(bytemuck::bytes_of(&x));
                *len += 1;
            }
            _ => self.push_grown(x),
        }
    }

    #[cold]
    #[inline(never)]
    fn push_grown(&mut self, x: T) {
        self.reserve(1);
        self.push(x);
    }

    pub fn extend_from_slice(&mut self, xs: &[T]) {
        self.reserve(xs.len());
        match &mut self.backing {
            Backing::Heap(v) => v.extend_from_slice(xs),
            Backing::Map { map, len, .. } => {
                let size = std::mem::size_of::<T>();
                map[*len * size..(*len + xs.len()) * size].copy_from_slice(bytemuck::cast_slice(xs));
                *len += xs.len();
            }
        }
    }

    /// Grows or shrinks to `n` values; new ones are zero (`T::zeroed()`).
    pub fn resize_zeroed(&mut self, n: usize) {
        let old = self.len();
        if n > old {
            self.reserve(n - old);
        }
        match &mut self.backing {
            Backing::Heap(v) => v.resize(n, T::zeroed()),
            Backing::Map { map, len, .. } => {
                let size = std::mem::size_of::<T>();
                if n < old {
                    // the values cut off stay until it grows back over them
                    self.dirty_end = self.dirty_end.max(old * size);
                } else if self.dirty_end > old * size {
                    let dirty = old * size..self.dirty_end.min(n * size);
                    map[dirty].fill(0);
                }
                *len = n;
            }
        }
    }

    /// Grows to `n` values whose old bytes are left as they are: for a caller that writes
    /// every one of them next.
    fn set_len_to_overwrite(&mut self, n: usize) {
        let old = self.len();
        if n > old {
            self.reserve(n - old);
        }
        match &mut self.backing {
            Backing::Heap(v) => v.resize(n, T::zeroed()),
            Backing::Map { len, .. } => {
                self.dirty_end = self.dirty_end.max(*len * std::mem::size_of::<T>());
                *len = n;
            }
        }
    }

    #[inline]
    pub fn as_slice(&self) -> &[T] {
        match &self.backing {
            Backing::Heap(v) => v,
            Backing::Map { map, len, .. } => bytemuck::cast_slice(&map[..len * std::mem::size_of::<T>()]),
        }
    }

    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        match &mut self.backing {
            Backing::Heap(v) => v,
            Backing::Map { map, len, .. } => bytemuck::cast_slice_mut(&mut map[..*len * std::mem::size_of::<T>()]),
        }
    }

    /// Whether the values are in a file's pages.
    pub fn in_file(&self) -> bool {
        matches!(self.backing, Backing::Map { .. })
    }
}

impl<T: bytemuck::Pod> Drop for Scratch<T> {
    fn drop(&mut self) {
        // a map the build can still use goes to its spares, pages and all
        let Some(spares) = self.spares.as_ref().and_then(Weak::upgrade) else { return };
        let Some(file) = self.file.take() else { return };
        if let Backing::Map { map, len, .. } = std::mem::replace(&mut self.backing, Backing::Heap(Vec::new())) {
            let written = self.dirty_end.max(len * std::mem::size_of::<T>());
            // kept pages are dirty: where memory is short (as if they were more heap) they
            // would be written out to be reclaimed, so there they go back at once, as they did
            // before spares were kept
            if !wants_file(written) {
                spares.keep(Spare { file, map, written });
            }
        }
    }
}

/// `STROBE_SCRATCH`: `file` (Some(true)) or `heap` (Some(false)); read at each growth, which
/// is rare (an array doubles), so that a test can set it.
fn forced_backing() -> Option<bool> {
    match std::env::var("STROBE_SCRATCH").as_deref() {
        Ok("file") => Some(true),
        Ok("heap") => Some(false),
        _ => None,
    }
}

/// Whether `more` bytes of a growing array should go to a file (see the module's note).
fn wants_file(more: usize) -> bool {
    let Some(heap) = memory::own_anonymous() else { return false };
    let short = memory_is_short(heap, more as u64, memory::available(), memory::cgroup_limit());
    if short {
        crate::purge::memory_is_short();
    }
    short
}

/// The rule: the heap (`heap` now, `more` to come) would pass half of what the process may use,
/// its heap plus the RAM still available, or its cgroup's limit if lower.
fn memory_is_short(heap: u64, more: u64, available: Option<u64>, cgroup_limit: Option<u64>) -> bool {
    let may_use = match (available, cgroup_limit) {
        (Some(a), Some(l)) => (heap + a).min(l),
        (Some(a), None) => heap + a,
        (None, Some(l)) => l,
        (None, None) => return false,
    };
    heap + more > may_use / 2
}

/// What Linux says of this process's memory (None elsewhere, or when it cannot be read).
pub(crate) mod memory {
    fn kb_field(text: &str, key: &str) -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(key))?;
        let kb: u64 = line[key.len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kb * 1024)
    }

    /// The process's anonymous resident memory (its heap, mostly).
    pub fn own_anonymous() -> Option<u64> {
        kb_field(&std::fs::read_to_string("/proc/self/status").ok()?, "RssAnon:")
    }

    /// RAM the kernel can still hand out without swapping.
    pub fn available() -> Option<u64> {
        kb_field(&std::fs::read_to_string("/proc/meminfo").ok()?, "MemAvailable:")
    }

    /// The memory limit of the process's cgroup (v2 `memory.max`, or v1's
    /// `memory.limit_in_bytes`), when it has one.
    pub fn cgroup_limit() -> Option<u64> {
        // read once: a process's cgroup and its limit do not change under a build
        static LIMIT: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
        *LIMIT.get_or_init(read_cgroup_limit)
    }

    fn read_cgroup_limit() -> Option<u64> {
        let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let mut limits = Vec::new();
        for line in groups.lines() {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            let file = if controllers.is_empty() {
                format!("/sys/fs/cgroup{path}/memory.max")
            } else if controllers.split(',').any(|c| c == "memory") {
                format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes")
            } else {
                continue;
            };
            if let Some(l) = std::fs::read_to_string(file).ok().and_then(|t| t.trim().parse::<u64>().ok()) {
                limits.push(l);
            }
        }
        // "max" (v2) does not parse and v1's "no limit" is near 2^63: neither limits
        limits.into_iter().filter(|&l| l < 1 << 60).min()
    }
}

/// Makes (first time) or lengthens the unlinked file to `bytes` and maps all of it.
fn grow_file(dir: &Path, file: &mut Option<File>, bytes: usize) -> std::io::Result<memmap2::MmapMut> {
    if file.is_none() {
        *file = Some(tempfile::tempfile_in(dir)?);
    }
    let f = file.as_ref().expect("just made");
    // a sparse length: blocks come only as pages are written, and read as zero until then
    f.set_len(bytes as u64)?;
    // SAFETY: the file is unlinked and private to this array (no other handle writes it), and
    // it never shrinks while mapped.
    unsafe { memmap2::MmapMut::map_mut(f) }
}

impl<T: bytemuck::Pod> std::ops::Deref for Scratch<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: bytemuck::Pod> std::ops::DerefMut for Scratch<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<'a, T: bytemuck::Pod> IntoIterator for &'a Scratch<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<T: bytemuck::Pod + Send + Sync> crate::reader::Part for Scratch<T> {
    fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self.as_slice())
    }
}

impl<T: bytemuck::Pod + std::fmt::Debug> std::fmt::Debug for Scratch<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Op {
        Push(u32),
        Extend(Vec<u32>),
        Resize(usize),
        Set(usize, u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            any::<u32>().prop_map(Op::Push),
            proptest::collection::vec(any::<u32>(), 0..3000).prop_map(Op::Extend),
            (0usize..2_000_000).prop_map(Op::Resize),
            (any::<usize>(), any::<u32>()).prop_map(|(i, x)| Op::Set(i, x)),
        ]
    }

    fn run(dir: &ScratchDir, ops: &[Op]) {
        let mut s: Scratch<u32> = dir.new_array();
        let mut v: Vec<u32> = Vec::new();
        for o in ops {
            match o {
                Op::Push(x) => {
                    s.push(*x);
                    v.push(*x);
                }
                Op::Extend(xs) => {
                    s.extend_from_slice(xs);
                    v.extend_from_slice(xs);
                }
                Op::Resize(n) => {
                    s.resize_zeroed(*n);
                    v.resize(*n, 0);
                }
                Op::Set(i, x) => {
                    if !v.is_empty() {
                        let i = i % v.len();
                        s[i] = *x;
                        v[i] = *x;
                    }
                }
            }
            assert_eq!(s.len(), v.len());
        }
        assert_eq!(&s[..], &v[..]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        // both backings behave as a Vec, through growth (the file moves to a bigger map),
        // shrinking (values past the length read as zero when it grows back) and writes
        #[test]
        fn behaves_as_a_vec(ops in proptest::collection::vec(op(), 0..24)) {
            let dir = tempfile::tempdir().unwrap();
            run(&file_dir(dir.path()), &ops);
            run(&ScratchDir::heap(), &ops);
            // the array's file is unlinked: nothing is left in the directory
            prop_assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        // an array made in a freed array's map (its old values still in its pages) behaves as
        // a Vec too: values it grows over read as zero, whatever the old ones were
        #[test]
        fn behaves_as_a_vec_in_a_freed_arrays_map(
            ops in proptest::collection::vec(op(), 0..24),
            // past a page: a file (smaller arrays stay on the heap)
            junk in proptest::collection::vec(1u32..u32::MAX, 2_000..40_000),
            keep in 0usize..40_000,
            n in 0usize..30_000,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let spares = SpareMaps::new();
            let d = file_dir(dir.path()).sharing(&spares);
            let free_one = || {
                let mut a: Scratch<u32> = d.new_array();
                a.extend_from_slice(&junk);
                // cut short: values past the length are left in the pages
                a.resize_zeroed(keep.min(junk.len()));
            };
            free_one();
            prop_assert_eq!(spares.len(), 1);
            run(&d, &ops);
            free_one();
            let z: Scratch<u64> = Scratch::zeroed(&d, n);
            prop_assert!(z.iter().all(|&x| x == 0));
            drop(z);
            free_one();
            let c = Scratch::par_collected(&d, n, rayon::iter::IntoParallelIterator::into_par_iter(0..n as u32));
            prop_assert!(c.iter().enumerate().all(|(i, &x)| x == i as u32));
            drop(c);
            free_one();
            let mut g: Scratch<u32> = d.new_array();
            g.push(7);
            g.resize_zeroed(n + 1);
            prop_assert!(g[0] == 7 && g[1..].iter().all(|&x| x == 0));
        }
    }

    #[test]
    fn a_freed_arrays_map_is_taken_by_the_next_array_that_fits() {
        let dir = tempfile::tempdir().unwrap();
        let spares = SpareMaps::new();
        let d = file_dir(dir.path()).sharing(&spares);
        let mut a: Scratch<u64> = d.new_array();
        a.resize_zeroed(100_000);
        a.iter_mut().for_each(|x| *x = u64::MAX);
        let at = a.as_slice().as_ptr() as usize;
        drop(a);
        assert_eq!(spares.len(), 1);
        // too big for it: a file of its own
        let big: Scratch<u64> = Scratch::zeroed(&d, 200_000);
        assert!(big.in_file());
        assert_eq!(spares.len(), 1);
        // fits: the same pages, zeroed where it reads them
        let mut b: Scratch<u32> = d.new_array();
        b.resize_zeroed(150_000);
        assert_eq!(b.as_slice().as_ptr() as usize, at);
        assert_eq!(spares.len(), 0);
        assert!(b.iter().all(|&x| x == 0));
        // once the build (the pool) is gone, freed maps are simply released
        drop(spares);
        drop((b, big));
    }

    #[test]
    fn files_by_choice_once_past_their_threshold_whatever_the_memory() {
        // (unless STROBE_SCRATCH says otherwise: no test here sets it)
        if forced_backing().is_some() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let by_choice = ScratchDir::at(dir.path()).with_policy(FilePolicy::WhenBig);
        let mut s: Scratch<u64> = by_choice.new_array();
        s.resize_zeroed(FILE_MIN_BYTES_BY_CHOICE / 8 - 1);
        assert!(!s.in_file(), "below the threshold: the heap");
        s.resize_zeroed(FILE_MIN_BYTES_BY_CHOICE / 8 + 1);
        assert!(s.in_file(), "past it: a file, with memory to spare");
        assert!(s.iter().all(|&x| x == 0));
        // the default waits for memory to be short (this machine's is not, for 300 kB)
        let mut h: Scratch<u64> = ScratchDir::at(dir.path()).new_array();
        h.resize_zeroed(FILE_MIN_BYTES_BY_CHOICE / 8 + 1);
        assert!(!h.in_file());
    }

    #[test]
    fn memory_is_short_past_half_of_what_the_process_may_use() {
        const MB: u64 = 1 << 20;
        // 23 GB free: a 1 GB trace's arrays stay on the heap
        assert!(!memory_is_short(300 * MB, 200 * MB, Some(23_000 * MB), None));
        // a 128 MB cgroup: past 64 MB of heap they go to files
        assert!(!memory_is_short(20 * MB, 40 * MB, Some(23_000 * MB), Some(128 * MB)));
        assert!(memory_is_short(40 * MB, 30 * MB, Some(23_000 * MB), Some(128 * MB)));
        // little RAM left, no cgroup
        assert!(memory_is_short(500 * MB, 100 * MB, Some(300 * MB), None));
        // nothing known: the heap
        assert!(!memory_is_short(500 * MB, 100 * MB, None, None));
    }

    #[test]
    fn linux_tells_this_process_its_memory() {
        if cfg!(target_os = "linux") {
            assert!(memory::own_anonymous().is_some_and(|a| a > 0));
            assert!(memory::available().is_some_and(|a| a > 0));
        }
    }

    /// A directory whose arrays always go to files once big (the tests of the file backing
    /// must not depend on the machine's memory).
    fn file_dir(dir: &Path) -> ScratchDir {
        ScratchDir { path: Some(dir.to_path_buf()), policy: FilePolicy::Always, spares: None }
    }

    #[test]
    fn a_big_array_lives_in_a_file_and_a_small_one_on_the_heap() {
        let dir = tempfile::tempdir().unwrap();
        let d = file_dir(dir.path());
        let mut small: Scratch<u64> = d.with_capacity(100);
        assert!(!small.in_file());
        // pushed past the threshold, it moves to a file with its values
        for i in 0..(1u64 << 20) {
            small.push(i);
        }
        assert!(small.in_file());
        assert!(small.iter().enumerate().all(|(i, &x)| x == i as u64));
        let mut big: Scratch<u64> = d.with_capacity(1 << 20);
        assert!(big.in_file());
        big.extend_from_slice(&(0..(1u64 << 21)).collect::<Vec<_>>());
        assert!(big.in_file());
        assert_eq!(big[(1 << 21) - 1], (1 << 21) - 1);
        assert_eq!(big.iter().sum::<u64>(), (1u64 << 21) * ((1 << 21) - 1) / 2);
    }

    #[test]
    fn a_directory_that_cannot_hold_a_file_falls_back_to_the_heap() {
        let d = file_dir(Path::new("/nonexistent/strobe-scratch"));
        let mut s: Scratch<u64> = d.with_capacity(1 << 20);
        assert!(!s.in_file());
        s.extend_from_slice(&[1, 2, 3]);
        assert_eq!(&s[..], &[1, 2, 3]);
    }
}
