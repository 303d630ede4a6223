use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceFormat {
    /// A chrome trace written by the PyTorch profiler (has GPU categories or Kineto keys).
    Kineto,
    /// Any other chrome trace-event JSON.
    Chrome,
    /// An Nsight Systems SQLite export.
    Nsys,
    /// An XSpace profile (`jax.profiler`, TensorFlow, XProf: `<host>.xplane.pb`).
    XSpace,
}

impl SourceFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceFormat::Kineto => "kineto",
            SourceFormat::Chrome => "chrome",
            SourceFormat::Nsys => "nsys",
            SourceFormat::XSpace => "xspace",
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub id: i64,
    pub name: String,
    #[serde(default)]
    pub total_memory_bytes: Option<u64>,
    #[serde(default)]
    pub sm_count: Option<u32>,
    #[serde(default)]
    pub compute_capability: Option<String>,
    /// Everything else the source said about the device.
    #[serde(default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DistributedInfo {
    pub rank: Option<i64>,
    pub world_size: Option<i64>,
    pub backend: Option<String>,
    #[serde(default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// What the importer saw and what it did with it: nothing is dropped silently.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadSummary {
    /// Events (or rows) read from the source.
    pub events: u64,
    pub by_phase: BTreeMap<String, u64>,
    pub by_category: BTreeMap<String, u64>,
    /// Reason → count of events not turned into spans, flows or counters.
    pub skipped: BTreeMap<String, u64>,
    /// Free-form notes (e.g. "no kernel table: CPU-only capture").
    #[serde(default)]
    pub notes: Vec<String>,
    /// Set when the source ends early (a killed job, a partial copy): everything complete
    /// before the cut was read. `strobe report` exits 3 then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<Truncation>,
}

/// Where a source was cut short.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Truncation {
    /// Byte of the (decompressed) text where reading stopped: the start of the first event
    /// that is not complete, or the end of what could be read.
    pub at_byte: u64,
    /// Complete events read before the cut.
    pub events_read: u64,
    /// What was cut, in words ("the file ends inside an event", "the gzip stream ends early …").
    pub what: String,
}

impl Truncation {
    /// The one-line warning the report and the window show.
    pub fn message(&self) -> String {
        format!("truncated at byte {}; {} events read ({})", self.at_byte, self.events_read, self.what)
    }
}

impl LoadSummary {
    pub fn skip(&mut self, why: &str) {
        *self.skipped.entry(why.to_string()).or_default() += 1;
    }

    pub fn merge(&mut self, other: &LoadSummary) {
        self.events += other.events;
        for (k, v) in &other.by_phase {
            *self.by_phase.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &other.by_category {
            *self.by_category.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &other.skipped {
            *self.skipped.entry(k.clone()).or_default() += v;
        }
        self.notes.extend(other.notes.iter().cloned());
        if self.truncated.is_none() {
            self.truncated = other.truncated.clone();
        }
    }
}

/// Trace-wide facts, stored as one JSON blob in the store (small, read once).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceMeta {
    pub format: SourceFormat,
    /// The source file's path as given when it was loaded.
    pub source: String,
    #[serde(default)]
    pub devices: Vec<DeviceInfo>,
    #[serde(default)]
    pub distributed: Option<DistributedInfo>,
    /// Wall-clock of the trace's time zero in ns since the Unix epoch, where the source says
    /// (Kineto `baseTimeNanoseconds`, nsys session start): used to align ranks.
    #[serde(default)]
    pub base_time_ns: Option<i64>,
    /// Process display names (pid → name) and thread names, from metadata.
    #[serde(default)]
    pub load: LoadSummary,
    /// Other top-level keys of the source worth showing (schemaVersion, trace_id, …).
    #[serde(default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl TraceMeta {
    pub fn new(format: SourceFormat, source: impl Into<String>) -> Self {
        TraceMeta {
            format,
            source: source.into(),
            devices: Vec::new(),
            distributed: None,
            base_time_ns: None,
            load: LoadSummary::default(),
            extra: serde_json::Map::new(),
        }
    }
}
