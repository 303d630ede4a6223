//! The pickle stack machine's loop: progress and split polls, then one opcode at a time,
//! each handed to the function for its family (stack and marks here; numbers and strings in
//! `scalars`, containers in `containers`, the memo in `memo`). Handlers are small and
//! inlined into the loop, so the machine is still one dispatch per opcode.

use super::reader::{Ended, PickleError, Sink, State, Value, AFTER, CHUNK, NO_SPLIT, OUTER, SEQ, SPLIT_PENDING};

/// How often `Sink::reached` is called.
const TICK_BYTES: usize = 1 << 20;

/// Why an opcode stops the machine: the run ended (STOP, or a split or chunk boundary), or
/// the pickle is bad. Handlers return it as their error so that `?` ends the run from
/// anywhere.
pub(super) enum Halt {
    Ended(Ended),
    Bad(PickleError),
}

impl From<PickleError> for Halt {
    #[inline]
    fn from(e: PickleError) -> Halt {
        Halt::Bad(e)
    }
}

/// Runs opcodes from `st.c.p` until STOP, an error, or (by `MODE`) a split or a chunk's end.
/// `poll(offset)`, called about once per MiB: for `SEQ`, the split offset once known; for
/// `CHUNK`, `NO_SPLIT` to stop.
pub(super) fn run<const MODE: u8>(
    st: &mut State<'_>,
    sink: &mut impl Sink,
    poll: &dyn Fn(usize) -> usize,
) -> Result<Ended, PickleError> {
    const { assert!(MODE == SEQ || MODE == CHUNK || MODE == AFTER) };
    match st.steps::<MODE>(sink, poll) {
        Halt::Ended(e) => Ok(e),
        Halt::Bad(e) => Err(e),
    }
}

impl<'a> State<'a> {
    fn steps<const MODE: u8>(&mut self, sink: &mut impl Sink, poll: &dyn Fn(usize) -> usize) -> Halt {
        loop {
            if let Err(h) = self.step::<MODE>(sink, poll) {
                return h;
            }
        }
    }

    #[inline(always)]
    fn step<const MODE: u8>(&mut self, sink: &mut impl Sink, poll: &dyn Fn(usize) -> usize) -> Result<(), Halt> {
        self.c.op_at = self.c.p;
        if MODE == CHUNK && self.stack.first() != Some(&OUTER) {
            return Err(Halt::Ended(Ended::ChunkEnd));
        }
        if self.c.p >= self.next_tick {
            self.tick::<MODE>(sink, poll)?;
        }
        let op = match self.c.take(1) {
            Ok(b) => b[0],
            Err(_) => return Err(self.c.err("truncated: ended before STOP").into()),
        };
        self.op::<MODE>(op, sink)
    }

    /// About once per MiB: the split a `SEQ` run stops at, a `CHUNK` run's stop request,
    /// prefaulting the big vectors' next pages, and progress.
    #[inline(never)]
    fn tick<const MODE: u8>(&mut self, sink: &mut impl Sink, poll: &dyn Fn(usize) -> usize) -> Result<(), Halt> {
        let p = self.c.p;
        if MODE == SEQ && p == self.split_at {
            // the next run goes on from here, sequentially unless a chunk is spliced in
            self.split_at = NO_SPLIT;
            return Err(Halt::Ended(Ended::AtSplit));
        }
        self.next_tick = p + TICK_BYTES;
        if MODE == SEQ && self.split_at == SPLIT_PENDING {
            self.split_at = poll(p);
        }
        if MODE == SEQ && self.split_at < p {
            self.split_at = NO_SPLIT; // passed (the scan read the opcodes otherwise)
        }
        if MODE == SEQ && self.split_at < self.next_tick {
            self.next_tick = self.split_at;
        }
        if MODE == CHUNK && poll(p) == NO_SPLIT {
            return Err(Halt::Ended(Ended::ChunkEnd));
        }
        self.memo_pages.advance(self.memo.slots.len() * 8);
        self.dict_pages.advance(self.out.dict_count() * 4);
        sink.reached(p).map_err(|e| self.c.err(e))?;
        Ok(())
    }

    /// One opcode, by family.
    #[inline(always)]
    fn op<const MODE: u8>(&mut self, op: u8, sink: &mut impl Sink) -> Result<(), Halt> {
        match op {
            // protocol, framing, end
            0x80 => self.protocol()?,
            0x95 => _ = self.c.u64()?, // FRAME: a length hint only
            b'.' => return Err(self.stop::<MODE>()),
            // stack and marks
            b'(' => self.mark()?,
            b'0' => _ = self.pop()?,
            b'1' => self.pop_mark_and_above()?,
            b'2' => self.dup::<MODE>()?,
            // numbers
            b'N' => self.push(Value::None)?,
            0x88 => self.push(Value::Bool(true))?,
            0x89 => self.push(Value::Bool(false))?,
            b'J' => {
                let v = self.c.u32()? as i32 as i64;
                self.push(Value::Int(v))?
            }
            b'K' => {
                let v = self.c.u8()? as i64;
                self.push(Value::Int(v))?
            }
            b'M' => {
                let v = self.c.u16()? as i64;
                self.push(Value::Int(v))?
            }
            0x8a => {
                let n = self.c.u8()? as i64;
                self.long(n)?
            }
            0x8b => {
                let n = self.c.u32()? as i32 as i64;
                self.long(n)?
            }
            b'I' | b'L' => self.text_int(op)?,
            b'F' => self.text_float()?,
            b'G' => {
                let v = f64::from_be_bytes(self.c.take(8)?.try_into().unwrap());
                self.push(Value::Float(v))?
            }
            // strings and bytes
            b'V' => self.raw_unicode()?,
            0x8c => {
                let n = self.c.u8()? as usize;
                self.str_of_len(n)?
            }
            b'X' => {
                let n = self.c.u32()? as usize;
                self.str_of_len(n)?
            }
            0x8d => {
                let n = self.c.len64()?;
                self.str_of_len(n)?
            }
            b'U' => {
                let n = self.c.u8()? as i64;
                self.py2_str(n)?
            }
            b'T' => {
                let n = self.c.u32()? as i32 as i64;
                self.py2_str(n)?
            }
            b'C' => {
                let n = self.c.u8()? as usize;
                self.bytes_of_len(n)?
            }
            b'B' => {
                let n = self.c.u32()? as usize;
                self.bytes_of_len(n)?
            }
            0x8e | 0x96 => {
                let n = self.c.len64()?;
                self.bytes_of_len(n)?
            }
            // containers
            b']' | 0x8f => self.push_new_seq(Vec::new(), false)?, // EMPTY_SET: read as a list
            b')' => self.push_new_seq(Vec::new(), true)?,
            b'}' => self.push_new_dict(Vec::new())?,
            b'l' => self.seq_from_mark(false)?,
            b't' | 0x91 => self.seq_from_mark(true)?, // FROZENSET: read as a tuple
            0x85..=0x87 => self.tuple_of((op - 0x84) as usize)?,
            b'd' => self.dict_from_mark()?,
            b'a' => self.append::<MODE>()?,
            b'e' | 0x90 => self.appends::<MODE>()?, // ADDITEMS: sets are read as lists
            b's' => self.setitem()?,
            b'u' => self.setitems(sink)?,
            // the memo
            b'p' => self.text_put::<MODE>()?,
            b'g' => self.text_get::<MODE>()?,
            b'h' => {
                let key = self.c.u8()? as u64;
                self.get::<MODE>(key)?
            }
            b'j' => {
                let key = self.c.u32()? as u64;
                self.get::<MODE>(key)?
            }
            b'q' => {
                let key = self.c.u8()? as u64;
                self.put_top::<MODE>(key)?
            }
            b'r' => {
                let key = self.c.u32()? as u64;
                self.put_top::<MODE>(key)?
            }
            0x94 => {
                let key = self.memo.next_key() as u64;
                self.put_top::<MODE>(key)?
            }
            _ => return Err(self.refusal(op).into()),
        }
        Ok(())
    }

    /// PROTO: the versions this reader knows.
    fn protocol(&mut self) -> Result<(), PickleError> {
        let v = self.c.u8()?;
        if v > 5 {
            return Err(self.c.err(format!("unsupported pickle protocol {v}")));
        }
        Ok(())
    }

    /// STOP: the top of the stack is the root (a chunk has none: it ends before).
    #[cold]
    fn stop<const MODE: u8>(&mut self) -> Halt {
        if MODE == CHUNK {
            return Halt::Ended(Ended::ChunkEnd);
        }
        let v = match self.pop() {
            Ok(v) => v,
            Err(e) => return Halt::Bad(e),
        };
        self.out.root = Some(v);
        if std::env::var_os("STROBE_TIMING").is_some() {
            eprintln!("[timing] pickle: {} memo slots, {}", self.memo.slots.len(), self.out.counts());
        }
        Halt::Ended(Ended::Stop)
    }

    /// An opcode outside the plain-data subset: refused by name where it builds objects.
    #[cold]
    fn refusal(&self, op: u8) -> PickleError {
        match refused(op) {
            Some(name) => self.c.err(format!(
                "opcode {name} (0x{op:02x}) builds Python objects; Strobe reads plain-data pickles only and never executes them"
            )),
            None => self.c.err(format!("unsupported pickle opcode 0x{op:02x} (not a plain-data pickle?)")),
        }
    }

    #[inline(always)]
    pub(super) fn push(&mut self, v: Value) -> Result<(), PickleError> {
        if self.stack.len() >= self.limits.max_stack {
            return Err(self.c.err(format!("stack deeper than {} values", self.limits.max_stack)));
        }
        self.stack.push(v);
        Ok(())
    }

    #[inline(always)]
    pub(super) fn pop(&mut self) -> Result<Value, PickleError> {
        self.stack.pop().ok_or_else(|| self.c.err("stack underflow"))
    }

    /// The top of the stack, left there.
    #[inline(always)]
    pub(super) fn top(&self) -> Result<Value, PickleError> {
        self.stack.last().copied().ok_or_else(|| self.c.err("stack underflow"))
    }

    /// MARK.
    #[inline(always)]
    fn mark(&mut self) -> Result<(), PickleError> {
        if self.marks.len() >= self.limits.max_marks {
            return Err(self.c.err(format!("nesting deeper than {} MARKs", self.limits.max_marks)));
        }
        self.marks.push(self.stack.len());
        Ok(())
    }

    /// The stack length at the last MARK, which is closed.
    #[inline(always)]
    pub(super) fn pop_mark(&mut self) -> Result<usize, PickleError> {
        match self.marks.pop() {
            Some(m) if m <= self.stack.len() => Ok(m),
            _ => Err(self.c.err("no MARK on the stack")),
        }
    }

    /// POP_MARK: drops everything above the last MARK.
    #[inline(always)]
    fn pop_mark_and_above(&mut self) -> Result<(), PickleError> {
        let m = self.pop_mark()?;
        self.stack.truncate(m);
        Ok(())
    }

    /// DUP (a chunk cannot copy the list it fills: it ends before).
    #[inline(always)]
    fn dup<const MODE: u8>(&mut self) -> Result<(), Halt> {
        let v = self.top()?;
        if MODE == CHUNK && v == OUTER {
            return Err(Halt::Ended(Ended::ChunkEnd));
        }
        Ok(self.push(v)?)
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
