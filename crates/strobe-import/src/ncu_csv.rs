//! Nsight Compute CSV exports → `strobe_model::ncu::NcuReport`.
//!
//! Reads the three layouts ncu writes:
//! - `ncu --csv --page details` (and `--csv --metrics ...`, `--section X` exports): long
//!   form, one row per launch × metric: `"ID","Process ID",...,"Kernel Name",...,"Section
//!   Name",["Body Item Label",]"Metric Name","Metric Unit","Metric Value"[, rule columns]`.
//!   Older versions have `"Kernel Time"` instead of block/grid/device/CC. Rows with a `Rule
//!   Name` are ncu's rule results (`NcuLaunch::rules`).
//! - `ncu --csv --page raw`: wide form, a header row, a units row, one row per launch.
//!
//! Quirks handled: application output and `==PROF==`/`==WARNING==` lines before (or among)
//! the rows, files holding only `==ERROR==` lines (an error quoting them), thousands
//! separators in numbers (`"1,073,741,824"`), rows shorter than the header, kernel names
//! with commas (CSV quoting), and units normalised to base units (see `strobe_model::ncu`).

use crate::ImportError;
use std::collections::BTreeMap;
use std::path::Path;
use strobe_model::ncu::{NcuLaunch, NcuLayout, NcuMetric, NcuReport, NcuRule};

/// Reads an ncu CSV export (`.csv`, `.log`, anything holding one).
pub fn import(path: &Path) -> Result<NcuReport, ImportError> {
    let bytes = std::fs::read(path).map_err(|e| ImportError::io(path, e))?;
    parse(&bytes).map_err(|what| ImportError::bad(path, what))
}

/// An ncu CSV: the first line that is not ncu noise (`==PROF==`, `==WARNING==`, blank) is
/// its header. For `.csv`/`.log`/`.txt` names (`name` lower-cased), application output may
/// come first, and a file of only `==ERROR==` lines counts too (so it gets ncu's clear error,
/// not "unknown").
pub fn sniff(path: &Path, name: &str) -> std::io::Result<bool> {
    use std::io::Read;
    let texty = name.ends_with(".csv") || name.ends_with(".log") || name.ends_with(".txt");
    let mut buf = Vec::new();
    std::fs::File::open(path)?.take(if texty { 1 << 20 } else { 1 << 16 }).read_to_end(&mut buf)?;
    let text = String::from_utf8_lossy(&buf);
    let mut errors = false;
    for line in text.lines() {
        let l = line.trim();
        if l.is_empty() || l.starts_with("==") {
            errors |= l.starts_with("==ERROR==");
            continue;
        }
        if is_header_line(l) {
            return Ok(true);
        }
        if !texty {
            return Ok(false);
        }
    }
    Ok(texty && errors)
}

/// Reads an `.ncu-rep` through `ncu --import FILE --csv --page raw` when `ncu` is on PATH:
/// `ncu_rep::import`'s fallback for report versions the native reader does not know.
pub fn import_rep(path: &Path) -> Result<NcuReport, ImportError> {
    let out =
        std::process::Command::new("ncu").arg("--import").arg(path).args(["--csv", "--page", "raw"]).output().map_err(
            |e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    ImportError::bad(path, rep_help(path))
                } else {
                    ImportError::bad(path, format!("could not run ncu: {e}. {}", rep_help(path)))
                }
            },
        )?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(ImportError::bad(path, format!("ncu --import failed ({}): {}", out.status, err.trim())));
    }
    parse(&out.stdout).map_err(|what| ImportError::bad(path, format!("converted by ncu --import: {what}")))
}

fn rep_help(path: &Path) -> String {
    format!(
        "reading this Nsight Compute report needs the ncu tool, which is not on PATH. Export it as CSV on a machine \
         with Nsight Compute: `ncu --import {} --csv --page raw > kernels.csv` (or `--page details`), then open kernels.csv",
        path.display()
    )
}

/// True when `line` (one line of text) looks like an ncu CSV header.
pub fn is_header_line(line: &str) -> bool {
    let l = line.trim_start_matches('\u{feff}').trim();
    l.starts_with("\"ID\",") && (l.contains("\"Kernel Name\"") || l.contains("\"Metric Name\""))
}

/// True for lines ncu or the application wrote around the CSV rows.
fn is_noise(line: &str) -> bool {
    let l = line.trim_start();
    l.is_empty() || l.starts_with("==")
}

/// Parses the text of an export. Errors are sentences without the file name (the caller
/// adds it).
pub fn parse(bytes: &[u8]) -> Result<NcuReport, String> {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    let Some(h) = lines.iter().position(|l| is_header_line(l)) else {
        let errors: Vec<&str> = lines.iter().map(|l| l.trim()).filter(|l| l.starts_with("==ERROR==")).collect();
        if !errors.is_empty() {
            let shown: Vec<&str> = errors.iter().take(3).copied().collect();
            return Err(format!(
                "ncu wrote no results, only errors ({} line{}): {}",
                errors.len(),
                if errors.len() == 1 { "" } else { "s" },
                shown.join(" | ")
            ));
        }
        return Err("not an Nsight Compute CSV export: no header row (\"ID\",...,\"Kernel Name\",...) found".into());
    };
    // Rows: the header and every later line that is not ncu/application noise. A CSV
    // record never starts with `==`, so dropping those lines cannot split a record.
    let mut body = String::with_capacity(text.len());
    for l in &lines[h..] {
        if !is_noise(l) {
            body.push_str(l.trim_start_matches('\u{feff}'));
            body.push('\n');
        }
    }
    let mut rdr = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(body.as_bytes());
    let mut records = Vec::new();
    for (i, r) in rdr.records().enumerate() {
        let r = r.map_err(|e| format!("CSV row {}: {e}", i + 1))?;
        records.push(r);
    }
    let header: Vec<String> = records[0].iter().map(|s| s.trim().to_string()).collect();
    let col = |name: &str| header.iter().position(|h| h == name);
    let cols = Cols {
        id: col("ID").ok_or("the header has no \"ID\" column")?,
        pid: col("Process ID"),
        process: col("Process Name"),
        host: col("Host Name"),
        name: col("Kernel Name").ok_or("the header has no \"Kernel Name\" column")?,
        context: col("Context"),
        stream: col("Stream"),
        block: col("Block Size"),
        grid: col("Grid Size"),
        device: col("Device"),
        cc: col("CC"),
        kernel_time: col("Kernel Time"),
    };
    let rows = &records[1..];
    let report = if let (Some(mn), Some(mv)) = (col("Metric Name"), col("Metric Value")) {
        let long = Long {
            section: col("Section Name"),
            label: col("Body Item Label"),
            name: mn,
            unit: col("Metric Unit"),
            value: mv,
            rule: RuleCols {
                name: col("Rule Name"),
                kind: col("Rule Type"),
                message: col("Rule Description"),
                speedup_type: col("Estimated Speedup Type"),
                speedup: col("Estimated Speedup"),
            },
        };
        parse_long(&cols, &long, rows)?
    } else {
        parse_wide(&cols, &header, rows)?
    };
    if report.launches.is_empty() {
        return Err("the export has a header but no kernel rows (truncated, or ncu profiled no kernel)".into());
    }
    Ok(report)
}

struct Cols {
    id: usize,
    pid: Option<usize>,
    process: Option<usize>,
    host: Option<usize>,
    name: usize,
    context: Option<usize>,
    stream: Option<usize>,
    block: Option<usize>,
    grid: Option<usize>,
    device: Option<usize>,
    cc: Option<usize>,
    kernel_time: Option<usize>,
}

struct Long {
    section: Option<usize>,
    label: Option<usize>,
    name: usize,
    unit: Option<usize>,
    value: usize,
    rule: RuleCols,
}

/// The rule columns of a details export (`--print-details all` adds them; older exports
/// lack the speedup ones).
struct RuleCols {
    name: Option<usize>,
    kind: Option<usize>,
    message: Option<usize>,
    speedup_type: Option<usize>,
    speedup: Option<usize>,
}

/// A rule row's rule, if the row is one (its `Rule Name` is set).
fn rule_of(l: &Long, r: &csv::StringRecord) -> Option<NcuRule> {
    let c = &l.rule;
    let name = field(r, c.name);
    if name.is_empty() {
        return None;
    }
    let speedup_type = Some(field(r, c.speedup_type)).filter(|s| !s.is_empty()).map(str::to_string);
    Some(NcuRule {
        name: name.to_string(),
        section: field(r, l.section).to_string(),
        kind: field(r, c.kind).to_string(),
        message: field(r, c.message).to_string(),
        speedup_type,
        speedup_pct: parse_number(field(r, c.speedup)),
    })
}

fn field(r: &csv::StringRecord, i: Option<usize>) -> &str {
    i.and_then(|i| r.get(i)).map(str::trim).unwrap_or("")
}

/// A launch's fixed columns, from its first row.
fn launch_of(c: &Cols, r: &csv::StringRecord, id: u64) -> NcuLaunch {
    let int = |i: Option<usize>| parse_number(field(r, i)).filter(|v| v.fract() == 0.0).map(|v| v as i64);
    NcuLaunch {
        id,
        name: field(r, Some(c.name)).to_string(),
        process_id: int(c.pid),
        process: field(r, c.process).to_string(),
        host: field(r, c.host).to_string(),
        device: int(c.device).and_then(|v| u32::try_from(v).ok()),
        cc: field(r, c.cc).to_string(),
        context: int(c.context),
        stream: int(c.stream),
        grid: parse_dim3(field(r, c.grid)),
        block: parse_dim3(field(r, c.block)),
        kernel_time: Some(field(r, c.kernel_time)).filter(|s| !s.is_empty()).map(str::to_string),
        metrics: BTreeMap::new(),
        rules: Vec::new(),
    }
}

fn parse_id(s: &str, row: usize) -> Result<u64, String> {
    let t = s.trim().replace(',', "");
    t.parse::<u64>().map_err(|_| format!("row {row}: launch ID {s:?} is not a number"))
}

fn parse_long(c: &Cols, l: &Long, rows: &[csv::StringRecord]) -> Result<NcuReport, String> {
    let mut launches: Vec<NcuLaunch> = Vec::new();
    let mut index: BTreeMap<u64, usize> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        let id_text = field(r, Some(c.id));
        if id_text.is_empty() {
            continue;
        }
        let id = parse_id(id_text, i + 2)?;
        let k = *index.entry(id).or_insert_with(|| {
            launches.push(launch_of(c, r, id));
            launches.len() - 1
        });
        let launch = &mut launches[k];
        if launch.name.is_empty() {
            launch.name = field(r, Some(c.name)).to_string();
        }
        if let Some(rule) = rule_of(l, r) {
            launch.rules.push(rule);
        }
        let name = field(r, Some(l.name));
        if name.is_empty() || r.len() <= l.value {
            continue; // a rule row, or a row cut short before its value
        }
        let section = field(r, l.section);
        let label = field(r, l.label);
        let raw_unit = field(r, l.unit);
        let raw = field(r, Some(l.value));
        let m = metric(raw, raw_unit);
        let key = match canonical(section, label, name, &m.unit) {
            Some(k) => k,
            None if name.contains("__") => name.to_string(),
            None if label.is_empty() => format!("{section}/{name}"),
            None => format!("{section}/{label}/{name}"),
        };
        // Launch statistics give block/grid totals in older exports.
        if section == "Launch Statistics" {
            if let Some(v) = m.value.filter(|v| v.fract() == 0.0 && *v >= 0.0) {
                if name == "Block Size" && launch.block.is_none() {
                    launch.block = Some([v as u64, 1, 1]);
                }
                if name == "Grid Size" && launch.grid.is_none() {
                    launch.grid = Some([v as u64, 1, 1]);
                }
            }
        }
        launch.metrics.entry(key).or_insert(m);
    }
    Ok(NcuReport { layout: NcuLayout::Details, launches })
}

fn parse_wide(c: &Cols, header: &[String], rows: &[csv::StringRecord]) -> Result<NcuReport, String> {
    let fixed: Vec<usize> = [
        Some(c.id),
        c.pid,
        c.process,
        c.host,
        Some(c.name),
        c.context,
        c.stream,
        c.block,
        c.grid,
        c.device,
        c.cc,
        c.kernel_time,
    ]
    .into_iter()
    .flatten()
    .collect();
    // The units row: ID empty. Absent in some exports (then no units).
    let (units, data) = match rows.first() {
        Some(r) if field(r, Some(c.id)).is_empty() => (Some(r), &rows[1..]),
        _ => (None, rows),
    };
    // NVTX columns (`thread Domain:...`) hold text, not metrics: keep only metric-like ids.
    let metric_cols: Vec<(usize, &str)> = header
        .iter()
        .enumerate()
        .filter(|(i, h)| !fixed.contains(i) && h.contains("__"))
        .map(|(i, h)| (i, h.as_str()))
        .collect();
    let mut launches = Vec::new();
    for (i, r) in data.iter().enumerate() {
        let id_text = field(r, Some(c.id));
        if id_text.is_empty() {
            continue;
        }
        let id = parse_id(id_text, i + 2 + units.is_some() as usize)?;
        let mut launch = launch_of(c, r, id);
        for &(col, name) in &metric_cols {
            let Some(raw) = r.get(col) else { break }; // short row
            let raw_unit = units.map(|u| field(u, Some(col))).unwrap_or("");
            launch.metrics.insert(name.to_string(), metric(raw.trim(), raw_unit));
        }
        launches.push(launch);
    }
    Ok(NcuReport { layout: NcuLayout::Raw, launches })
}

fn metric(raw: &str, raw_unit: &str) -> NcuMetric {
    let (factor, unit) = normalise_unit(raw_unit);
    NcuMetric {
        value: parse_number(raw).map(|v| v * factor),
        unit,
        raw: raw.to_string(),
        raw_unit: raw_unit.to_string(),
    }
}

/// `"1,073,741,824"` → 1073741824; `n/a`, `(64, 1, 1)` and text → None.
pub fn parse_number(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    let t: String = t.chars().filter(|&ch| ch != ',').collect();
    let ok = t.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'));
    if !ok || !t.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// `(64, 1, 1)` → [64, 1, 1]; `128` → [128, 1, 1].
fn parse_dim3(s: &str) -> Option<[u64; 3]> {
    let t = s.trim().trim_start_matches('(').trim_end_matches(')');
    if t.is_empty() {
        return None;
    }
    let parts: Vec<&str> = t.split(',').map(str::trim).collect();
    let n = |p: &str| p.parse::<u64>().ok();
    match parts.as_slice() {
        [x, y, z] => Some([n(x)?, n(y)?, n(z)?]),
        [x] => Some([n(x)?, 1, 1]),
        _ => None,
    }
}

/// Decimal prefix factor of a unit word and the word without it.
fn split_prefix<'a>(word: &'a str, bases: &[&str]) -> Option<(f64, &'a str)> {
    let lower = word.to_ascii_lowercase();
    if bases.contains(&lower.as_str()) {
        return Some((1.0, word));
    }
    let mut chars = word.chars();
    let p = chars.next()?;
    let rest = chars.as_str();
    let f = match p {
        'K' | 'k' => 1e3,
        'M' => 1e6,
        'G' => 1e9,
        'T' => 1e12,
        'P' => 1e15,
        _ => return None,
    };
    bases.contains(&rest.to_ascii_lowercase().as_str()).then_some((f, rest))
}

/// Time unit word → nanoseconds per unit.
fn time_ns(word: &str) -> Option<f64> {
    Some(match word {
        "ns" | "nsecond" | "nseconds" => 1.0,
        "us" | "usecond" | "useconds" | "µs" => 1e3,
        "ms" | "msecond" | "mseconds" => 1e6,
        "s" | "second" | "seconds" | "sec" => 1e9,
        _ => return None,
    })
}

/// Converts an ncu unit to (factor to base units, base unit name).
pub fn normalise_unit(unit: &str) -> (f64, String) {
    let u = unit.trim();
    if u.is_empty() {
        return (1.0, String::new());
    }
    if u == "%" {
        return (1.0, "%".into());
    }
    let (num, den) = match u.split_once('/') {
        Some((a, b)) => (a.trim(), Some(b.trim())),
        None => (u, None),
    };
    // Numerator.
    let (mut factor, mut base) = if let Some(ns) = time_ns(num) {
        (ns, "ns".to_string())
    } else if let Some(b) = binary_bytes(num) {
        (b, "byte".to_string())
    } else if let Some((f, _)) = split_prefix(num, &["byte", "bytes", "b"]) {
        (f, "byte".to_string())
    } else if let Some((f, _)) = split_prefix(num, &["hz"]) {
        (f, "hz".to_string())
    } else if let Some((f, w)) = split_prefix(
        num,
        &["inst", "cycle", "cycles", "sector", "sectors", "request", "requests", "warp", "thread", "flop", "op"],
    ) {
        (f, w.to_ascii_lowercase())
    } else {
        (1.0, num.to_string())
    };
    if let Some(den) = den {
        if let Some(ns) = time_ns(den) {
            // A rate: per second.
            factor *= 1e9 / ns;
            if base == "ns" {
                base = "ns/second".into();
            } else if base == "cycle" || base == "cycles" {
                base = "hz".into();
            } else {
                base.push_str("/second");
            }
            return (factor, base);
        }
        if base == "ns" {
            // e.g. "usecond/block": keep the denominator, time in ns.
            return (factor, format!("ns/{den}"));
        }
        base.push('/');
        base.push_str(den);
    }
    (factor, base)
}

fn binary_bytes(w: &str) -> Option<f64> {
    Some(match w {
        "KiB" | "Kibyte" => 1024.0,
        "MiB" | "Mibyte" => 1024.0 * 1024.0,
        "GiB" | "Gibyte" => 1024.0 * 1024.0 * 1024.0,
        "TiB" | "Tibyte" => 1024f64.powi(4),
        _ => return None,
    })
}

/// Details-page display names → ncu metric ids (from ncu's section files: SpeedOfLight,
/// SpeedOfLight_RooflineChart, MemoryWorkloadAnalysis; and the 2019–2020 names `SM [%]`,
/// `Memory [%]`, `SOL FB`, ...).
fn canonical(section: &str, _label: &str, name: &str, unit: &str) -> Option<String> {
    let is_pct = unit == "%";
    let roofline = section.contains("Roofline");
    let id = match name {
        "Duration" => "gpu__time_duration.sum",
        "Compute (SM) Throughput" | "Compute (SM) [%]" | "SM [%]" if is_pct => {
            "sm__throughput.avg.pct_of_peak_sustained_elapsed"
        }
        "Memory Throughput" | "Memory [%]" if is_pct => {
            "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
        }
        "Memory Throughput" | "DRAM Bandwidth" if unit == "byte/second" => "dram__bytes.sum.per_second",
        "DRAM Throughput" | "SOL FB" | "SOL DRAM" if is_pct => "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        "L1/TEX Cache Throughput" | "SOL TEX" | "SOL L1/TEX Cache" if is_pct => {
            "l1tex__throughput.avg.pct_of_peak_sustained_active"
        }
        "L2 Cache Throughput" | "SOL L2" if is_pct => "lts__throughput.avg.pct_of_peak_sustained_elapsed",
        "SM Frequency" if roofline => "smsp__cycles_elapsed.avg.per_second",
        "SM Frequency" => "sm__cycles_elapsed.avg.per_second",
        "DRAM Frequency" | "Memory Frequency" => "dram__cycles_elapsed.avg.per_second",
        "Elapsed Cycles" => "gpc__cycles_elapsed.max",
        "SM Active Cycles" => "sm__cycles_active.avg",
        "Theoretical DRAM Bytes Accessible" => "dram__bytes.sum.peak_sustained",
        // Occupancy, Launch Statistics and Memory Workload Analysis: the metrics their
        // section files show under these names.
        "Theoretical Occupancy" if is_pct => "sm__maximum_warps_per_active_cycle_pct",
        "Achieved Occupancy" if is_pct => "sm__warps_active.avg.pct_of_peak_sustained_active",
        "Block Limit Registers" => "launch__occupancy_limit_registers",
        "Block Limit Shared Mem" => "launch__occupancy_limit_shared_mem",
        "Block Limit Warps" => "launch__occupancy_limit_warps",
        "Block Limit SM" => "launch__occupancy_limit_blocks",
        "Block Limit Barriers" => "launch__occupancy_limit_barriers",
        "Registers Per Thread" => "launch__registers_per_thread",
        "Waves Per SM" => "launch__waves_per_multiprocessor",
        "Dynamic Shared Memory Per Block" => "launch__shared_mem_per_block_dynamic",
        "Static Shared Memory Per Block" => "launch__shared_mem_per_block_static",
        "Driver Shared Memory Per Block" => "launch__shared_mem_per_block_driver",
        "L1/TEX Hit Rate" if is_pct => "l1tex__t_sector_hit_rate.pct",
        "L2 Hit Rate" if is_pct => "lts__t_sector_hit_rate.pct",
        _ => return roofline_name(name),
    };
    Some(id.to_string())
}

/// `Predicated-On FFMA Thread Instructions Executed Per Cycle` and friends.
fn roofline_name(name: &str) -> Option<String> {
    let ops = ["FADD", "FMUL", "FFMA", "DADD", "DMUL", "DFMA", "HADD", "HMUL", "HFMA"];
    let op = ops.iter().find(|op| name.contains(&format!("Predicated-On {op} ")))?;
    let lo = op.to_ascii_lowercase();
    if name.starts_with("Theoretical ") {
        if name.ends_with("Thread Instructions Executed") {
            return Some(format!("sm__sass_thread_inst_executed_op_{lo}_pred_on.sum.peak_sustained"));
        }
        if name.ends_with("Operations") {
            let x = if lo == "hfma" { 4 } else { 2 };
            return Some(format!("derived__sm__sass_thread_inst_executed_op_{lo}_pred_on_x{x}"));
        }
        return None;
    }
    if name.ends_with("Thread Instructions Executed Per Cycle") {
        return Some(format!("smsp__sass_thread_inst_executed_op_{lo}_pred_on.sum.per_cycle_elapsed"));
    }
    if name.ends_with("Operations Per Cycle") {
        let x = if lo == "hfma" { 4 } else { 2 };
        return Some(format!("derived__smsp__sass_thread_inst_executed_op_{lo}_pred_on_x{x}"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(normalise_unit("Gbyte"), (1e9, "byte".into()));
        assert_eq!(normalise_unit("Kbyte"), (1e3, "byte".into()));
        assert_eq!(normalise_unit("MB"), (1e6, "byte".into()));
        assert_eq!(normalise_unit("KB"), (1e3, "byte".into()));
        assert_eq!(normalise_unit("byte"), (1.0, "byte".into()));
        assert_eq!(normalise_unit("us"), (1e3, "ns".into()));
        assert_eq!(normalise_unit("usecond"), (1e3, "ns".into()));
        assert_eq!(normalise_unit("msecond"), (1e6, "ns".into()));
        assert_eq!(normalise_unit("nsecond"), (1.0, "ns".into()));
        assert_eq!(normalise_unit("second"), (1e9, "ns".into()));
        assert_eq!(normalise_unit("Ghz"), (1e9, "hz".into()));
        assert_eq!(normalise_unit("Mhz"), (1e6, "hz".into()));
        assert_eq!(normalise_unit("hz"), (1.0, "hz".into()));
        assert_eq!(normalise_unit("cycle/second"), (1.0, "hz".into()));
        assert_eq!(normalise_unit("cycle/nsecond"), (1e9, "hz".into()));
        assert_eq!(normalise_unit("Gbyte/s"), (1e9, "byte/second".into()));
        assert_eq!(normalise_unit("Tbyte/second"), (1e12, "byte/second".into()));
        assert_eq!(normalise_unit("Kbyte/cycle"), (1e3, "byte/cycle".into()));
        assert_eq!(normalise_unit("inst/cycle"), (1.0, "inst/cycle".into()));
        assert_eq!(normalise_unit("Kbyte/block"), (1e3, "byte/block".into()));
        assert_eq!(normalise_unit("%"), (1.0, "%".into()));
        assert_eq!(normalise_unit("cycle"), (1.0, "cycle".into()));
        assert_eq!(normalise_unit("Minst"), (1e6, "inst".into()));
        assert_eq!(normalise_unit("register/thread"), (1.0, "register/thread".into()));
        assert_eq!(normalise_unit("MiB"), (1048576.0, "byte".into()));
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("1,073,741,824"), Some(1073741824.0));
        assert_eq!(parse_number("39,047.53"), Some(39047.53));
        assert_eq!(parse_number("n/a"), None);
        assert_eq!(parse_number("(64, 1, 1)"), None);
        assert_eq!(parse_number("PolicySpread"), None);
        assert_eq!(parse_dim3("(64, 1, 1)"), Some([64, 1, 1]));
    }

    #[test]
    fn details_with_noise_and_short_rows() {
        let text = "app says hi\n==PROF== Connected to process 1\n==WARNING== something\n\
\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\",\"Rule Name\"\n\
\"0\",\"1\",\"p\",\"h\",\"void f<int, float>(int, float)\",\"1\",\"7\",\"(32, 4, 1)\",\"(224, 1, 1)\",\"0\",\"9.0\",\"GPU Speed Of Light Throughput\",\"Duration\",\"us\",\"6.75\",\n\
\"0\",\"1\",\"p\",\"h\",\"void f<int, float>(int, float)\",\"1\",\"7\",\"(32, 4, 1)\",\"(224, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"dram__bytes_read.sum\",\"Mbyte\",\"1,073.5\"\n\
\"0\",\"1\",\"p\",\"h\",\"void f<int, float>(int, float)\",\"1\",\"7\",\"(32, 4, 1)\",\"(224, 1, 1)\",\"0\",\"9.0\",\"SpeedOfLight\"\n\
==PROF== Disconnected\n";
        let r = parse(text.as_bytes()).unwrap();
        assert_eq!(r.layout, NcuLayout::Details);
        assert_eq!(r.launches.len(), 1);
        let l = &r.launches[0];
        assert_eq!(l.name, "void f<int, float>(int, float)");
        assert_eq!(l.block, Some([32, 4, 1]));
        assert_eq!(l.grid, Some([224, 1, 1]));
        assert_eq!(l.stream, Some(7));
        assert_eq!(l.cc, "9.0");
        assert_eq!(l.value("gpu__time_duration.sum"), Some(6750.0));
        assert_eq!(l.value("dram__bytes_read.sum"), Some(1073.5e6));
    }

    #[test]
    fn errors() {
        let e = parse(b"==ERROR== Option '--section x' did not match any section.\n").unwrap_err();
        assert!(e.contains("only errors"), "{e}");
        assert!(e.contains("did not match"), "{e}");
        let e = parse(b"hello\nworld\n").unwrap_err();
        assert!(e.contains("not an Nsight Compute CSV"), "{e}");
        let e = parse(b"\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Value\"\n").unwrap_err();
        assert!(e.contains("no kernel rows"), "{e}");
    }
}
