//! The XSpace messages (`tsl/profiler/protobuf/xplane.proto`, package `tensorflow.profiler`)
//! as `prost` messages declared by hand, so neither `protoc` nor the `.proto` is needed to
//! build. Field numbers and types are the proto's.
//!
//! The top-level `XSpace` and each plane's lines, nearly all of a file, are walked by hand
//! (`wire`, `lines`): `PlaneHead` leaves the lines out (prost skips the field), and only
//! single events are decoded here, run by run on workers. Text is declared
//! as `bytes`: names are for display, so invalid UTF-8 is replaced (`text`), not refused.

use std::collections::HashMap;

/// A text field's bytes as a string, invalid UTF-8 replaced.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `XPlane` without its lines (field 3, walked by hand where it lies: `lines::plane_lines`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct PlaneHead {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(bytes = "vec", tag = "2")]
    pub name: Vec<u8>,
    #[prost(map = "int64, message", tag = "4")]
    pub event_metadata: HashMap<i64, EventMetadata>,
    #[prost(map = "int64, message", tag = "5")]
    pub stat_metadata: HashMap<i64, StatMetadata>,
    #[prost(message, repeated, tag = "6")]
    pub stats: Vec<Stat>,
}

/// `XEvent`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Event {
    #[prost(int64, tag = "1")]
    pub metadata_id: i64,
    #[prost(oneof = "EventData", tags = "2, 5")]
    pub data: Option<EventData>,
    #[prost(int64, tag = "3")]
    pub duration_ps: i64,
    #[prost(message, repeated, tag = "4")]
    pub stats: Vec<Stat>,
}

/// `XEvent.data`: where the event starts, or (an aggregated event) how often it occurred.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum EventData {
    #[prost(int64, tag = "2")]
    OffsetPs(i64),
    #[prost(int64, tag = "5")]
    NumOccurrences(i64),
}

/// `XStat`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Stat {
    #[prost(int64, tag = "1")]
    pub metadata_id: i64,
    #[prost(oneof = "StatValue", tags = "2, 3, 4, 5, 6, 7")]
    pub value: Option<StatValue>,
}

/// `XStat.value`. A `ref_value` names a stat metadata whose name is the value (XLA stores
/// repeated strings, an op's name, that way).
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum StatValue {
    #[prost(double, tag = "2")]
    Double(f64),
    #[prost(uint64, tag = "3")]
    Uint64(u64),
    #[prost(int64, tag = "4")]
    Int64(i64),
    #[prost(bytes = "vec", tag = "5")]
    Str(Vec<u8>),
    #[prost(bytes = "vec", tag = "6")]
    Bytes(Vec<u8>),
    #[prost(uint64, tag = "7")]
    Ref(u64),
}

/// `XEventMetadata`: an event's name and the stats every occurrence shares.
#[derive(Clone, PartialEq, prost::Message)]
pub struct EventMetadata {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(bytes = "vec", tag = "2")]
    pub name: Vec<u8>,
    #[prost(bytes = "vec", tag = "4")]
    pub display_name: Vec<u8>,
    #[prost(message, repeated, tag = "5")]
    pub stats: Vec<Stat>,
}

/// `XStatMetadata`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StatMetadata {
    #[prost(int64, tag = "1")]
    pub id: i64,
    #[prost(bytes = "vec", tag = "2")]
    pub name: Vec<u8>,
}
