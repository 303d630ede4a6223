//! What a Perfetto trace holds once its packets are read, in the terms Strobe maps onto
//! lanes: tracks, slices with their flows, instants, counter points, GPU render stages and
//! GPU counter samples. Strings are kept once each (`Pool`).

use rustc_hash::FxHashMap;

/// Each distinct string once; events hold its index.
#[derive(Default)]
pub struct Pool {
    ids: FxHashMap<String, u32>,
    pub strings: Vec<String>,
}

impl Pool {
    pub fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.to_string());
        self.ids.insert(s.to_string(), i);
        i
    }

    pub fn get(&self, i: u32) -> &str {
        &self.strings[i as usize]
    }
}

#[derive(Clone, Default, Debug)]
pub struct Track {
    pub name: String,
    pub parent: Option<u64>,
    pub pid: Option<i32>,
    pub tid: Option<i64>,
    /// A process track (`ProcessDescriptor`) rather than a thread or custom one.
    pub is_process: bool,
    /// A counter track: its values' multiplier, and whether they are deltas.
    pub counter: Option<(f64, bool)>,
    pub unit: Option<String>,
}

pub struct Slice {
    pub track: u64,
    pub ts: i64,
    /// `i64::MIN` while open.
    pub end: i64,
    pub name: u32,
    pub cat: u32,
    /// The args as a JSON object's text (`{}` for none).
    pub args: String,
    pub flows: Vec<u64>,
    pub terminating_flows: Vec<u64>,
    /// `gpu_correlation`: the render stages this slice launched.
    pub launches: Vec<u64>,
    /// `gpu_correlation`: the render stages this slice waited for.
    pub waits_on: Vec<u64>,
    /// An instant: a slice of no duration, as Perfetto keeps them (flows bind to them).
    pub instant: bool,
}

pub struct CounterPoint {
    pub track: u64,
    pub ts: i64,
    pub value: f64,
}

/// A `GpuRenderStageEvent`: one kernel, copy, set or annotation on a GPU's queue.
pub struct GpuOp {
    pub event_id: u64,
    pub ts: i64,
    pub dur: i64,
    pub gpu: i64,
    pub stream: i64,
    /// The queue's name as the producer wrote it (`[007] stream 7`).
    pub queue: u32,
    pub name: u32,
    /// Chrome/Kineto category: `kernel`, `gpu_memcpy`, `gpu_memset`, `gpu_user_annotation`.
    pub cat: u32,
    pub args: String,
    pub waits: Vec<u64>,
}

pub struct GpuSample {
    pub gpu: i64,
    pub name: u32,
    pub ts: i64,
    pub value: f64,
}

#[derive(Default)]
pub struct Decoded {
    pub pool: Pool,
    pub tracks: FxHashMap<u64, Track>,
    pub slices: Vec<Slice>,
    pub counters: Vec<CounterPoint>,
    pub gpu_ops: Vec<GpuOp>,
    pub gpu_samples: Vec<GpuSample>,
    /// What was dropped or mended, by reason, with a count: becomes the load summary.
    pub skipped: Vec<(String, u64)>,
    pub notes: Vec<String>,
    pub packets: u64,
    /// The first timestamp-bearing packet's BOOTTIME and REALTIME readings, where a clock
    /// snapshot gives both: the trace's wall-clock base.
    pub realtime_offset: Option<i64>,
}
