//! The few ncu report messages Strobe reads, as `prost` messages declared by hand. Field
//! numbers and types are those of Nsight Compute's `ProfilerReport.proto`,
//! `ProfilerResultsCommon.proto`, `ProfilerReportCommon.proto`,
//! `ProfilerStringTable.proto` and `RuleSystem/RuleResults.proto`; only the fields Strobe
//! reads are declared, so everything else (sources, sections, rule tables and charts, NVTX
//! state, stacks, ...) is skipped unread, and neither `protoc` nor NVIDIA's `.proto` files
//! are needed to build.
//!
//! Text fields are declared as `bytes`, not `string`: names are for display, so invalid
//! UTF-8 is replaced (`text`) rather than refused as prost's `string` would.

use super::framing::{Corrupt, Result};

/// Decodes one message of `bytes`, which start at absolute offset `offset` in the report.
/// prost's errors carry no position, so a failure names the message's own offset.
pub fn decode<M: prost::Message + Default>(bytes: &[u8], offset: usize, what: &str) -> Result<M> {
    M::decode(bytes)
        .map_err(|e| Corrupt { offset, what: format!("{what} of {} bytes does not decode: {e}", bytes.len()) })
}

/// A text field's bytes as a string, invalid UTF-8 replaced.
pub fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// `FileHeader`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FileHeader {
    #[prost(uint64, optional, tag = "1")]
    pub version: Option<u64>,
}

/// `BlockHeader`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BlockHeader {
    #[prost(uint64, tag = "1")]
    pub num_sources: u64,
    #[prost(uint64, tag = "2")]
    pub num_results: u64,
    #[prost(message, repeated, tag = "3")]
    pub session: Vec<SessionDetails>,
    /// This block's additions to the report's string table.
    #[prost(message, repeated, tag = "4")]
    pub string_table: Vec<StringTable>,
    #[prost(uint64, tag = "5")]
    pub payload_size: u64,
    #[prost(message, optional, tag = "6")]
    pub process: Option<ProcessInfo>,
    #[prost(uint64, tag = "7")]
    pub num_range_results: u64,
    #[prost(uint64, tag = "8")]
    pub num_cmdlist_results: u64,
    #[prost(uint64, tag = "9")]
    pub num_graph_results: u64,
}

/// `ProfilerStringTable`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StringTable {
    #[prost(bytes = "vec", repeated, tag = "1")]
    pub strings: Vec<Vec<u8>>,
}

/// `ProcessInfo`: the process a block's results came from.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessInfo {
    #[prost(uint64, optional, tag = "1")]
    pub pid: Option<u64>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub host: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "3")]
    pub name: Option<Vec<u8>>,
}

/// `ReportSessionDetails` (the parts Strobe uses).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SessionDetails {
    #[prost(uint64, optional, tag = "1")]
    pub process_id: Option<u64>,
    #[prost(message, repeated, tag = "6")]
    pub devices: Vec<DeviceAttributes>,
}

/// `DeviceAttributes`: one device's `device__attribute_*` values.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DeviceAttributes {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(message, repeated, tag = "3")]
    pub attributes: Vec<DeviceAttribute>,
}

/// `DeviceAttribute`: a name and a value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DeviceAttribute {
    #[prost(bytes = "vec", optional, tag = "1")]
    pub name: Option<Vec<u8>>,
    #[prost(message, optional, tag = "2")]
    pub value: Option<ProfileMetricValue>,
}

/// `ProfileMetricValue`: one of its value fields is set (the last one on the wire, as a
/// protobuf `oneof` reads).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProfileMetricValue {
    #[prost(oneof = "MetricValue", tags = "1, 2, 3, 4, 5")]
    pub value: Option<MetricValue>,
}

/// The value a `ProfileMetricValue` holds.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum MetricValue {
    #[prost(bytes, tag = "1")]
    Text(Vec<u8>),
    #[prost(float, tag = "2")]
    Float(f32),
    #[prost(double, tag = "3")]
    Double(f64),
    /// `uint32` in the .proto; read as 64 bits so that no bit on the wire is dropped.
    #[prost(uint64, tag = "4")]
    Uint32(u64),
    #[prost(uint64, tag = "5")]
    Uint64(u64),
}

/// `ProfileMetricResult`: a metric's name (a string-table id) and its value. Per-instance
/// value lists (`MetricValueList`) are not read, only noticed: the raw page shows the
/// aggregate.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MetricResult {
    #[prost(uint64, optional, tag = "1")]
    pub name_id: Option<u64>,
    #[prost(message, optional, tag = "2")]
    pub value: Option<ProfileMetricValue>,
    /// Present when it has per-instance values (only those, when `value` is None).
    #[prost(message, optional, tag = "3")]
    pub instances: Option<Unread>,
}

/// A message whose presence is all Strobe needs: its fields are skipped.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Unread {}

/// `Uint64x3`: a grid or block size.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Uint64x3 {
    #[prost(uint64, tag = "1")]
    pub x: u64,
    #[prost(uint64, tag = "2")]
    pub y: u64,
    #[prost(uint64, tag = "3")]
    pub z: u64,
}

impl Uint64x3 {
    pub fn xyz(&self) -> [u64; 3] {
        [self.x, self.y, self.z]
    }
}

/// `ProfileResult`: one kernel launch.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProfileResult {
    #[prost(bytes = "vec", tag = "5")]
    pub mangled: Vec<u8>,
    #[prost(bytes = "vec", tag = "6")]
    pub function: Vec<u8>,
    #[prost(bytes = "vec", tag = "7")]
    pub demangled: Vec<u8>,
    #[prost(message, optional, tag = "10")]
    pub grid: Option<Uint64x3>,
    #[prost(message, optional, tag = "11")]
    pub block: Option<Uint64x3>,
    #[prost(message, repeated, tag = "13")]
    pub metrics: Vec<MetricResult>,
    /// The rules ncu ran on this launch (`RuleResults`).
    #[prost(message, repeated, tag = "19")]
    pub rules: Vec<RuleResult>,
    #[prost(uint64, optional, tag = "22")]
    pub context: Option<u64>,
    #[prost(uint64, optional, tag = "23")]
    pub stream: Option<u64>,
}

/// `RuleResult`: one rule's outcome for a launch. A rule that found nothing has no body.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RuleResult {
    #[prost(bytes = "vec", optional, tag = "1")]
    pub identifier: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub display_name: Option<Vec<u8>>,
    #[prost(message, optional, tag = "3")]
    pub body: Option<RuleResultBody>,
    #[prost(bytes = "vec", optional, tag = "4")]
    pub section_identifier: Option<Vec<u8>>,
}

/// `RuleResultBody`: the rule's items in order.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RuleResultBody {
    #[prost(message, repeated, tag = "1")]
    pub items: Vec<RuleResultBodyItem>,
}

/// `RuleResultBodyItem`: a message with, for an optimisation, its speedup estimate (other
/// item kinds, tables, charts and focus metrics, are not read).
#[derive(Clone, PartialEq, prost::Message)]
pub struct RuleResultBodyItem {
    #[prost(message, optional, tag = "1")]
    pub message: Option<RuleResultMessage>,
    #[prost(message, optional, tag = "10")]
    pub speedup: Option<RuleResultSpeedup>,
}

/// `RuleResultMessage`: the text and its `RuleResultMessageType` (a number, read as such so
/// that a value this reader does not know is kept, not refused).
#[derive(Clone, PartialEq, prost::Message)]
pub struct RuleResultMessage {
    #[prost(bytes = "vec", optional, tag = "1")]
    pub text: Option<Vec<u8>>,
    #[prost(uint64, optional, tag = "2")]
    pub kind: Option<u64>,
    #[prost(bytes = "vec", optional, tag = "4")]
    pub title: Option<Vec<u8>>,
}

/// The speedup estimate of a rule message: its type (1 local, 2 global) and its value, % of
/// the kernel's duration.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RuleResultSpeedup {
    #[prost(uint64, optional, tag = "1")]
    pub kind: Option<u64>,
    #[prost(double, optional, tag = "2")]
    pub value: Option<f64>,
}
