//! The read side: a store file mapped into memory (or held in memory), validated once on
//! open, then read by casting columns — reopening parses nothing but a few small JSON blobs.

use crate::format::*;
use crate::interval;
use crate::lazy::Lazy;
use crate::lod::{first_overlapping, Folder, LodItem, LodLevel, FIRST_LEVEL_LOG2};
use std::path::Path;
use strobe_model::{SpanKind, TraceMeta};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("store {path}: {what}")]
    Invalid { path: String, what: String },
    #[error("store {path}: {source}")]
    Io { path: String, source: std::io::Error },
}

pub(crate) enum Backing {
    Map(memmap2::Mmap),
    Owned(Vec<u64>, usize),
    /// Each section a buffer of its own, by section id: a store built in memory and queried
    /// before its file is written (`StoreBuilder::finish_deferred`, `finish_write_behind`), or
    /// one with compressed sections (decoded, beside ranges of the file's map).
    Parts(Vec<Option<Box<dyn Part>>>),
}

impl Backing {
    /// The whole image, for the backings that are one (not `Parts`).
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Backing::Map(m) => m,
            Backing::Owned(v, len) => &bytemuck::cast_slice(v)[..*len],
            Backing::Parts(_) => &[],
        }
    }
}

/// One section's bytes, held apart from the others.
pub(crate) trait Part: Send + Sync {
    fn bytes(&self) -> &[u8];
}

impl<T: bytemuck::Pod + Send + Sync> Part for Vec<T> {
    fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self)
    }
}

/// A range of a store's image: a raw section beside compressed ones, or one a deferred store
/// already wrote.
pub(crate) struct ImageRange(pub std::sync::Arc<Backing>, pub std::ops::Range<usize>);

impl Part for ImageRange {
    fn bytes(&self) -> &[u8] {
        self.0.bytes().get(self.1.clone()).unwrap_or(&[])
    }
}

/// A compressed section, decoded: 8-aligned words and the length in bytes.
struct Decoded(Vec<u64>, usize);

impl Part for Decoded {
    fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.0)[..self.1]
    }
}

/// What a store's compressed sections may claim in all, decoded: far above any real store's
/// ratio (exact copies of a trace compress 60×), and low enough that a damaged or hostile
/// header cannot ask for more memory than a machine has.
fn decoded_cap(file_len: usize) -> u128 {
    file_len as u128 * 1024 + (64 << 20)
}

/// Whether section `id` may wait for its first use to be decoded: a column whose values are
/// never trusted as indices (every accessor bounds-checks them), so a section that turns out
/// not to decode reads as zeros, as a file changed under its map reads as odd values. The
/// others (the lane index, levels, member-to-span map, strings, JSON) are checked on open.
fn decoded_lazily(id: u32) -> bool {
    matches!(
        id,
        sid::SPAN_META
            | sid::SPAN_ARGS
            | sid::M_START
            | sid::M_END
            | sid::M_MAX
            | sid::M_DEPTH
            | sid::LOD_ITEMS
            | sid::DEPTH_MEMBERS
            | sid::FLOWS
            | sid::FLOWS_BY_FROM
            | sid::COUNTER_POINTS_TS
            | sid::COUNTER_POINTS_VAL
    )
}

/// Section `e` of `image` as a part of its own: a range of it when raw, decoded when not.
pub(crate) fn section_part(image: &std::sync::Arc<Backing>, e: &SectionEntry) -> Result<Box<dyn Part>, String> {
    let (b, l) = (e.offset as usize, e.len as usize);
    let range = b.checked_add(l).filter(|&end| end <= image.bytes().len()).map(|end| b..end);
    let range = range.ok_or_else(|| format!("section {} past the file's end", e.id))?;
    match e.codec {
        crate::codec::RAW => Ok(Box::new(ImageRange(image.clone(), range))),
        crate::codec::ZSTD_CHUNKS => {
            let (words, len) =
                crate::codec::decode(&image.bytes()[range]).map_err(|w| format!("section {}: {w}", e.id))?;
            Ok(Box::new(Decoded(words, len)))
        }
        c => Err(format!("section {}: unknown codec {c}", e.id)),
    }
}

/// What a store built in memory still has to write, into the file its args went to: every
/// section after the args, and its level of detail, which it builds first unless `lod_built`.
pub(crate) struct Pending {
    pub out: crate::output::Output,
    pub table: Vec<SectionEntry>,
    /// The store holds its level of detail already (`finish_write_behind`): it is written
    /// as it is, not built again.
    pub lod_built: bool,
}

/// Each section's bytes as (address, length), found on open: analyses read a column per span
/// asked about (millions of calls), so a section is one load, whatever the backing. A
/// compressed section decoded on first use (`Lazy`) has a null address until then, and its
/// decoded length from the start; the address is set once, when it is decoded.
struct SectionSlices([(std::sync::atomic::AtomicPtr<u8>, usize); MAX_SECTIONS]);

/// A read-only trace store.
pub struct Store {
    /// What `slices` point into: held for them, read only on open.
    _backing: Backing,
    slices: SectionSlices,
    pub lanes: Vec<LaneDesc>,
    pub meta: TraceMeta,
    pub counters: Vec<CounterSeries>,
    pub names: Names,
    source_key: [u64; 4],
    /// The source file, mapped on first use, for args stored as references into it.
    source_map: std::sync::OnceLock<Option<memmap2::Mmap>>,
    /// The string section, copied out of the map and checked as UTF-8 once, on first use.
    strings: std::sync::OnceLock<Box<str>>,
    /// `launch_table`, made on first use.
    pub(crate) launches: std::sync::OnceLock<crate::queries::LaunchTable>,
    /// Set for a store made by `StoreBuilder::finish_deferred` or `finish_write_behind` until
    /// `write_pending`.
    pub(crate) pending: std::sync::Mutex<Option<Pending>>,
    /// The compressed sections not decoded on open (their slices are null until then).
    lazy: Option<Box<Lazy>>,
}

/// A lane's members as the analyses scan them: start, end and span of each, in start order
/// (`Store::lane_spans`). Three of `LaneView`'s five columns: a compressed store decodes no
/// more than these.
#[derive(Clone, Copy)]
pub struct LaneSpans<'a> {
    pub starts: &'a [i64],
    pub ends: &'a [i64],
    pub span: &'a [u32],
}

/// A lane's members: start-sorted spans with their index columns.
#[derive(Clone, Copy)]
pub struct LaneView<'a> {
    pub starts: &'a [i64],
    pub ends: &'a [i64],
    pub max_end: &'a [i64],
    pub span: &'a [u32],
    pub depth: &'a [u32],
    pub levels: &'a [LodLevel],
    pub max_depth: u32,
}

impl Store {
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let p = path.display().to_string();
        let f = std::fs::File::open(path).map_err(|e| StoreError::Io { path: p.clone(), source: e })?;
        // SAFETY: store files are written once to a temp name and renamed into place, never
        // modified afterwards; every access below is bounds-checked against the validated
        // section table, so even a file changed under us cannot cause unsoundness beyond
        // reading odd values.
        let m = unsafe { memmap2::Mmap::map(&f) }.map_err(|e| StoreError::Io { path: p.clone(), source: e })?;
        Store::from_backing(Backing::Map(m), &p)
    }

    pub fn from_bytes(bytes: Vec<u8>) -> Result<Store, StoreError> {
        let len = bytes.len();
        let mut v = vec![0u64; len.div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut v)[..len].copy_from_slice(&bytes);
        Store::from_backing(Backing::Owned(v, len), "<memory>")
    }

    fn from_backing(backing: Backing, path: &str) -> Result<Store, StoreError> {
        let bad = |what: &str| StoreError::Invalid { path: path.to_string(), what: what.to_string() };
        let bytes = backing.bytes();
        if bytes.len() < HEADER_LEN {
            return Err(bad("shorter than its header"));
        }
        let header: Header = bytemuck::pod_read_unaligned(&bytes[..std::mem::size_of::<Header>()]);
        if header.magic != MAGIC {
            return Err(bad("not a Strobe store"));
        }
        if header.version != VERSION {
            return Err(bad(&format!("store version {} (this build reads {})", header.version, VERSION)));
        }
        if header.file_len != bytes.len() as u64 {
            return Err(bad("length differs from its header (truncated or torn write)"));
        }
        let n = header.section_count as usize;
        if n > MAX_SECTIONS {
            return Err(bad("section table too large"));
        }
        let hs = std::mem::size_of::<Header>();
        let tb = &bytes[hs..hs + n * std::mem::size_of::<SectionEntry>()];
        if xxhash_rust::xxh3::xxh3_64(tb) != header.table_hash {
            return Err(bad("section table checksum mismatch"));
        }
        let mut sections = [(0usize, 0usize); MAX_SECTIONS];
        let mut entries = Vec::with_capacity(n);
        for i in 0..n {
            let e: SectionEntry = bytemuck::pod_read_unaligned(&tb[i * 24..i * 24 + 24]);
            let end = e.offset.checked_add(e.len).ok_or_else(|| bad("section overflows"))?;
            if end > bytes.len() as u64
                || !e.offset.is_multiple_of(8) && e.id != sid::ARGS
                || (e.id as usize) >= MAX_SECTIONS
            {
                return Err(bad("section out of bounds"));
            }
            sections[e.id as usize] = (e.offset as usize, e.len as usize);
            entries.push(e);
        }
        if entries.iter().all(|e| e.codec == crate::codec::RAW) {
            return Store::from_sections(backing, sections, header.source_key, None, path);
        }
        // compressed sections are decoded into memory: the ones checked on open now, the
        // others on first use (`Lazy`); the raw ones stay ranges of the image
        let _t = crate::timing::Phase::start("store: decode sections");
        let claimed: u128 = entries
            .iter()
            .filter(|e| e.codec == crate::codec::ZSTD_CHUNKS)
            .map(|e| {
                crate::codec::decoded_len(&bytes[e.offset as usize..(e.offset + e.len) as usize]).unwrap_or(0) as u128
            })
            .sum();
        if claimed > decoded_cap(bytes.len()) {
            return Err(bad(&format!(
                "compressed sections claim {claimed} bytes decoded, past any store of this size"
            )));
        }
        let image = std::sync::Arc::new(backing);
        let mut parts: Vec<Option<Box<dyn Part>>> = (0..MAX_SECTIONS).map(|_| None).collect();
        let mut lazy = Lazy::new(image.clone(), path);
        let mut lazy_len = [None; MAX_SECTIONS];
        for e in &entries {
            let id = e.id as usize;
            if e.codec == crate::codec::ZSTD_CHUNKS && decoded_lazily(e.id) {
                // this entry's own range (checked in bounds above), whatever another entry of
                // the same id says
                let range = e.offset as usize..(e.offset + e.len) as usize;
                let len = lazy.add(id, range).map_err(|w| bad(&format!("section {}: {w}", e.id)))?;
                lazy_len[id] = Some(len);
                sections[id] = (0, 0);
                continue;
            }
            let part = section_part(&image, e).map_err(|w| bad(&w))?;
            sections[id] = (0, part.bytes().len());
            parts[id] = Some(part);
        }
        drop(_t);
        let mut store = Store::from_parts_lazily(Backing::Parts(parts), sections, header.source_key, &lazy_len, path)?;
        store.lazy = Some(Box::new(lazy));
        store.validate().map_err(|w| bad(&w))?;
        Ok(store)
    }

    /// `from_sections` but for sections `lazy_len` names, to be decoded on first use: they
    /// are placed with their decoded length, and not checked yet (the caller adds `Lazy`).
    fn from_parts_lazily(
        backing: Backing,
        sections: [(usize, usize); MAX_SECTIONS],
        source_key: [u64; 4],
        lazy_len: &[Option<usize>; MAX_SECTIONS],
        path: &str,
    ) -> Result<Store, StoreError> {
        let mut store = Store::unchecked(backing, sections, source_key, None, path)?;
        for (slot, len) in store.slices.0.iter_mut().zip(lazy_len) {
            if let Some(len) = *len {
                *slot = (std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()), len);
            }
        }
        Ok(store)
    }

    /// A store over sections already placed (`sections`: offsets into the backing's image,
    /// or (0, length) for `Parts`): its JSON blobs parsed, then every structure checked.
    pub(crate) fn from_sections(
        backing: Backing,
        sections: [(usize, usize); MAX_SECTIONS],
        source_key: [u64; 4],
        pending: Option<Pending>,
        path: &str,
    ) -> Result<Store, StoreError> {
        let store = Store::unchecked(backing, sections, source_key, pending, path)?;
        store.validate().map_err(|what| StoreError::Invalid { path: path.to_string(), what })?;
        Ok(store)
    }

    /// A store over sections already placed, its JSON blobs parsed; nothing else checked.
    fn unchecked(
        backing: Backing,
        sections: [(usize, usize); MAX_SECTIONS],
        source_key: [u64; 4],
        pending: Option<Pending>,
        path: &str,
    ) -> Result<Store, StoreError> {
        let bad = |what: &str| StoreError::Invalid { path: path.to_string(), what: what.to_string() };
        let json = |id: u32| -> &[u8] { section_of(&backing, &sections, id) };
        let lanes: Vec<LaneDesc> =
            serde_json::from_slice(json(sid::LANES_JSON)).map_err(|e| bad(&format!("lanes: {e}")))?;
        let meta: TraceMeta = serde_json::from_slice(json(sid::META_JSON)).map_err(|e| bad(&format!("meta: {e}")))?;
        let counters: Vec<CounterSeries> =
            serde_json::from_slice(json(sid::COUNTERS_JSON)).map_err(|e| bad(&format!("counters: {e}")))?;
        let names: Names = serde_json::from_slice(json(sid::NAMES_JSON)).map_err(|e| bad(&format!("names: {e}")))?;
        let slices = SectionSlices(std::array::from_fn(|id| {
            let b = section_of(&backing, &sections, id as u32);
            // an empty section still gets an address (a dangling one): null marks a lazy one
            let p = if b.is_empty() { std::ptr::NonNull::<u8>::dangling().as_ptr() } else { b.as_ptr() as *mut u8 };
            (std::sync::atomic::AtomicPtr::new(p), b.len())
        }));
        let store = Store {
            _backing: backing,
            slices,
            lanes,
            meta,
            counters,
            names,
            source_key,
            source_map: std::sync::OnceLock::new(),
            strings: std::sync::OnceLock::new(),
            launches: std::sync::OnceLock::new(),
            pending: std::sync::Mutex::new(pending),
            lazy: None,
        };
        Ok(store)
    }

    /// Structural checks so that no later access can go out of bounds.
    fn validate(&self) -> Result<(), String> {
        fn check<T: bytemuck::Pod>(s: &Store, id: u32, name: &str) -> Result<usize, String> {
            let l = s.section_len(id);
            if !l.is_multiple_of(std::mem::size_of::<T>()) {
                return Err(format!("{name}: length not a multiple of its record"));
            }
            Ok(l / std::mem::size_of::<T>())
        }
        let spans = check::<SpanMeta>(self, sid::SPAN_META, "span meta")?;
        if check::<ArgsRef>(self, sid::SPAN_ARGS, "span args")? != spans {
            return Err("span columns differ in length".into());
        }
        let members = check::<i64>(self, sid::M_START, "members")?;
        for (id, name) in [(sid::M_END, "m_end"), (sid::M_MAX, "m_max")] {
            if check::<i64>(self, id, name)? != members {
                return Err("member columns differ in length".into());
            }
        }
        for (id, name) in [(sid::M_SPAN, "m_span"), (sid::M_DEPTH, "m_depth")] {
            if check::<u32>(self, id, name)? != members {
                return Err("member columns differ in length".into());
            }
        }
        if members < spans {
            return Err("fewer members than spans".into());
        }
        let lanes = check::<LaneIndex>(self, sid::LANE_INDEX, "lane index")?;
        if lanes != self.lanes.len() {
            return Err("lane index and lane list differ".into());
        }
        let levels = check::<LodLevel>(self, sid::LOD_LEVELS, "levels")?;
        let items = check::<LodItem>(self, sid::LOD_ITEMS, "items")? as u64;
        for li in self.lane_index() {
            if li.member_begin > li.member_end
                || li.member_end > members as u64
                || li.level_begin > li.level_end
                || li.level_end > levels as u64
                // a depth needs that many enclosing members: this bounds the per-depth loops
                || li.max_depth as u64 > li.member_end - li.member_begin
            {
                return Err("lane range out of bounds".into());
            }
        }
        let raw_len = check::<u32>(self, sid::DEPTH_MEMBERS, "depth members")? as u64;
        for lv in self.col::<LodLevel>(sid::LOD_LEVELS) {
            let cap = if lv.width_log2 == 0 { raw_len } else { items };
            if lv.item_begin > lv.item_end || lv.item_end > cap || lv.width_log2 > 62 {
                return Err("level range out of bounds".into());
            }
        }
        // Member indices inside levels are not scanned (that would page in the whole LOD on
        // every reopen): LodItem::member is lane-relative and read with `get` by callers.
        // M_SPAN is scanned (4 bytes a span): analyses index span columns with these ids.
        if self.col::<u32>(sid::M_SPAN).iter().any(|&s| s as usize >= spans) {
            return Err("member names a missing span".into());
        }
        let strs = check::<u64>(self, sid::STRING_OFFSETS, "string offsets")?;
        let offs = self.col::<u64>(sid::STRING_OFFSETS);
        let blen = self.section(sid::STRING_BYTES).len() as u64;
        if strs == 0 || offs.windows(2).any(|w| w[0] > w[1]) || offs.last().copied().unwrap_or(0) > blen {
            return Err("string table corrupt".into());
        }
        // Flow endpoints and args refs are not scanned here (that would page in tens of MB
        // on every reopen): every accessor that follows them is bounds-checked instead.
        let flows = check::<FlowRec>(self, sid::FLOWS, "flows")?;
        if check::<u32>(self, sid::FLOWS_BY_FROM, "flow order")? != flows {
            return Err("flow order and flows differ in length".into());
        }
        let pts = check::<i64>(self, sid::COUNTER_POINTS_TS, "counter ts")?;
        if check::<f64>(self, sid::COUNTER_POINTS_VAL, "counter values")? != pts
            || self.counters.iter().any(|c| c.begin > c.end || c.end > pts as u64)
        {
            return Err("counter ranges out of bounds".into());
        }
        Ok(())
    }

    pub(crate) fn col<T: bytemuck::Pod>(&self, id: u32) -> &[T] {
        bytemuck::try_cast_slice(self.section(id)).unwrap_or(&[])
    }

    /// Section `id`'s bytes (empty when the store has none).
    #[inline]
    pub(crate) fn section(&self, id: u32) -> &[u8] {
        let Some((p, l)) = self.slices.0.get(id as usize) else { return &[] };
        let p = p.load(std::sync::atomic::Ordering::Acquire);
        if p.is_null() {
            // a compressed section left for its first use (`Lazy`): decoded whole now, and
            // its address published by `section_range`
            return self.section_range(id, 0..*l);
        }
        // SAFETY: an address in `self._backing` found on open, or in a section `self.lazy`
        // decoded (set once, after it was written, with Release; read here with Acquire), with
        // its length; both live as long as self and are never written again.
        unsafe { std::slice::from_raw_parts(p, *l) }
    }

    /// Section `id`'s length in bytes, without decoding it.
    pub(crate) fn section_len(&self, id: u32) -> usize {
        self.slices.0.get(id as usize).map_or(0, |s| s.1)
    }

    /// Bytes `r` of section `id` (empty where `r` is not inside it): of a compressed section
    /// not yet read whole, only the chunks `r` falls in are decoded (`Lazy`).
    #[inline]
    pub(crate) fn section_range(&self, id: u32, r: std::ops::Range<usize>) -> &[u8] {
        let Some((p, l)) = self.slices.0.get(id as usize) else { return &[] };
        if r.start > r.end || r.end > *l {
            return &[];
        }
        let p = p.load(std::sync::atomic::Ordering::Acquire);
        if p.is_null() {
            let Some(lazy) = self.lazy.as_deref() else { return &[] };
            let b = lazy.bytes(id as usize, r);
            // read whole by now, range by range: published, so later reads take one load
            if let Some(whole) = lazy.whole_if_done(id as usize) {
                self.slices.0[id as usize].0.store(whole.as_ptr() as *mut u8, std::sync::atomic::Ordering::Release);
            }
            return b;
        }
        // SAFETY: as in `section`, and r is inside the section's length
        unsafe { std::slice::from_raw_parts(p.add(r.start), r.end - r.start) }
    }

    /// Elements `r` of column `id` (empty where `r` is not inside it), decoding no more of a
    /// compressed column than they need.
    #[inline]
    pub(crate) fn col_range<T: bytemuck::Pod>(&self, id: u32, r: std::ops::Range<usize>) -> &[T] {
        let w = std::mem::size_of::<T>();
        let (Some(a), Some(b)) = (r.start.checked_mul(w), r.end.checked_mul(w)) else { return &[] };
        bytemuck::try_cast_slice(self.section_range(id, a..b)).unwrap_or(&[])
    }

    /// Element `i` of column `id` (the default where there is none).
    #[inline]
    fn col_at<T: bytemuck::Pod + Default>(&self, id: u32, i: usize) -> T {
        self.col_range::<T>(id, i..i.saturating_add(1)).first().copied().unwrap_or_default()
    }

    pub fn source_key(&self) -> [u64; 4] {
        self.source_key
    }

    pub fn string(&self, id: u32) -> &str {
        let offs = self.col::<u64>(sid::STRING_OFFSETS);
        let (Some(&a), Some(&b)) = (offs.get(id as usize), offs.get(id as usize + 1)) else { return "" };
        // `get` on a str also checks that both ends fall on character boundaries
        self.strings().get(a as usize..b as usize).unwrap_or("")
    }

    /// All the names' bytes as text. Analyses look a name up per span (millions of calls on an
    /// nsys report, 10 % of its report when each call checked its bytes): they are copied out
    /// of the map and checked once, so a store file changed under its map still reads as odd
    /// names, never as invalid text. Invalid bytes (a corrupt store) read as U+FFFD.
    fn strings(&self) -> &str {
        self.strings.get_or_init(|| {
            let bytes = self.section(sid::STRING_BYTES);
            match simdutf8::basic::from_utf8(bytes) {
                Ok(text) => text.into(),
                Err(_) => String::from_utf8_lossy(bytes).into_owned().into_boxed_str(),
            }
        })
    }

    pub fn string_count(&self) -> usize {
        self.col::<u64>(sid::STRING_OFFSETS).len().saturating_sub(1)
    }

    pub fn lane_index(&self) -> &[LaneIndex] {
        self.col::<LaneIndex>(sid::LANE_INDEX)
    }

    pub fn span_count(&self) -> usize {
        self.col::<SpanMeta>(sid::SPAN_META).len()
    }

    pub fn span_meta(&self, span: u32) -> SpanMeta {
        self.col_at::<SpanMeta>(sid::SPAN_META, span as usize)
    }

    pub fn span_metas(&self) -> &[SpanMeta] {
        self.col::<SpanMeta>(sid::SPAN_META)
    }

    pub fn span_kind(&self, span: u32) -> SpanKind {
        SpanKind::from_u8(self.span_meta(span).kind)
    }

    /// Start of span `i` (span i is member i of its primary lane).
    pub fn span_start(&self, span: u32) -> i64 {
        self.col_at::<i64>(sid::M_START, span as usize)
    }

    pub fn span_end(&self, span: u32) -> i64 {
        self.col_at::<i64>(sid::M_END, span as usize)
    }

    /// Span starts and ends as whole columns, indexed by span id.
    pub fn span_times(&self) -> (&[i64], &[i64]) {
        let n = self.span_count();
        let s = self.col::<i64>(sid::M_START);
        let e = self.col::<i64>(sid::M_END);
        (&s[..n.min(s.len())], &e[..n.min(e.len())])
    }

    pub fn span_name(&self, span: u32) -> &str {
        self.string(self.span_meta(span).name)
    }

    /// The span's args as JSON object text ("" when none).
    pub fn span_args(&self, span: u32) -> std::borrow::Cow<'_, str> {
        let a = self.col_at::<ArgsRef>(sid::SPAN_ARGS, span as usize);
        let text = self.args_text(&a);
        if a.correlation == 0 {
            return text.into();
        }
        // `{"correlation":N` and the text's members after it
        let rest = text.trim_start().strip_prefix('{').map(str::trim_start).unwrap_or("}");
        let sep = if rest.starts_with('}') { "" } else { "," };
        format!("{{\"correlation\":{}{sep}{rest}", a.correlation).into()
    }

    /// `span`'s args text as stored, not decoded: to search before decoding it (`span_args`
    /// checks the text is UTF-8 and prefixes the correlation id, which this lacks).
    pub fn span_args_raw(&self, span: u32) -> &[u8] {
        self.args_bytes(&self.col_at::<ArgsRef>(sid::SPAN_ARGS, span as usize))
    }

    fn args_text(&self, a: &ArgsRef) -> &str {
        std::str::from_utf8(self.args_bytes(a)).unwrap_or("")
    }

    fn args_bytes(&self, a: &ArgsRef) -> &[u8] {
        let in_source = a.len & ARGS_IN_SOURCE != 0;
        let len = (a.len & !ARGS_IN_SOURCE) as u64;
        let (b, e) = (a.offset as usize, a.offset.saturating_add(len) as usize);
        let bytes: &[u8] = if in_source {
            match self.source() {
                Some(m) => m,
                None => return b"",
            }
        } else {
            self.section(sid::ARGS)
        };
        if b > e || e > bytes.len() {
            return b"";
        }
        &bytes[b..e]
    }

    /// The mapped source file (for args kept there), or None when it is gone.
    fn source(&self) -> Option<&[u8]> {
        self.source_map
            .get_or_init(|| {
                let path = std::str::from_utf8(self.section(sid::ARGS_SOURCE)).ok()?;
                if path.is_empty() {
                    return None;
                }
                let f = std::fs::File::open(path).ok()?;
                // SAFETY: read-only map of the source the cache key pinned; accesses are
                // bounds-checked against its length.
                unsafe { memmap2::Mmap::map(&f) }.ok()
            })
            .as_deref()
    }

    pub fn lane_view(&self, lane: u32) -> LaneView<'_> {
        let li = self.lane_index().get(lane as usize).copied().unwrap_or_default();
        let (b, e) = (li.member_begin as usize, li.member_end as usize);
        let lv = &self.col::<LodLevel>(sid::LOD_LEVELS)[li.level_begin as usize..li.level_end as usize];
        // ranges, not whole columns: a compressed store decodes only this lane's chunks
        let LaneSpans { starts, ends, span } = self.lane_spans(lane);
        LaneView {
            starts,
            ends,
            max_end: self.col_range::<i64>(sid::M_MAX, b..e),
            span,
            depth: self.col_range::<u32>(sid::M_DEPTH, b..e),
            levels: lv,
            max_depth: li.max_depth,
        }
    }

    /// `lane`'s members' starts, ends and spans: what a scan over the lane reads (the interval
    /// index's max ends and the depths are `lane_view`'s, for queries and rows).
    pub fn lane_spans(&self, lane: u32) -> LaneSpans<'_> {
        let li = self.lane_index().get(lane as usize).copied().unwrap_or_default();
        let (b, e) = (li.member_begin as usize, li.member_end as usize);
        LaneSpans {
            starts: self.col_range::<i64>(sid::M_START, b..e),
            ends: self.col_range::<i64>(sid::M_END, b..e),
            span: self.col_range::<u32>(sid::M_SPAN, b..e),
        }
    }

    /// The span of member `member` of `lane` (lane-relative, as `LodItem::member`): one
    /// element read, not the lane's columns (a hover or the selection, per drawn item).
    pub fn member_span(&self, lane: u32, member: u32) -> Option<u32> {
        let li = self.lane_index().get(lane as usize).copied().unwrap_or_default();
        let i = (li.member_begin as usize).checked_add(member as usize)?;
        (i < li.member_end as usize).then(|| self.col_at::<u32>(sid::M_SPAN, i))
    }

    /// Spans of `lane` overlapping [t0, t1): calls `f(member)` in start order.
    pub fn query_window(&self, lane: u32, t0: i64, t1: i64, f: impl FnMut(usize)) {
        let v = self.lane_view(lane);
        interval::query(v.starts, v.ends, v.max_end, t0, t1, f);
    }

    /// Level-of-detail query: what to draw of `lane` in [t0, t1) at `ns_per_px`. Spans at
    /// least a pixel wide come back as themselves (count == 1); runs of narrower ones fold.
    /// Calls `f(depth, item)`; `item.member` is lane-relative (see `lane_view().span`).
    pub fn lod_query(&self, lane: u32, t0: i64, t1: i64, ns_per_px: i64, mut f: impl FnMut(u32, LodItem)) {
        let li = self.lane_index().get(lane as usize).copied().unwrap_or_default();
        if li.member_begin >= li.member_end || t1 <= t0 {
            return;
        }
        let r = ns_per_px.max(1);
        let levels = &self.col::<LodLevel>(sid::LOD_LEVELS)[li.level_begin as usize..li.level_end as usize];
        // the member columns are read only where a raw level or the fold needs them: a
        // compressed store decodes a column on its first use (`Lazy`), and a whole-trace
        // view reads the level of detail alone
        let members = std::cell::OnceCell::new();
        let members = || -> &(&[i64], &[i64], &[u32]) {
            members.get_or_init(|| {
                let (b, e) = (li.member_begin as usize, li.member_end as usize);
                let (starts, ends) =
                    (self.col_range::<i64>(sid::M_START, b..e), self.col_range::<i64>(sid::M_END, b..e));
                (starts, ends, self.col_range::<u32>(sid::M_SPAN, b..e))
            })
        };
        // a raw member as an item, named from its span (a corrupt member index gets no name)
        let single = |m: usize| {
            let &(starts, ends, span) = members();
            let meta = span.get(m).map(|&s| self.span_meta(s)).unwrap_or_default();
            LodItem::single(starts[m], ends[m], m as u32, meta.name, meta.kind)
        };
        // a store whose level of detail is not built yet (`finish_deferred`) folds its raw
        // spans at the view's width at every zoom: slower, and not pre-folded
        if r < (1i64 << FIRST_LEVEL_LOG2) || levels.is_empty() {
            let v = self.lane_view(lane);
            let mut folders: Vec<Folder> = (0..=v.max_depth).map(|_| Folder::new(r)).collect();
            interval::query(v.starts, v.ends, v.max_end, t0, t1, |i| {
                let d = v.depth[i];
                let item = single(i);
                // M_DEPTH is not scanned on open: a depth past the lane's max is corrupt, skip it
                if let Some(fo) = folders.get_mut(d as usize) {
                    fo.push(item, &mut |x| f(d, x));
                }
            });
            for (d, fo) in folders.iter_mut().enumerate() {
                fo.finish(&mut |x| f(d as u32, x));
            }
            return;
        }
        for d in 0..=li.max_depth {
            let mut fo = Folder::new(r);
            match crate::lod::pick_level(levels, d, r) {
                Some(level) => {
                    let items =
                        self.col_range::<LodItem>(sid::LOD_ITEMS, level.item_begin as usize..level.item_end as usize);
                    let mut i = first_overlapping(items, t0);
                    while i < items.len() && items[i].start < t1 {
                        let it = items[i];
                        if it.end > t0 || (it.start == it.end && it.start >= t0) {
                            fo.push(it, &mut |x| f(d, x));
                        }
                        i += 1;
                    }
                }
                None => {
                    // the raw level: this depth's spans, found by binary search on start
                    let Some(raw) = levels.iter().find(|l| l.depth == d && l.width_log2 == 0) else { continue };
                    let ms = self.col_range::<u32>(sid::DEPTH_MEMBERS, raw.item_begin as usize..raw.item_end as usize);
                    let &(starts, ends, _) = members();
                    let start_of = |m: u32| starts.get(m as usize).copied().unwrap_or(i64::MAX);
                    let end_of = |m: u32| ends.get(m as usize).copied().unwrap_or(i64::MIN);
                    let mut i = ms.partition_point(|&m| start_of(m) < t0);
                    while i > 0 && end_of(ms[i - 1]) > t0 {
                        i -= 1;
                    }
                    let n = starts.len();
                    while i < ms.len() && (ms[i] as usize) < n && starts[ms[i] as usize] < t1 {
                        let m = ms[i] as usize;
                        if ends[m] > t0 || (starts[m] == ends[m] && starts[m] >= t0) {
                            fo.push(single(m), &mut |x| f(d, x));
                        }
                        i += 1;
                    }
                }
            }
            fo.finish(&mut |x| f(d, x));
        }
    }

    pub fn flows(&self) -> &[FlowRec] {
        self.col::<FlowRec>(sid::FLOWS)
    }

    /// Flows arriving at `span` (e.g. the launch of a kernel). Flows are stored sorted by
    /// `to`, so this is a binary search.
    pub fn flows_to(&self, span: u32) -> impl Iterator<Item = &FlowRec> {
        let flows = self.flows();
        let i = flows.partition_point(|f| f.to < span);
        flows[i..].iter().take_while(move |f| f.to == span)
    }

    /// Flows leaving `span` (e.g. the kernels a launch call started), through the stored
    /// by-`from` order.
    pub fn flows_from(&self, span: u32) -> impl Iterator<Item = &FlowRec> {
        let flows = self.flows();
        let order = self.col::<u32>(sid::FLOWS_BY_FROM);
        let i = order.partition_point(|&k| flows.get(k as usize).map(|f| f.from < span).unwrap_or(false));
        order[i..].iter().filter_map(move |&k| flows.get(k as usize)).take_while(move |f| f.from == span)
    }

    pub fn counter_points(&self, series: &CounterSeries) -> (&[i64], &[f64]) {
        let (b, e) = (series.begin as usize, series.end as usize);
        (self.col_range::<i64>(sid::COUNTER_POINTS_TS, b..e), self.col_range::<f64>(sid::COUNTER_POINTS_VAL, b..e))
    }

    /// Lanes in display order.
    pub fn lanes_in_order(&self) -> Vec<u32> {
        let mut v: Vec<u32> = (0..self.lanes.len() as u32).collect();
        v.sort_by(|&a, &b| {
            let (x, y) = (&self.lanes[a as usize], &self.lanes[b as usize]);
            (x.sort, &x.kind).cmp(&(y.sort, &y.kind))
        });
        v
    }
}

/// Section `id` of a backing whose sections are placed at `sections`.
fn section_of<'a>(backing: &'a Backing, sections: &[(usize, usize); MAX_SECTIONS], id: u32) -> &'a [u8] {
    let Some(&(o, l)) = sections.get(id as usize) else { return &[] };
    match backing {
        Backing::Parts(parts) => parts.get(id as usize).and_then(|p| p.as_ref()).map(|p| p.bytes()).unwrap_or(&[]),
        _ => backing.bytes().get(o..o + l).unwrap_or(&[]),
    }
}
