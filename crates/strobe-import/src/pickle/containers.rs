//! Opcodes that make lists, tuples and dicts and fill them. A chunk of a split parse fills
//! [`OUTER`], the list it was cut from, only with its sink's values in order (`commit`); a
//! dict's first SETITEMS batch goes to the sink, which may take the dict over.

use super::memo::Memo;
use super::reader::{ChunkState, Ended, PickleError, Sink, State, Value, CHUNK, OUTER};
use super::run::Halt;

impl<'a> State<'a> {
    #[inline(always)]
    pub(super) fn push_new_seq(&mut self, items: Vec<Value>, tuple: bool) -> Result<(), PickleError> {
        let v = self.out.new_seq(items, tuple);
        self.push(v)
    }

    #[inline(always)]
    pub(super) fn push_new_dict(&mut self, items: Vec<(Value, Value)>) -> Result<(), PickleError> {
        let v = self.out.new_dict(items);
        self.push(v)
    }

    /// LIST, TUPLE, FROZENSET: the values above the last MARK.
    #[inline(always)]
    pub(super) fn seq_from_mark(&mut self, tuple: bool) -> Result<(), PickleError> {
        let m = self.pop_mark()?;
        let items = self.stack.split_off(m);
        self.push_new_seq(items, tuple)
    }

    /// TUPLE1 to TUPLE3: the top `n` values.
    #[inline(always)]
    pub(super) fn tuple_of(&mut self, n: usize) -> Result<(), PickleError> {
        if self.stack.len() < n {
            return Err(self.c.err("stack underflow"));
        }
        let items = self.stack.split_off(self.stack.len() - n);
        self.push_new_seq(items, true)
    }

    /// DICT: the keys and values above the last MARK.
    #[inline(always)]
    pub(super) fn dict_from_mark(&mut self) -> Result<(), PickleError> {
        let m = self.pop_mark()?;
        let items = self.stack.split_off(m);
        if !items.len().is_multiple_of(2) {
            return Err(self.c.err("DICT with an odd number of items"));
        }
        self.push_new_dict(items.chunks(2).map(|p| (p[0], p[1])).collect())
    }

    /// APPEND.
    #[inline(always)]
    pub(super) fn append<const MODE: u8>(&mut self) -> Result<(), Halt> {
        let v = self.pop()?;
        match self.stack.last() {
            Some(&OUTER) if MODE == CHUNK => {
                if !commit(&mut self.chunk, &[v], self.c.p, &self.memo) {
                    return Err(Halt::Ended(Ended::ChunkEnd));
                }
            }
            Some(&Value::List(i)) => self.out.append(i, &[v]),
            _ => return Err(self.c.err("APPEND to something that is not a list").into()),
        }
        Ok(())
    }

    /// APPENDS, ADDITEMS: the values above the last MARK, to the list below it.
    #[inline(always)]
    pub(super) fn appends<const MODE: u8>(&mut self) -> Result<(), Halt> {
        let m = self.pop_mark()?;
        match m.checked_sub(1).map(|j| self.stack[j]) {
            Some(OUTER) if MODE == CHUNK => {
                if !commit(&mut self.chunk, &self.stack[m..], self.c.p, &self.memo) {
                    return Err(Halt::Ended(Ended::ChunkEnd));
                }
                self.stack.truncate(m);
            }
            Some(Value::List(i)) => {
                self.out.append(i, &self.stack[m..]);
                self.stack.truncate(m);
            }
            _ => return Err(self.c.err("APPENDS to something that is not a list").into()),
        }
        Ok(())
    }

    /// SETITEM.
    #[inline(always)]
    pub(super) fn setitem(&mut self) -> Result<(), PickleError> {
        let v = self.pop()?;
        let k = self.pop()?;
        match self.stack.last() {
            Some(&Value::Dict(i)) => self.out.items_mut(i).push((k, v)),
            _ => return Err(self.c.err("SETITEM on something that is not a dict")),
        }
        Ok(())
    }

    /// SETITEMS: the keys and values above the last MARK, to the dict below it. The usual
    /// dict is filled by one batch: the sink sees it on the stack and, if it takes it, the
    /// dict is never stored.
    #[inline(always)]
    pub(super) fn setitems(&mut self, sink: &mut impl Sink) -> Result<(), PickleError> {
        let m = self.pop_mark()?;
        if !(self.stack.len() - m).is_multiple_of(2) {
            return Err(self.c.err("SETITEMS with an odd number of items"));
        }
        let Some(Value::Dict(i)) = m.checked_sub(1).map(|j| self.stack[j]) else {
            return Err(self.c.err("SETITEMS on something that is not a dict"));
        };
        let first_batch = self.out.items_of(i).is_empty();
        let seen =
            if first_batch { sink.dict_done(&self.out, &self.stack[m..]).map_err(|e| self.c.err(e))? } else { None };
        let replacement = match seen {
            Some(nv) => {
                self.stack.truncate(m);
                Some(nv)
            }
            None => {
                let d = self.out.items_mut(i);
                d.reserve_exact((self.stack.len() - m) / 2);
                let mut it = self.stack.drain(m..);
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    d.push((k, v));
                }
                drop(it);
                if first_batch {
                    None // seen above, and kept
                } else {
                    let items = self.out.flat_items(Value::Dict(i));
                    sink.dict_done(&self.out, &items).map_err(|e| self.c.err(e))?
                }
            }
        };
        if let Some(nv) = replacement {
            self.replace_dict(i, nv);
            self.stack[m - 1] = nv;
        }
        Ok(())
    }

    /// Dict `i`, which a sink took over, is `nv` from now on: its items are dropped and the
    /// memo refers to `nv`.
    fn replace_dict(&mut self, i: u32, nv: Value) {
        if !self.out.items_of(i).is_empty() {
            *self.out.items_mut(i) = Vec::new();
        }
        // Point the memo at the replacement: it is nearly always among the last entries
        // (MEMOIZE right after EMPTY_DICT); else remember it.
        let from = self.memo.slots.len().saturating_sub(256);
        let packed = Memo::packed_ref(Value::Dict(i));
        match self.memo.slots[from..].iter().rposition(|x| Some(*x) == packed) {
            Some(p) => self.memo.set(from + p, nv),
            None => {
                self.out.replaced.insert(i, nv);
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
