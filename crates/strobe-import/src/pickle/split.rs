//! A pickle read by two threads: the opcode stream is one sequential machine, so
//! the second thread first runs a cheap copy of it over the first part — opcode lengths, the
//! stack's shape and where each memoised object was made, no values — to find a point `at` where
//! the stack ends in a list that is being filled batch after batch (a snapshot's trace). The
//! first thread parses `[0, at)`; the second parses from `at` on as a chunk whose bottom is that
//! list (see `reader::Chunk`), reading a memoised object from before `at` out of the file again
//! when a reference needs it ([`Prefix::resolve`]). What it did up to its last whole batch is
//! spliced into the first thread's list, which then parses the rest.
//!
//! Nothing here decides a result: the chunk's values are those the sequential parse makes, and
//! whatever this module does not follow (an old protocol's text opcodes, a memo key written
//! twice, a file above 4 GiB) just means no split, or a chunk that stops early.

use super::memo::Memo;
use super::reader::{
    long_le, str_value, ChunkState, Ended, Limits, Long, Pickle, PickleError, ShortStrs, Sink, State, Value, AFTER,
    CHUNK, NO_SPLIT, OUTER, SEQ, SPLIT_PENDING,
};
use super::run::run;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Where a pickle can be split, and what the chunk after it needs of what comes before.
pub(crate) struct Split {
    /// Byte offset of the MARK that opens the next batch of the list on top of the stack.
    pub at: usize,
    /// Values on the stack there (the list is the last).
    pub depth: usize,
    /// Per memo key below `at`: the byte offset where its object's opcodes begin.
    pub made_at: Vec<u32>,
    /// Dicts made below `at`.
    pub dicts: usize,
}

/// A batch of at least this many items marks the list a split goes into (Python's pickler
/// writes a long list in batches of 1000; a stack of frames or a short list is one small batch).
const MIN_BATCH: usize = 256;

/// Runs the opcode stream from the start to the first batch boundary of a long list at or
/// after `target`. `None` where the stream holds something this scan does not follow, ends
/// first, or is too long for 32-bit offsets.
pub(crate) fn find(data: &[u8], target: usize, max_stack: usize) -> Option<Split> {
    if data.len() >= u32::MAX as usize || !data.starts_with(&[0x80]) {
        return None;
    }
    // per value on the stack, where its opcodes begin; per MARK, the stack length and its offset
    let mut stack: Vec<u32> = Vec::with_capacity(64);
    let mut marks: Vec<(usize, u32)> = Vec::new();
    let mut memo: Vec<u32> = Vec::with_capacity(target / 24);
    let mut p = 0usize;
    let mut dicts = 0usize;
    let n = data.len();
    macro_rules! arg {
        ($k:expr) => {{
            let k: usize = $k;
            if n - p < k {
                return None;
            }
            let s = &data[p..p + k];
            p += k;
            s
        }};
    }
    macro_rules! len_arg {
        ($k:expr) => {{
            let b = arg!($k);
            let mut x = [0u8; 8];
            x[..$k].copy_from_slice(b);
            let v = u64::from_le_bytes(x);
            if v > (n - p) as u64 {
                return None;
            }
            p += v as usize;
        }};
    }
    loop {
        let at = p;
        if p >= n {
            return None;
        }
        let op = data[p];
        p += 1;
        match op {
            0x80 => {
                arg!(1);
            }
            0x95 => {
                arg!(8);
            }
            b'(' => marks.push((stack.len(), at as u32)),
            b'N' | 0x88 | 0x89 | b']' | b')' | 0x8f => stack.push(at as u32),
            b'}' => {
                dicts += 1;
                stack.push(at as u32)
            }
            b'K' | b'M' | b'J' | b'G' => {
                arg!(match op {
                    b'K' => 1,
                    b'M' => 2,
                    b'J' => 4,
                    _ => 8,
                });
                stack.push(at as u32)
            }
            0x8a | 0x8c | b'U' | b'C' => {
                len_arg!(1);
                stack.push(at as u32)
            }
            0x8b | b'T' => {
                // LONG4's and BINSTRING's counts are signed
                let b = arg!(4);
                let v = i32::from_le_bytes(b.try_into().unwrap());
                if v < 0 || v as usize > n - p {
                    return None;
                }
                p += v as usize;
                stack.push(at as u32)
            }
            b'X' | b'B' => {
                len_arg!(4);
                stack.push(at as u32)
            }
            0x8d | 0x8e | 0x96 => {
                len_arg!(8);
                stack.push(at as u32)
            }
            b'0' => {
                stack.pop()?;
            }
            b'1' => {
                let (m, _) = marks.pop()?;
                stack.truncate(m);
            }
            b'2' => {
                let top = *stack.last()?;
                stack.push(top)
            }
            b'l' | b't' | 0x91 | b'd' => {
                dicts += (op == b'd') as usize;
                let (m, mark_at) = marks.pop()?;
                if m > stack.len() {
                    return None;
                }
                stack.truncate(m);
                stack.push(mark_at)
            }
            0x85..=0x87 => {
                let k = (op - 0x84) as usize;
                let first = stack.len().checked_sub(k)?;
                let made = stack[first];
                stack.truncate(first);
                stack.push(made)
            }
            b'a' => {
                stack.pop()?;
                if stack.is_empty() {
                    return None;
                }
            }
            b's' => {
                stack.pop()?;
                stack.pop()?;
                if stack.is_empty() {
                    return None;
                }
            }
            b'u' | b'e' | 0x90 => {
                let (m, _) = marks.pop()?;
                if m == 0 || m > stack.len() {
                    return None;
                }
                let items = stack.len() - m;
                stack.truncate(m);
                if op == b'e' && items >= MIN_BATCH && p >= target && data.get(p) == Some(&b'(') {
                    return Some(Split { at: p, depth: m, made_at: memo, dicts });
                }
            }
            b'h' | b'j' => {
                let k = if op == b'h' {
                    arg!(1)[0] as usize
                } else {
                    u32::from_le_bytes(arg!(4).try_into().unwrap()) as usize
                };
                stack.push(*memo.get(k)?)
            }
            b'q' | b'r' | 0x94 => {
                let k = match op {
                    b'q' => arg!(1)[0] as usize,
                    b'r' => u32::from_le_bytes(arg!(4).try_into().unwrap()) as usize,
                    _ => memo.len(),
                };
                // a key written twice would give earlier references another object: not followed
                if k != memo.len() {
                    return None;
                }
                memo.push(*stack.last()?)
            }
            // STOP before a split, text opcodes of protocols 0/1, and everything the reader refuses
            _ => return None,
        }
        if stack.len() > max_stack || marks.len() > max_stack {
            return None;
        }
    }
}

/// What the chunk after a split reads of the part before it: memoised objects made again from
/// the file, once each.
pub(crate) struct Prefix<'a> {
    data: &'a [u8],
    made_at: Vec<u32>,
    /// Objects made so far, by the offset they were made from.
    made: FxHashMap<u32, Value>,
    /// Per memo key, its value as a memo slot packs it, plus one (0: not read yet). Zeroed
    /// pages never written are never mapped, and a chunk refers to few of the keys.
    by_key: Vec<u64>,
}

/// How deep references inside objects made again may nest (a frame list's frames' strings are 3).
const MAX_NESTING: usize = 64;

/// A value on the stack while an object is made again: a reference is resolved only when a
/// container takes it (the values after the object, which are not its own, never are).
#[derive(Clone, Copy)]
enum Slot {
    V(Value),
    Ref(u32),
}

impl<'a> Prefix<'a> {
    pub fn new(data: &'a [u8], made_at: Vec<u32>) -> Prefix<'a> {
        let by_key = vec![0; made_at.len()];
        Prefix { data, made_at, made: FxHashMap::default(), by_key }
    }

    /// [`Prefix::resolve`], remembered by key (what a chunk's memo references call).
    #[inline]
    pub fn get(&mut self, out: &mut Pickle, strs: &mut ShortStrs<'a>, key: u32) -> Result<Value, String> {
        if let Some(&x) = self.by_key.get(key as usize) {
            if x != 0 {
                return Ok(Memo::unpack_ref(x - 1));
            }
        }
        let v = self.resolve(out, strs, key)?;
        if let (Some(x), Some(slot)) = (Memo::packed_ref(v), self.by_key.get_mut(key as usize)) {
            *slot = x + 1;
        }
        Ok(v)
    }

    /// The value memo key `key` held at the split, made in `out` from the file's bytes.
    /// Lists (and tuples) made for a key are recorded in `out` with it
    /// ([`Pickle::prefix_source`]), so a caller can find the same object in the first part's parse.
    pub fn resolve(&mut self, out: &mut Pickle, strs: &mut ShortStrs<'a>, key: u32) -> Result<Value, String> {
        let v = self.resolve_at(out, strs, key, 0)?;
        if let Value::List(i) | Value::Tuple(i) = v {
            out.prefix_src.entry(i).or_insert(key);
        }
        Ok(v)
    }

    fn resolve_at(
        &mut self,
        out: &mut Pickle,
        strs: &mut ShortStrs<'a>,
        key: u32,
        depth: usize,
    ) -> Result<Value, String> {
        let &at = self.made_at.get(key as usize).ok_or_else(|| format!("memo key {key} was never stored"))?;
        if let Some(&v) = self.made.get(&at) {
            return Ok(v);
        }
        if depth >= MAX_NESTING {
            return Err("references nest too deeply to be read again".into());
        }
        let v = self.make(out, strs, at as usize, depth)?;
        self.made.insert(at, v);
        Ok(v)
    }

    /// Runs the opcodes from `at` until one would reach below the first value they pushed.
    fn make(&mut self, out: &mut Pickle, strs: &mut ShortStrs<'a>, at: usize, depth: usize) -> Result<Value, String> {
        let d = self.data;
        let n = d.len();
        let mut p = at;
        let mut stack: Vec<Slot> = Vec::new();
        let mut marks: Vec<usize> = Vec::new();
        let bad = || "cannot be read again".to_string();
        macro_rules! arg {
            ($k:expr) => {{
                let k: usize = $k;
                if n - p < k {
                    return Err(bad());
                }
                let s = &d[p..p + k];
                p += k;
                s
            }};
        }
        macro_rules! u32_arg {
            () => {
                u32::from_le_bytes(arg!(4).try_into().unwrap())
            };
        }
        loop {
            // a scalar or a string is whole once pushed
            if let [Slot::V(v)] = stack[..] {
                // (a tuple too: nothing adds to one)
                if marks.is_empty() && !matches!(v, Value::List(_) | Value::Dict(_)) {
                    return Ok(v);
                }
            }
            if p >= n {
                break;
            }
            let op = d[p];
            p += 1;
            let v = match op {
                0x95 => {
                    arg!(8);
                    continue;
                }
                0x94 => continue,
                b'q' => {
                    arg!(1);
                    continue;
                }
                b'r' => {
                    arg!(4);
                    continue;
                }
                b'(' => {
                    marks.push(stack.len());
                    continue;
                }
                b'N' => Value::None,
                0x88 => Value::Bool(true),
                0x89 => Value::Bool(false),
                b'K' => Value::Int(arg!(1)[0] as i64),
                b'M' => Value::Int(u16::from_le_bytes(arg!(2).try_into().unwrap()) as i64),
                b'J' => Value::Int(u32_arg!() as i32 as i64),
                b'G' => Value::Float(f64::from_be_bytes(arg!(8).try_into().unwrap())),
                0x8a => {
                    let k = arg!(1)[0] as usize;
                    match long_le(arg!(k)) {
                        Long::Fits(v) => v,
                        Long::Wide { .. } => return Err(bad()),
                    }
                }
                0x8c => {
                    let k = arg!(1)[0] as usize;
                    str_value(out, strs, arg!(k))?
                }
                b'X' => {
                    let k = u32_arg!() as usize;
                    str_value(out, strs, arg!(k))?
                }
                b']' => out.new_seq(Vec::new(), false),
                b')' => out.new_seq(Vec::new(), true),
                b'}' => out.new_dict(Vec::new()),
                b'h' => {
                    stack.push(Slot::Ref(arg!(1)[0] as u32));
                    continue;
                }
                b'j' => {
                    stack.push(Slot::Ref(u32_arg!()));
                    continue;
                }
                b'0' => {
                    if stack.pop().is_none() {
                        break;
                    }
                    continue;
                }
                b'2' => match stack.last() {
                    Some(&s) => {
                        stack.push(s);
                        continue;
                    }
                    None => break,
                },
                b'l' | b't' | 0x85..=0x87 => {
                    let from = match op {
                        b'l' | b't' => match marks.pop() {
                            Some(m) => m,
                            None => break,
                        },
                        _ => match stack.len().checked_sub((op - 0x84) as usize) {
                            Some(f) => f,
                            None => break,
                        },
                    };
                    let items = self.take(out, strs, &mut stack, from, depth)?;
                    out.new_seq(items, op != b'l')
                }
                b'a' | b's' | b'e' | b'u' => {
                    let from = match op {
                        b'a' => stack.len().wrapping_sub(1),
                        b's' => stack.len().wrapping_sub(2),
                        _ => match marks.pop() {
                            Some(m) => m,
                            None => break,
                        },
                    };
                    // the container is the value under the items: one of this object's own
                    if from == 0 || from > stack.len() {
                        break;
                    }
                    let Slot::V(target) = stack[from - 1] else { return Err(bad()) };
                    let items = self.take(out, strs, &mut stack, from, depth)?;
                    match (op, target) {
                        (b'a' | b'e', Value::List(i)) => out.append(i, &items),
                        (b's' | b'u', Value::Dict(i)) if items.len().is_multiple_of(2) => {
                            out.items_mut(i).extend(items.chunks_exact(2).map(|kv| (kv[0], kv[1])))
                        }
                        _ => return Err(bad()),
                    }
                    continue;
                }
                b'.' => break,
                _ => return Err(bad()),
            };
            stack.push(Slot::V(v));
        }
        match stack.first() {
            Some(&Slot::V(v)) => Ok(v),
            Some(&Slot::Ref(k)) => self.resolve_at(out, strs, k, depth + 1),
            None => Err(bad()),
        }
    }

    /// The stack's values from `from` on, references resolved, taken off it.
    fn take(
        &mut self,
        out: &mut Pickle,
        strs: &mut ShortStrs<'a>,
        stack: &mut Vec<Slot>,
        from: usize,
        depth: usize,
    ) -> Result<Vec<Value>, String> {
        let mut items = Vec::with_capacity(stack.len() - from);
        for s in stack.drain(from..) {
            items.push(match s {
                Slot::V(v) => v,
                Slot::Ref(k) => self.resolve_at(out, strs, k, depth + 1)?,
            });
        }
        Ok(items)
    }
}

/// A [`Sink`] whose work a second thread can share: it makes a sink for the chunk after a split
/// and takes that chunk's values in when the first thread reaches the split.
pub trait SplitSink: Sink {
    type Part: Sink + Send;
    /// A sink for the chunk after the split (made before the parse starts).
    fn part(&mut self) -> Self::Part;
    /// Takes the chunk's first `len` sink values (its `Ext(0 .. len)`, made in `part_pk`) in,
    /// after this sink's own; returns the first of them as this sink numbers them
    /// (`Ext(first .. first + len)`). `prefix_value(key)` is memo key `key`'s value in `pk`
    /// (for keys below the split: the same objects the chunk read again).
    fn splice(
        &mut self,
        pk: &Pickle,
        part: Self::Part,
        part_pk: &Pickle,
        len: u32,
        prefix_value: &dyn Fn(u32) -> Option<Value>,
    ) -> Result<u32, String>;
    /// Forgets everything seen (the parse starts again from the first byte, in order).
    fn reset(&mut self);
}

thread_local! {
    static SPLICED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many chunks parses on this thread have spliced in (what tests check a split was used with).
pub fn chunks_spliced_on_this_thread() -> usize {
    SPLICED.with(|c| c.get())
}

/// A finished chunk: its arena, sink, and how far it got.
struct Chunk<P> {
    pk: Pickle,
    part: P,
    /// Offset after its last whole batch, its sink values and memo keys up to there.
    end: usize,
    len: u32,
    memo_end: usize,
    /// Where it began, the stack depth and memo keys there.
    at: usize,
    depth: usize,
    base: usize,
}

/// [`super::parse_with`], with the part after `target` (a byte offset) read by a second
/// thread where the pickle allows it (see the module notes). The result is the sequential
/// parse's: where the chunk cannot be used the first thread reads on by itself. The first
/// thread learns the split at its next MiB once the scan has found it; `wait` makes it wait
/// for the scan first (so that a small pickle is split too: what tests compare with).
pub fn parse_split<S: SplitSink>(
    data: &[u8],
    limits: Limits,
    sink: &mut S,
    target: usize,
    wait: bool,
) -> Result<Pickle, PickleError> {
    // the split offset once found (NO_SPLIT: none, or the first thread got there first)
    let at = AtomicUsize::new(SPLIT_PENDING);
    // set by the first thread when it takes the split (it stops there)
    let accepted = AtomicBool::new(false);
    let part = sink.part();
    std::thread::scope(|s| {
        let (at, accepted) = (&at, &accepted);
        let helper = std::thread::Builder::new()
            .name("strobe-pickle-chunk".into())
            .spawn_scoped(s, move || chunk(data, limits, target, at, accepted, part));
        let mut st = State::new(data, target, limits)?;
        if helper.is_err() {
            st.split_at = NO_SPLIT;
        } else if wait {
            while at.load(Ordering::Acquire) == SPLIT_PENDING {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        }
        // where the first thread is when it asks: a split it has passed is given up
        let poll = |p: usize| match at.load(Ordering::Acquire) {
            SPLIT_PENDING => SPLIT_PENDING,
            x if x >= p && x != NO_SPLIT => {
                accepted.store(true, Ordering::Release);
                x
            }
            _ => {
                at.store(NO_SPLIT, Ordering::Release);
                NO_SPLIT
            }
        };
        let t_first = strobe_store::timing::Phase::start("pickle: first thread to the split");
        let first = run::<SEQ>(&mut st, sink, &poll);
        drop(t_first);
        if !matches!(first, Ok(Ended::AtSplit)) {
            // the helper stops at its next poll once the split is given up
            at.store(NO_SPLIT, Ordering::Release);
        }
        let t_wait = strobe_store::timing::Phase::start("pickle: first thread waits for the chunk");
        let chunk = helper.ok().and_then(|h| h.join().ok().flatten());
        drop(t_wait);
        let _t_splice = strobe_store::timing::Phase::start("pickle: splice and the rest");
        match first? {
            Ended::Stop => return Ok(st.finish()),
            Ended::AtSplit => {}
            other => return Err(st.c.err(format!("parse ended early ({other:?})"))),
        }
        let spliced = match chunk {
            Some(ch) if ch.at == st.c.p && ch.depth == st.stack.len() && ch.base == st.memo.next_key() => {
                let Some(&Value::List(list)) = st.stack.last() else { return go_on(st, sink) };
                let memo = &st.memo;
                let prefix_value = |key: u32| memo.value(key as usize);
                let first = sink.splice(&st.out, ch.part, &ch.pk, ch.len, &prefix_value).map_err(|e| st.c.err(e))?;
                drop(ch.pk);
                st.out.append_ext_run(list, first, ch.len);
                st.memo.hole = (ch.base, ch.memo_end - ch.base);
                st.c.p = ch.end;
                SPLICED.with(|c| c.set(c.get() + 1));
                true
            }
            _ => false,
        };
        if !spliced {
            return go_on(st, sink);
        }
        match run::<AFTER>(&mut st, sink, &|_| NO_SPLIT)? {
            Ended::Stop => Ok(st.finish()),
            Ended::Hole => {
                // the rest refers back into the chunk: read the whole pickle in order
                drop(st);
                sink.reset();
                super::reader::parse_with(data, limits, sink)
            }
            other => Err(st.c.err(format!("parse ended early ({other:?})"))),
        }
    })
}

/// The first thread's parse from where it stopped, in order.
fn go_on<S: Sink>(mut st: State<'_>, sink: &mut S) -> Result<Pickle, PickleError> {
    match run::<SEQ>(&mut st, sink, &|_| NO_SPLIT)? {
        Ended::Stop => Ok(st.finish()),
        other => Err(st.c.err(format!("parse ended early ({other:?})"))),
    }
}

/// The second thread: finds the split, publishes it, and parses the chunk after it.
fn chunk<P: Sink>(
    data: &[u8],
    limits: Limits,
    target: usize,
    at: &AtomicUsize,
    accepted: &AtomicBool,
    mut part: P,
) -> Option<Chunk<P>> {
    let t_scan = strobe_store::timing::Phase::start("pickle: second thread's scan");
    let found = find(data, target, limits.max_stack);
    drop(t_scan);
    let _t = strobe_store::timing::Phase::start("pickle: second thread's chunk");
    let Some(split) = found else {
        at.store(NO_SPLIT, Ordering::Release);
        return None;
    };
    // the sink claims its room before the first thread can learn of the split
    part.chunk_starts(split.dicts);
    if at.compare_exchange(SPLIT_PENDING, split.at, Ordering::AcqRel, Ordering::Acquire).is_err() {
        part.chunk_ends();
        return None;
    }
    // the first thread takes the split at its next MiB, or gives it up if it is past it
    while !accepted.load(Ordering::Acquire) {
        if at.load(Ordering::Acquire) != split.at {
            part.chunk_ends();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
    let base = split.made_at.len();
    let mut st = State::new(data, data.len() - split.at, limits).ok()?;
    st.c.p = split.at;
    st.memo.base = base;
    st.stack.push(OUTER);
    st.split_at = NO_SPLIT;
    st.chunk = Some(ChunkState { prefix: Prefix::new(data, split.made_at), next_ext: 0, commit: None });
    // stops at its next MiB once the first thread has given the split up
    let poll = |_| if at.load(Ordering::Acquire) == split.at { split.at } else { NO_SPLIT };
    // an error ends the chunk as its end does: the first thread reads on from the last batch
    let _ = run::<CHUNK>(&mut st, &mut part, &poll);
    part.chunk_ends();
    let (end, len, memo_end) = st.chunk.as_ref()?.commit?;
    if at.load(Ordering::Acquire) != split.at {
        return None;
    }
    drop(st.chunk.take());
    Some(Chunk { pk: st.finish(), part, end, len, memo_end, at: split.at, depth: split.depth, base })
}
