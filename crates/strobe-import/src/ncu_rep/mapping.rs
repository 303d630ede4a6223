//! Decoded report messages → `strobe_model::ncu::NcuReport`, laid out as ncu's
//! `--page raw` export lays them out (one launch per kernel result, one entry per metric).
//!
//! Launch columns: `ID` = the result's position in the file; `Kernel Name` = the demangled
//! name (else the function name, for `extern "C"` kernels) with the casts on template
//! literals dropped (`<(int)128, (bool)0>` → `<128, 0>`, as ncu's CSV, CUPTI and Kineto
//! print them); `Process ID`/`Host Name`/`Process Name` = the block's `ProcessInfo` (the
//! process name as its file name, as ncu prints it); `Context`/`Stream` = the result's
//! `ContextID`/`StreamID`; `Block Size`/`Grid Size` = `BlockSize`/`GridSize`; `Device` =
//! `device__attribute_device_index` (else `launch__device_id`); `CC` = the device's
//! `compute_capability_major.minor`.
//!
//! Metrics: every `ProfileMetricResult` whose name is a metric id (names with a `:`, ncu's
//! `breakdown:`/`group:` lists, are not), plus the device's `device__attribute_*` values
//! from the session details when a result lacks them. As in the raw page, every launch has
//! every metric any launch has (without a value where it has none).
//!
//! Rules: the result's `RuleResult`s, one `NcuRule` per message (`rules`), which the raw
//! page leaves out and the details page prints.

use super::framing::{err, Result};
use super::messages::{text, MetricValue, ProcessInfo, ProfileResult, SessionDetails};
use crate::ncu_csv::parse_number;
use std::collections::{BTreeMap, BTreeSet};
use strobe_model::ncu::{NcuLaunch, NcuLayout, NcuMetric, NcuReport};

/// One kernel result, the process its block belongs to, and the result's absolute offset
/// (errors about its contents name it).
pub struct Decoded {
    pub result: ProfileResult,
    pub process: Option<ProcessInfo>,
    pub offset: usize,
}

/// A device of the session details: its id and its named attribute values.
struct Device {
    id: u64,
    attributes: Vec<(String, MetricValue)>,
}

/// Every session's devices, each attribute that has both a name and a value.
fn devices(sessions: Vec<SessionDetails>) -> Vec<Device> {
    let all = sessions.into_iter().flat_map(|s| s.devices);
    all.map(|d| Device {
        id: d.id,
        attributes: d.attributes.into_iter().filter_map(|a| Some((text(a.name?), a.value?.value?))).collect(),
    })
    .collect()
}

pub fn report(results: Vec<Decoded>, strings: &[String], sessions: Vec<SessionDetails>) -> Result<NcuReport> {
    let session_pid = sessions.iter().find_map(|s| s.process_id);
    let devices = devices(sessions);
    let mut launches = Vec::with_capacity(results.len());
    for (i, d) in results.into_iter().enumerate() {
        launches.push(launch(i as u64, d, strings, &devices, session_pid)?);
    }
    // The raw page is a table: a launch without some metric has an empty cell.
    let all: BTreeSet<String> = launches.iter().flat_map(|l| l.metrics.keys().cloned()).collect();
    for l in &mut launches {
        for name in &all {
            if !l.metrics.contains_key(name) {
                let unit = unit_of(name).to_string();
                l.metrics
                    .insert(name.clone(), NcuMetric { value: None, unit, raw: String::new(), raw_unit: String::new() });
            }
        }
    }
    Ok(NcuReport { layout: NcuLayout::Raw, launches })
}

fn launch(id: u64, d: Decoded, strings: &[String], devices: &[Device], session_pid: Option<u64>) -> Result<NcuLaunch> {
    let r = d.result;
    let mut metrics = BTreeMap::new();
    for m in &r.metrics {
        let name_id = m.name_id.unwrap_or(u64::MAX);
        let Some(name) = usize::try_from(name_id).ok().and_then(|i| strings.get(i)) else {
            return err(
                d.offset,
                format!(
                    "kernel result: metric name id {name_id} is beyond the report's string table ({} strings)",
                    strings.len()
                ),
            );
        };
        if name.contains(':') {
            continue;
        }
        // ncu prints `no data` for a metric with neither a value nor instance values.
        let empty = if m.instances.is_some() { "" } else { "no data" };
        let value = m.value.as_ref().and_then(|v| v.value.as_ref());
        metrics.entry(name.clone()).or_insert_with(|| metric(name, value, empty));
    }
    let num = |k: &str| metrics.get(k).and_then(|m: &NcuMetric| m.value);
    let device = num("device__attribute_device_index").or_else(|| num("launch__device_id"));
    // Device attributes the result does not carry, from the session's device list.
    let dev = match device {
        Some(d) => devices.iter().find(|x| x.id as f64 == d),
        None if devices.len() == 1 => devices.first(),
        None => None,
    };
    if let Some(dev) = dev {
        for (name, v) in &dev.attributes {
            if !name.contains(':') {
                metrics.entry(name.clone()).or_insert_with(|| metric(name, Some(v), ""));
            }
        }
    }
    let num = |k: &str| metrics.get(k).and_then(|m: &NcuMetric| m.value);
    let device = device.or_else(|| dev.map(|d| d.id as f64));
    let cc =
        match (num("device__attribute_compute_capability_major"), num("device__attribute_compute_capability_minor")) {
            (Some(a), Some(b)) => format!("{a}.{b}"),
            _ => String::new(),
        };
    let p = d.process.unwrap_or_default();
    let name = if !r.demangled.is_empty() {
        drop_literal_casts(&text(r.demangled))
    } else if !r.function.is_empty() {
        text(r.function)
    } else {
        text(r.mangled)
    };
    let process = p.name.map(text);
    Ok(NcuLaunch {
        id,
        name,
        process_id: p.pid.or(session_pid).and_then(|v| i64::try_from(v).ok()),
        process: process.as_deref().map(file_name).unwrap_or_default().to_string(),
        host: p.host.map(text).unwrap_or_default(),
        device: device.filter(|v| v.fract() == 0.0 && *v >= 0.0 && *v <= u32::MAX as f64).map(|v| v as u32),
        cc,
        context: r.context.and_then(|v| i64::try_from(v).ok()),
        stream: r.stream.and_then(|v| i64::try_from(v).ok()),
        grid: r.grid.as_ref().map(|g| g.xyz()),
        block: r.block.as_ref().map(|b| b.xyz()),
        kernel_time: None,
        metrics,
        rules: super::rules::rules(r.rules),
    })
}

/// `/usr/bin/python3.12` → `python3.12` (ncu's `Process Name` column).
fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// A metric in base units. The report stores values in base units and no unit names, so
/// `unit` comes from the metric name (`unit_of`) and `raw_unit` stays empty.
fn metric(name: &str, v: Option<&MetricValue>, empty: &str) -> NcuMetric {
    let (value, raw) = match v {
        None => (None, empty.to_string()),
        // Text values: a number only where the text is one (as the CSV path reads it).
        Some(MetricValue::Text(b)) => {
            let s = String::from_utf8_lossy(b);
            (parse_number(&s), s.into_owned())
        }
        Some(MetricValue::Float(f)) => (Some(f64::from(*f)), number_text(f64::from(*f))),
        Some(MetricValue::Double(f)) => (Some(*f), number_text(*f)),
        Some(MetricValue::Uint32(u) | MetricValue::Uint64(u)) => (Some(*u as f64), u.to_string()),
    };
    NcuMetric { value: value.filter(|v| v.is_finite()), unit: unit_of(name).to_string(), raw, raw_unit: String::new() }
}

/// A value's text; NaN and infinities as ncu prints them (printf's `nan`, `-nan`, `inf`), not as Rust does.
fn number_text(v: f64) -> String {
    match v {
        v if v.is_nan() => if v.is_sign_negative() { "-nan" } else { "nan" }.into(),
        v if v.is_infinite() => if v > 0.0 { "inf" } else { "-inf" }.into(),
        v => v.to_string(),
    }
}

/// `<(int)128, (unsigned long)4, (bool)0>` → `<128, 4, 0>`: a parenthesised integral type
/// right before a number is the demangler's spelling of a template literal's type.
pub fn drop_literal_casts(name: &str) -> String {
    const TYPES: [&str; 13] = [
        "int",
        "unsigned int",
        "long",
        "unsigned long",
        "long long",
        "unsigned long long",
        "short",
        "unsigned short",
        "char",
        "signed char",
        "unsigned char",
        "bool",
        "unsigned",
    ];
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(i) = rest.find('(') {
        out.push_str(&rest[..i]);
        let tail = &rest[i + 1..];
        let cast = TYPES.iter().find_map(|t| {
            let after = tail.strip_prefix(t)?.strip_prefix(')')?;
            after.starts_with(|c: char| c.is_ascii_digit() || c == '-').then_some(after)
        });
        match cast {
            Some(after) => rest = after,
            None => {
                out.push('(');
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The base unit of a metric, from ncu's metric naming (`unit__counter.rollup.submetric`,
/// see the Nsight Compute "Metrics Structure" docs), in `strobe_model::ncu`'s spelling.
/// The report holds no unit names (ncu looks them up in its metric database), so this
/// covers only what the name settles: `%` for `.pct_of_peak_*`, `.pct` and `*_pct`; for
/// counters rolled up by `sum`/`avg`/`min`/`max`, the counter's quantity from its name
/// (`bytes` → `byte`, `sectors` → `sector`, `cycles` → `cycle`, `inst` → `inst`,
/// `time_duration` → `ns`), per second (`.per_second`; cycles per second → `hz`) or per
/// cycle (`.per_cycle_*`, `.peak_sustained*`). Anything else (device attributes, launch
/// statistics, ratios, `derived__` metrics, counts of warps or threads, whose units ncu
/// names inconsistently) gets no unit.
pub fn unit_of(name: &str) -> &'static str {
    // PM-sampling metrics carry a `SECTION.Group.` prefix before the metric id.
    let mut parts: Vec<&str> = name.split('.').collect();
    while parts.first().is_some_and(|p| !p.contains("__")) {
        parts.remove(0);
    }
    let Some((unit, counter)) = parts.first().and_then(|p| p.split_once("__")) else { return "" };
    let ok = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !ok(unit) || !ok(counter) {
        return "";
    }
    let rollup = parts.get(1).copied();
    let sub = parts.get(2).copied();
    if counter.ends_with("_pct") || rollup == Some("pct") || sub.is_some_and(|s| s.starts_with("pct_of_peak")) {
        return "%";
    }
    if matches!(unit, "derived" | "device" | "launch") || !matches!(rollup, Some("sum" | "avg" | "min" | "max")) {
        return "";
    }
    let words: Vec<&str> = counter.split('_').collect();
    let quantity =
        [("bytes", "byte"), ("sectors", "sector"), ("cycles", "cycle"), ("inst", "inst"), ("duration", "ns")]
            .iter()
            .find(|(w, _)| words.contains(w) && (*w != "duration" || counter.contains("time_duration")))
            .map(|(_, u)| *u);
    let Some(q) = quantity else { return "" };
    match sub {
        None => q,
        Some("per_second") => match q {
            "cycle" => "hz",
            "byte" => "byte/second",
            "sector" => "sector/second",
            "inst" => "inst/second",
            _ => "",
        },
        Some(s) if s.starts_with("per_cycle") || s.starts_with("peak_sustained") => match q {
            "byte" => "byte/cycle",
            "sector" => "sector/cycle",
            "inst" => "inst/cycle",
            _ => "",
        },
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts() {
        assert_eq!(
            drop_literal_casts("void k<(int)64, (unsigned long)4, (bool)0, (int)-1>(int, float (*)(int))"),
            "void k<64, 4, 0, -1>(int, float (*)(int))"
        );
        assert_eq!(drop_literal_casts("f(int)"), "f(int)");
        assert_eq!(drop_literal_casts("g((int)"), "g((int)");
    }

    #[test]
    fn units() {
        assert_eq!(unit_of("gpu__time_duration.sum"), "ns");
        assert_eq!(unit_of("sm__throughput.avg.pct_of_peak_sustained_elapsed"), "%");
        assert_eq!(unit_of("dram__bytes.sum.per_second"), "byte/second");
        assert_eq!(unit_of("dram__bytes.sum.peak_sustained"), "byte/cycle");
        assert_eq!(unit_of("smsp__cycles_elapsed.avg.per_second"), "hz");
        assert_eq!(unit_of("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed"), "inst/cycle");
        assert_eq!(unit_of("lts__t_sectors.sum"), "sector");
        assert_eq!(unit_of("LTS.TriageCompute.lts__throughput.avg.pct_of_peak_sustained_elapsed"), "%");
        assert_eq!(unit_of("device__attribute_clock_rate"), "");
        assert_eq!(unit_of("launch__block_size"), "");
        assert_eq!(unit_of("sm__warps_active.avg.per_cycle_active"), "");
        assert_eq!(unit_of("smsp__average_warp_latency_per_inst_issued.ratio"), "");
        assert_eq!(unit_of("breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed"), "");
    }
}
