//! The Ops table (`strobe_analysis::op_table`, torch.profiler's `key_averages()`) against the
//! independent oracle `tests/expected/ops_expected.py`, per name and per name and input shapes.

mod common;
use common::*;
use strobe_analysis::op_table::{op_table, OpRow};

fn check(rows: &[OpRow], want: &serde_json::Value, with_shapes: bool) {
    let want = want.as_array().unwrap();
    assert_eq!(rows.len(), want.len(), "row count");
    for w in want {
        let name = w["name"].as_str().unwrap();
        let shapes = with_shapes.then(|| w["shapes"].as_str().unwrap().to_string());
        let on_device = w["device"] == "cuda";
        let r = rows
            .iter()
            .find(|r| r.name == name && r.shapes == shapes && r.on_device == on_device)
            .unwrap_or_else(|| panic!("{name} {shapes:?} missing"));
        let at = format!("{name} {shapes:?}");
        assert_eq!(r.count, w["count"].as_u64().unwrap(), "{at}: count");
        assert_eq!(r.cpu_total_ns, w["cpu_total_ns"].as_i64().unwrap(), "{at}: cpu total");
        assert_eq!(r.self_cpu_ns, w["self_cpu_ns"].as_i64().unwrap(), "{at}: self cpu");
        assert_eq!(r.device_total_ns, w["device_total_ns"].as_i64().unwrap(), "{at}: device total");
        assert_eq!(r.self_device_ns, w["self_device_ns"].as_i64().unwrap(), "{at}: self device");
    }
}

#[test]
fn gpt_ops_match_the_oracle() {
    let store = load("gpt_train.json.gz");
    let t = op_table(&store);
    let want = expected("gpt_train.ops.json");
    check(&t.by_name, &want["by_op"], false);
    check(&t.by_shape, &want["by_op_and_shape"], true);
    // sorted by device total, and each row's longest occurrence is one of its own spans
    assert!(t.by_name.windows(2).all(|w| w[0].device_total_ns >= w[1].device_total_ns));
    for r in &t.by_name {
        assert!(r.name_ids.contains(&store.span_meta(r.longest_span).name), "{}", r.name);
        assert_eq!(store.span_end(r.longest_span) - store.span_start(r.longest_span), r.longest_ns);
    }
}

/// `strobe export --what ops`: the by-shape rows, which add up per name to the oracle's by-name
/// figures.
#[test]
fn gpt_ops_export_adds_up_to_the_oracle() {
    use strobe_analysis::export::{export, Format, What};
    let store = load("gpt_train.json.gz");
    let mut out = Vec::new();
    let rows = export(&store, What::Ops, Format::Jsonl, &mut out).unwrap();
    let lines: Vec<serde_json::Value> =
        String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len() as u64, rows);
    let want = expected("gpt_train.ops.json");
    assert_eq!(rows as usize, want["by_op_and_shape"].as_array().unwrap().len());
    for w in want["by_op"].as_array().unwrap() {
        let (name, on_device) = (w["name"].as_str().unwrap(), w["device"] == "cuda");
        let mine: Vec<&serde_json::Value> =
            lines.iter().filter(|l| l["name"] == name && l["on_device"] == on_device).collect();
        for key in ["cpu_total_ns", "self_cpu_ns", "device_total_ns", "self_device_ns"] {
            let sum: i64 = mine.iter().map(|l| l[key].as_i64().unwrap()).sum();
            assert_eq!(sum, w[key].as_i64().unwrap(), "{name}: {key}");
        }
        let calls: u64 = mine.iter().map(|l| l["calls"].as_u64().unwrap()).sum();
        assert_eq!(calls, w["count"].as_u64().unwrap(), "{name}: calls");
    }
}

/// Against PyTorch itself: `tests/tools/record_pools_and_ops.py --cpu` recorded
/// `ops_train_cpu.json.gz` (torch 2.15, CPU activities only, so every device time is 0) and, with
/// the profiler object still alive, its `key_averages()` figures (with and without input shapes). Every row of PyTorch's table is a row here with the same count, and the same
/// times within float rounding (PyTorch sums microsecond floats; one ns per event allowed).
#[test]
fn ops_train_cpu_matches_torch_key_averages() {
    let store = load("ops_train_cpu.json.gz");
    let t = op_table(&store);
    let torch = expected("ops_train_cpu.key_averages.json");
    for (grouping, rows, with_shapes) in [("by_op", &t.by_name, false), ("by_op_and_shape", &t.by_shape, true)] {
        let want = torch[grouping].as_array().unwrap();
        // PyTorch keys by device type too, and writes only the name: a name with a host and a
        // device row ("forward" on the CPU and its GPU range) has two rows of one key, the
        // host one first by CPU time
        let mut by_key: std::collections::BTreeMap<(String, Option<String>), Vec<&serde_json::Value>> =
            Default::default();
        for w in want {
            let shapes = with_shapes.then(|| w["input_shapes"].as_str().unwrap().to_string());
            by_key.entry((w["key"].as_str().unwrap().to_string(), shapes)).or_default().push(w);
        }
        let mut matched = 0;
        for ((name, shapes), mut ws) in by_key {
            ws.sort_by(|a, b| {
                b["cpu_time_total_us"].as_f64().unwrap().total_cmp(&a["cpu_time_total_us"].as_f64().unwrap())
            });
            let mine: Vec<&OpRow> = {
                let mut m: Vec<&OpRow> = rows.iter().filter(|r| r.name == name && r.shapes == shapes).collect();
                m.sort_by_key(|r| r.on_device);
                m
            };
            assert_eq!(mine.len(), ws.len(), "{grouping} {name} {shapes:?}: rows");
            for (r, w) in mine.iter().zip(ws) {
                let at = format!("{grouping} {name} {shapes:?} (device {})", r.on_device);
                let n = r.count as f64;
                assert_eq!(r.count, w["count"].as_u64().unwrap(), "{at}: count");
                let close = |ns: i64, key: &str| {
                    let us = w[key].as_f64().unwrap();
                    assert!(
                        (ns as f64 / 1e3 - us).abs() <= 1e-3 * n + 1e-9 * us.abs(),
                        "{at}: {key} {ns} ns vs {us} µs"
                    );
                };
                close(r.cpu_total_ns, "cpu_time_total_us");
                close(r.self_cpu_ns, "self_cpu_time_total_us");
                close(r.device_total_ns, "device_time_total_us");
                close(r.self_device_ns, "self_device_time_total_us");
                matched += 1;
            }
        }
        assert_eq!(matched, rows.len(), "{grouping}: every row here is one of PyTorch's");
    }
}
