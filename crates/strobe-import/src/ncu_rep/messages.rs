//! The few ncu report messages Strobe reads, decoded by hand from the wire format. Field
//! numbers are those of Nsight Compute's `ProfilerReport.proto`, `ProfilerResultsCommon.proto`,
//! `ProfilerReportCommon.proto` and `ProfilerStringTable.proto`. Fields not listed here
//! (sources, sections, rule results, NVTX state, stacks, ...) are skipped unread.

use super::wire::{Reader, Result};

/// `BlockHeader`.
#[derive(Default)]
pub struct BlockHeader {
    pub num_sources: u64,
    pub num_results: u64,
    pub num_range_results: u64,
    pub num_cmdlist_results: u64,
    pub num_graph_results: u64,
    pub payload_size: u64,
    pub session: Vec<SessionDetails>,
    /// This block's additions to the report's string table.
    pub strings: Vec<String>,
    pub process: Option<ProcessInfo>,
}

/// `ProcessInfo`: the process a block's results came from.
#[derive(Clone, Default)]
pub struct ProcessInfo {
    pub pid: Option<u64>,
    pub host: Option<String>,
    pub name: Option<String>,
}

/// `ReportSessionDetails` (the parts Strobe uses).
#[derive(Default)]
pub struct SessionDetails {
    pub process_id: Option<u64>,
    pub devices: Vec<DeviceAttributes>,
}

/// `DeviceAttributes`: one device's `device__attribute_*` values.
pub struct DeviceAttributes {
    pub id: u64,
    pub attributes: Vec<(String, MetricValue)>,
}

/// `ProfileMetricValue`.
#[derive(Clone, Debug, PartialEq)]
pub enum MetricValue {
    Text(String),
    Float(f32),
    Double(f64),
    Uint(u64),
}

/// `ProfileMetricResult`: a metric's name (a string-table id) and its value. Per-instance
/// value lists (`MetricValueList`) are not read: the raw page shows the aggregate.
pub struct MetricResult {
    pub name_id: u64,
    pub value: Option<MetricValue>,
    /// Whether it has per-instance values (only those, when `value` is None).
    pub has_list: bool,
    pub offset: usize,
}

/// `ProfileResult`: one kernel launch.
#[derive(Default)]
pub struct ProfileResult {
    pub mangled: String,
    pub function: String,
    pub demangled: String,
    pub grid: Option<[u64; 3]>,
    pub block: Option<[u64; 3]>,
    pub metrics: Vec<MetricResult>,
    pub context: Option<u64>,
    pub stream: Option<u64>,
}

pub fn payload_size(mut r: Reader<'_>) -> Result<u64> {
    let mut size = 0;
    while let Some(f) = r.next_field()? {
        if f.number == 5 {
            size = f.varint("BlockHeader")?;
        }
    }
    Ok(size)
}

pub fn block_header(mut r: Reader<'_>) -> Result<BlockHeader> {
    let m = "BlockHeader";
    let mut h = BlockHeader::default();
    while let Some(f) = r.next_field()? {
        match f.number {
            1 => h.num_sources = f.varint(m)?,
            2 => h.num_results = f.varint(m)?,
            3 => h.session.push(session_details(f.message(m)?)?),
            4 => string_table(f.message(m)?, &mut h.strings)?,
            5 => h.payload_size = f.varint(m)?,
            6 => h.process = Some(process_info(f.message(m)?)?),
            7 => h.num_range_results = f.varint(m)?,
            8 => h.num_cmdlist_results = f.varint(m)?,
            9 => h.num_graph_results = f.varint(m)?,
            _ => {}
        }
    }
    Ok(h)
}

fn string_table(mut r: Reader<'_>, out: &mut Vec<String>) -> Result<()> {
    while let Some(f) = r.next_field()? {
        if f.number == 1 {
            out.push(f.string("ProfilerStringTable")?);
        }
    }
    Ok(())
}

fn process_info(mut r: Reader<'_>) -> Result<ProcessInfo> {
    let m = "ProcessInfo";
    let mut p = ProcessInfo::default();
    while let Some(f) = r.next_field()? {
        match f.number {
            1 => p.pid = Some(f.varint(m)?),
            2 => p.host = Some(f.string(m)?),
            3 => p.name = Some(f.string(m)?),
            _ => {}
        }
    }
    Ok(p)
}

fn session_details(mut r: Reader<'_>) -> Result<SessionDetails> {
    let m = "ReportSessionDetails";
    let mut s = SessionDetails::default();
    while let Some(f) = r.next_field()? {
        match f.number {
            1 => s.process_id = Some(f.varint(m)?),
            6 => s.devices.push(device_attributes(f.message(m)?)?),
            _ => {}
        }
    }
    Ok(s)
}

fn device_attributes(mut r: Reader<'_>) -> Result<DeviceAttributes> {
    let m = "DeviceAttributes";
    let mut d = DeviceAttributes { id: 0, attributes: Vec::new() };
    while let Some(f) = r.next_field()? {
        match f.number {
            1 => d.id = f.varint(m)?,
            3 => {
                let mut a = f.message(m)?;
                let (mut name, mut value) = (None, None);
                while let Some(g) = a.next_field()? {
                    match g.number {
                        1 => name = Some(g.string("DeviceAttribute")?),
                        2 => value = metric_value(g.message("DeviceAttribute")?)?,
                        _ => {}
                    }
                }
                if let (Some(n), Some(v)) = (name, value) {
                    d.attributes.push((n, v));
                }
            }
            _ => {}
        }
    }
    Ok(d)
}

/// The value a `ProfileMetricValue` holds (the last one set, as protobuf merges).
fn metric_value(mut r: Reader<'_>) -> Result<Option<MetricValue>> {
    let m = "ProfileMetricValue";
    let mut v = None;
    while let Some(f) = r.next_field()? {
        v = match f.number {
            1 => Some(MetricValue::Text(f.string(m)?)),
            2 => Some(MetricValue::Float(f.float(m)?)),
            3 => Some(MetricValue::Double(f.double(m)?)),
            4 | 5 => Some(MetricValue::Uint(f.varint(m)?)),
            _ => v,
        };
    }
    Ok(v)
}

fn uint64x3(mut r: Reader<'_>) -> Result<[u64; 3]> {
    let mut d = [0u64; 3];
    while let Some(f) = r.next_field()? {
        if (1..=3).contains(&f.number) {
            d[f.number as usize - 1] = f.varint("Uint64x3")?;
        }
    }
    Ok(d)
}

fn metric_result(mut r: Reader<'_>, offset: usize) -> Result<MetricResult> {
    let m = "ProfileMetricResult";
    let mut out = MetricResult { name_id: u64::MAX, value: None, has_list: false, offset };
    while let Some(f) = r.next_field()? {
        match f.number {
            1 => out.name_id = f.varint(m)?,
            2 => out.value = metric_value(f.message(m)?)?,
            3 => out.has_list = true,
            _ => {}
        }
    }
    Ok(out)
}

pub fn profile_result(mut r: Reader<'_>) -> Result<ProfileResult> {
    let m = "ProfileResult";
    let mut p = ProfileResult::default();
    while let Some(f) = r.next_field()? {
        match f.number {
            5 => p.mangled = f.string(m)?,
            6 => p.function = f.string(m)?,
            7 => p.demangled = f.string(m)?,
            10 => p.grid = Some(uint64x3(f.message(m)?)?),
            11 => p.block = Some(uint64x3(f.message(m)?)?),
            13 => p.metrics.push(metric_result(f.message(m)?, f.offset)?),
            22 => p.context = Some(f.varint(m)?),
            23 => p.stream = Some(f.varint(m)?),
            _ => {}
        }
    }
    Ok(p)
}
