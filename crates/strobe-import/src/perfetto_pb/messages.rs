//! The Perfetto trace messages Strobe reads, as `prost` messages declared by hand from
//! Perfetto's public protos (`protos/perfetto/trace/`: `trace_packet.proto`,
//! `track_event/*.proto`, `interned_data/interned_data.proto`, `clock_snapshot.proto`,
//! `trace_packet_defaults.proto`, `gpu/gpu_render_stage_event.proto`,
//! `gpu/gpu_counter_event.proto`, `gpu/gpu_track_event.proto`,
//! `common/gpu_counter_descriptor.proto`). Only the fields Strobe uses are declared; prost
//! skips the rest unread, so neither `protoc` nor the `.proto` files are needed to build.
//!
//! Text is declared as `bytes`, not `string`: names are for display, so invalid UTF-8 is
//! replaced (`text`) rather than failing the packet as prost's `string` would.

/// A text field's bytes as a string, invalid UTF-8 replaced.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `TracePacket`. The top-level `Trace` is only `repeated TracePacket packet = 1`, walked
/// packet by packet (`packets`) instead of decoded whole.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacket {
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "58")]
    pub timestamp_clock_id: Option<u32>,
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    #[prost(message, optional, tag = "6")]
    pub clock_snapshot: Option<ClockSnapshot>,
    #[prost(message, optional, tag = "11")]
    pub track_event: Option<TrackEvent>,
    #[prost(message, optional, tag = "60")]
    pub track_descriptor: Option<TrackDescriptor>,
    #[prost(message, optional, tag = "52")]
    pub gpu_counter_event: Option<GpuCounterEvent>,
    #[prost(message, optional, tag = "53")]
    pub gpu_render_stage_event: Option<GpuRenderStageEvent>,
    #[prost(message, optional, tag = "43")]
    pub process_descriptor: Option<ProcessDescriptor>,
    #[prost(message, optional, tag = "44")]
    pub thread_descriptor: Option<ThreadDescriptor>,
    #[prost(message, optional, tag = "12")]
    pub interned_data: Option<InternedData>,
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    #[prost(bool, optional, tag = "41")]
    pub incremental_state_cleared: Option<bool>,
    #[prost(message, optional, tag = "59")]
    pub trace_packet_defaults: Option<TracePacketDefaults>,
    /// Packets of a trace compressed by the tracing service: a deflate stream of more
    /// `Trace` packets.
    #[prost(bytes = "vec", optional, tag = "50")]
    pub compressed_packets: Option<Vec<u8>>,
}

pub const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
pub const SEQ_NEEDS_INCREMENTAL_STATE: u32 = 2;

#[derive(Clone, PartialEq, prost::Message)]
pub struct TracePacketDefaults {
    #[prost(uint32, optional, tag = "58")]
    pub timestamp_clock_id: Option<u32>,
    #[prost(message, optional, tag = "11")]
    pub track_event_defaults: Option<TrackEventDefaults>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEventDefaults {
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    #[prost(uint64, repeated, packed = "false", tag = "31")]
    pub extra_counter_track_uuids: Vec<u64>,
    #[prost(uint64, repeated, packed = "false", tag = "45")]
    pub extra_double_counter_track_uuids: Vec<u64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ClockSnapshot {
    #[prost(message, repeated, tag = "1")]
    pub clocks: Vec<Clock>,
    #[prost(uint32, optional, tag = "2")]
    pub primary_trace_clock: Option<u32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Clock {
    #[prost(uint32, optional, tag = "1")]
    pub clock_id: Option<u32>,
    #[prost(uint64, optional, tag = "2")]
    pub timestamp: Option<u64>,
    #[prost(bool, optional, tag = "3")]
    pub is_incremental: Option<bool>,
    #[prost(uint64, optional, tag = "4")]
    pub unit_multiplier_ns: Option<u64>,
}

/// `BuiltinClocks.BOOTTIME`: the default trace clock.
pub const CLOCK_BOOTTIME: u32 = 6;

#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    #[prost(uint64, optional, tag = "5")]
    pub parent_uuid: Option<u64>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub name: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "10")]
    pub static_name: Option<Vec<u8>>,
    #[prost(message, optional, tag = "3")]
    pub process: Option<ProcessDescriptor>,
    #[prost(message, optional, tag = "4")]
    pub thread: Option<ThreadDescriptor>,
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ProcessDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(bytes = "vec", optional, tag = "6")]
    pub process_name: Option<Vec<u8>>,
    #[prost(bytes = "vec", repeated, tag = "8")]
    pub process_labels: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ThreadDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int64, optional, tag = "2")]
    pub tid: Option<i64>,
    #[prost(bytes = "vec", optional, tag = "5")]
    pub thread_name: Option<Vec<u8>>,
    /// Legacy TrackEvents' time base: their `timestamp_delta_us` count from here.
    #[prost(int64, optional, tag = "6")]
    pub reference_timestamp_us: Option<i64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct CounterDescriptor {
    #[prost(int32, optional, tag = "3")]
    pub unit: Option<i32>,
    #[prost(bytes = "vec", optional, tag = "6")]
    pub unit_name: Option<Vec<u8>>,
    #[prost(int64, optional, tag = "4")]
    pub unit_multiplier: Option<i64>,
    #[prost(bool, optional, tag = "5")]
    pub is_incremental: Option<bool>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct TrackEvent {
    #[prost(uint64, repeated, packed = "false", tag = "3")]
    pub category_iids: Vec<u64>,
    #[prost(bytes = "vec", repeated, tag = "22")]
    pub categories: Vec<Vec<u8>>,
    #[prost(uint64, optional, tag = "10")]
    pub name_iid: Option<u64>,
    #[prost(bytes = "vec", optional, tag = "23")]
    pub name: Option<Vec<u8>>,
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    #[prost(int64, optional, tag = "30")]
    pub counter_value: Option<i64>,
    #[prost(double, optional, tag = "44")]
    pub double_counter_value: Option<f64>,
    #[prost(uint64, repeated, packed = "false", tag = "31")]
    pub extra_counter_track_uuids: Vec<u64>,
    #[prost(int64, repeated, packed = "false", tag = "12")]
    pub extra_counter_values: Vec<i64>,
    #[prost(uint64, repeated, packed = "false", tag = "45")]
    pub extra_double_counter_track_uuids: Vec<u64>,
    #[prost(double, repeated, packed = "false", tag = "46")]
    pub extra_double_counter_values: Vec<f64>,
    #[prost(uint64, repeated, packed = "false", tag = "36")]
    pub flow_ids_old: Vec<u64>,
    #[prost(fixed64, repeated, packed = "false", tag = "47")]
    pub flow_ids: Vec<u64>,
    #[prost(uint64, repeated, packed = "false", tag = "42")]
    pub terminating_flow_ids_old: Vec<u64>,
    #[prost(fixed64, repeated, packed = "false", tag = "48")]
    pub terminating_flow_ids: Vec<u64>,
    #[prost(uint64, optional, tag = "52")]
    pub correlation_id: Option<u64>,
    #[prost(message, repeated, tag = "4")]
    pub debug_annotations: Vec<DebugAnnotation>,
    #[prost(int64, optional, tag = "1")]
    pub timestamp_delta_us: Option<i64>,
    #[prost(int64, optional, tag = "16")]
    pub timestamp_absolute_us: Option<i64>,
    #[prost(message, optional, tag = "6")]
    pub legacy_event: Option<LegacyEvent>,
    /// `GpuTrackEvent.gpu_correlation` (an extension of TrackEvent): the render-stage
    /// events a host slice launched.
    #[prost(message, optional, tag = "3000")]
    pub gpu_correlation: Option<GpuCorrelation>,
}

/// `TrackEvent.LegacyEvent`: a Chrome JSON event carried in a TrackEvent (its phase
/// decides what it is when the TrackEvent has no type).
#[derive(Clone, PartialEq, prost::Message)]
pub struct LegacyEvent {
    #[prost(uint64, optional, tag = "1")]
    pub name_iid: Option<u64>,
    #[prost(int32, optional, tag = "2")]
    pub phase: Option<i32>,
    #[prost(int64, optional, tag = "3")]
    pub duration_us: Option<i64>,
}

pub const TYPE_SLICE_BEGIN: i32 = 1;
pub const TYPE_SLICE_END: i32 = 2;
pub const TYPE_INSTANT: i32 = 3;
pub const TYPE_COUNTER: i32 = 4;

#[derive(Clone, PartialEq, prost::Message)]
pub struct GpuCorrelation {
    #[prost(uint64, repeated, packed = "false", tag = "1")]
    pub render_stage_submission_event_ids: Vec<u64>,
    /// The render stages this slice waited on.
    #[prost(uint64, repeated, packed = "false", tag = "2")]
    pub render_stage_wait_event_ids: Vec<u64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct DebugAnnotation {
    #[prost(uint64, optional, tag = "1")]
    pub name_iid: Option<u64>,
    #[prost(bytes = "vec", optional, tag = "10")]
    pub name: Option<Vec<u8>>,
    #[prost(bool, optional, tag = "2")]
    pub bool_value: Option<bool>,
    #[prost(uint64, optional, tag = "3")]
    pub uint_value: Option<u64>,
    #[prost(int64, optional, tag = "4")]
    pub int_value: Option<i64>,
    #[prost(double, optional, tag = "5")]
    pub double_value: Option<f64>,
    #[prost(uint64, optional, tag = "7")]
    pub pointer_value: Option<u64>,
    #[prost(bytes = "vec", optional, tag = "9")]
    pub legacy_json_value: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "6")]
    pub string_value: Option<Vec<u8>>,
    #[prost(uint64, optional, tag = "17")]
    pub string_value_iid: Option<u64>,
    #[prost(message, repeated, tag = "11")]
    pub dict_entries: Vec<DebugAnnotation>,
    #[prost(message, repeated, tag = "12")]
    pub array_values: Vec<DebugAnnotation>,
}

/// One `iid → name` entry of the interned tables that are only that (`EventCategory`,
/// `EventName`, `DebugAnnotationName`, `InternedString`, `InternedComputeArgName`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Interned {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub name: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedData {
    #[prost(message, repeated, tag = "1")]
    pub event_categories: Vec<Interned>,
    #[prost(message, repeated, tag = "2")]
    pub event_names: Vec<Interned>,
    #[prost(message, repeated, tag = "3")]
    pub debug_annotation_names: Vec<Interned>,
    #[prost(message, repeated, tag = "29")]
    pub debug_annotation_string_values: Vec<InternedString>,
    #[prost(message, repeated, tag = "24")]
    pub gpu_specifications: Vec<InternedGpuRenderStageSpecification>,
    #[prost(message, repeated, tag = "47")]
    pub gpu_counter_descriptors: Vec<InternedGpuCounterDescriptor>,
    /// `GpuInternedData.compute_kernels` (an extension of InternedData).
    #[prost(message, repeated, tag = "1000")]
    pub compute_kernels: Vec<InternedComputeKernel>,
    #[prost(message, repeated, tag = "1001")]
    pub compute_arg_names: Vec<Interned>,
}

/// `InternedString`: its text is field 2 as well, but `bytes` named `str`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedString {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub str: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedGpuRenderStageSpecification {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub name: Option<Vec<u8>>,
    /// `RenderStageCategory`: 0 other, 1 graphics, 2 compute.
    #[prost(int32, optional, tag = "4")]
    pub category: Option<i32>,
}

pub const STAGE_COMPUTE: i32 = 2;

#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedComputeKernel {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub name: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "3")]
    pub demangled_name: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct InternedGpuCounterDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub iid: Option<u64>,
    #[prost(message, optional, tag = "2")]
    pub counter_descriptor: Option<GpuCounterDescriptor>,
    #[prost(int32, optional, tag = "3")]
    pub gpu_id: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct GpuCounterDescriptor {
    #[prost(message, repeated, tag = "1")]
    pub specs: Vec<GpuCounterSpec>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct GpuCounterSpec {
    #[prost(uint32, optional, tag = "1")]
    pub counter_id: Option<u32>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub name: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct GpuCounterEvent {
    #[prost(message, optional, tag = "1")]
    pub counter_descriptor: Option<GpuCounterDescriptor>,
    #[prost(uint64, optional, tag = "4")]
    pub counter_descriptor_iid: Option<u64>,
    #[prost(message, repeated, tag = "2")]
    pub counters: Vec<GpuCounter>,
    #[prost(int32, optional, tag = "3")]
    pub gpu_id: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct GpuCounter {
    #[prost(uint32, optional, tag = "1")]
    pub counter_id: Option<u32>,
    #[prost(int64, optional, tag = "2")]
    pub int_value: Option<i64>,
    #[prost(double, optional, tag = "3")]
    pub double_value: Option<f64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct GpuRenderStageEvent {
    #[prost(uint64, optional, tag = "1")]
    pub event_id: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    pub duration: Option<u64>,
    #[prost(uint64, optional, tag = "13")]
    pub hw_queue_iid: Option<u64>,
    #[prost(uint64, optional, tag = "14")]
    pub stage_iid: Option<u64>,
    #[prost(int32, optional, tag = "11")]
    pub gpu_id: Option<i32>,
    #[prost(uint64, optional, tag = "5")]
    pub context: Option<u64>,
    #[prost(message, repeated, tag = "6")]
    pub extra_data: Vec<ExtraData>,
    #[prost(bytes = "vec", optional, tag = "17")]
    pub name: Option<Vec<u8>>,
    #[prost(uint64, optional, tag = "20")]
    pub name_iid: Option<u64>,
    #[prost(uint64, repeated, packed = "false", tag = "18")]
    pub event_wait_ids: Vec<u64>,
    #[prost(uint64, optional, tag = "19")]
    pub kernel_iid: Option<u64>,
    #[prost(message, optional, tag = "21")]
    pub launch: Option<ComputeKernelLaunch>,
    /// Deprecated queue id of old producers (before `hw_queue_iid`).
    #[prost(int32, optional, tag = "3")]
    pub hw_queue_id: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ExtraData {
    #[prost(bytes = "vec", optional, tag = "1")]
    pub name: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub value: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Dim3 {
    #[prost(uint32, optional, tag = "1")]
    pub x: Option<u32>,
    #[prost(uint32, optional, tag = "2")]
    pub y: Option<u32>,
    #[prost(uint32, optional, tag = "3")]
    pub z: Option<u32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ComputeKernelLaunch {
    #[prost(message, optional, tag = "1")]
    pub grid_size: Option<Dim3>,
    #[prost(message, optional, tag = "2")]
    pub workgroup_size: Option<Dim3>,
    #[prost(message, repeated, tag = "3")]
    pub args: Vec<ExtraComputeArg>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ExtraComputeArg {
    #[prost(uint64, optional, tag = "1")]
    pub name_iid: Option<u64>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub name: Option<Vec<u8>>,
    #[prost(int64, optional, tag = "3")]
    pub int_value: Option<i64>,
    #[prost(uint64, optional, tag = "4")]
    pub uint_value: Option<u64>,
    #[prost(double, optional, tag = "5")]
    pub double_value: Option<f64>,
    #[prost(bytes = "vec", optional, tag = "6")]
    pub string_value: Option<Vec<u8>>,
}
