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
