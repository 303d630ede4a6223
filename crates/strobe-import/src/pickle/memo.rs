//! The memo and the opcodes that write and read it (PUT, GET and their binary forms,
//! MEMOIZE). In a chunk of a split parse, keys below `Memo::base` are the part before it,
//! read from the file (`split::Prefix`); after a chunk is spliced in, the keys it made are a
//! hole that ends the run (the parse is then redone in order).

use super::reader::{Ended, PickleError, State, Value, AFTER, CHUNK, OUTER};
use super::run::Halt;

/// The memo, 8 bytes a slot instead of a `Value`'s 16 (a snapshot memoizes tens of millions
/// of values): a tag in the high 32 bits and an index in the low ones. Numbers, which
/// Python's pickler never memoizes but a hand-made pickle may, sit in `nums`.
pub(super) struct Memo {
    pub slots: Vec<u64>,
    nums: Vec<Value>,
    /// The key of `slots[0]`: a chunk's first own key (0 elsewhere).
    pub base: usize,
    /// Keys `[start, start + len)` a spliced chunk made (`start` is `usize::MAX` without one);
    /// the keys after them sit `len` slots lower.
    pub hole: (usize, usize),
}

impl Memo {
    /// An empty memo with room for `slots` entries.
    pub fn with_capacity(slots: usize) -> Memo {
        Memo { slots: Vec::with_capacity(slots), nums: Vec::new(), base: 0, hole: (usize::MAX, 0) }
    }
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
    pub(super) fn set(&mut self, i: usize, v: Value) {
        self.slots[i] = self.pack(v);
    }
    fn get(&self, i: usize) -> Option<Value> {
        self.slots.get(i).map(|&x| self.unpack(x))
    }
}

impl<'a> State<'a> {
    /// PUT, BINPUT, LONG_BINPUT, MEMOIZE: the top of the stack under `key`.
    #[inline(always)]
    pub(super) fn put_top<const MODE: u8>(&mut self, key: u64) -> Result<(), Halt> {
        let v = self.top()?;
        self.put::<MODE>(key, v)
    }

    #[inline(always)]
    fn put<const MODE: u8>(&mut self, key: u64, v: Value) -> Result<(), Halt> {
        if MODE == CHUNK && (v == OUTER || (key as usize) < self.memo.base) {
            return Err(Halt::Ended(Ended::ChunkEnd));
        }
        let Some(local) = self.memo.local(MODE, key as usize) else {
            return Err(Halt::Ended(Ended::Hole));
        };
        if local < self.memo.slots.len() {
            self.memo.set(local, v);
        } else if local == self.memo.slots.len() {
            if self.memo.slots.len() >= self.limits.max_memo {
                return Err(self.c.err("memo too large").into());
            }
            self.memo.push(v);
        } else {
            if MODE == CHUNK {
                // keys out of order: the splice keeps only dense ones
                return Err(Halt::Ended(Ended::ChunkEnd));
            }
            if self.sparse_memo.len() >= self.limits.max_memo {
                return Err(self.c.err("memo too large").into());
            }
            self.sparse_memo.insert(key, v);
        }
        Ok(())
    }

    /// GET, BINGET, LONG_BINGET: pushes the value under `key` (a dict a sink took over reads
    /// as its replacement).
    #[inline(always)]
    pub(super) fn get<const MODE: u8>(&mut self, key: u64) -> Result<(), Halt> {
        let v = if MODE == CHUNK && (key as usize) < self.memo.base {
            let ch = self.chunk.as_mut().expect("a chunk run has its state");
            ch.prefix.get(&mut self.out, &mut self.short_strs, key as u32).map_err(|e| self.c.err(e))?
        } else {
            let Some(local) = self.memo.local(MODE, key as usize) else {
                return Err(Halt::Ended(Ended::Hole));
            };
            match self.memo.get(local).or_else(|| self.sparse_memo.get(&key).copied()) {
                Some(Value::Dict(d)) if !self.out.replaced.is_empty() && self.out.items_of(d).is_empty() => {
                    self.out.replaced.get(&d).copied().unwrap_or(Value::Dict(d))
                }
                Some(v) => v,
                None => return Err(self.c.err(format!("memo key {key} was never stored")).into()),
            }
        };
        Ok(self.push(v)?)
    }

    /// PUT (protocol 0): a decimal key, the top of the stack under it.
    pub(super) fn text_put<const MODE: u8>(&mut self) -> Result<(), Halt> {
        let key = self.text_key()?;
        self.put_top::<MODE>(key)
    }

    /// GET (protocol 0): a decimal key.
    pub(super) fn text_get<const MODE: u8>(&mut self) -> Result<(), Halt> {
        let key = self.text_key()?;
        self.get::<MODE>(key)
    }

    fn text_key(&mut self) -> Result<u64, PickleError> {
        let line = self.c.line()?;
        std::str::from_utf8(line)
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
            .ok_or_else(|| self.c.err("PUT/GET argument is not a memo key"))
    }
}
