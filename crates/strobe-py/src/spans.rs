//! `Trace.spans()`: the rows of `strobe export --what spans` (without args) as packed
//! little-endian columns, so that a million spans cross into pandas as a few buffers (numpy
//! reads them in place) instead of a million Python objects. Names and categories come as
//! codes into their lists of distinct strings (pandas categoricals).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use strobe_analysis::export::LaneIds;
use strobe_model::{flags, IdKey};
use strobe_store::Store;

/// A lane as the spans export names it.
#[derive(serde::Serialize)]
pub struct LaneRow {
    /// The lane's index in the store (what `spans(lanes=…)` takes).
    lane_id: u32,
    pid: serde_json::Value,
    tid: serde_json::Value,
    process_name: Option<String>,
    thread_name: Option<String>,
    lane: String,
    device: Option<i64>,
    stream: Option<i64>,
    spans: usize,
}

fn id_value(id: &IdKey) -> serde_json::Value {
    match id {
        IdKey::Num(n) => (*n).into(),
        IdKey::Str(s) => s.clone().into(),
    }
}

/// Lanes in the export's order ((pid, tid or track), then kind), copy-engine lanes left out.
pub fn lane_rows(store: &Store) -> Vec<LaneRow> {
    let ids = LaneIds::of_store(store);
    let mut order: Vec<u32> = (0..store.lanes.len() as u32).filter(|&l| ids[l as usize].is_some()).collect();
    let key = |l: u32| ids[l as usize].as_ref().map(|x| x.sort_key());
    order.sort_by(|&a, &b| {
        key(a)
            .cmp(&key(b))
            .then_with(|| store.lanes[a as usize].kind.cmp(&store.lanes[b as usize].kind))
            .then(a.cmp(&b))
    });
    order
        .into_iter()
        .filter_map(|l| {
            let id = ids[l as usize].as_ref()?;
            Some(LaneRow {
                lane_id: l,
                pid: id_value(&id.pid),
                tid: id.tid.as_ref().map_or(serde_json::Value::Null, id_value),
                process_name: id.process_name.clone(),
                thread_name: id.thread_name.clone(),
                lane: id.lane.clone(),
                device: id.device,
                stream: id.stream,
                spans: store.lane_spans(l).starts.len(),
            })
        })
        .collect()
}

/// Packed columns of the spans asked for, lane by lane (in `lane_rows` order), each lane's
/// by start.
pub struct Columns {
    lane_id: Vec<u32>,
    depth: Vec<u32>,
    ts_ns: Vec<i64>,
    dur_ns: Vec<i64>,
    name_codes: Vec<u32>,
    names: Vec<String>,
    cat_codes: Vec<u32>,
    cats: Vec<String>,
}

/// Dense codes for string ids, in order of first use.
struct Codes {
    of_id: Vec<u32>,
    strings: Vec<String>,
}

impl Codes {
    fn new(n: usize) -> Codes {
        Codes { of_id: vec![u32::MAX; n], strings: Vec::new() }
    }
    fn code(&mut self, store: &Store, id: u32) -> u32 {
        let Some(slot) = self.of_id.get_mut(id as usize) else { return self.push(store.string(id)) };
        if *slot == u32::MAX {
            *slot = self.strings.len() as u32;
            self.strings.push(store.string(id).to_string());
        }
        *slot
    }
    fn push(&mut self, s: &str) -> u32 {
        self.strings.push(s.to_string());
        self.strings.len() as u32 - 1
    }
}

pub fn collect(store: &Store, lanes: Option<&[usize]>, t0: Option<i64>, t1: Option<i64>) -> PyResult<Columns> {
    let order: Vec<u32> = lane_rows(store).iter().map(|r| r.lane_id).collect();
    let chosen: Vec<u32> = match lanes {
        None => order,
        Some(ls) => {
            if let Some(bad) = ls.iter().find(|&&l| !order.contains(&(l as u32))) {
                return Err(pyo3::exceptions::PyValueError::new_err(format!("no lane with lane_id {bad}")));
            }
            order.into_iter().filter(|l| ls.contains(&(*l as usize))).collect()
        }
    };
    let (t0, t1) = (t0.unwrap_or(i64::MIN), t1.unwrap_or(i64::MAX));
    let mut c = Columns {
        lane_id: Vec::new(),
        depth: Vec::new(),
        ts_ns: Vec::new(),
        dur_ns: Vec::new(),
        name_codes: Vec::new(),
        names: Vec::new(),
        cat_codes: Vec::new(),
        cats: Vec::new(),
    };
    let (mut names, mut cats) = (Codes::new(store.string_count()), Codes::new(store.string_count()));
    let mut members = Vec::new();
    for lane in chosen {
        let v = store.lane_view(lane);
        members.clear();
        if t0 == i64::MIN && t1 == i64::MAX {
            members.extend(0..v.starts.len());
        } else {
            store.query_window(lane, t0, t1, |i| members.push(i));
        }
        for &i in &members {
            let span = v.span[i];
            let m = store.span_meta(span);
            let unclosed = m.flags & flags::UNCLOSED as u8 != 0;
            c.lane_id.push(lane);
            c.depth.push(v.depth[i]);
            c.ts_ns.push(v.starts[i]);
            c.dur_ns.push(if unclosed { -1 } else { v.ends[i] - v.starts[i] });
            c.name_codes.push(names.code(store, m.name));
            c.cat_codes.push(cats.code(store, m.cat));
        }
    }
    c.names = names.strings;
    c.cats = cats.strings;
    Ok(c)
}

fn packed<'py, T: Copy>(py: Python<'py>, v: &[T], to_le: impl Fn(T) -> [u8; 8]) -> Bound<'py, PyBytes> {
    let mut out = Vec::with_capacity(v.len() * 8);
    for &x in v {
        out.extend_from_slice(&to_le(x));
    }
    PyBytes::new(py, &out)
}

fn packed32<'py>(py: Python<'py>, v: &[u32]) -> Bound<'py, PyBytes> {
    let mut out = Vec::with_capacity(v.len() * 4);
    for &x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
    PyBytes::new(py, &out)
}

impl Columns {
    /// `{lane_id, depth, name_codes, cat_codes: <u4 bytes; ts_ns, dur_ns: <i8 bytes; names, cats: list}`.
    pub fn into_py_dict(self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("lane_id", packed32(py, &self.lane_id))?;
        d.set_item("depth", packed32(py, &self.depth))?;
        d.set_item("ts_ns", packed(py, &self.ts_ns, i64::to_le_bytes))?;
        d.set_item("dur_ns", packed(py, &self.dur_ns, i64::to_le_bytes))?;
        d.set_item("name_codes", packed32(py, &self.name_codes))?;
        d.set_item("names", self.names)?;
        d.set_item("cat_codes", packed32(py, &self.cat_codes))?;
        d.set_item("cats", self.cats)?;
        Ok(d)
    }
}
