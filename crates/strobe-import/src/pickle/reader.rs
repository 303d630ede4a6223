use super::memo::Memo;
use super::run::run;
use rustc_hash::FxHashMap;
use std::borrow::Cow;

/// A decoded value. Containers and strings are indices into the [`Pickle`] arena.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    /// An integer above `i64::MAX` that fits in 64 bits unsigned (an address, a size, or a
    /// C++ `size_t(-1)` written as a 9-byte LONG1).
    UInt(u64),
    /// An integer outside `i64::MIN ..= u64::MAX`: index into the wide-integer list (where it
    /// is and how long, not its digits: no snapshot field needs more than 64 bits).
    Wide(u32),
    Float(f64),
    Str(u32),
    Bytes(u32),
    List(u32),
    Tuple(u32),
    Dict(u32),
    /// A value a [`Sink`] made of a finished dict (index into the sink's own storage).
    Ext(u32),
}

/// Sees each dict as soon as a SETITEMS batch fills it, and may replace it by its own
/// compact value (the dict is then never stored). Lets a caller build its structures while
/// reading instead of keeping the whole value tree.
pub trait Sink {
    /// `items` are the dict's keys and values, alternating (`items.chunks_exact(2)` are its
    /// pairs): all of them, when a dict is filled by more than one batch.
    fn dict_done(&mut self, pk: &Pickle, items: &[Value]) -> Result<Option<Value>, String>;

    /// Called about once per MiB read with the byte offset reached (progress); an error
    /// stops the parse there (cancel).
    fn reached(&mut self, _offset: usize) -> Result<(), String> {
        Ok(())
    }

    /// A split parse's second thread is about to parse its chunk; the part before the split
    /// holds `dicts_before` dicts (so the first thread's sink makes at most that many values).
    fn chunk_starts(&mut self, _dicts_before: usize) {}

    /// The chunk is parsed (or will not be): nothing more is written for it.
    fn chunk_ends(&mut self) {}
}

/// Keeps every dict.
pub struct KeepAll;

impl Sink for KeepAll {
    fn dict_done(&mut self, _: &Pickle, _: &[Value]) -> Result<Option<Value>, String> {
        Ok(None)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickleError {
    /// Byte offset of the opcode that failed.
    pub offset: usize,
    pub what: String,
}

impl std::fmt::Display for PickleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pickle byte {}: {}", self.offset, self.what)
    }
}

impl std::error::Error for PickleError {}

#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Open MARKs at once.
    pub max_marks: usize,
    /// Values on the stack at once.
    pub max_stack: usize,
    /// Memo entries.
    pub max_memo: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_marks: 10_000, max_stack: 1 << 24, max_memo: 1 << 28 }
    }
}

/// An integer too wide for 64 bits, kept as where it is so a field that needs it can say so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WideInt {
    /// Byte offset of the opcode that pushed it.
    pub offset: usize,
    /// Length of its encoding (LONG1/LONG4 bytes, or digits of an INT/LONG line).
    pub len: usize,
    pub negative: bool,
}

impl std::fmt::Display for WideInt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sign = if self.negative { "negative " } else { "" };
        write!(f, "{sign}integer of {} encoded bytes at pickle byte {} does not fit in 64 bits", self.len, self.offset)
    }
}

/// The arena of a decoded pickle and its root value.
#[derive(Default, Debug)]
pub struct Pickle {
    pub root: Option<Value>,
    strs: Vec<Box<str>>,
    bytes: Vec<Box<[u8]>>,
    /// Lists and tuples share this arena.
    seqs: Vec<Vec<Value>>,
    /// Per dict index, where its items are in `dict_items` (`NO_ITEMS` while it has none): an
    /// empty dict costs 4 bytes, and most of a snapshot's millions of dicts are handed to a
    /// sink and never stored.
    dict_slots: Vec<u32>,
    dict_items: Vec<Vec<(Value, Value)>>,
    wides: Vec<WideInt>,
    /// Dicts a sink replaced, by dict index (memo references resolve through this).
    pub(super) replaced: FxHashMap<u32, Value>,
    /// Lists that hold nothing but `Ext(first) .. Ext(first + len)`, by list index, as
    /// `(first, len)`: their `seqs` entry stays empty. A snapshot's trace is such a list, tens
    /// of millions of sink values in order; kept whole it cost 16 bytes an entry and copies
    /// as it grew.
    ext_runs: FxHashMap<u32, (u32, u32)>,
    /// Lists a split parse's chunk made again from the part before it, by list index, with the
    /// memo key they were read for (see `split::Prefix::resolve`).
    pub(super) prefix_src: FxHashMap<u32, u32>,
}

impl Pickle {
    pub fn root(&self) -> Value {
        self.root.unwrap_or(Value::None)
    }
    pub fn str(&self, v: Value) -> Option<&str> {
        match v {
            Value::Str(i) => Some(&self.strs[i as usize]),
            _ => None,
        }
    }
    pub fn bytes(&self, v: Value) -> Option<&[u8]> {
        match v {
            Value::Bytes(i) => Some(&self.bytes[i as usize]),
            _ => None,
        }
    }
    /// Items of a list or tuple (made afresh for a list kept as a run: see [`Pickle::ext_run`]).
    pub fn seq(&self, v: Value) -> Option<Cow<'_, [Value]>> {
        match v {
            Value::List(i) | Value::Tuple(i) => Some(match self.ext_runs.get(&i) {
                Some(&(first, len)) => Cow::Owned((first..first + len).map(Value::Ext).collect()),
                None => Cow::Borrowed(&self.seqs[i as usize]),
            }),
            _ => None,
        }
    }
    /// A list that holds `Ext(first) .. Ext(first + len)` and nothing else, as `(first, len)`
    /// (without making its items).
    pub fn ext_run(&self, v: Value) -> Option<(u32, u32)> {
        match v {
            Value::List(i) => self.ext_runs.get(&i).copied(),
            _ => None,
        }
    }
    /// The memo key a list of a split parse's chunk was read again for, from the part before
    /// the split: the same list is that key's value in the first part's parse.
    pub fn prefix_source(&self, v: Value) -> Option<u32> {
        match v {
            Value::List(i) | Value::Tuple(i) if !self.prefix_src.is_empty() => self.prefix_src.get(&i).copied(),
            _ => None,
        }
    }
    /// Appends `Ext(first) .. Ext(first + len)` to list `i` (without making the items where
    /// the list is a run they continue).
    pub(super) fn append_ext_run(&mut self, i: u32, first: u32, len: u32) {
        match self.ext_runs.get(&i).copied() {
            Some((f, n)) if f as u64 + n as u64 == first as u64 && (n as u64 + len as u64) <= u32::MAX as u64 => {
                self.ext_runs.insert(i, (f, n + len));
            }
            None if self.seqs[i as usize].is_empty() => {
                self.ext_runs.insert(i, (first, len));
            }
            _ => {
                let items: Vec<Value> = (first..first + len).map(Value::Ext).collect();
                self.append(i, &items);
            }
        }
    }
    /// Appends to list `i`, keeping a list of consecutive `Ext` values as a run.
    pub(super) fn append(&mut self, i: u32, items: &[Value]) {
        let seq = &mut self.seqs[i as usize];
        if seq.is_empty() && !items.is_empty() {
            let run = self.ext_runs.get(&i).copied();
            let next = match (run, items[0]) {
                (Some((first, len)), _) => Some(first as u64 + len as u64),
                (None, Value::Ext(x)) => Some(x as u64),
                _ => None,
            };
            if let Some(next) = next {
                let follows = next + items.len() as u64 <= u32::MAX as u64
                    && items
                        .iter()
                        .enumerate()
                        .all(|(j, v)| matches!(*v, Value::Ext(x) if x as u64 == next + j as u64));
                if follows {
                    let (first, len) = run.unwrap_or((next as u32, 0));
                    self.ext_runs.insert(i, (first, len + items.len() as u32));
                    return;
                }
            }
            if let Some((first, len)) = self.ext_runs.remove(&i) {
                seq.extend((first..first + len).map(Value::Ext));
            }
        }
        seq.extend_from_slice(items);
    }
    pub fn dict(&self, v: Value) -> Option<&[(Value, Value)]> {
        match v {
            Value::Dict(i) => Some(self.items_of(i)),
            _ => None,
        }
    }
    pub(super) fn items_of(&self, dict: u32) -> &[(Value, Value)] {
        match self.dict_slots[dict as usize] {
            NO_ITEMS => &[],
            j => &self.dict_items[j as usize],
        }
    }
    pub(super) fn items_mut(&mut self, dict: u32) -> &mut Vec<(Value, Value)> {
        let slot = &mut self.dict_slots[dict as usize];
        if *slot == NO_ITEMS {
            *slot = self.dict_items.len() as u32;
            self.dict_items.push(Vec::new());
        }
        &mut self.dict_items[*slot as usize]
    }
    pub(super) fn new_str_owned(&mut self, s: String) -> Value {
        self.strs.push(s.into());
        Value::Str((self.strs.len() - 1) as u32)
    }
    pub(super) fn new_bytes(&mut self, b: &[u8]) -> Value {
        self.bytes.push(b.into());
        Value::Bytes((self.bytes.len() - 1) as u32)
    }
    pub(super) fn new_wide(&mut self, w: WideInt) -> Value {
        self.wides.push(w);
        Value::Wide((self.wides.len() - 1) as u32)
    }
    /// How many dicts were made (stored or handed to a sink).
    pub(super) fn dict_count(&self) -> usize {
        self.dict_slots.len()
    }
    /// The arena's sizes, for `STROBE_TIMING`.
    pub(super) fn counts(&self) -> String {
        format!(
            "{} dicts ({} with items), {} lists/tuples, {} strings, {} bytes",
            self.dict_slots.len(),
            self.dict_items.len(),
            self.seqs.len(),
            self.strs.len(),
            self.bytes.len()
        )
    }
    pub(super) fn new_seq(&mut self, items: Vec<Value>, tuple: bool) -> Value {
        self.seqs.push(items);
        let i = (self.seqs.len() - 1) as u32;
        if tuple {
            Value::Tuple(i)
        } else {
            Value::List(i)
        }
    }
    pub(super) fn new_dict(&mut self, items: Vec<(Value, Value)>) -> Value {
        if items.is_empty() {
            self.dict_slots.push(NO_ITEMS);
        } else {
            self.dict_slots.push(self.dict_items.len() as u32);
            self.dict_items.push(items);
        }
        Value::Dict((self.dict_slots.len() - 1) as u32)
    }
    /// A dict's keys and values, alternating (the form a [`Sink`] sees); empty for other values.
    pub fn flat_items(&self, v: Value) -> Vec<Value> {
        self.dict(v).unwrap_or(&[]).iter().flat_map(|&(k, x)| [k, x]).collect()
    }
    /// Looks up a string key in a dict (linear: snapshot dicts are small).
    pub fn get(&self, dict: Value, key: &str) -> Option<Value> {
        self.dict(dict)?.iter().find(|(k, _)| self.str(*k) == Some(key)).map(|(_, v)| *v)
    }
    /// Moves a dict's items out, leaving it empty (frees memory while converting values
    /// that are read once).
    pub fn take_dict(&mut self, v: Value) -> Vec<(Value, Value)> {
        match v {
            Value::Dict(i) => std::mem::take(self.items_mut(i)),
            _ => Vec::new(),
        }
    }
    /// A signed 64-bit integer (bools count as 0/1); `None` for other values and for integers
    /// beyond `i64` (see [`Pickle::int_clamped`] and [`Pickle::u64`]).
    pub fn int(&self, v: Value) -> Option<i64> {
        match v {
            Value::Int(i) => Some(i),
            Value::Bool(b) => Some(b as i64),
            _ => None,
        }
    }
    /// Any integer as an `i64`, clamped to its range; the flag says whether it was clamped
    /// (for fields where the exact value does not matter, such as a frame's line).
    pub fn int_clamped(&self, v: Value) -> Option<(i64, bool)> {
        match v {
            Value::UInt(_) => Some((i64::MAX, true)),
            Value::Wide(i) => Some((if self.wides[i as usize].negative { i64::MIN } else { i64::MAX }, true)),
            _ => self.int(v).map(|i| (i, false)),
        }
    }
    /// An unsigned 64-bit integer, exactly: `Ok(None)` if `v` is not an integer, an error if it
    /// is negative or wider than 64 bits (for addresses and sizes, which must not be clamped).
    pub fn u64(&self, v: Value) -> Result<Option<u64>, String> {
        match v {
            Value::Int(i) if i < 0 => Err(format!("negative value {i}")),
            Value::Int(i) => Ok(Some(i as u64)),
            Value::Bool(b) => Ok(Some(b as u64)),
            Value::UInt(u) => Ok(Some(u)),
            Value::Wide(i) => Err(self.wides[i as usize].to_string()),
            _ => Ok(None),
        }
    }
    pub fn wide(&self, v: Value) -> Option<&WideInt> {
        match v {
            Value::Wide(i) => self.wides.get(i as usize),
            _ => None,
        }
    }
    /// Converts to JSON, at most `depth` levels deep (deeper parts become null). A list or dict
    /// the pickle references from several places is written out at each, so a few hundred bytes
    /// of nested shared references would expand without end: past four times the values the
    /// pickle holds (plus 4096) it is an error instead.
    pub fn to_json(&self, v: Value, depth: usize) -> Result<serde_json::Value, String> {
        let held = self.seqs.iter().map(Vec::len).sum::<usize>()
            + self.dict_items.iter().map(Vec::len).sum::<usize>()
            + self.bytes.iter().map(|b| b.len()).sum::<usize>();
        let limit = held.saturating_mul(4).saturating_add(4096);
        let mut left = limit;
        self.json_of(v, depth, &mut left)
            .ok_or_else(|| format!("its shared lists and dicts expand past {limit} values as JSON"))
    }

    /// `to_json`, spending one of `left` a value; None once they are spent.
    fn json_of(&self, v: Value, depth: usize, left: &mut usize) -> Option<serde_json::Value> {
        use serde_json::Value as J;
        *left = left.checked_sub(1)?;
        if depth == 0 {
            return Some(J::Null);
        }
        Some(match v {
            Value::None => J::Null,
            Value::Bool(b) => J::Bool(b),
            Value::Int(i) => J::from(i),
            Value::UInt(u) => J::from(u),
            Value::Wide(i) => J::String(self.wides[i as usize].to_string()),
            Value::Float(f) => serde_json::Number::from_f64(f).map(J::Number).unwrap_or(J::Null),
            Value::Str(_) => J::String(self.str(v).unwrap().to_string()),
            Value::Ext(_) => J::Null,
            Value::Bytes(_) => {
                let b = self.bytes(v).unwrap();
                *left = left.checked_sub(b.len())?;
                J::Array(b.iter().map(|b| J::from(*b)).collect())
            }
            Value::List(_) | Value::Tuple(_) => {
                J::Array(self.seq(v).unwrap().iter().map(|x| self.json_of(*x, depth - 1, left)).collect::<Option<_>>()?)
            }
            Value::Dict(_) => {
                let mut m = serde_json::Map::new();
                for (k, x) in self.dict(v).unwrap() {
                    let key = match *k {
                        Value::Str(_) => self.str(*k).unwrap().to_string(),
                        Value::Int(i) => i.to_string(),
                        other => format!("{other:?}"),
                    };
                    m.insert(key, self.json_of(*x, depth - 1, left)?);
                }
                J::Object(m)
            }
        })
    }
}

pub(super) struct Cur<'a> {
    pub d: &'a [u8],
    pub p: usize,
    /// Where the opcode being run starts (errors name it).
    pub op_at: usize,
}

impl<'a> Cur<'a> {
    pub fn err(&self, what: impl Into<String>) -> PickleError {
        PickleError { offset: self.op_at, what: what.into() }
    }
    #[inline]
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], PickleError> {
        if n > self.d.len() - self.p {
            return Err(self.err(format!(
                "truncated: needs {n} bytes, {} left (declared length larger than the file?)",
                self.d.len() - self.p
            )));
        }
        let s = &self.d[self.p..self.p + n];
        self.p += n;
        Ok(s)
    }
    #[inline]
    pub fn u8(&mut self) -> Result<u8, PickleError> {
        Ok(self.take(1)?[0])
    }
    #[inline]
    pub fn u16(&mut self) -> Result<u16, PickleError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
    #[inline]
    pub fn u32(&mut self) -> Result<u32, PickleError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    #[inline]
    pub fn u64(&mut self) -> Result<u64, PickleError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    /// A protocol-0 text argument: the bytes up to the next newline (which is consumed).
    pub fn line(&mut self) -> Result<&'a [u8], PickleError> {
        match self.d[self.p..].iter().position(|&b| b == b'\n') {
            Some(n) => {
                let s = &self.d[self.p..self.p + n];
                self.p += n + 1;
                Ok(s)
            }
            None => Err(self.err("truncated: text argument without its newline")),
        }
    }
    pub fn len64(&mut self) -> Result<usize, PickleError> {
        let n = self.u64()?;
        usize::try_from(n).map_err(|_| self.err(format!("declared length {n} too large")))
    }
}

/// Decodes a whole pickle held in memory.
pub fn parse(data: &[u8], limits: Limits) -> Result<Pickle, PickleError> {
    parse_with(data, limits, &mut KeepAll)
}

/// Strings up to this many bytes are shared by content (longer ones are rarely repeated
/// and would cost a hash of their whole text).
const SHARED_STR_LEN: usize = 64;

const NO_ITEMS: u32 = u32::MAX;

/// Decodes a whole pickle, handing each filled dict to `sink`.
pub fn parse_with(data: &[u8], limits: Limits, sink: &mut impl Sink) -> Result<Pickle, PickleError> {
    let mut st = State::new(data, data.len(), limits)?;
    match run::<SEQ>(&mut st, sink, &|_| NO_SPLIT)? {
        Ended::Stop => Ok(st.finish()),
        // only a chunk or a spliced parse ends otherwise
        _ => Err(st.c.err("parse ended early")),
    }
}

/// Equal short strings, by their bytes in the parsed data.
pub(super) type ShortStrs<'a> = FxHashMap<&'a [u8], u32>;

/// A string value: shared with an equal short one made before.
#[inline]
pub(super) fn str_value<'a>(out: &mut Pickle, short_strs: &mut ShortStrs<'a>, b: &'a [u8]) -> Result<Value, String> {
    if b.len() <= SHARED_STR_LEN {
        if let Some(&i) = short_strs.get(b) {
            return Ok(Value::Str(i));
        }
    }
    let s = std::str::from_utf8(b).map_err(|_| "string is not valid UTF-8".to_string())?;
    out.strs.push(s.into());
    let i = (out.strs.len() - 1) as u32;
    if b.len() <= SHARED_STR_LEN {
        short_strs.insert(b, i);
    }
    Ok(Value::Str(i))
}

/// How a parse run ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Ended {
    /// STOP: the root is set.
    Stop,
    /// A `SEQ` run reached the split its poll named.
    AtSplit,
    /// A `CHUNK` run met what only the sequential parse can read (or was told to stop).
    ChunkEnd,
    /// An `AFTER` run referred to a memo key the chunk made: the whole parse must be redone in order.
    Hole,
}

/// The sequential parse (also the first thread's, up to a split).
pub(super) const SEQ: u8 = 0;
/// The second thread's chunk after a split: its stack's bottom is the list being filled
/// ([`OUTER`]) and memo keys below `Memo::base` are read from the file (`split::Prefix`).
pub(super) const CHUNK: u8 = 1;
/// The first thread after splicing a chunk in: memo keys the chunk made are a hole.
pub(super) const AFTER: u8 = 2;

/// What a poll answers when there is no split (yet: [`SPLIT_PENDING`]).
pub(super) const NO_SPLIT: usize = usize::MAX;
pub(super) const SPLIT_PENDING: usize = usize::MAX - 1;

/// The list a chunk appends to, as the chunk's stack holds it (never an arena index).
pub(super) const OUTER: Value = Value::List(u32::MAX);

/// A chunk's state: where it last finished a batch of [`OUTER`], and how it reads the part before it.
pub(super) struct ChunkState<'a> {
    pub prefix: super::split::Prefix<'a>,
    /// The next sink value a batch must start with (a chunk's batches are its sink's values in order).
    pub next_ext: u32,
    /// Byte offset after the last whole batch, the sink values and memo keys up to there.
    pub commit: Option<(usize, u32, usize)>,
}

/// A parse that can stop and go on: the sequential parse, and each side of a split one.
pub(super) struct State<'a> {
    pub c: Cur<'a>,
    pub limits: Limits,
    pub out: Pickle,
    pub stack: Vec<Value>,
    pub marks: Vec<usize>,
    pub memo: Memo,
    pub sparse_memo: FxHashMap<u64, Value>,
    pub short_strs: ShortStrs<'a>,
    /// The offset of the next progress and split poll.
    pub next_tick: usize,
    /// Where a `SEQ` run stops for a split (`SPLIT_PENDING` until its poll names one).
    pub split_at: usize,
    pub memo_pages: strobe_store::prefault::Prefault,
    pub dict_pages: strobe_store::prefault::Prefault,
    pub chunk: Option<ChunkState<'a>>,
}

impl<'a> State<'a> {
    /// A parse of `data` from its start; `span`: how many of its bytes this side will read
    /// (what its big vectors are sized by).
    pub fn new(data: &'a [u8], span: usize, limits: Limits) -> Result<State<'a>, PickleError> {
        let c = Cur { d: data, p: 0, op_at: 0 };
        if data.is_empty() {
            return Err(c.err("empty file (not a pickle)"));
        }
        let mut out = Pickle::default();
        // Sized for a snapshot's rate (about one memo entry per 30 bytes) so that the big vectors
        // do not grow by copying; pages never written are never touched.
        let memo = Memo::with_capacity(span / 32);
        // a snapshot's trace entries are one dict each, 70–90 bytes apart
        out.dict_slots.reserve(span / 48);
        // both filled one slot per object, in order: their fresh pages mapped on another core
        let memo_pages = strobe_store::prefault::Prefault::spare_of(&memo.slots);
        let dict_pages = strobe_store::prefault::Prefault::spare_of(&out.dict_slots);
        Ok(State {
            c,
            limits,
            out,
            stack: Vec::with_capacity(64),
            marks: Vec::new(),
            memo,
            sparse_memo: FxHashMap::default(),
            short_strs: FxHashMap::default(),
            next_tick: 0,
            split_at: SPLIT_PENDING,
            memo_pages,
            dict_pages,
            chunk: None,
        })
    }

    pub fn finish(self) -> Pickle {
        self.out
    }
}

/// An integer as the reader keeps it: a 64-bit value, or "too wide" with its sign.
pub(super) enum Long {
    Fits(Value),
    Wide { negative: bool },
}

/// The value of a magnitude-and-sign pair: `Int` where it fits in `i64`, `UInt` above it.
fn fit(negative: bool, magnitude: u128) -> Long {
    if negative {
        match magnitude {
            m if m <= i64::MAX as u128 + 1 => Long::Fits(Value::Int((m as i128).wrapping_neg() as i64)),
            _ => Long::Wide { negative },
        }
    } else if magnitude <= i64::MAX as u128 {
        Long::Fits(Value::Int(magnitude as i64))
    } else if magnitude <= u64::MAX as u128 {
        Long::Fits(Value::UInt(magnitude as u64))
    } else {
        Long::Wide { negative }
    }
}

/// Little-endian two's-complement integer of any length (LONG1/LONG4). Only the low 16 bytes
/// can hold a 64-bit value; the rest must be sign fill, so a long encoding costs one pass.
pub(super) fn long_le(b: &[u8]) -> Long {
    let Some(&last) = b.last() else { return Long::Fits(Value::Int(0)) };
    let negative = last & 0x80 != 0;
    let fill = if negative { 0xff } else { 0 };
    if b.len() > 16 && b[16..].iter().any(|&x| x != fill) {
        return Long::Wide { negative };
    }
    let mut buf = [fill; 16];
    let n = b.len().min(16);
    buf[..n].copy_from_slice(&b[..n]);
    let v = i128::from_le_bytes(buf);
    fit(negative, v.unsigned_abs())
}

/// Python's raw-unicode-escape: each byte is a Latin-1 character, except `\\uXXXX` and
/// `\\UXXXXXXXX` (the encoder escapes backslashes and newlines that way too).
pub(super) fn raw_unicode_escape(b: &[u8]) -> Option<String> {
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let n = match (b[i], b.get(i + 1)) {
            (b'\\', Some(b'u')) => 4,
            (b'\\', Some(b'U')) => 8,
            (x, _) => {
                out.push(x as char);
                i += 1;
                continue;
            }
        };
        let hex = b.get(i + 2..i + 2 + n).and_then(|h| std::str::from_utf8(h).ok())?;
        out.push(char::from_u32(u32::from_str_radix(hex, 16).ok()?)?);
        i += 2 + n;
    }
    Some(out)
}

/// A protocol-0 INT/LONG argument as `int(text, 0)` reads it: optional sign, then decimal
/// digits (or a `0x`/`0o`/`0b` prefix), `_` between digits, surrounding whitespace.
pub(super) fn text_int(t: &[u8]) -> Option<Long> {
    let t = t.trim_ascii();
    let (negative, t) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, digits) = match t {
        [b'0', b'x' | b'X', r @ ..] => (16, r),
        [b'0', b'o' | b'O', r @ ..] => (8, r),
        [b'0', b'b' | b'B', r @ ..] => (2, r),
        _ => (10, t),
    };
    if digits.is_empty() || digits[0] == b'_' || digits[digits.len() - 1] == b'_' {
        return None;
    }
    let mut m: Option<u128> = Some(0);
    let mut prev_underscore = false;
    for &d in digits {
        if d == b'_' {
            if prev_underscore {
                return None;
            }
            prev_underscore = true;
            continue;
        }
        prev_underscore = false;
        let x = (d as char).to_digit(radix)? as u128;
        // past 128 bits keep checking the digits, but only the sign matters
        m = m.and_then(|m| m.checked_mul(radix as u128)).and_then(|m| m.checked_add(x));
    }
    Some(match m {
        Some(m) => fit(negative, m),
        None => Long::Wide { negative },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(b: &[u8]) -> Result<Pickle, PickleError> {
        parse(b, Limits::default())
    }

    #[test]
    fn plain_values() {
        // pickle.dumps({'a': [1, -2, 3.5, None, True], 'b': (b'x', 2**40)}, protocol=4)
        let data = b"\x80\x04\x951\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01a\x94]\x94(K\x01J\xfe\xff\xff\xffG@\x0c\x00\x00\x00\x00\x00\x00N\x88e\x8c\x01b\x94C\x01x\x94\x8a\x06\x00\x00\x00\x00\x00\x01\x86\x94u.";
        let pk = p(data).unwrap();
        let r = pk.root();
        let a = pk.seq(pk.get(r, "a").unwrap()).unwrap();
        assert_eq!(&a[..], &[Value::Int(1), Value::Int(-2), Value::Float(3.5), Value::None, Value::Bool(true)]);
        let b = pk.seq(pk.get(r, "b").unwrap()).unwrap();
        assert_eq!(pk.bytes(b[0]).unwrap(), b"x");
        assert_eq!(b[1], Value::Int(1 << 40));
    }

    struct Replace(u32);
    impl Sink for Replace {
        fn dict_done(&mut self, pk: &Pickle, items: &[Value]) -> Result<Option<Value>, String> {
            if items.chunks_exact(2).any(|kv| pk.str(kv[0]) == Some("action")) {
                self.0 += 1;
                return Ok(Some(Value::Ext(self.0 - 1)));
            }
            Ok(None)
        }
    }

    #[test]
    fn sink_replacement_follows_memo_references() {
        // d = {'action': 'alloc', 'size': 1}; pickle.dumps([d, d], protocol=4)
        let data = b"\x80\x04\x95%\x00\x00\x00\x00\x00\x00\x00]\x94(}\x94(\x8c\x06action\x94\x8c\x05alloc\x94\x8c\x04size\x94K\x01uh\x01e.";
        let mut sink = Replace(0);
        let pk = parse_with(data, Limits::default(), &mut sink).unwrap();
        assert_eq!(sink.0, 1);
        assert_eq!(&pk.seq(pk.root()).unwrap()[..], &[Value::Ext(0), Value::Ext(0)]);
        assert_eq!(pk.ext_run(pk.root()), None);
    }

    /// A list of a sink's values in order is kept as a run, read back item by item as
    /// stored; a value that breaks the run turns it back into a plain list.
    #[test]
    fn lists_of_sink_values_in_order_are_runs() {
        // pickle.dumps([{'action': 'alloc', 'size': i} for i in range(3)], protocol=4)
        let base: &[u8] = b"\x80\x04\x95;\x00\x00\x00\x00\x00\x00\x00]\x94(}\x94(\x8c\x06action\x94\x8c\x05alloc\x94\x8c\x04size\x94K\x00u}\x94(h\x02h\x03h\x04K\x01u}\x94(h\x02h\x03h\x04K\x02ue.";
        let ext = |n: u32| (0..n).map(Value::Ext).collect::<Vec<_>>();
        let mut sink = Replace(0);
        let pk = parse_with(base, Limits::default(), &mut sink).unwrap();
        assert_eq!(pk.ext_run(pk.root()), Some((0, 3)));
        assert_eq!(pk.seq(pk.root()).unwrap().to_vec(), ext(3));
        // the same, then APPEND 7 in a second step: the run becomes a list again
        let mut more = base[..base.len() - 1].to_vec();
        more.extend_from_slice(b"K\x07a.");
        let pk = parse_with(&more, Limits::default(), &mut Replace(0)).unwrap();
        assert_eq!(pk.ext_run(pk.root()), None);
        let mut want = ext(3);
        want.push(Value::Int(7));
        assert_eq!(pk.seq(pk.root()).unwrap().to_vec(), want);
        // the usual reader keeps every dict: a plain list
        let pk = p(base).unwrap();
        assert_eq!(pk.ext_run(pk.root()), None);
        assert_eq!(pk.seq(pk.root()).unwrap().len(), 3);
    }

    fn root(b: &[u8]) -> (Pickle, Value) {
        let pk = p(b).unwrap();
        let r = pk.root();
        (pk, r)
    }

    #[test]
    fn long_values() {
        let v = |b: &[u8]| match long_le(b) {
            Long::Fits(v) => Some(v),
            Long::Wide { .. } => None,
        };
        assert_eq!(v(&[]), Some(Value::Int(0)));
        assert_eq!(v(&[0xff]), Some(Value::Int(-1)));
        assert_eq!(v(&[0x00, 0x80, 0x00]), Some(Value::Int(0x8000)));
        assert_eq!(v(&[0; 9]), Some(Value::Int(0)));
        assert_eq!(v(&[0, 0, 0, 0, 0, 0, 0, 0x80, 0xff]), Some(Value::Int(i64::MIN)));
        assert_eq!(v(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff]), None, "-2**63 - 1");
        assert_eq!(v(&[1, 0, 0, 0, 0, 0, 0, 0, 1]), None);
        // sign fill far past 16 bytes is still a small number
        let mut long = vec![0xfe];
        long.extend(std::iter::repeat_n(0xff, 1000));
        assert_eq!(v(&long), Some(Value::Int(-2)));
    }

    #[test]
    fn short_longs_match_their_twos_complement_value() {
        // every 1..=8-byte length, with patterns that set and clear the sign bit
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for n in 1..=8usize {
            for _ in 0..2000 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let b: Vec<u8> = seed.to_le_bytes()[..n].to_vec();
                let fill = if b[n - 1] & 0x80 != 0 { 0xff } else { 0 };
                let mut wide = [fill; 16];
                wide[..n].copy_from_slice(&b);
                let want = i128::from_le_bytes(wide) as i64;
                match long_le(&b) {
                    Long::Fits(Value::Int(x)) => assert_eq!(x, want, "{b:?}"),
                    _ => panic!("{b:?} does not fit"),
                }
            }
        }
    }

    #[test]
    fn integers_of_every_width() {
        // pickle.dumps(2**64 - 1, 2): the 9-byte LONG1 of a C++ size_t(-1)
        let (pk, r) = root(b"\x80\x02\x8a\t\xff\xff\xff\xff\xff\xff\xff\xff\x00.");
        assert_eq!(r, Value::UInt(u64::MAX));
        assert_eq!(pk.u64(r), Ok(Some(u64::MAX)));
        assert_eq!(pk.int(r), None);
        assert_eq!(pk.int_clamped(r), Some((i64::MAX, true)));
        // pickle.dumps(2**63, 4)
        let (_, r) = root(b"\x80\x04\x95\x0c\x00\x00\x00\x00\x00\x00\x00\x8a\t\x00\x00\x00\x00\x00\x00\x00\x80\x00.");
        assert_eq!(r, Value::UInt(1 << 63));
        // pickle.dumps(-2**64, 2): wider than 64 bits; an exact reader says where it is
        let (pk, r) = root(b"\x80\x02\x8a\t\x00\x00\x00\x00\x00\x00\x00\x00\xff.");
        let w = *pk.wide(r).unwrap();
        assert_eq!(w, WideInt { offset: 2, len: 9, negative: true });
        assert!(pk.u64(r).unwrap_err().contains("pickle byte 2"));
        assert_eq!(pk.int_clamped(r), Some((i64::MIN, true)));
        assert_eq!(pk.to_json(r, 2), Ok(serde_json::json!(w.to_string())));
        // LONG4 of 20 bytes (2**152)
        let mut b = vec![0x80, 4, 0x8b, 20, 0, 0, 0];
        b.extend([0u8; 19]);
        b.push(1);
        b.push(b'.');
        let (pk, r) = root(&b);
        assert_eq!(pk.wide(r).map(|w| (w.len, w.negative)), Some((20, false)));
        // a negative value is never an address
        let (pk, r) = root(b"\x80\x02J\xff\xff\xff\xff.");
        assert!(pk.u64(r).unwrap_err().contains("negative"));
    }

    #[test]
    fn protocol_0_and_1_text_integers() {
        // pickle.dumps([1, -5, 2**70, True, 1.5, 2**63], 0)
        let (pk, r) = root(b"(lp0\nI1\naI-5\naL1180591620717411303424L\naI01\naF1.5\naL9223372036854775808L\na.");
        let items = pk.seq(r).unwrap();
        assert_eq!(items[0], Value::Int(1));
        assert_eq!(items[1], Value::Int(-5));
        assert_eq!(pk.wide(items[2]).map(|w| w.negative), Some(false));
        assert_eq!(items[3], Value::Bool(true));
        assert_eq!(items[4], Value::Float(1.5));
        assert_eq!(items[5], Value::UInt(1 << 63));
        // pickle.dumps([1, 2**70, 2**64 - 1], 1)
        let (pk, r) = root(b"]q\x00(K\x01L1180591620717411303424L\nL18446744073709551615L\ne.");
        let items = pk.seq(r).unwrap();
        assert!(pk.wide(items[1]).is_some());
        assert_eq!(items[2], Value::UInt(u64::MAX));
        // pickle.dumps({'segments': [{'address': 2**64-1, 'name': 'é☃x\\u'}]}, 0)
        let (pk, r) = root(b"(dp0\nVsegments\np1\n(lp2\n(dp3\nVaddress\np4\nL18446744073709551615L\nsVname\np5\nV\xe9\\u2603x\\u005cu\np6\nsas.");
        let seg = pk.seq(pk.get(r, "segments").unwrap()).unwrap()[0];
        assert_eq!(pk.u64(pk.get(seg, "address").unwrap()), Ok(Some(u64::MAX)));
        assert_eq!(pk.str(pk.get(seg, "name").unwrap()), Some("é☃x\\u"));
        assert!(p(b"V\\u12\n.").unwrap_err().what.contains("escape"));
        // memo by text key, int(x, 0) forms, and refusals
        let (pk, r) = root(b"(lp7\nI0x10\naI-0b11\nag7\n.");
        assert_eq!(pk.seq(r).unwrap()[..2], [Value::Int(16), Value::Int(-3)]);
        assert_eq!(r, Value::List(0));
        assert!(p(b"I12a\n.").unwrap_err().what.contains("not an integer"));
        assert!(p(b"I1_\n.").unwrap_err().what.contains("not an integer"));
        assert!(p(b"I123").unwrap_err().what.contains("newline"));
        assert!(p(b"\x80\x04\x8b\xff\xff\xff\xff\x00.").unwrap_err().what.contains("negative length"));
        // a LONG4 claiming 2 GB in a tiny file allocates nothing and says so
        assert!(p(b"\x80\x04\x8b\xff\xff\xff\x7f\x00.").unwrap_err().what.contains("truncated"));
    }

    #[test]
    fn hostile() {
        assert!(p(b"").unwrap_err().what.contains("empty"));
        assert!(p(b"\x80\x02cos\nsystem\n.").unwrap_err().what.contains("GLOBAL"));
        assert!(p(b"\x80\x04N)R.").unwrap_err().what.contains("REDUCE"));
        assert!(p(b"\x80\x04X\xff\xff\xff\x7fab.").unwrap_err().what.contains("truncated"));
        assert!(p(b"\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\xffab.").unwrap_err().what.contains("truncated"));
        assert!(p(b"\x80\x04]").unwrap_err().what.contains("before STOP"));
        let deep: Vec<u8> =
            std::iter::once(0x80).chain(std::iter::once(4)).chain(std::iter::repeat_n(b'(', 100_000)).collect();
        assert!(p(&deep).unwrap_err().what.contains("nesting"));
        // 100k nested lists via EMPTY_LIST/APPEND: fine, no recursion anywhere.
        let mut nested = vec![0x80, 4];
        nested.extend(std::iter::repeat_n(b']', 100_000));
        nested.extend(std::iter::repeat_n(b'a', 99_999));
        nested.push(b'.');
        let pk = p(&nested).unwrap();
        assert!(matches!(pk.root(), Value::List(_)));
        let _ = pk.to_json(pk.root(), 64);
    }

    /// A list holding the list before it twice, 40 times over: 400 bytes that written out as
    /// JSON would be 2^40 values. The conversion stops at its budget and says so; a list that
    /// shares nothing still converts whole.
    #[test]
    fn shared_lists_do_not_expand_without_end() {
        let mut b = vec![0x80, 2, b']', b'q', 0];
        for i in 0..40u8 {
            b.extend_from_slice(&[b'(', b'h', i, b'h', i, b'l', b'q', i + 1]);
        }
        b.push(b'.');
        let pk = p(&b).unwrap();
        let err = pk.to_json(pk.root(), 64).unwrap_err();
        assert!(err.contains("expand past"), "{err}");
        let (pk, r) = root(&[0x80, 2, b'(', b'K', 1, b'K', 2, b'l', b'.']);
        assert_eq!(pk.to_json(r, 4), Ok(serde_json::json!([1, 2])));
    }
}
