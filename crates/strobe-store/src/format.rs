//! The store file's layout. Everything is little-endian and 8-byte aligned so that columns
//! are cast straight from the map (bytemuck), with no copy and no parse on reopen.
//!
//! ```text
//! [header 4096 B: magic, version, source key, section table]
//! [args blob — streamed while importing]
//! [sections …, each 8-aligned]
//! ```

use bytemuck::{Pod, Zeroable};

pub const MAGIC: [u8; 8] = *b"STROBE\0\x01";
/// Bump on any layout change, or when what an importer writes into a store changes (its load
/// notes included): older stores are then rebuilt, never trusted.
pub const VERSION: u32 = 14;
pub const HEADER_LEN: usize = 4096;
pub const MAX_SECTIONS: usize = 64;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct Header {
    pub magic: [u8; 8],
    pub version: u32,
    pub section_count: u32,
    /// Identifies the source the store was built from (see `cache::SourceKey`).
    pub source_key: [u64; 4],
    /// Total file length, so a truncated file is caught before anything is cast.
    pub file_len: u64,
    /// xxh3 of the section table, so a torn header is caught.
    pub table_hash: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct SectionEntry {
    pub id: u32,
    /// How the section's bytes are stored: `codec::RAW`, or `codec::ZSTD_CHUNKS`.
    pub codec: u32,
    pub offset: u64,
    pub len: u64,
}

/// Section ids.
pub mod sid {
    pub const ARGS: u32 = 1;
    pub const STRING_OFFSETS: u32 = 2;
    pub const STRING_BYTES: u32 = 3;
    pub const LANES_JSON: u32 = 4;
    pub const LANE_INDEX: u32 = 5;
    pub const SPAN_META: u32 = 6;
    pub const SPAN_ARGS: u32 = 7;
    pub const M_START: u32 = 8;
    pub const M_END: u32 = 9;
    pub const M_MAX: u32 = 10;
    pub const M_SPAN: u32 = 11;
    pub const M_DEPTH: u32 = 12;
    pub const LOD_LEVELS: u32 = 13;
    pub const LOD_ITEMS: u32 = 14;
    pub const FLOWS: u32 = 15;
    pub const COUNTER_POINTS_TS: u32 = 16;
    pub const COUNTER_POINTS_VAL: u32 = 17;
    pub const COUNTERS_JSON: u32 = 18;
    pub const META_JSON: u32 = 19;
    pub const NAMES_JSON: u32 = 20;
    pub const DEPTH_MEMBERS: u32 = 21;
    pub const FLOWS_BY_FROM: u32 = 22;
    pub const ARGS_SOURCE: u32 = 23;
}

/// How section `id` is delta-coded when it is compressed (`codec`): sorted times and
/// indices by their differences, records field by field.
pub fn delta_for(id: u32) -> crate::codec::Delta {
    use crate::codec::Delta;
    match id {
        sid::M_START | sid::M_END | sid::M_MAX | sid::COUNTER_POINTS_TS | sid::STRING_OFFSETS => Delta::I64,
        sid::M_SPAN | sid::DEPTH_MEMBERS | sid::FLOWS_BY_FROM => Delta::U32,
        sid::LOD_ITEMS => Delta::records_of(std::mem::size_of::<crate::lod::LodItem>()),
        sid::FLOWS => Delta::records_of(std::mem::size_of::<FlowRec>()),
        sid::SPAN_ARGS => Delta::records_of(std::mem::size_of::<ArgsRef>()),
        _ => Delta::NONE,
    }
}

/// Per-lane ranges into the member, level and span arrays.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct LaneIndex {
    pub member_begin: u64,
    pub member_end: u64,
    pub level_begin: u64,
    pub level_end: u64,
    pub max_depth: u32,
    pub _pad: u32,
    pub min_start: i64,
    pub max_end: i64,
}

/// Per-span fields other than time (time lives in the member columns: span `i` is member
/// `i` of its primary lane).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct SpanMeta {
    pub name: u32,
    pub cat: u32,
    pub lane: u32,
    pub depth: u16,
    pub kind: u8,
    pub flags: u8,
}

/// Set in `ArgsRef::len` when the args live in the source file (ARGS_SOURCE names it), not
/// in the store's ARGS section.
pub const ARGS_IN_SOURCE: u32 = 1 << 31;

/// Where a span's args text is, and the correlation id to show as its first member.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct ArgsRef {
    pub offset: u64,
    /// Length of the text, with `ARGS_IN_SOURCE`.
    pub len: u32,
    /// Nonzero: the args are `{"correlation":N,` and then the text's members. An nsys
    /// kernel's or runtime call's args differ from the next one's by their correlation id
    /// alone: kept apart from the text, the text repeats and is stored once.
    pub correlation: u32,
}

/// A resolved flow between two spans.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct FlowRec {
    pub from: u32,
    pub to: u32,
    /// The source's flow id (or the correlation id for launch links).
    pub id: u64,
    pub cat: u32,
    pub name: u32,
    /// Timestamps of the flow events themselves (the bind points), as in the source.
    pub from_ts: i64,
    pub to_ts: i64,
    /// 0 = explicit flow event, 1 = CPU launch → GPU work by correlation id.
    pub kind: u32,
    pub _pad: u32,
}

pub const FLOW_EXPLICIT: u32 = 0;
pub const FLOW_CORRELATION: u32 = 1;

/// A counter series' place in the points columns; described in COUNTERS_JSON.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CounterSeries {
    pub pid: strobe_model::IdKey,
    /// The GPU the series measures (its memory water level), drawn in that device's group;
    /// `None` for a process's own counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<i64>,
    pub name: String,
    pub series: String,
    pub begin: u64,
    pub end: u64,
}

/// A lane's identity and display name; stored as JSON (lanes are few).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LaneDesc {
    pub kind: strobe_model::LaneKind,
    pub name: String,
    /// Sort key from metadata (`process_sort_index`/`thread_sort_index`), then kind.
    pub sort: i64,
}

/// Process and thread names from metadata (later names win, as in Perfetto).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Names {
    pub processes: Vec<(strobe_model::IdKey, String)>,
    pub threads: Vec<((strobe_model::IdKey, strobe_model::IdKey), String)>,
    pub process_sort: Vec<(strobe_model::IdKey, i64)>,
    pub thread_sort: Vec<((strobe_model::IdKey, strobe_model::IdKey), i64)>,
}
