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
    replaced: FxHashMap<u32, Value>,
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
    fn items_of(&self, dict: u32) -> &[(Value, Value)] {
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
    /// Converts to JSON, at most `depth` levels deep (deeper parts become null).
    pub fn to_json(&self, v: Value, depth: usize) -> serde_json::Value {
        use serde_json::Value as J;
        if depth == 0 {
            return J::Null;
        }
        match v {
            Value::None => J::Null,
            Value::Bool(b) => J::Bool(b),
            Value::Int(i) => J::from(i),
            Value::UInt(u) => J::from(u),
            Value::Wide(i) => J::String(self.wides[i as usize].to_string()),
            Value::Float(f) => serde_json::Number::from_f64(f).map(J::Number).unwrap_or(J::Null),
            Value::Str(_) => J::String(self.str(v).unwrap().to_string()),
            Value::Ext(_) => J::Null,
            Value::Bytes(_) => J::Array(self.bytes(v).unwrap().iter().map(|b| J::from(*b)).collect()),
            Value::List(_) | Value::Tuple(_) => {
                J::Array(self.seq(v).unwrap().iter().map(|x| self.to_json(*x, depth - 1)).collect())
            }
            Value::Dict(_) => {
                let mut m = serde_json::Map::new();
                for (k, x) in self.dict(v).unwrap() {
                    let key = match *k {
                        Value::Str(_) => self.str(*k).unwrap().to_string(),
                        Value::Int(i) => i.to_string(),
                        other => format!("{other:?}"),
                    };
                    m.insert(key, self.to_json(*x, depth - 1));
                }
                J::Object(m)
            }
        }
    }
}

pub(super) struct Cur<'a> {
    pub d: &'a [u8],
    pub p: usize,
    op_at: usize,
}

impl<'a> Cur<'a> {
    pub fn err(&self, what: impl Into<String>) -> PickleError {
        PickleError { offset: self.op_at, what: what.into() }
    }
    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8], PickleError> {
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
    fn u8(&mut self) -> Result<u8, PickleError> {
        Ok(self.take(1)?[0])
    }
    #[inline]
    fn u16(&mut self) -> Result<u16, PickleError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
    #[inline]
    fn u32(&mut self) -> Result<u32, PickleError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    #[inline]
    fn u64(&mut self) -> Result<u64, PickleError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    /// A protocol-0 text argument: the bytes up to the next newline (which is consumed).
    fn line(&mut self) -> Result<&'a [u8], PickleError> {
        match self.d[self.p..].iter().position(|&b| b == b'\n') {
            Some(n) => {
                let s = &self.d[self.p..self.p + n];
                self.p += n + 1;
                Ok(s)
            }
            None => Err(self.err("truncated: text argument without its newline")),
        }
    }
    fn len64(&mut self) -> Result<usize, PickleError> {
        let n = self.u64()?;
        usize::try_from(n).map_err(|_| self.err(format!("declared length {n} too large")))
    }
}

fn refused(op: u8) -> Option<&'static str> {
    Some(match op {
        b'c' => "GLOBAL",
        0x93 => "STACK_GLOBAL",
        b'R' => "REDUCE",
        b'b' => "BUILD",
        0x81 => "NEWOBJ",
        0x92 => "NEWOBJ_EX",
        b'i' => "INST",
        b'o' => "OBJ",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        0x97 => "NEXT_BUFFER",
        0x98 => "READONLY_BUFFER",
        _ => return None,
    })
}

/// The memo, 8 bytes a slot instead of a `Value`'s 16 (a snapshot memoizes tens of millions
/// of values): a tag in the high 32 bits and an index in the low ones. Numbers, which
/// Python's pickler never memoizes but a hand-made pickle may, sit in `nums`.
pub(super) struct Memo {
    slots: Vec<u64>,
    nums: Vec<Value>,
    /// The key of `slots[0]`: a chunk's first own key (0 elsewhere).
    pub base: usize,
    /// Keys `[start, start + len)` a spliced chunk made (`start` is `usize::MAX` without one);
    /// the keys after them sit `len` slots lower.
    pub hole: (usize, usize),
}

impl Memo {
    /// The slot of memo key `key` (`None` in the hole).
    #[inline]
    fn local(&self, mode: u8, key: usize) -> Option<usize> {
        match mode {
            CHUNK => Some(key - self.base),
            AFTER if key >= self.hole.0 => key.checked_sub(self.hole.0 + self.hole.1).map(|k| self.hole.0 + k),
            _ => Some(key),
        }
    }
    /// The key MEMOIZE gives next.
    #[inline]
    pub fn next_key(&self) -> usize {
        self.base + self.slots.len() + self.hole.1
    }
    /// The value of a key below any hole, as stored.
    pub fn value(&self, key: usize) -> Option<Value> {
        self.get(key.checked_sub(self.base)?)
    }
    /// The slot of a value that refers by index (or carries no payload); `None` for numbers.
    pub(super) fn packed_ref(v: Value) -> Option<u64> {
        let (tag, i) = match v {
            Value::None => (0, 0),
            Value::Bool(b) => (1, b as u32),
            Value::Str(i) => (2, i),
            Value::Bytes(i) => (3, i),
            Value::List(i) => (4, i),
            Value::Tuple(i) => (5, i),
            Value::Dict(i) => (6, i),
            Value::Ext(i) => (7, i),
            Value::Wide(i) => (8, i),
            Value::Int(_) | Value::UInt(_) | Value::Float(_) => return None,
        };
        Some((tag << 32) | i as u64)
    }
    fn pack(&mut self, v: Value) -> u64 {
        Self::packed_ref(v).unwrap_or_else(|| {
            self.nums.push(v);
            (9 << 32) | (self.nums.len() - 1) as u64
        })
    }
    fn unpack(&self, x: u64) -> Value {
        match x >> 32 {
            0..=8 => Self::unpack_ref(x),
            _ => self.nums[x as u32 as usize],
        }
    }
    /// A slot [`Memo::packed_ref`] made.
    #[inline]
    pub(super) fn unpack_ref(x: u64) -> Value {
        let i = x as u32;
        match x >> 32 {
            0 => Value::None,
            1 => Value::Bool(i != 0),
            2 => Value::Str(i),
            3 => Value::Bytes(i),
            4 => Value::List(i),
            5 => Value::Tuple(i),
            6 => Value::Dict(i),
            7 => Value::Ext(i),
            _ => Value::Wide(i),
        }
    }
    fn push(&mut self, v: Value) {
        let x = self.pack(v);
        self.slots.push(x);
    }
    fn set(&mut self, i: usize, v: Value) {
        self.slots[i] = self.pack(v);
    }
    fn get(&self, i: usize) -> Option<Value> {
        self.slots.get(i).map(|&x| self.unpack(x))
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

/// How often `Sink::reached` is called.
const TICK_BYTES: usize = 1 << 20;

/// Decodes a whole pickle, handing each filled dict to `sink`.
pub fn parse_with(data: &[u8], limits: Limits, sink: &mut impl Sink) -> Result<Pickle, PickleError> {
    let mut st = State::new(data, data.len())?;
    match run::<SEQ>(&mut st, limits, sink, &|_| NO_SPLIT)? {
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
    pub out: Pickle,
    pub stack: Vec<Value>,
    marks: Vec<usize>,
    pub memo: Memo,
    sparse_memo: FxHashMap<u64, Value>,
    pub short_strs: ShortStrs<'a>,
    next_tick: usize,
    /// Where a `SEQ` run stops for a split (`SPLIT_PENDING` until its poll names one).
    pub split_at: usize,
    memo_pages: strobe_store::prefault::Prefault,
    dict_pages: strobe_store::prefault::Prefault,
    pub chunk: Option<ChunkState<'a>>,
}

impl<'a> State<'a> {
    /// A parse of `data` from its start; `span`: how many of its bytes this side will read
    /// (what its big vectors are sized by).
    pub fn new(data: &'a [u8], span: usize) -> Result<State<'a>, PickleError> {
        let c = Cur { d: data, p: 0, op_at: 0 };
        if data.is_empty() {
            return Err(c.err("empty file (not a pickle)"));
        }
        let mut out = Pickle::default();
        // Sized for a snapshot's rate (about one memo entry per 30 bytes) so that the big vectors
        // do not grow by copying; pages never written are never touched.
        let memo = Memo { slots: Vec::with_capacity(span / 32), nums: Vec::new(), base: 0, hole: (usize::MAX, 0) };
        // a snapshot's trace entries are one dict each, 70–90 bytes apart
        out.dict_slots.reserve(span / 48);
        // both filled one slot per object, in order: their fresh pages mapped on another core
        let memo_pages = strobe_store::prefault::Prefault::spare_of(&memo.slots);
        let dict_pages = strobe_store::prefault::Prefault::spare_of(&out.dict_slots);
        Ok(State {
            c,
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

/// Runs opcodes from `st.c.p` until STOP, an error, or (by `MODE`) a split or a chunk's end.
/// `poll(offset)`, called about once per MiB: for `SEQ`, the split offset once known; for
/// `CHUNK`, `NO_SPLIT` to stop.
pub(super) fn run<'a, const MODE: u8>(
    st: &mut State<'a>,
    limits: Limits,
    sink: &mut impl Sink,
    poll: &dyn Fn(usize) -> usize,
) -> Result<Ended, PickleError> {
    let State {
        c,
        out,
        stack,
        marks,
        memo,
        sparse_memo,
        short_strs,
        next_tick,
        split_at,
        memo_pages,
        dict_pages,
        chunk,
    } = st;
    macro_rules! pop {
        () => {
            match stack.pop() {
                Some(v) => v,
                None => return Err(c.err("stack underflow")),
            }
        };
    }
    macro_rules! push {
        ($v:expr) => {{
            if stack.len() >= limits.max_stack {
                return Err(c.err(format!("stack deeper than {} values", limits.max_stack)));
            }
            stack.push($v);
        }};
    }
    macro_rules! pop_mark {
        () => {
            match marks.pop() {
                Some(m) if m <= stack.len() => m,
                _ => return Err(c.err("no MARK on the stack")),
            }
        };
    }
    // Equal short strings share one index: a snapshot writes `'N/A'` and its action names
    // afresh in millions of trace entries, and one copy each is what a reader needs.
    macro_rules! new_str {
        ($b:expr) => {{
            let b: &'a [u8] = $b;
            str_value(out, short_strs, b).map_err(|e| c.err(e))?
        }};
    }
    macro_rules! new_bytes {
        ($b:expr) => {{
            out.bytes.push($b.into());
            Value::Bytes((out.bytes.len() - 1) as u32)
        }};
    }
    macro_rules! new_wide {
        ($len:expr, $negative:expr) => {{
            out.wides.push(WideInt { offset: c.op_at, len: $len, negative: $negative });
            Value::Wide((out.wides.len() - 1) as u32)
        }};
    }
    macro_rules! new_seq {
        ($v:expr, $tuple:expr) => {{
            out.new_seq($v, $tuple)
        }};
    }
    // Memo keys: in a chunk, those below `memo.base` are the part before it (read from the
    // file); after a splice, those the chunk made are a hole.
    macro_rules! memo_put {
        ($idx:expr, $v:expr) => {{
            let idx = $idx as u64;
            let v: Value = $v;
            if MODE == CHUNK && (v == OUTER || (idx as usize) < memo.base) {
                return Ok(Ended::ChunkEnd);
            }
            let local = match memo.local(MODE, idx as usize) {
                Some(l) => l,
                None => return Ok(Ended::Hole),
            };
            if local < memo.slots.len() {
                memo.set(local, v);
            } else if local == memo.slots.len() {
                if memo.slots.len() >= limits.max_memo {
                    return Err(c.err("memo too large"));
                }
                memo.push(v);
            } else {
                if MODE == CHUNK {
                    return Ok(Ended::ChunkEnd); // keys out of order: the splice keeps only dense ones
                }
                if sparse_memo.len() >= limits.max_memo {
                    return Err(c.err("memo too large"));
                }
                sparse_memo.insert(idx, v);
            }
        }};
    }
    macro_rules! memo_get {
        ($idx:expr) => {{
            let idx = $idx as u64;
            if MODE == CHUNK && (idx as usize) < memo.base {
                let ch = chunk.as_mut().expect("a chunk run has its state");
                ch.prefix.get(out, short_strs, idx as u32).map_err(|e| c.err(e))?
            } else {
                let local = match memo.local(MODE, idx as usize) {
                    Some(l) => l,
                    None => return Ok(Ended::Hole),
                };
                match memo.get(local).or_else(|| sparse_memo.get(&idx).copied()) {
                    Some(Value::Dict(d)) if !out.replaced.is_empty() && out.items_of(d).is_empty() => {
                        out.replaced.get(&d).copied().unwrap_or(Value::Dict(d))
                    }
                    Some(v) => v,
                    None => return Err(c.err(format!("memo key {idx} was never stored"))),
                }
            }
        }};
    }

    loop {
        c.op_at = c.p;
        if MODE == CHUNK && stack.first() != Some(&OUTER) {
            return Ok(Ended::ChunkEnd);
        }
        if c.p >= *next_tick {
            if MODE == SEQ && c.p == *split_at {
                // the next run goes on from here, sequentially unless a chunk is spliced in
                *split_at = NO_SPLIT;
                return Ok(Ended::AtSplit);
            }
            *next_tick = c.p + TICK_BYTES;
            if MODE == SEQ && *split_at == SPLIT_PENDING {
                *split_at = poll(c.p);
            }
            if MODE == SEQ && *split_at < c.p {
                *split_at = NO_SPLIT; // passed (the scan read the opcodes otherwise)
            }
            if MODE == SEQ && *split_at < *next_tick {
                *next_tick = *split_at;
            }
            if MODE == CHUNK && poll(c.p) == NO_SPLIT {
                return Ok(Ended::ChunkEnd);
            }
            memo_pages.advance(memo.slots.len() * 8);
            dict_pages.advance(out.dict_slots.len() * 4);
            sink.reached(c.p).map_err(|e| c.err(e))?;
        }
        let op = match c.take(1) {
            Ok(b) => b[0],
            Err(_) => return Err(c.err("truncated: ended before STOP")),
        };
        match op {
            0x80 => {
                let v = c.u8()?;
                if v > 5 {
                    return Err(c.err(format!("unsupported pickle protocol {v}")));
                }
            }
            0x95 => {
                c.u64()?; // FRAME: length hint only
            }
            b'.' => {
                if MODE == CHUNK {
                    return Ok(Ended::ChunkEnd);
                }
                let v = pop!();
                out.root = Some(v);
                if std::env::var_os("STROBE_TIMING").is_some() {
                    eprintln!(
                        "[timing] pickle: {} memo slots, {} dicts ({} with items), {} lists/tuples, {} strings, {} bytes",
                        memo.slots.len(),
                        out.dict_slots.len(),
                        out.dict_items.len(),
                        out.seqs.len(),
                        out.strs.len(),
                        out.bytes.len()
                    );
                }
                return Ok(Ended::Stop);
            }
            b'(' => {
                if marks.len() >= limits.max_marks {
                    return Err(c.err(format!("nesting deeper than {} MARKs", limits.max_marks)));
                }
                marks.push(stack.len());
            }
            b'0' => {
                pop!();
            }
            b'1' => {
                let m = pop_mark!();
                stack.truncate(m);
            }
            b'2' => {
                let v = *stack.last().ok_or_else(|| c.err("stack underflow"))?;
                if MODE == CHUNK && v == OUTER {
                    return Ok(Ended::ChunkEnd);
                }
                push!(v);
            }
            b'N' => push!(Value::None),
            0x88 => push!(Value::Bool(true)),
            0x89 => push!(Value::Bool(false)),
            b'J' => {
                let v = c.u32()? as i32 as i64;
                push!(Value::Int(v))
            }
            b'K' => {
                let v = c.u8()? as i64;
                push!(Value::Int(v))
            }
            b'M' => {
                let v = c.u16()? as i64;
                push!(Value::Int(v))
            }
            0x8a | 0x8b => {
                // LONG1 / LONG4: two's-complement little-endian of any length (LONG4's length
                // is a signed 32-bit count, checked against the bytes left before use)
                let n = if op == 0x8a { c.u8()? as i64 } else { c.u32()? as i32 as i64 };
                if n < 0 {
                    return Err(c.err(format!("LONG4 with negative length {n}")));
                }
                let b = c.take(n as usize)?;
                let v = match long_le(b) {
                    Long::Fits(v) => v,
                    Long::Wide { negative } => new_wide!(b.len(), negative),
                };
                push!(v)
            }
            b'I' | b'L' => {
                // INT / LONG (protocols 0 and 1): a decimal line; `I01`/`I00` are True/False;
                // LONG may end in the Python 2 `L` suffix
                let line = c.line()?;
                let v = match (op, line) {
                    (b'I', b"01") => Value::Bool(true),
                    (b'I', b"00") => Value::Bool(false),
                    _ => {
                        let digits = if op == b'L' { line.strip_suffix(b"L").unwrap_or(line) } else { line };
                        match text_int(digits) {
                            Some(Long::Fits(v)) => v,
                            Some(Long::Wide { negative }) => new_wide!(digits.len(), negative),
                            None => {
                                return Err(c.err(format!(
                                    "INT/LONG argument {:?} is not an integer",
                                    String::from_utf8_lossy(&line[..line.len().min(40)])
                                )))
                            }
                        }
                    }
                };
                push!(v)
            }
            b'V' => {
                // UNICODE (protocol 0): a raw-unicode-escape line (Python 3 writes every str so)
                let line = c.line()?;
                let text = raw_unicode_escape(line).ok_or_else(|| c.err("UNICODE argument has a bad \\u escape"))?;
                out.strs.push(text.into());
                push!(Value::Str((out.strs.len() - 1) as u32))
            }
            b'F' => {
                // FLOAT (protocol 0): a decimal line
                let line = c.line()?;
                let v = std::str::from_utf8(line)
                    .ok()
                    .and_then(|t| t.trim().parse::<f64>().ok())
                    .ok_or_else(|| c.err("FLOAT argument is not a number"))?;
                push!(Value::Float(v))
            }
            b'p' | b'g' => {
                // PUT / GET (protocol 0): a decimal memo key
                let line = c.line()?;
                let key = std::str::from_utf8(line)
                    .ok()
                    .and_then(|t| t.trim().parse::<u64>().ok())
                    .ok_or_else(|| c.err("PUT/GET argument is not a memo key"))?;
                if op == b'p' {
                    let v = *stack.last().ok_or_else(|| c.err("stack underflow"))?;
                    memo_put!(key, v)
                } else {
                    push!(memo_get!(key))
                }
            }
            b'G' => {
                let v = f64::from_be_bytes(c.take(8)?.try_into().unwrap());
                push!(Value::Float(v))
            }
            0x8c => {
                let n = c.u8()? as usize;
                let b = c.take(n)?;
                push!(new_str!(b))
            }
            b'X' => {
                let n = c.u32()? as usize;
                let b = c.take(n)?;
                push!(new_str!(b))
            }
            0x8d => {
                let n = c.len64()?;
                let b = c.take(n)?;
                push!(new_str!(b))
            }
            b'U' => {
                // SHORT_BINSTRING (Python 2 str): read as text where valid, bytes otherwise.
                let n = c.u8()? as usize;
                let b = c.take(n)?;
                let v = if std::str::from_utf8(b).is_ok() { new_str!(b) } else { new_bytes!(b) };
                push!(v)
            }
            b'T' => {
                let n = c.u32()? as i32;
                if n < 0 {
                    return Err(c.err("negative string length"));
                }
                let b = c.take(n as usize)?;
                let v = if std::str::from_utf8(b).is_ok() { new_str!(b) } else { new_bytes!(b) };
                push!(v)
            }
            b'C' => {
                let n = c.u8()? as usize;
                let b = c.take(n)?;
                push!(new_bytes!(b))
            }
            b'B' => {
                let n = c.u32()? as usize;
                let b = c.take(n)?;
                push!(new_bytes!(b))
            }
            0x8e | 0x96 => {
                let n = c.len64()?;
                let b = c.take(n)?;
                push!(new_bytes!(b))
            }
            b']' => push!(new_seq!(Vec::new(), false)),
            b')' => push!(new_seq!(Vec::new(), true)),
            b'}' => {
                let d = out.new_dict(Vec::new());
                push!(d)
            }
            0x8f => push!(new_seq!(Vec::new(), false)), // EMPTY_SET: read as a list
            b'l' | b't' | 0x91 => {
                // LIST, TUPLE, FROZENSET (as a tuple)
                let m = pop_mark!();
                let items = stack.split_off(m);
                push!(new_seq!(items, op != b'l'))
            }
            0x85..=0x87 => {
                let n = (op - 0x84) as usize;
                if stack.len() < n {
                    return Err(c.err("stack underflow"));
                }
                let items = stack.split_off(stack.len() - n);
                push!(new_seq!(items, true))
            }
            b'd' => {
                let m = pop_mark!();
                let items = stack.split_off(m);
                if !items.len().is_multiple_of(2) {
                    return Err(c.err("DICT with an odd number of items"));
                }
                let d = out.new_dict(items.chunks(2).map(|p| (p[0], p[1])).collect());
                push!(d)
            }
            b'a' => {
                let v = pop!();
                match stack.last() {
                    Some(&OUTER) if MODE == CHUNK => {
                        if !commit(chunk, &[v], c.p, memo) {
                            return Ok(Ended::ChunkEnd);
                        }
                    }
                    Some(&Value::List(i)) => out.append(i, &[v]),
                    _ => return Err(c.err("APPEND to something that is not a list")),
                }
            }
            b'e' | 0x90 => {
                // APPENDS, ADDITEMS (sets are read as lists)
                let m = pop_mark!();
                match m.checked_sub(1).map(|j| stack[j]) {
                    Some(OUTER) if MODE == CHUNK => {
                        if !commit(chunk, &stack[m..], c.p, memo) {
                            return Ok(Ended::ChunkEnd);
                        }
                        stack.truncate(m);
                    }
                    Some(Value::List(i)) => {
                        out.append(i, &stack[m..]);
                        stack.truncate(m);
                    }
                    _ => return Err(c.err("APPENDS to something that is not a list")),
                }
            }
            b's' => {
                let v = pop!();
                let k = pop!();
                match stack.last() {
                    Some(&Value::Dict(i)) => out.items_mut(i).push((k, v)),
                    _ => return Err(c.err("SETITEM on something that is not a dict")),
                }
            }
            b'u' => {
                let m = pop_mark!();
                if !(stack.len() - m).is_multiple_of(2) {
                    return Err(c.err("SETITEMS with an odd number of items"));
                }
                match m.checked_sub(1).map(|j| stack[j]) {
                    Some(Value::Dict(i)) => {
                        // The usual dict is filled by one batch: the sink sees it on the stack
                        // and, if it takes it, the dict is never stored.
                        let first_batch = out.items_of(i).is_empty();
                        let seen =
                            if first_batch { sink.dict_done(out, &stack[m..]).map_err(|e| c.err(e))? } else { None };
                        let nv = match seen {
                            Some(nv) => {
                                stack.truncate(m);
                                Some(nv)
                            }
                            None => {
                                let d = out.items_mut(i);
                                d.reserve_exact((stack.len() - m) / 2);
                                let mut it = stack.drain(m..);
                                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                                    d.push((k, v));
                                }
                                drop(it);
                                if first_batch {
                                    None // seen above, and kept
                                } else {
                                    sink.dict_done(out, &out.flat_items(Value::Dict(i))).map_err(|e| c.err(e))?
                                }
                            }
                        };
                        if let Some(nv) = nv {
                            if !out.items_of(i).is_empty() {
                                *out.items_mut(i) = Vec::new();
                            }
                            // Point the memo at the replacement: it is nearly always among the
                            // last entries (MEMOIZE right after EMPTY_DICT); else remember it.
                            let from = memo.slots.len().saturating_sub(256);
                            let packed = Memo::packed_ref(Value::Dict(i));
                            match memo.slots[from..].iter().rposition(|x| Some(*x) == packed) {
                                Some(p) => memo.set(from + p, nv),
                                None => {
                                    out.replaced.insert(i, nv);
                                }
                            }
                            stack[m - 1] = nv;
                        }
                    }
                    _ => return Err(c.err("SETITEMS on something that is not a dict")),
                }
            }
            b'h' => {
                let i = c.u8()?;
                push!(memo_get!(i))
            }
            b'j' => {
                let i = c.u32()?;
                push!(memo_get!(i))
            }
            b'q' => {
                let i = c.u8()?;
                let v = *stack.last().ok_or_else(|| c.err("stack underflow"))?;
                memo_put!(i, v)
            }
            b'r' => {
                let i = c.u32()?;
                let v = *stack.last().ok_or_else(|| c.err("stack underflow"))?;
                memo_put!(i, v)
            }
            0x94 => {
                let v = *stack.last().ok_or_else(|| c.err("stack underflow"))?;
                let i = memo.next_key();
                memo_put!(i, v)
            }
            _ => {
                if let Some(name) = refused(op) {
                    return Err(c.err(format!(
                        "opcode {name} (0x{op:02x}) builds Python objects; Strobe reads plain-data pickles only and never executes them"
                    )));
                }
                return Err(c.err(format!("unsupported pickle opcode 0x{op:02x} (not a plain-data pickle?)")));
            }
        }
    }
}

/// A batch a chunk appends to [`OUTER`]: taken (and the chunk's commit moved past it) when it
/// is the chunk's next sink values in order; anything else ends the chunk before it.
fn commit(chunk: &mut Option<ChunkState>, items: &[Value], end: usize, memo: &Memo) -> bool {
    let Some(ch) = chunk else { return false };
    let Some(next) = ch.next_ext.checked_add(items.len() as u32) else { return false };
    if !items.iter().enumerate().all(|(j, v)| *v == Value::Ext(ch.next_ext + j as u32)) {
        return false;
    }
    ch.next_ext = next;
    ch.commit = Some((end, next, memo.next_key()));
    true
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
fn raw_unicode_escape(b: &[u8]) -> Option<String> {
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
fn text_int(t: &[u8]) -> Option<Long> {
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
        assert_eq!(pk.to_json(r, 2), serde_json::json!(w.to_string()));
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
}
