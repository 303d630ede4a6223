//! Nsight Systems SQLite import, end to end over the real exports in sample-traces/:
//! every figure is compared with tests/expected/nsys/<stem>.nsys.json, computed from
//! tests/expected/nsys/figures.sql by tests/expected/nsys/regen.sh (SQL, no Rust).
//! Plus hostile inputs: missing tables, corrupt and truncated files, non-nsys SQLite.

mod common;
use strobe_model::gpu_memory;

use common::{cache_files, load_in, sample};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use strobe_model::{flags, IdKey, LaneKind, SpanKind};
use strobe_store::{Store, FLOW_CORRELATION};

fn expected(stem: &str) -> Value {
    common::expected(&format!("nsys/{stem}.nsys.json"))
}

/// A single-count figure; null (table absent) is 0.
fn count(e: &Value, key: &str) -> i64 {
    e[key].as_array().and_then(|rows| rows.first()).and_then(|r| r[0].as_i64()).unwrap_or(0)
}

fn rows<'a>(e: &'a Value, key: &str) -> Vec<&'a Vec<Value>> {
    e[key].as_array().map(|a| a.iter().map(|r| r.as_array().unwrap()).collect()).unwrap_or_default()
}

fn num(k: &IdKey) -> i64 {
    k.as_num().expect("nsys ids are numbers")
}

#[derive(Default, Debug)]
struct Figures {
    kernels: i64,
    kernels_by_device: BTreeMap<i64, (i64, i64)>,
    kernel_names: BTreeMap<String, (i64, i64)>,
    memcpy: i64,
    memcpy_bytes: i64,
    memset: i64,
    api: i64,
    api_dur: i64,
    sync: i64,
    osrt: i64,
    nvtx_ranges: i64,
    nvtx_unclosed: i64,
    nvtx_marks: i64,
    nvtx_names: BTreeMap<String, i64>,
    gpu_lanes: BTreeSet<(i64, i64)>,
    cpu_lanes: BTreeSet<(i64, i64)>,
    nvtx_lanes: usize,
    launch_flows: i64,
}

fn figures(s: &Store) -> Figures {
    let mut f = Figures::default();
    for i in 0..s.span_count() as u32 {
        let m = s.span_meta(i);
        let lane = &s.lanes[m.lane as usize].kind;
        let dur = s.span_end(i) - s.span_start(i);
        let kind = SpanKind::from_u8(m.kind);
        match (kind, lane) {
            (SpanKind::Kernel, LaneKind::GpuStream { device, .. }) => {
                f.kernels += 1;
                let d = f.kernels_by_device.entry(*device).or_default();
                d.0 += 1;
                d.1 += dur;
                let n = f.kernel_names.entry(s.span_name(i).to_string()).or_default();
                n.0 += 1;
                n.1 += dur;
            }
            (SpanKind::Memcpy, LaneKind::GpuStream { .. }) => {
                f.memcpy += 1;
                let a: Value = serde_json::from_str(&s.span_args(i)).unwrap();
                f.memcpy_bytes += a["bytes"].as_i64().unwrap();
            }
            (SpanKind::Memset, LaneKind::GpuStream { .. }) => f.memset += 1,
            (SpanKind::CudaRuntime | SpanKind::CudaDriver, LaneKind::CpuThread { .. }) => {
                f.api += 1;
                f.api_dur += dur;
            }
            (SpanKind::Other, LaneKind::CpuThread { .. }) if s.string(m.cat) == "cuda_sync" => f.sync += 1,
            (SpanKind::OsRuntime, LaneKind::CpuThread { .. }) => f.osrt += 1,
            // CUDA graph node creations: counted against the export by tests/tests/cuda_graphs.rs
            (SpanKind::Other, LaneKind::CpuThread { .. }) if s.string(m.cat) == "cuda_graph" => {}
            (SpanKind::Nvtx, LaneKind::Nvtx { .. }) => {
                f.nvtx_ranges += 1;
                if m.flags as u16 & flags::UNCLOSED != 0 {
                    f.nvtx_unclosed += 1;
                }
                *f.nvtx_names.entry(s.span_name(i).to_string()).or_default() += 1;
            }
            (SpanKind::Instant, LaneKind::Nvtx { .. }) => {
                assert_ne!(m.flags as u16 & flags::INSTANT, 0);
                f.nvtx_marks += 1;
            }
            (k, l) => panic!("span {i} ({}) of kind {k:?} on unexpected lane {l:?}", s.span_name(i)),
        }
    }
    for l in &s.lanes {
        match &l.kind {
            LaneKind::GpuStream { device, stream } => {
                f.gpu_lanes.insert((*device, *stream));
            }
            LaneKind::CpuThread { pid, tid } => {
                f.cpu_lanes.insert((num(pid), num(tid)));
            }
            LaneKind::Nvtx { .. } => f.nvtx_lanes += 1,
            LaneKind::CopyEngine { .. } => {}
            k => panic!("unexpected lane kind {k:?}"),
        }
    }
    f.launch_flows = s.flows().iter().filter(|fl| fl.kind == FLOW_CORRELATION).count() as i64;
    f
}

/// The tables of activity an export can have; without all of them there is nothing to show.
const ACTIVITY_TABLES: [&str; 7] = [
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    "NVTX_EVENTS",
    "OSRT_API",
];

fn check_sample(stem: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(&format!("{stem}.sqlite"));
    let s = load_in(&path, dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let e = expected(stem);
    let f = figures(&s);

    assert_eq!(f.kernels, count(&e, "kernels"), "{stem}: kernels");
    let by_dev: BTreeMap<i64, (i64, i64)> = rows(&e, "kernels_by_device")
        .iter()
        .map(|r| (r[0].as_i64().unwrap(), (r[1].as_i64().unwrap(), r[2].as_i64().unwrap())))
        .collect();
    assert_eq!(f.kernels_by_device, by_dev, "{stem}: kernel count and summed duration per device");
    for r in rows(&e, "top_kernels") {
        let name = r[0].as_str().unwrap();
        assert_eq!(
            f.kernel_names.get(name),
            Some(&(r[1].as_i64().unwrap(), r[2].as_i64().unwrap())),
            "{stem}: kernel {name}"
        );
    }
    assert_eq!(f.memcpy, count(&e, "memcpy"), "{stem}: memcpy");
    let bytes: i64 = rows(&e, "memcpy_by_kind").iter().map(|r| r[4].as_i64().unwrap()).sum();
    assert_eq!(f.memcpy_bytes, bytes, "{stem}: memcpy bytes");
    assert_eq!(f.memset, count(&e, "memset"), "{stem}: memset");
    assert_eq!(f.api, count(&e, "runtime"), "{stem}: runtime/driver calls");
    assert_eq!(f.api_dur, count(&e, "runtime_dur"), "{stem}: runtime/driver summed duration");
    assert_eq!(f.sync, count(&e, "sync_with_thread"), "{stem}: synchronization spans");
    assert_eq!(f.osrt, count(&e, "osrt"), "{stem}: OS runtime calls");
    assert_eq!(f.nvtx_ranges, count(&e, "nvtx_ranges"), "{stem}: NVTX ranges");
    assert_eq!(f.nvtx_unclosed, count(&e, "nvtx_unclosed"), "{stem}: unclosed NVTX ranges");
    assert_eq!(f.nvtx_marks, count(&e, "nvtx_marks"), "{stem}: NVTX marks");
    for r in rows(&e, "nvtx_top") {
        let name = r[0].as_str().unwrap();
        assert_eq!(f.nvtx_names.get(name).copied(), r[1].as_i64(), "{stem}: NVTX range {name}");
    }
    assert_eq!(f.nvtx_lanes as i64, count(&e, "nvtx_threads"), "{stem}: NVTX lanes");
    let launches = count(&e, "flows_kernel") + count(&e, "flows_memcpy") + count(&e, "flows_memset");
    assert_eq!(f.launch_flows, launches, "{stem}: launch flows");

    let mut streams = BTreeSet::new();
    for k in ["streams_kernel", "streams_memcpy", "streams_memset"] {
        for r in rows(&e, k) {
            streams.insert((r[0].as_i64().unwrap(), r[1].as_i64().unwrap()));
        }
    }
    assert_eq!(f.gpu_lanes, streams, "{stem}: GPU stream lanes");
    let mut threads = BTreeSet::new();
    for k in ["threads_runtime", "threads_osrt"] {
        for r in rows(&e, k) {
            threads.insert((r[0].as_i64().unwrap(), r[1].as_i64().unwrap()));
        }
    }
    assert_eq!(f.cpu_lanes, threads, "{stem}: CPU thread lanes");
    for r in rows(&e, "runtime_thread_names") {
        let key = (IdKey::Num(r[0].as_i64().unwrap()), IdKey::Num(r[1].as_i64().unwrap()));
        let got = s.names.threads.iter().find(|(k, _)| *k == key).map(|(_, n)| n.as_str());
        assert_eq!(got, r[2].as_str(), "{stem}: name of thread {key:?}");
    }

    // Devices, session start, schema version.
    let devs: Vec<(i64, String, Option<u32>, Option<u64>)> =
        s.meta.devices.iter().map(|d| (d.id, d.name.clone(), d.sm_count, d.total_memory_bytes)).collect();
    let want: Vec<(i64, String, Option<u32>, Option<u64>)> = rows(&e, "devices")
        .iter()
        .map(|r| {
            (r[0].as_i64().unwrap(), r[1].as_str().unwrap().to_string(), r[2].as_u64().map(|v| v as u32), r[3].as_u64())
        })
        .collect();
    assert_eq!(devs, want, "{stem}: devices");
    let base = rows(&e, "base_time_ns").first().and_then(|r| r[0].as_i64());
    assert_eq!(s.meta.base_time_ns, base, "{stem}: session start");
    let schema =
        rows(&e, "schema_version_new").into_iter().chain(rows(&e, "schema_version_old")).next().map(|r| r[0].clone());
    assert_eq!(s.meta.extra.get("nsys_schema_version"), schema.as_ref(), "{stem}: schema version");

    // Memory counters: points per device, peak and final per (device, memory kind).
    let mut points: BTreeMap<i64, i64> = BTreeMap::new();
    let mut peak_final: BTreeMap<(i64, String), (f64, f64)> = BTreeMap::new();
    // (the sampled GPU metrics have their own test: nsys_gpu_metrics.rs)
    for c in s.counters.iter().filter(|c| c.name != strobe_model::gpu_metrics::NAME) {
        // device memory is the GPU's water level (reserved bytes, drawn in its group)
        let (dev, kind) = match c.device {
            Some(d) => {
                assert_eq!((c.name.as_str(), c.series.as_str()), (gpu_memory::NAME, gpu_memory::RESERVED));
                (d, "Device".to_string())
            }
            None => (c.name.trim_start_matches("GPU ").trim_end_matches(" memory").parse().unwrap(), c.series.clone()),
        };
        let (_, vals) = s.counter_points(c);
        *points.entry(dev).or_default() += vals.len() as i64;
        let peak = vals.iter().copied().fold(f64::MIN, f64::max);
        peak_final.insert((dev, kind), (peak, *vals.last().unwrap()));
    }
    let want_points: BTreeMap<i64, i64> =
        rows(&e, "memory_points").iter().map(|r| (r[0].as_i64().unwrap(), r[1].as_i64().unwrap())).collect();
    assert_eq!(points, want_points, "{stem}: memory counter points");
    let kinds = ["Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static", "Unknown"];
    let want_pf: BTreeMap<(i64, String), (f64, f64)> = rows(&e, "memory_peak_final")
        .iter()
        .map(|r| {
            let k = kinds[r[1].as_i64().unwrap() as usize].to_string();
            ((r[0].as_i64().unwrap(), k), (r[2].as_f64().unwrap(), r[3].as_f64().unwrap()))
        })
        .collect();
    assert_eq!(peak_final, want_pf, "{stem}: memory peak and final");
    // the report's water level peak is the device-memory peak
    for g in strobe_analysis::report::report(&s, 5).gpus {
        let want = want_pf.get(&(g.device, "Device".to_string())).map(|p| p.0 as u64);
        assert_eq!(g.memory.and_then(|m| m.peak_reserved_bytes), want, "{stem}: GPU {} memory peak", g.device);
    }

    // Load summary: rows read per table, rows skipped for their times, rows without an end.
    let mut no_end = 0;
    for t in ACTIVITY_TABLES {
        let times = rows(&e, &format!("times_{t}")).first().map(|r| r.iter().map(|v| v.as_u64().unwrap()).collect());
        let times: Vec<u64> = times.unwrap_or_default();
        let load = &s.meta.load;
        assert_eq!(load.by_category.get(t).copied(), times.first().copied(), "{stem}: rows of {t}");
        let skipped = |why: &str| load.skipped.get(&format!("{t}: {why}")).copied().unwrap_or(0);
        assert_eq!(
            skipped("row without a usable start time"),
            times.get(1).copied().unwrap_or(0),
            "{stem}: {t} no start"
        );
        assert_eq!(
            skipped("row ending before it starts"),
            times.get(2).copied().unwrap_or(0),
            "{stem}: {t} end < start"
        );
        if t != "NVTX_EVENTS" {
            no_end += times.get(3).copied().unwrap_or(0);
        }
    }
    let note = s.meta.load.notes.iter().find(|n| n.contains("rows had no end time"));
    let got: u64 = note.map(|n| n.split(' ').next().unwrap().parse().unwrap()).unwrap_or(0);
    assert_eq!(got, no_end, "{stem}: rows without an end ({note:?})");
    assert_eq!(s.meta.format, strobe_model::SourceFormat::Nsys);
}

#[test]
fn gpt_single_h200() {
    check_sample("nsys_gpt_single");
}

#[test]
fn fuser_h200_many_nvtx_two_processes() {
    check_sample("nsys_fuser_h200");
}

#[test]
fn gpu_metrics_h100_with_its_empty_tables_dropped() {
    check_sample("nsys_gpu_metrics_h100");
}

#[test]
fn cuda_graph_node_trace_h100() {
    check_sample("nsys_cuda_graphs");
}

#[test]
fn pipit_mpi_schema_2_9() {
    check_sample("nsys_pipit_saxpy_mpi");
}

#[test]
fn extrap_memsets_memory_usage_non_utf8_metadata() {
    check_sample("nsys_extrap_concurrent");
    let dir = tempfile::tempdir().unwrap();
    let s = load_in(&sample("nsys_extrap_concurrent.sqlite"), dir.path()).unwrap();
    // EXPORT_USER ends in a Windows-1252 byte: replaced, not an error.
    let user = s.meta.extra["nsys_export_meta"]["EXPORT_USER"].as_str().unwrap();
    assert!(user.starts_with("Alexander Gei") && user.ends_with('\u{FFFD}'), "{user}");
    // Windows adapters without CUDA are not devices.
    assert_eq!(s.meta.devices.len(), 1);
    assert!(s.meta.load.notes.iter().any(|n| n.contains("2 adapter(s) without CUDA")), "{:?}", s.meta.load.notes);
}

#[test]
fn cpu_only_capture_opens_and_says_so() {
    check_sample("nsys_uvmtorch_cpu_only");
    let dir = tempfile::tempdir().unwrap();
    let s = load_in(&sample("nsys_uvmtorch_cpu_only.sqlite"), dir.path()).unwrap();
    assert!(
        s.meta.load.notes.iter().any(|n| n.starts_with("no CUPTI_ACTIVITY_KIND_KERNEL table: CPU-only capture")),
        "{:?}",
        s.meta.load.notes
    );
    assert!(s.lanes.iter().all(|l| !matches!(l.kind, LaneKind::GpuStream { .. })));
}

#[test]
fn gpt_single_names_args_and_flows() {
    let dir = tempfile::tempdir().unwrap();
    let s = load_in(&sample("nsys_gpt_single.sqlite"), dir.path()).unwrap();
    let mut seen = BTreeSet::new();
    for i in 0..s.span_count() as u32 {
        let name = s.span_name(i);
        match s.span_kind(i) {
            SpanKind::Kernel if !seen.contains("kernel") => {
                let a: Value = serde_json::from_str(&s.span_args(i)).unwrap();
                assert_eq!(a["grid"].as_array().unwrap().len(), 3, "{a}");
                assert_eq!(a["block"].as_array().unwrap().len(), 3, "{a}");
                assert!(a["registers per thread"].as_i64().unwrap() > 0, "{a}");
                assert!(a["shared memory"].is_i64() && a["correlation"].is_i64() && a["device"] == 0, "{a}");
                assert_eq!(s.flows_to(i).filter(|f| f.kind == FLOW_CORRELATION).count(), 1);
                seen.insert("kernel");
            }
            SpanKind::Memcpy if name == "Memcpy HtoD (Pinned -> Device)" => {
                let a: Value = serde_json::from_str(&s.span_args(i)).unwrap();
                let bw = a["bytes"].as_f64().unwrap() / (s.span_end(i) - s.span_start(i)) as f64;
                assert!((a["memory bandwidth (GB/s)"].as_f64().unwrap() - bw).abs() < 1e-5, "{a}");
                let from = s.flows_to(i).next().expect("launch flow").from;
                assert_eq!(s.span_name(from), "cudaMemcpyAsync");
                seen.insert("h2d");
            }
            SpanKind::Memcpy if name == "Memcpy DtoH (Device -> Pinned)" => {
                seen.insert("d2h");
            }
            SpanKind::Memset => {
                assert_eq!(name, "Memset (Device)");
                seen.insert("memset");
            }
            SpanKind::CudaRuntime if name == "cudaLaunchKernel" => {
                seen.insert("launch");
            }
            SpanKind::CudaDriver if name == "cuLaunchKernelEx" => {
                seen.insert("driver");
            }
            SpanKind::Nvtx if name == "step_3" => {
                seen.insert("step_3");
            }
            _ => {}
        }
    }
    assert_eq!(seen.len(), 7, "{seen:?}");
    // Copy-engine lanes index the copies by direction.
    assert!(s
        .lanes
        .iter()
        .any(|l| matches!(l.kind, LaneKind::CopyEngine { device: 0, dir: strobe_model::CopyDir::HtoD })));
    assert!(s
        .lanes
        .iter()
        .any(|l| matches!(l.kind, LaneKind::CopyEngine { device: 0, dir: strobe_model::CopyDir::Memset })));
    // The main thread is labelled with its name.
    assert!(
        s.lanes.iter().any(|l| l.name == "CPU · python3 (tid 944)"),
        "{:?}",
        s.lanes.iter().map(|l| &l.name).collect::<Vec<_>>()
    );
    // NVTX ranges nest: forward/backward inside step_<i>.
    let deep = (0..s.span_count() as u32).filter(|&i| s.span_name(i) == "forward").all(|i| s.span_meta(i).depth >= 1);
    assert!(deep);
    // A second load comes from the cache and says the same.
    let again = load_in(&sample("nsys_gpt_single.sqlite"), dir.path()).unwrap();
    assert_eq!(again.span_count(), s.span_count());
    assert_eq!(cache_files(dir.path()).iter().filter(|f| f.ends_with(".strobe")).count(), 1);
}

/// Copies a sample into a fresh dir, applies `sql` to the copy, returns (dir, path).
fn altered(stem: &str, sql: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(format!("{stem}.sqlite"));
    std::fs::copy(sample(&format!("{stem}.sqlite")), &p).unwrap();
    let c = rusqlite::Connection::open(&p).unwrap();
    c.execute_batch(sql).unwrap();
    drop(c);
    (dir, p)
}

/// Loads `path`, expecting an error that names it and mentions `what`; no store left behind.
fn expect_error(path: &Path, what: &str) {
    let cache = tempfile::tempdir().unwrap();
    let err = match load_in(path, cache.path()) {
        Ok(_) => panic!("{} loaded, expected an error about {what}", path.display()),
        Err(e) => e.to_string(),
    };
    assert!(err.contains(&path.display().to_string()), "error does not name the file: {err}");
    assert!(err.to_lowercase().contains(&what.to_lowercase()), "error does not say {what:?}: {err}");
    assert_eq!(cache_files(cache.path()), Vec::<String>::new(), "a failed load left files in the cache dir");
}

#[test]
fn missing_string_ids_is_a_note_and_names_show_as_ids() {
    let (_d, p) = altered("nsys_gpt_single", "DROP TABLE StringIds;");
    let cache = tempfile::tempdir().unwrap();
    let s = load_in(&p, cache.path()).unwrap();
    let f = figures(&s);
    let e = expected("nsys_gpt_single");
    assert_eq!((f.kernels, f.api), (count(&e, "kernels"), count(&e, "runtime")));
    assert!(f.kernel_names.keys().all(|n| n.starts_with("<string ")), "{:?}", f.kernel_names.keys().take(3));
    let notes = &s.meta.load.notes;
    assert!(notes.iter().any(|n| n.starts_with("no StringIds table: names stored as string ids")), "{notes:?}");
}

#[test]
fn missing_gpu_tables_open_as_cpu_only() {
    let (_d, p) = altered(
        "nsys_gpt_single",
        "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY; \
         DROP TABLE CUPTI_ACTIVITY_KIND_MEMSET; DROP TABLE NVTX_EVENTS; DROP TABLE ThreadNames;",
    );
    let cache = tempfile::tempdir().unwrap();
    let s = load_in(&p, cache.path()).unwrap();
    let f = figures(&s);
    let e = expected("nsys_gpt_single");
    assert_eq!((f.kernels, f.memcpy, f.memset, f.nvtx_ranges, f.launch_flows), (0, 0, 0, 0, 0));
    assert_eq!(f.api, count(&e, "runtime"));
    assert_eq!(f.sync, count(&e, "sync_with_thread"));
    let notes = &s.meta.load.notes;
    assert!(notes.iter().any(|n| n.contains("CPU-only capture")), "{notes:?}");
    assert!(
        notes.iter().any(|n| n.contains("tables absent") && n.contains("NVTX_EVENTS") && n.contains("ThreadNames")),
        "{notes:?}"
    );
}

#[test]
fn a_table_without_start_is_noted_and_the_rest_loads() {
    let (_d, p) = altered("nsys_gpt_single", "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN start;");
    let cache = tempfile::tempdir().unwrap();
    let s = load_in(&p, cache.path()).unwrap();
    let f = figures(&s);
    let e = expected("nsys_gpt_single");
    assert_eq!((f.kernels, f.memcpy, f.api), (0, count(&e, "memcpy"), count(&e, "runtime")));
    let notes = &s.meta.load.notes;
    assert!(
        notes.iter().any(|n| n.starts_with("CUPTI_ACTIVITY_KIND_KERNEL has no `start` column: its rows are not shown")),
        "{notes:?}"
    );
}

#[test]
fn a_column_renamed_away_is_a_note() {
    let (_d, p) = altered(
        "nsys_gpt_single",
        "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME COLUMN gridX TO gridXX; \
         ALTER TABLE TARGET_INFO_GPU DROP COLUMN id; ALTER TABLE TARGET_INFO_GPU DROP COLUMN cuDevice; \
         ALTER TABLE TARGET_INFO_SESSION_START_TIME DROP COLUMN utcEpochNs;",
    );
    let cache = tempfile::tempdir().unwrap();
    let s = load_in(&p, cache.path()).unwrap();
    assert_eq!(figures(&s).kernels, count(&expected("nsys_gpt_single"), "kernels"));
    assert!(s.meta.devices.is_empty());
    assert_eq!(s.meta.base_time_ns, None);
    let notes = &s.meta.load.notes;
    for want in [
        "CUPTI_ACTIVITY_KIND_KERNEL has no column gridX: read as empty",
        "TARGET_INFO_GPU has no id, deviceId or cuDevice column",
        "TARGET_INFO_SESSION_START_TIME has no utcEpochNs column",
    ] {
        assert!(notes.iter().any(|n| n.starts_with(want)), "{want:?} not in {notes:?}");
    }
}

#[test]
fn an_export_with_nothing_to_show_is_a_clear_error() {
    let drop: String =
        ACTIVITY_TABLES.iter().chain(&["CUDA_GPU_MEMORY_USAGE_EVENTS"]).map(|t| format!("DROP TABLE {t};")).collect();
    let (_d, p) = altered("nsys_gpt_single", &drop);
    expect_error(&p, "an Nsight Systems export with nothing to show");
}

#[test]
fn cuda_device_ids_name_the_devices() {
    // The process saw nsys GPU 0 as CUDA device 1 and GPU 1 as CUDA device 0.
    let (_d, p) = altered("nsys_gpt_single", "UPDATE TARGET_INFO_CUDA_DEVICE SET cudaId = 1 - cudaId;");
    let c = rusqlite::Connection::open(&p).unwrap();
    let want: Vec<(i64, i64)> = c
        .prepare(
            "SELECT d.cudaId, g.id FROM TARGET_INFO_GPU g JOIN TARGET_INFO_CUDA_DEVICE d ON d.gpuId = g.id ORDER BY 1",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    drop(c);
    let cache = tempfile::tempdir().unwrap();
    let s = load_in(&p, cache.path()).unwrap();
    let got: Vec<(i64, i64)> = s
        .meta
        .devices
        .iter()
        .map(|d| (d.id, d.extra.get("nsys_gpu_id").and_then(|v| v.as_i64()).unwrap_or(d.id)))
        .collect();
    assert_eq!(got, want);
    assert_eq!(want, vec![(0, 1), (1, 0)]);
}

#[test]
fn sqlite_that_is_not_nsys_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("other.sqlite");
    let c = rusqlite::Connection::open(&p).unwrap();
    c.execute_batch("CREATE TABLE songs(title TEXT); INSERT INTO songs VALUES ('a');").unwrap();
    drop(c);
    expect_error(&p, "not an Nsight Systems export");
}

#[test]
fn truncated_file_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("truncated.sqlite");
    let bytes = std::fs::read(sample("nsys_gpt_single.sqlite")).unwrap();
    std::fs::write(&p, &bytes[..bytes.len() / 3]).unwrap();
    expect_error(&p, "cannot read it as an Nsight Systems SQLite export");
}

#[test]
fn garbage_after_the_header_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("garbage.sqlite");
    let mut bytes = b"SQLite format 3\0".to_vec();
    let mut x: u32 = 12345;
    for _ in 0..50_000 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        bytes.push((x >> 16) as u8);
    }
    std::fs::write(&p, &bytes).unwrap();
    expect_error(&p, "cannot read it as an Nsight Systems SQLite export");
}

#[test]
fn overwritten_pages_never_panic_nor_leave_a_store() {
    for (i, at) in [0.25f64, 0.5, 0.75].iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(format!("damaged{i}.sqlite"));
        let mut bytes = std::fs::read(sample("nsys_gpt_single.sqlite")).unwrap();
        let start = (bytes.len() as f64 * at) as usize;
        for b in &mut bytes[start..start + 65536] {
            *b = 0xA5;
        }
        std::fs::write(&p, &bytes).unwrap();
        let cache = tempfile::tempdir().unwrap();
        match load_in(&p, cache.path()) {
            Ok(_) => {}
            Err(e) => {
                assert!(e.to_string().contains(&p.display().to_string()), "{e}");
                assert_eq!(cache_files(cache.path()), Vec::<String>::new());
            }
        }
    }
}

#[test]
fn the_input_file_is_never_written() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("ro.sqlite");
    std::fs::copy(sample("nsys_fuser_h200.sqlite"), &p).unwrap();
    let before = std::fs::read(&p).unwrap();
    let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
    let cache = tempfile::tempdir().unwrap();
    load_in(&p, cache.path()).unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), before);
    assert_eq!(std::fs::metadata(&p).unwrap().modified().unwrap(), mtime);
    assert_eq!(cache_files(dir.path()), vec!["ro.sqlite".to_string()], "no journal, WAL or shm beside the input");
}

#[test]
fn nsys_rep_without_nsys_says_what_to_run() {
    let on_path =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).any(|d| d.join("nsys").is_file())).unwrap_or(false);
    if on_path {
        return; // the export path runs for real there
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("run.nsys-rep");
    std::fs::write(&p, b"not really a report").unwrap();
    expect_error(&p, "nsys export --type sqlite");
}

#[test]
fn cancel_stops_the_import_and_leaves_no_store() {
    let progress = std::sync::Arc::new(strobe_import::Progress::default());
    progress.cancel.store(true, std::sync::atomic::Ordering::Relaxed);
    let cache = tempfile::tempdir().unwrap();
    let opts = strobe_import::LoadOptions {
        cache_dir: Some(cache.path().to_path_buf()),
        no_cache: false,
        progress: Some(progress),
        defer_write: false,
        write_behind: false,
    };
    match strobe_import::load(&sample("nsys_gpt_single.sqlite"), &opts) {
        Err(strobe_import::ImportError::Cancelled { path }) => assert!(path.ends_with("nsys_gpt_single.sqlite")),
        other => panic!("expected Cancelled, got {:?}", other.map(|s| s.span_count())),
    }
    assert_eq!(cache_files(cache.path()), Vec::<String>::new());
}

/// The fixtures of tests/tools/make_nsys_fixtures.py: older, newer and damaged layouts made
/// from the real exports. Each loads with every figure equal to the oracle's (which reads the
/// fixture's own tables) and says what it lacks in the load summary.
fn check_fixture(stem: &str, notes: &[&str]) -> Store {
    check_sample(stem);
    let dir = tempfile::tempdir().unwrap();
    let s = load_in(&sample(&format!("{stem}.sqlite")), dir.path()).unwrap();
    let got = &s.meta.load.notes;
    for want in notes {
        assert!(got.iter().any(|n| n.contains(want)), "{stem}: note {want:?} not in {got:?}");
    }
    s
}

#[test]
fn fixture_versioned_table_names_and_moved_columns() {
    let s = check_fixture(
        "nsys_fx_v2_tables",
        &[
            "CUPTI_ACTIVITY_KIND_KERNEL read from table CUPTI_ACTIVITY_KIND_KERNEL_V2",
            "CUPTI_ACTIVITY_KIND_RUNTIME read from table CUPTI_ACTIVITY_KIND_RUNTIME_V3",
            "NVTX_EVENTS read from table NVTX_EVENTS_V2",
            "CUDA_GPU_MEMORY_USAGE_EVENTS",
            "schema 3.20.3",
        ],
    );
    assert!(s.counters.is_empty());
    assert!(figures(&s).kernels > 0 && figures(&s).launch_flows > 0);
}

#[test]
fn fixture_gpu_info_with_device_id_and_inline_nvtx_text() {
    let s = check_fixture(
        "nsys_fx_old_gpu_info",
        &[
            "Nsight Systems 2022.2.1.31 export, schema 2.9.1",
            "TARGET_INFO_SESSION_START_TIME",
            "no ENUM_CUDA_MEMCPY_OPER",
        ],
    );
    assert_eq!(s.meta.devices.len(), 1);
    assert!(figures(&s).nvtx_names.keys().all(|n| !n.starts_with('<')));
}

#[test]
fn fixture_string_table_and_no_target_info() {
    let s = check_fixture(
        "nsys_fx_string_table",
        &["StringIds read from table StringTable", "no META_DATA_EXPORT / EXPORT_META_DATA", "TARGET_INFO_GPU"],
    );
    assert!(s.meta.devices.is_empty() && s.meta.base_time_ns.is_none());
    assert!(figures(&s).kernel_names.keys().all(|n| !n.starts_with("<string")));
    assert!(!s.counters.is_empty(), "memory usage counters");
}

#[test]
fn fixture_null_nan_infinite_and_backwards_times_are_skipped_and_counted() {
    let s = check_fixture(
        "nsys_fx_bad_times",
        &["rows skipped for unusable times", "rows had no end time", "no ENUM_CUDA_MEMCPY_OPER, ENUM_CUDA_MEM_KIND"],
    );
    // Without the enum tables, copies are named by nsys's documented numbering.
    let names: BTreeSet<&str> =
        (0..s.span_count() as u32).filter(|&i| s.span_kind(i) == SpanKind::Memcpy).map(|i| s.span_name(i)).collect();
    assert!(names.contains("Memcpy HtoD (Pinned -> Device)"), "{names:?}");
    for i in 0..s.span_count() as u32 {
        assert!(s.span_end(i) >= s.span_start(i));
    }
}

#[test]
fn fixture_newer_schema_with_global_tid_on_gpu_tables() {
    let s = check_fixture("nsys_fx_newer_globaltid", &["schema 3.99.0 is newer than the newest tested"]);
    assert!(figures(&s).launch_flows > 0);
}

#[test]
fn import_to_memory_is_the_whole_importer_with_no_cache() {
    for stem in ["nsys_fx_bad_times", "nsys_fx_string_table"] {
        let p = sample(&format!("{stem}.sqlite"));
        let mem = strobe_import::nsys_sqlite::import_to_memory(&p).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let cached = load_in(&p, dir.path()).unwrap();
        assert_eq!(mem.span_count(), cached.span_count(), "{stem}");
        assert_eq!(mem.meta.load.notes, cached.meta.load.notes, "{stem}");
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("other.sqlite");
    rusqlite::Connection::open(&p).unwrap().execute_batch("CREATE TABLE t(x);").unwrap();
    let err = strobe_import::nsys_sqlite::import_to_memory(&p).err().expect("an error").to_string();
    assert!(err.contains("not an Nsight Systems export"), "{err}");
}

#[test]
fn mutated_fixtures_never_panic() {
    // A small deterministic fuzz: runs of random bytes written over each fixture at random
    // places; every load is a store or an error naming the file.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for stem in ["nsys_fx_string_table", "nsys_fx_old_gpu_info", "nsys_fx_bad_times"] {
        let clean = std::fs::read(sample(&format!("{stem}.sqlite"))).unwrap();
        let dir = tempfile::tempdir().unwrap();
        for i in 0..24 {
            let mut bytes = clean.clone();
            for _ in 0..1 + next() % 4 {
                let at = (next() as usize) % bytes.len();
                let len = (1 + next() as usize % 512).min(bytes.len() - at);
                for b in &mut bytes[at..at + len] {
                    *b = next() as u8;
                }
            }
            let p = dir.path().join(format!("{stem}.{i}.sqlite"));
            std::fs::write(&p, &bytes).unwrap();
            if let Err(e) = strobe_import::nsys_sqlite::import_to_memory(&p) {
                assert!(e.to_string().contains(&p.display().to_string()), "{e}");
            }
        }
    }
}

/// `launch_table` (one pass over the flows, for analyses asking it of every span) answers as
/// `launch_of` (a search per span) does, on every span of an nsys export and a Kineto trace
/// with explicit `ac2g` flows as well as correlation links.
#[test]
fn launch_table_agrees_with_launch_of() {
    for name in ["nsys_ddp_2proc.sqlite", "gpt_train.json.gz", "catapult_flow.json"] {
        let s = common::load(name);
        let table = s.launch_table();
        let mut linked = 0;
        // past the last span too: no launch there
        for span in 0..s.span_count() as u32 + 2 {
            let want = s.launch_of(span);
            assert_eq!(table.get(span), want, "{name} span {span}");
            linked += want.is_some() as usize;
        }
        assert!(linked > 0 || name == "catapult_flow.json", "{name}: no launches found");
    }
}
