//! What one packet sequence (`trusted_packet_sequence_id`) carries from packet to packet:
//! its interned tables, its packet defaults and its incremental clocks. Cleared by a packet
//! with `SEQ_INCREMENTAL_STATE_CLEARED`; a packet that needs it before it was ever set is
//! dropped with a note, as Perfetto's trace processor does.

use super::messages::{self as m, text};
use rustc_hash::FxHashMap;

/// A GPU counter descriptor: the GPU it measures (where it says) and its counters' names.
#[derive(Clone, Default)]
pub struct CounterSpecs {
    pub gpu: Option<i32>,
    pub names: FxHashMap<u32, String>,
}

impl CounterSpecs {
    pub fn from(d: &m::GpuCounterDescriptor, gpu: Option<i32>) -> CounterSpecs {
        CounterSpecs {
            gpu,
            names: d
                .specs
                .iter()
                .map(|s| (s.counter_id.unwrap_or(0), text(s.name.as_deref().unwrap_or(b""))))
                .collect(),
        }
    }
}

#[derive(Default)]
pub struct Sequence {
    /// Whether incremental state was ever set on this sequence (a packet that needs it is
    /// dropped until then).
    pub valid: bool,
    pub event_names: FxHashMap<u64, String>,
    pub categories: FxHashMap<u64, String>,
    pub annotation_names: FxHashMap<u64, String>,
    pub annotation_strings: FxHashMap<u64, String>,
    /// Render-stage specifications: the name of a hardware queue or stage, and its category.
    pub gpu_specs: FxHashMap<u64, (String, i32)>,
    pub counter_specs: FxHashMap<u64, CounterSpecs>,
    pub kernels: FxHashMap<u64, String>,
    pub arg_names: FxHashMap<u64, String>,
    pub default_clock: Option<u32>,
    pub default_track: Option<u64>,
    /// Counter tracks that an event's `extra_counter_values` go to when it names none.
    pub default_extra_counters: Vec<u64>,
    pub default_extra_double_counters: Vec<u64>,
    /// Incremental clocks (`ClockSnapshot.Clock.is_incremental`): the last value and the
    /// clock's unit in ns.
    pub incremental: FxHashMap<u32, (u64, u64)>,
    /// The legacy thread descriptor of this sequence: (pid, tid), and the time base of its
    /// `timestamp_delta_us` events.
    pub thread: Option<(i32, i64)>,
    pub legacy_us: Option<i64>,
}

impl Sequence {
    /// Drops what incremental state held (interned data, incremental clocks' last values);
    /// the packet defaults go with it, as they are incremental state too.
    pub fn clear(&mut self) {
        let thread = self.thread;
        *self = Sequence { valid: true, thread, ..Default::default() };
    }

    pub fn intern(&mut self, d: m::InternedData) {
        fn put(map: &mut FxHashMap<u64, String>, v: Vec<m::Interned>) {
            for e in v {
                map.insert(e.iid.unwrap_or(0), text(e.name.as_deref().unwrap_or(b"")));
            }
        }
        put(&mut self.event_names, d.event_names);
        put(&mut self.categories, d.event_categories);
        put(&mut self.annotation_names, d.debug_annotation_names);
        put(&mut self.arg_names, d.compute_arg_names);
        for s in d.debug_annotation_string_values {
            self.annotation_strings.insert(s.iid.unwrap_or(0), text(s.str.as_deref().unwrap_or(b"")));
        }
        for s in d.gpu_specifications {
            self.gpu_specs
                .insert(s.iid.unwrap_or(0), (text(s.name.as_deref().unwrap_or(b"")), s.category.unwrap_or(0)));
        }
        for c in d.gpu_counter_descriptors {
            let specs = c.counter_descriptor.as_ref().map(|d| CounterSpecs::from(d, c.gpu_id)).unwrap_or_default();
            self.counter_specs.insert(c.iid.unwrap_or(0), specs);
        }
        for k in d.compute_kernels {
            // the demangled name is what a user reads; the mangled one where that is all
            let name = k.demangled_name.or(k.name).map(|n| text(&n)).unwrap_or_default();
            self.kernels.insert(k.iid.unwrap_or(0), name);
        }
    }
}
