//! Interned strings: every name and category is stored once and referred to by a u32.

use rustc_hash::FxHashMap;

#[derive(Default)]
pub struct Interner {
    map: FxHashMap<Box<str>, u32>,
    list: Vec<Box<str>>,
}

impl Interner {
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.map.get(s) {
            return id;
        }
        let id = self.list.len() as u32;
        let b: Box<str> = s.into();
        self.list.push(b.clone());
        self.map.insert(b, id);
        id
    }

    pub fn get(&self, id: u32) -> &str {
        self.list.get(id as usize).map(|s| &**s).unwrap_or("")
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// (offsets with a final end offset, bytes) for the store.
    pub fn to_columns(&self) -> (Vec<u64>, Vec<u8>) {
        let mut off = Vec::with_capacity(self.list.len() + 1);
        let mut bytes = Vec::new();
        off.push(0u64);
        for s in &self.list {
            bytes.extend_from_slice(s.as_bytes());
            off.push(bytes.len() as u64);
        }
        (off, bytes)
    }
}
