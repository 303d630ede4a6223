//! Sampled GPU metrics (`nsys profile --gpu-metrics-devices=…`): `GPU_METRICS(timestamp,
//! typeId, metricId, value)`, named by `TARGET_INFO_GPU_METRICS(typeId, metricId,
//! metricName)`, become one device counter per GPU and metric (`strobe_model::gpu_metrics`).
//!
//! The GPU of a sample is the low byte of its `typeId`, as Nsight Systems' own GPU-metric
//! recipes read it: an nsys GPU id, turned into the CUDA device id the GPU lanes use where
//! `TARGET_INFO_CUDA_DEVICE` maps one to the other (the device's `nsys_gpu_id`). A metric id
//! is not assumed stable across types, so names are looked up by (typeId, metricId), and by
//! metricId alone only where that id has one name whatever the type.

use super::rows::{FromCells, TableRead};
use super::schema::{int, text, Cells, Schema};
use super::Ctx;
use rusqlite::types::ValueRef;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use strobe_model::{gpu_metrics, DeviceInfo, IdKey};

pub const TABLE: &str = "GPU_METRICS";
pub const NAMES: &str = "TARGET_INFO_GPU_METRICS";
const COLS: [&str; 4] = ["timestamp|rawTimestamp", "?typeId", "metricId", "value"];

/// One sample as read: each cell kept apart so that what is unusable can be counted.
pub struct MetricRow {
    ts: Option<i64>,
    type_id: i64,
    metric: Option<i64>,
    value: Option<f64>,
}

impl FromCells for MetricRow {
    fn from_cells(r: &impl Cells) -> Option<MetricRow> {
        let value = match r.cell(3) {
            ValueRef::Integer(v) => Some(v as f64),
            ValueRef::Real(f) => Some(f),
            ValueRef::Text(t) => std::str::from_utf8(t).ok().and_then(|s| s.trim().parse::<f64>().ok()),
            _ => None,
        };
        Some(MetricRow { ts: int(r, 0), type_id: int(r, 1).unwrap_or(0), metric: int(r, 2), value })
    }
}

/// Names of the metrics: by (typeId, metricId), and by metricId where it has one name.
#[derive(Default)]
struct Names {
    by_type: FxHashMap<(i64, i64), String>,
    by_id: FxHashMap<i64, Option<String>>,
}

impl Names {
    fn read(conn: &rusqlite::Connection, schema: &Schema) -> rusqlite::Result<Names> {
        let mut out = Names::default();
        if !schema.has(NAMES) || !schema.missing(NAMES, &["metricId", "metricName"]).is_empty() {
            return Ok(out);
        }
        let mut st = conn.prepare(&schema.select(NAMES, &["?typeId", "metricId", "metricName"], ""))?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let (Some(id), Some(name)) = (int(r, 1), text(r, 2).filter(|n| !n.trim().is_empty())) else {
                continue;
            };
            if let Some(t) = int(r, 0) {
                out.by_type.insert((t, id), name.clone());
            }
            out.by_id
                .entry(id)
                .and_modify(|n| {
                    if n.as_deref() != Some(name.as_str()) {
                        *n = None;
                    }
                })
                .or_insert(Some(name));
        }
        Ok(out)
    }

    fn get(&self, type_id: i64, id: i64) -> Option<&str> {
        self.by_type.get(&(type_id, id)).or_else(|| self.by_id.get(&id)?.as_ref()).map(|s| s.as_str())
    }
}

/// The device id the lanes use for nsys GPU `gpu`.
fn device_of(devices: &[DeviceInfo], gpu: i64) -> i64 {
    devices
        .iter()
        .find(|d| d.extra.get("nsys_gpu_id").and_then(|v| v.as_i64()) == Some(gpu))
        .map(|d| d.id)
        .unwrap_or(gpu)
}

/// What was read and what could not be used, for the notes.
#[derive(Default)]
struct Tally {
    rows: u64,
    no_time: u64,
    no_metric: u64,
    no_value: u64,
    not_finite: u64,
    other_gpu: u64,
}

/// Whether a `[MHz]` metric's samples are in Hz: Nsight Systems 2025.3 exports its clock
/// metrics (`GPC Clock Frequency [MHz]`) as Hz (1 995 003 000 for 1 995 MHz). No GPU clock
/// reaches 100 GHz, so samples past 100 000 "MHz" are Hz.
fn hz_under_mhz(name: &str, pts: &[(i64, f64)]) -> bool {
    gpu_metrics::unit(name) == "MHz" && pts.iter().any(|p| p.1 >= 1e5)
}

impl<'a> Ctx<'a> {
    /// Reads the export's GPU metrics into device counters; what cannot be used is noted.
    /// A table that cannot be read is a note too (nothing of it is added): the rest of the
    /// export is shown without its metrics.
    pub(super) fn gpu_metrics(&mut self, conn: &rusqlite::Connection, schema: &Schema, devices: &[DeviceInfo]) {
        if let Err(e) = self.read_gpu_metrics(conn, schema, devices) {
            self.load.notes.push(format!("{TABLE} could not be read ({e}): no GPU metrics shown"));
        }
    }

    fn read_gpu_metrics(
        &mut self,
        conn: &rusqlite::Connection,
        schema: &Schema,
        devices: &[DeviceInfo],
    ) -> Result<(), String> {
        if !schema.has(TABLE) {
            return Ok(());
        }
        let missing = schema.missing(TABLE, &COLS);
        if !missing.is_empty() {
            self.load.notes.push(format!(
                "{} has no column {}: its GPU metrics are not shown (not a known nsys layout)",
                schema.name(TABLE),
                missing.join(", ")
            ));
            return Ok(());
        }
        let names = Names::read(conn, schema).map_err(|e| format!("{NAMES}: {e}"))?;
        // the GPUs this process ran on: one rank of a several-process report keeps only theirs
        let own: Option<Vec<i64>> = self.only_pid.map(|_| self.stream_lanes.keys().map(|k| k.0).collect());
        let mut series: BTreeMap<(i64, i64), Vec<(i64, f64)>> = BTreeMap::new();
        let mut t = Tally::default();
        let read = TableRead::new(schema, TABLE, &COLS, None);
        read.scan(self.path, |_, row: Option<MetricRow>| {
            t.rows += 1;
            let Some(r) = row else { return true };
            let (Some(ts), Some(m)) = (r.ts, r.metric) else {
                if r.ts.is_none() {
                    t.no_time += 1;
                } else {
                    t.no_metric += 1;
                }
                return true;
            };
            match r.value {
                None => t.no_value += 1,
                Some(v) if !v.is_finite() => t.not_finite += 1,
                Some(v) => series.entry((r.type_id, m)).or_default().push((ts, v)),
            }
            true
        })?;
        if t.rows == 0 {
            return Ok(());
        }
        if !schema.has(NAMES) {
            self.load.notes.push(format!(
                "{TABLE} has samples but the export has no {NAMES}: its metrics are named by id (`metric 7`)"
            ));
        }
        // (device, name) → points; two types of one GPU naming the same metric are one series
        let mut by_name: BTreeMap<(i64, String), Vec<(i64, f64)>> = BTreeMap::new();
        let mut unnamed: Vec<i64> = Vec::new();
        for ((type_id, m), pts) in series {
            let device = device_of(devices, type_id & 0xFF);
            if own.as_ref().is_some_and(|o| !o.contains(&device)) {
                t.other_gpu += pts.len() as u64;
                continue;
            }
            let name = match names.get(type_id, m) {
                Some(n) => n.to_string(),
                None => {
                    if schema.has(NAMES) && !unnamed.contains(&m) {
                        unnamed.push(m);
                    }
                    format!("metric {m}")
                }
            };
            by_name.entry((device, name)).or_default().extend(pts);
        }
        let mut in_hz: Vec<String> = Vec::new();
        for ((_, name), pts) in by_name.iter_mut() {
            if hz_under_mhz(name, pts) {
                pts.iter_mut().for_each(|p| p.1 /= 1e6);
                if !in_hz.contains(name) {
                    in_hz.push(name.clone());
                }
            }
        }
        if !in_hz.is_empty() {
            self.load.notes.push(format!("{TABLE}: {} hold Hz under a MHz name: shown in MHz", in_hz.join(", ")));
        }
        let kept: u64 = by_name.values().map(|p| p.len() as u64).sum();
        let mut per_gpu: BTreeMap<i64, (usize, u64)> = BTreeMap::new();
        for ((device, name), pts) in by_name {
            let e = per_gpu.entry(device).or_default();
            e.0 += 1;
            e.1 = e.1.max(pts.len() as u64);
            self.b.extend_device_counter(device, IdKey::Str(gpu_metrics::NAME.into()), gpu_metrics::NAME, &name, pts);
        }
        *self.load.by_category.entry(TABLE.to_string()).or_default() += t.rows;
        self.load.events += t.rows;
        for (device, (metrics, samples)) in per_gpu {
            self.load.notes.push(format!(
                "GPU metrics: {metrics} metrics on GPU {device}, up to {samples} samples each (drawn in the GPU's group)"
            ));
        }
        if !unnamed.is_empty() {
            unnamed.sort_unstable();
            let ids: Vec<String> = unnamed.iter().map(|m| m.to_string()).collect();
            self.load.notes.push(format!(
                "{TABLE}: metric ids with no name in {NAMES} ({}): shown as `metric <id>`",
                ids.join(", ")
            ));
        }
        let mut skip = |why: &str, n: u64| {
            if n > 0 {
                *self.load.skipped.entry(format!("{TABLE}: {why}")).or_default() += n;
            }
        };
        skip("sample without a time", t.no_time);
        skip("sample without a metric id", t.no_metric);
        skip("sample without a numeric value", t.no_value);
        skip("sample whose value is NaN or infinite", t.not_finite);
        let bad = t.no_time + t.no_metric + t.no_value + t.not_finite;
        if bad > 0 {
            self.load
                .notes
                .push(format!("{TABLE}: {bad} of {} samples left out (no time, metric id or finite value)", t.rows));
        }
        if t.other_gpu > 0 {
            self.load.notes.push(format!(
                "{TABLE}: {} samples of GPUs this process did not run on left out ({kept} kept)",
                t.other_gpu
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::import_to_memory;
    use rusqlite::Connection;

    /// A small export: two kernels on GPU 0 and the given metric tables (`sql`).
    fn export(sql: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("metrics.sqlite");
        let c = Connection::open(&path).unwrap();
        c.execute_batch(
            "CREATE TABLE StringIds(id INTEGER, value TEXT);
             INSERT INTO StringIds VALUES (1, 'gemm_small'), (2, 'gemm_big');
             CREATE TABLE TARGET_INFO_GPU(id INTEGER, name TEXT, smCount INTEGER, computeMajor INTEGER, computeMinor INTEGER);
             INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3', 132, 9, 0);
             CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL(start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,
                 correlationId INTEGER, globalPid INTEGER, shortName INTEGER);
             INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 5000, 0, 7, 1, 4242 << 24, 1), (6000, 9000, 0, 7, 2, 4242 << 24, 2);",
        )
        .unwrap();
        c.execute_batch(sql).unwrap();
        drop(c);
        (dir, path)
    }

    const NAMES: &str = "CREATE TABLE TARGET_INFO_GPU_METRICS(typeId INTEGER, sourceId INTEGER, typeName TEXT, metricId INTEGER, metricName TEXT);
        INSERT INTO TARGET_INFO_GPU_METRICS VALUES
            (256, 1, 'GPU 0', 1, 'SMs Active [Throughput %]'),
            (256, 1, 'GPU 0', 2, 'DRAM Read Bandwidth [Throughput %]');";

    /// (device, metric, points) of each metric series.
    type Series = (i64, String, Vec<(i64, f64)>);

    fn series(s: &strobe_store::Store) -> Vec<Series> {
        s.counters
            .iter()
            .filter(|c| c.name == strobe_model::gpu_metrics::NAME)
            .map(|c| {
                let (ts, v) = s.counter_points(c);
                (c.device.unwrap(), c.series.clone(), ts.iter().copied().zip(v.iter().copied()).collect())
            })
            .collect()
    }

    #[test]
    fn samples_become_device_series_and_bad_ones_are_noted() {
        let (_d, path) = export(&format!(
            "{NAMES}
             CREATE TABLE GPU_METRICS(rawTimestamp INTEGER, timestamp INTEGER, typeId INTEGER, metricId INTEGER, value INTEGER);
             INSERT INTO GPU_METRICS VALUES
                (0, 1000, 256, 1, 10), (0, 1000, 256, 2, 40), (0, 1000, 256, 9, 3),
                (0, 2000, 256, 1, 90), (0, 2000, 256, 2, 'NaN'), (0, 2000, 256, 9, 4),
                (0, NULL, 256, 1, 50), (0, 3000, 256, 1, 'x');"
        ));
        let s = import_to_memory(&path).unwrap();
        let got = series(&s);
        assert_eq!(
            got,
            vec![
                (0, "DRAM Read Bandwidth [Throughput %]".to_string(), vec![(1000, 40.0)]),
                (0, "SMs Active [Throughput %]".to_string(), vec![(1000, 10.0), (2000, 90.0)]),
                (0, "metric 9".to_string(), vec![(1000, 3.0), (2000, 4.0)]),
            ]
        );
        let notes = s.meta.load.notes.join("\n");
        assert!(notes.contains("metric ids with no name in TARGET_INFO_GPU_METRICS (9)"), "{notes}");
        assert!(notes.contains("GPU_METRICS: 3 of 8 samples left out"), "{notes}");
        let skipped = &s.meta.load.skipped;
        assert_eq!(skipped.get("GPU_METRICS: sample whose value is NaN or infinite"), Some(&1));
        assert_eq!(skipped.get("GPU_METRICS: sample without a time"), Some(&1));
        assert_eq!(skipped.get("GPU_METRICS: sample without a numeric value"), Some(&1));
        assert_eq!(s.meta.load.by_category.get("GPU_METRICS"), Some(&8));
    }

    #[test]
    fn clocks_given_in_hz_under_a_mhz_name_are_shown_in_mhz() {
        let (_d, path) = export(
            "CREATE TABLE TARGET_INFO_GPU_METRICS(typeId INTEGER, sourceId INTEGER, typeName TEXT, metricId INTEGER, metricName TEXT);
             INSERT INTO TARGET_INFO_GPU_METRICS VALUES (256, 1, '', 0, 'GPC Clock Frequency [MHz]'), (256, 1, '', 1, 'SYS Clock Frequency [MHz]');
             CREATE TABLE GPU_METRICS(timestamp INTEGER, typeId INTEGER, metricId INTEGER, value INTEGER);
             INSERT INTO GPU_METRICS VALUES (1000, 256, 0, 1995003000), (2000, 256, 0, 1346754500), (1000, 256, 1, 1650);",
        );
        let s = import_to_memory(&path).unwrap();
        assert_eq!(
            series(&s),
            vec![
                (0, "GPC Clock Frequency [MHz]".to_string(), vec![(1000, 1995.003), (2000, 1346.7545)]),
                (0, "SYS Clock Frequency [MHz]".to_string(), vec![(1000, 1650.0)]),
            ]
        );
        assert!(s.meta.load.notes.iter().any(|n| n.contains("GPC Clock Frequency [MHz] hold Hz")));
    }

    #[test]
    fn no_names_table_names_metrics_by_id() {
        let (_d, path) = export(
            "CREATE TABLE GPU_METRICS(timestamp INTEGER, typeId INTEGER, metricId INTEGER, value INTEGER);
             INSERT INTO GPU_METRICS VALUES (1000, 256, 1, 10), (2000, 256, 1, 20);",
        );
        let s = import_to_memory(&path).unwrap();
        assert_eq!(series(&s), vec![(0, "metric 1".to_string(), vec![(1000, 10.0), (2000, 20.0)])]);
        let notes = s.meta.load.notes.join("\n");
        assert!(notes.contains("has samples but the export has no TARGET_INFO_GPU_METRICS"), "{notes}");
    }

    #[test]
    fn a_table_without_values_is_a_note_and_the_rest_loads() {
        let (_d, path) = export(&format!(
            "{NAMES}
             CREATE TABLE GPU_METRICS(timestamp INTEGER, typeId INTEGER, metricId INTEGER);
             INSERT INTO GPU_METRICS VALUES (1000, 256, 1);"
        ));
        let s = import_to_memory(&path).unwrap();
        assert!(series(&s).is_empty());
        assert!(s.meta.load.notes.iter().any(|n| n.contains("GPU_METRICS has no column value")));
        assert!(!s.lanes.is_empty(), "the kernels still load");
    }

    #[test]
    fn empty_metric_tables_add_nothing() {
        let (_d, path) = export(&format!(
            "{NAMES}
             CREATE TABLE GPU_METRICS(timestamp INTEGER, typeId INTEGER, metricId INTEGER, value INTEGER);"
        ));
        let s = import_to_memory(&path).unwrap();
        assert!(series(&s).is_empty());
        assert!(!s.meta.load.notes.iter().any(|n| n.contains("GPU_METRICS")));
    }
}
