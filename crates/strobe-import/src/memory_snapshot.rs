//! `torch.cuda.memory._dump_snapshot` pickles (plain or gzipped) into
//! [`strobe_model::memory::MemorySnapshot`], and `torch.cuda.memory_stats()` JSON dumps.

use crate::pickle::{self, Pickle, Value};
use crate::ImportError;
use rustc_hash::FxHashMap;
use std::io::Read;
use std::path::Path;
use strobe_model::memory::*;

/// Reads a snapshot file: mapped when plain, decompressed when gzipped.
pub fn import(path: &Path) -> Result<MemorySnapshot, ImportError> {
    let file = std::fs::File::open(path).map_err(|e| ImportError::io(path, e))?;
    // SAFETY: read-only map of a file we only read; a file truncated underneath us is the
    // usual mmap caveat shared by every importer here.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| ImportError::io(path, e))?;
    if map.starts_with(&[0x1f, 0x8b]) {
        let mut buf = Vec::new();
        flate2::read::MultiGzDecoder::new(&map[..])
            .read_to_end(&mut buf)
            .map_err(|e| ImportError::bad(path, format!("gzip: {e}")))?;
        from_bytes(&buf).map_err(|e| ImportError::bad(path, e))
    } else {
        from_bytes(&map).map_err(|e| ImportError::bad(path, e))
    }
}

/// Decodes a snapshot from pickle bytes.
pub fn from_bytes(data: &[u8]) -> Result<MemorySnapshot, String> {
    if data.is_empty() {
        return Err("empty file (not a memory snapshot pickle)".into());
    }
    if data[0] != 0x80 || !(2..=5).contains(&data.get(1).copied().unwrap_or(0)) {
        return Err("not a pickle of protocol 2-5 (expected torch.cuda.memory._dump_snapshot output)".into());
    }
    let mut b = B {
        snap: MemorySnapshot { stacks: vec![Vec::new()], strings: vec![String::new()], ..Default::default() },
        frame_ids: FxHashMap::default(),
        frame_keys: FxHashMap::default(),
        stack_ids: FxHashMap::default(),
        text_ids: FxHashMap::default(),
        text_keys: FxHashMap::default(),
        entries: Vec::new(),
    };
    let pk = pickle::parse_with(data, pickle::Limits::default(), &mut b).map_err(|e| e.to_string())?;
    build(pk, b)
}

struct B {
    snap: MemorySnapshot,
    frame_ids: FxHashMap<u32, u32>,
    frame_keys: FxHashMap<(String, String, i64), u32>,
    stack_ids: FxHashMap<u32, StackId>,
    /// Pickle string index → interned text id.
    text_ids: FxHashMap<u32, u32>,
    text_keys: FxHashMap<String, u32>,
    /// Trace entries converted while reading (`Value::Ext` indices).
    entries: Vec<Option<TraceEntry>>,
}

impl pickle::Sink for B {
    /// A dict with an `action` string is a trace entry: convert it now and free its items.
    fn dict_done(&mut self, pk: &Pickle, d: Value) -> Result<Option<Value>, String> {
        let items = pk.dict(d).unwrap_or(&[]);
        if !items.iter().any(|(k, v)| pk.str(*k) == Some("action") && pk.str(*v).is_some()) {
            return Ok(None);
        }
        let mut t = TraceEntry {
            action: Action::Other,
            addr: 0,
            size: 0,
            stream: 0,
            time_us: None,
            device_free: None,
            stack: 0,
            compile_context: 0,
            user_metadata: 0,
        };
        for &(k, v) in items {
            match pk.str(k).unwrap_or("") {
                "action" => t.action = Action::parse(pk.str(v).unwrap_or("")),
                "addr" => t.addr = pk.int(v).unwrap_or(0) as u64,
                "size" => t.size = pk.int(v).unwrap_or(0) as u64,
                "stream" => t.stream = pk.int(v).unwrap_or(0),
                "time_us" => t.time_us = pk.int(v),
                "device_free" => t.device_free = pk.int(v).map(|x| x as u64),
                "frames" => t.stack = self.stack_of(pk, v),
                "compile_context" => t.compile_context = self.intern(pk, v),
                "user_metadata" => t.user_metadata = self.intern(pk, v),
                _ => {}
            }
        }
        if self.entries.len() >= u32::MAX as usize {
            return Err("too many trace entries".into());
        }
        self.entries.push(Some(t));
        Ok(Some(Value::Ext((self.entries.len() - 1) as u32)))
    }
}

fn int(pk: &Pickle, d: Value, k: &str) -> Option<i64> {
    pk.get(d, k).and_then(|v| pk.int(v))
}
fn uint(pk: &Pickle, d: Value, k: &str) -> Result<u64, String> {
    let v = int(pk, d, k).ok_or_else(|| format!("missing integer field '{k}'"))?;
    Ok(v as u64)
}
fn text(pk: &Pickle, d: Value, k: &str) -> Option<String> {
    pk.get(d, k).and_then(|v| pk.str(v)).map(str::to_string)
}

impl B {
    fn frame(&mut self, pk: &Pickle, v: Value) -> u32 {
        let key = match v {
            Value::Dict(i) => i,
            _ => u32::MAX,
        };
        if let Some(&id) = self.frame_ids.get(&key) {
            return id;
        }
        let f = Frame {
            name: text(pk, v, "name").unwrap_or_default(),
            filename: text(pk, v, "filename").unwrap_or_default(),
            line: int(pk, v, "line").unwrap_or(0),
        };
        let k = (f.name.clone(), f.filename.clone(), f.line);
        let id = match self.frame_keys.get(&k) {
            Some(&id) => id,
            None => {
                self.snap.frames.push(f);
                let id = (self.snap.frames.len() - 1) as u32;
                self.frame_keys.insert(k, id);
                id
            }
        };
        self.frame_ids.insert(key, id);
        id
    }
    /// Interns a `frames` list value (shared lists are converted once).
    fn stack_of(&mut self, pk: &Pickle, fr: Value) -> StackId {
        let (Value::List(key) | Value::Tuple(key)) = fr else { return 0 };
        if let Some(&id) = self.stack_ids.get(&key) {
            return id;
        }
        let items = pk.seq(fr).unwrap_or(&[]);
        let id = if items.is_empty() {
            0
        } else {
            let st: Vec<u32> = items.iter().map(|&f| self.frame(pk, f)).collect();
            self.snap.stacks.push(st);
            (self.snap.stacks.len() - 1) as StackId
        };
        self.stack_ids.insert(key, id);
        id
    }
    fn stack(&mut self, pk: &Pickle, d: Value) -> StackId {
        match pk.get(d, "frames") {
            Some(fr) => self.stack_of(pk, fr),
            None => 0,
        }
    }
    fn intern(&mut self, pk: &Pickle, v: Value) -> u32 {
        let Value::Str(i) = v else { return 0 };
        if let Some(&id) = self.text_ids.get(&i) {
            return id;
        }
        let s = pk.str(v).unwrap_or("");
        let id = if s.is_empty() || s == "N/A" {
            0
        } else if let Some(&p) = self.text_keys.get(s) {
            p
        } else {
            self.snap.strings.push(s.to_string());
            let id = (self.snap.strings.len() - 1) as u32;
            self.text_keys.insert(s.to_string(), id);
            id
        };
        self.text_ids.insert(i, id);
        id
    }
}

fn build(pk: Pickle, mut b: B) -> Result<MemorySnapshot, String> {
    let root = pk.root();
    if pk.dict(root).is_none() {
        return Err("pickle does not hold a dict (not a memory snapshot)".into());
    }
    let segs = pk.get(root, "segments").ok_or("no 'segments' key: not a torch memory snapshot")?;
    let segs = pk.seq(segs).ok_or("'segments' is not a list")?.to_vec();
    for (si, &sg) in segs.iter().enumerate() {
        let ctx = |e: String| format!("segments[{si}]: {e}");
        let mut blocks = Vec::new();
        if let Some(bl) = pk.get(sg, "blocks").and_then(|v| pk.seq(v)) {
            for &bk in bl {
                blocks.push(Block {
                    address: uint(&pk, bk, "address").map_err(ctx)?,
                    size: uint(&pk, bk, "size").map_err(ctx)?,
                    requested_size: int(&pk, bk, "requested_size").map(|v| v as u64),
                    state: BlockState::parse(&text(&pk, bk, "state").unwrap_or_default()),
                    stack: b.stack(&pk, bk),
                });
            }
        }
        let pool_id = pk
            .get(sg, "segment_pool_id")
            .and_then(|v| pk.seq(v))
            .map(|t| (t.first().and_then(|v| pk.int(*v)).unwrap_or(0), t.get(1).and_then(|v| pk.int(*v)).unwrap_or(0)))
            .unwrap_or((0, 0));
        let seg = Segment {
            device: int(&pk, sg, "device").unwrap_or(0),
            address: uint(&pk, sg, "address").map_err(ctx)?,
            total_size: uint(&pk, sg, "total_size").map_err(ctx)?,
            stream: int(&pk, sg, "stream").unwrap_or(0),
            segment_type: text(&pk, sg, "segment_type").unwrap_or_default(),
            pool_id,
            is_expandable: pk.get(sg, "is_expandable").map(|v| v == Value::Bool(true)).unwrap_or(false),
            blocks,
            stack: b.stack(&pk, sg),
        };
        b.snap.segments.push(seg);
    }
    b.snap.allocator_settings = pk.get(root, "allocator_settings").map(|v| pk.to_json(v, 16));
    if let Some(anns) = pk.get(root, "external_annotations").and_then(|v| pk.seq(v)) {
        for &a in anns {
            b.snap.external_annotations.push(Annotation {
                stage: text(&pk, a, "stage").unwrap_or_default(),
                name: text(&pk, a, "name").unwrap_or_default(),
                device: int(&pk, a, "device").unwrap_or(0),
                time_us: int(&pk, a, "time_us"),
            });
        }
    }
    let dts: Vec<Value> = pk.get(root, "device_traces").and_then(|v| pk.seq(v)).map(|s| s.to_vec()).unwrap_or_default();
    for (di, &dt) in dts.iter().enumerate() {
        let list = pk.seq(dt).ok_or_else(|| format!("device_traces[{di}] is not a list"))?;
        let n = list.len();
        // The usual case: this list holds every converted entry, in order. Take the vector
        // as it is (no second copy of the trace in memory).
        if n > 0 && n == b.entries.len() && list.iter().enumerate().all(|(k, v)| *v == Value::Ext(k as u32)) {
            let all = std::mem::take(&mut b.entries);
            let out: Vec<TraceEntry> = all.into_iter().map(|e| e.expect("entry taken once")).collect();
            b.snap.device_traces.push(out);
            continue;
        }
        let mut out = Vec::with_capacity(n);
        for ei in 0..n {
            let e = pk.seq(dt).unwrap()[ei];
            let t = match e {
                Value::Ext(x) => b.entries.get_mut(x as usize).and_then(Option::take),
                _ => None,
            };
            out.push(
                t.ok_or_else(|| format!("device_traces[{di}][{ei}]: not a trace entry (a dict with an 'action')"))?,
            );
        }
        b.snap.device_traces.push(out);
    }
    Ok(b.snap)
}

/// Reads a `torch.cuda.memory_stats()` JSON dump (an object of numbers; others are skipped).
pub fn import_stats(path: &Path) -> Result<MemoryStats, ImportError> {
    let text = std::fs::read(path).map_err(|e| ImportError::io(path, e))?;
    let v: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| ImportError::bad(path, format!("JSON: {e}")))?;
    let obj =
        v.as_object().ok_or_else(|| ImportError::bad(path, "expected a JSON object (torch.cuda.memory_stats())"))?;
    let mut s = MemoryStats::default();
    for (k, x) in obj {
        if let Some(f) = x.as_f64() {
            s.values.insert(k.clone(), f);
        }
    }
    Ok(s)
}
