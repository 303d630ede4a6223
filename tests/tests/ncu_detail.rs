//! Occupancy, stall reasons, memory workload and ncu's rule results, as Strobe reads them
//! from `.ncu-rep` reports, against ncu's own CSV exports of the same reports (raw page, and
//! the details page with its rule rows), through the independent oracle
//! `tests/expected/ncu_detail_expected.py` (`tests/expected/<stem>.detail.json`, each number
//! with the tolerance the export's printed digits allow). A figure the export lacks must be
//! absent in Strobe's JSON, never zero.
//!
//! The reports: the shared GPT report (H200), two `--set full` H100 recordings (elementwise
//! kernels with source counters and PC sampling; a GEMM, softmax, reduce and elementwise
//! kernels), each trimmed by `tests/tools/trim_ncu_rep.py` (sources and section bodies
//! dropped; launches, metrics and rule results kept byte for byte), and two public reports of
//! older ncu versions (esmm, flashattn on an A30). Their exports, all by ncu 2025.3.1:
//! `<stem>.raw.csv` / `ncu_raw.csv` (raw page) and the details page with rule rows
//! (`ncu_details.csv`, `<stem>.details_all_rules.csv`; the two H100 ones are in the session
//! recordings, `ncu_*_h100.details_all_rules.csv`, too large to keep here, and only the
//! oracle's output of them is).

mod common;
use common::*;
use serde_json::Value;
use strobe_analysis::roofline::analyse;
use strobe_import::ncu_rep;

/// (report, expected stem)
const REPORTS: [(&str, &str); 5] = [
    ("ncu_gpt.ncu-rep.gz", "ncu_gpt"),
    ("ncu_full_h100.ncu-rep.gz", "ncu_full_h100"),
    ("ncu_nosource_h100.ncu-rep.gz", "ncu_nosource_h100"),
    ("ncu_esmm.ncu-rep", "ncu_esmm"),
    ("ncu_flashattn_a30.ncu-rep", "ncu_flashattn_a30"),
];

fn strobe_json(rep: &str) -> Value {
    let r = ncu_rep::import_native(&sample(rep)).unwrap_or_else(|e| panic!("{rep}: {e:?}"));
    serde_json::to_value(analyse(&r)).unwrap()
}

/// `want` is [value, tolerance]; `got` a number.
fn close(got: &Value, want: &Value, what: &str) {
    let (v, tol) = (want[0].as_f64().unwrap(), want[1].as_f64().unwrap());
    let g = got.as_f64().unwrap_or_else(|| panic!("{what}: Strobe has {got}, ncu's export {v}"));
    // plus float rounding of a value the export derived in another unit
    assert!((g - v).abs() <= tol + 1e-9 * v.abs().max(1.0), "{what}: Strobe {g} vs ncu's export {v} (±{tol})");
}

/// Every key of `want` is in `got` with the same figure, and `got` has no figure under a key
/// of `keys` that `want` lacks (absent, never zero).
fn same_fields(got: &Value, want: &Value, keys: &[&str], what: &str) {
    for k in keys {
        match (got.get(k), want.get(k)) {
            (None, None) => {}
            (Some(g), Some(w)) if w.is_array() => close(g, w, &format!("{what}.{k}")),
            (Some(g), Some(w)) => assert_eq!(g, w, "{what}.{k}"),
            (g, w) => panic!("{what}.{k}: Strobe {g:?} vs ncu's export {w:?}"),
        }
    }
}

#[test]
fn occupancy_stalls_and_memory_equal_ncus_exports() {
    for (rep, stem) in REPORTS {
        let got = strobe_json(rep);
        let want = expected(&format!("{stem}.detail.json"));
        let (gk, wk) = (got["kernels"].as_array().unwrap(), want["kernels"].as_array().unwrap());
        assert_eq!(gk.len(), wk.len(), "{rep}: launches");
        let (mut occ, mut stalls, mut mem) = (0, 0, 0);
        for (g, w) in gk.iter().zip(wk) {
            let what = format!("{rep} launch {}", w["id"]);
            assert_eq!(g["id"], w["id"], "{what}");
            // occupancy
            match (g.get("occupancy"), &w["occupancy"]) {
                (None, Value::Null) => {}
                (Some(go), wo) if wo.is_object() => {
                    let keys = [
                        "theoretical_pct",
                        "achieved_pct",
                        "limiter",
                        "registers_per_thread",
                        "shared_mem_per_block_bytes",
                        "waves_per_sm",
                    ];
                    same_fields(go, wo, &keys, &format!("{what} occupancy"));
                    occ += 1;
                }
                (g, w) => panic!("{what} occupancy: Strobe {g:?} vs ncu's export {w}"),
            }
            // stalls: the same source and reasons, each share within the export's precision,
            // largest first
            match (g.get("stalls"), &w["stalls"]) {
                (None, Value::Null) => assert!(g.get("stall_source").is_none(), "{what}"),
                (Some(gs), ws) if ws.is_object() => {
                    assert_eq!(g["stall_source"], ws["source"], "{what} stall source");
                    let gs = gs.as_array().unwrap();
                    let wr = ws["reasons"].as_array().unwrap();
                    assert_eq!(gs.len(), wr.len(), "{what}: stall reasons {gs:?} vs {wr:?}");
                    for r in wr {
                        let name = r[0].as_str().unwrap();
                        let s = gs.iter().find(|s| s["reason"] == name).unwrap_or_else(|| panic!("{what}: no {name}"));
                        close(&s["pct"], &r[1], &format!("{what} stall {name}"));
                        assert!(!s["meaning"].as_str().unwrap().is_empty(), "{what}: {name} has no meaning");
                    }
                    let pcts: Vec<f64> = gs.iter().map(|s| s["pct"].as_f64().unwrap()).collect();
                    assert!(pcts.windows(2).all(|w| w[0] >= w[1]), "{what}: stalls not largest first");
                    assert!((pcts.iter().sum::<f64>() - 100.0).abs() < 1e-6, "{what}: shares sum to 100 %");
                    stalls += 1;
                }
                (g, w) => panic!("{what} stalls: Strobe {g:?} vs ncu's export {w}"),
            }
            // memory
            match (g.get("memory"), &w["memory"]) {
                (None, Value::Null) => {}
                (Some(gm), wm) if wm.is_object() => {
                    let keys = [
                        "l1_hit_pct",
                        "l2_hit_pct",
                        "dram_read_bytes",
                        "dram_write_bytes",
                        "dram_bytes_per_s",
                        "shared_bank_conflicts",
                    ];
                    same_fields(gm, wm, &keys, &format!("{what} memory"));
                    let gf = gm.get("flows").and_then(Value::as_array).cloned().unwrap_or_default();
                    let wf = wm.get("flows").and_then(Value::as_array).cloned().unwrap_or_default();
                    assert_eq!(gf.len(), wf.len(), "{what}: memory flows");
                    for (a, b) in gf.iter().zip(&wf) {
                        let w = format!("{what} flow {} → {} {}", b["from"], b["to"], b["what"]);
                        same_fields(a, b, &["from", "to", "what", "bytes", "pct_of_peak"], &w);
                    }
                    mem += 1;
                }
                (g, w) => panic!("{what} memory: Strobe {g:?} vs ncu's export {w}"),
            }
        }
        assert!(occ > 0, "{rep}: {occ} occupancy, {stalls} stalls, {mem} memory compared");
        if !rep.contains("esmm") && !rep.contains("flashattn") {
            assert_eq!((occ, stalls, mem), (gk.len(), gk.len(), gk.len()), "{rep}: every launch compared");
        }
    }
}

#[test]
fn rule_results_equal_ncus_details_export() {
    let mut compared = std::collections::BTreeMap::new();
    for (rep, stem) in REPORTS {
        let got = strobe_json(rep);
        let want = expected(&format!("{stem}.detail.json"));
        for (g, w) in got["kernels"].as_array().unwrap().iter().zip(want["kernels"].as_array().unwrap()) {
            let what = format!("{rep} launch {}", w["id"]);
            let gr = g.get("rules").and_then(Value::as_array).cloned().unwrap_or_default();
            let wr = w["rules"].as_array().unwrap();
            assert_eq!(gr.len(), wr.len(), "{what}: rules");
            // Ranked: estimates never rise down the list, rules without one last.
            let sp: Vec<Option<f64>> = gr.iter().map(|r| r["speedup_pct"].as_f64()).collect();
            assert!(
                sp.windows(2).all(|p| match (p[0], p[1]) {
                    (Some(a), Some(b)) => a >= b,
                    (None, Some(_)) => false,
                    _ => true,
                }),
                "{what}: not ranked: {sp:?}"
            );
            // The same rows: ncu's order among equal estimates is its section order, so each
            // expected row is found once, anywhere in its estimate's group.
            let mut used = vec![false; gr.len()];
            for r in wr {
                let i = (0..gr.len())
                    .find(|&i| {
                        let g = &gr[i];
                        !used[i]
                            && g["name"] == r["name"]
                            && g["type"] == r["type"]
                            && g["message"] == r["message"]
                            && g["speedup_type"] == r["speedup_type"]
                            && match (g["speedup_pct"].as_f64(), r["speedup_pct"].as_array()) {
                                (None, None) => true,
                                (Some(a), Some(b)) => (a - b[0].as_f64().unwrap()).abs() <= b[1].as_f64().unwrap(),
                                _ => false,
                            }
                    })
                    .unwrap_or_else(|| panic!("{what}: ncu's rule row {r} is not in Strobe's {gr:?}"));
                used[i] = true;
                *compared.entry(stem).or_insert(0) += 1;
            }
            match (g.get("estimated_speedup"), &w["estimated_speedup"]) {
                (None, Value::Null) => {}
                (Some(e), we) if we.is_object() => {
                    close(&e["pct"], &we["pct"], &format!("{what} estimated speedup"));
                    assert_eq!(e["rule"], we["rule"], "{what}");
                }
                (g, w) => panic!("{what} estimated speedup: Strobe {g:?} vs ncu's export {w}"),
            }
        }
    }
    // Every rule row of each details export (the A30 flashattn report holds no rule results).
    assert_eq!(compared.get("ncu_gpt"), Some(&210));
    assert_eq!(compared.get("ncu_esmm"), Some(&12));
    assert_eq!(compared.get("ncu_full_h100"), Some(&31));
    assert!(compared.get("ncu_nosource_h100").is_some_and(|n| *n > 50), "{compared:?}");
    assert_eq!(compared.get("ncu_flashattn_a30"), None);
}

/// What the verdict paragraph says comes from the sections: the GPT report's longest launch.
#[test]
fn verdict_paragraph_names_its_evidence() {
    let got = strobe_json("ncu_gpt.ncu-rep.gz");
    for k in got["kernels"].as_array().unwrap() {
        let text = k["verdict_text"].as_str().unwrap_or_else(|| panic!("launch {} has no verdict text", k["id"]));
        let head = k["verdict"].as_str().unwrap().replace('_', "-");
        assert!(text.starts_with(&head), "{text}");
        if let Some(s) = k["stalls"].as_array().and_then(|s| s.first()) {
            assert!(text.contains(&format!("of stalls are {}", s["reason"].as_str().unwrap())), "{text}");
        }
        if let Some(e) = k.get("estimated_speedup") {
            assert!(text.contains("ncu estimates up to "), "{text}");
            assert!(e["pct"].as_f64().unwrap() > 0.0);
        }
    }
}

/// The details export read by the CSV path: its rule rows are the launch's rules, and its
/// Occupancy and Memory Workload Analysis rows (display names, 2 decimals) agree with the
/// raw export's metrics to the details page's precision.
#[test]
fn details_csv_carries_rules_and_occupancy() {
    let r = strobe_import::ncu_csv::import(&sample("ncu_details.csv")).unwrap();
    let got = serde_json::to_value(analyse(&r)).unwrap();
    let want = expected("ncu_gpt.detail.json");
    let mut rules = 0;
    for (g, w) in got["kernels"].as_array().unwrap().iter().zip(want["kernels"].as_array().unwrap()) {
        let what = format!("details launch {}", w["id"]);
        let gr = g["rules"].as_array().unwrap();
        assert_eq!(gr.len(), w["rules"].as_array().unwrap().len(), "{what}");
        rules += gr.len();
        let (go, wo) = (&g["occupancy"], &w["occupancy"]);
        for k in ["theoretical_pct", "achieved_pct", "registers_per_thread", "waves_per_sm"] {
            let (a, b) = (go[k].as_f64().unwrap(), wo[k][0].as_f64().unwrap());
            assert!((a - b).abs() <= 0.005 + 1e-9, "{what} {k}: {a} vs {b}");
        }
        assert_eq!(go["limiter"], wo["limiter"], "{what}");
        for k in ["l1_hit_pct", "l2_hit_pct"] {
            let (a, b) = (g["memory"][k].as_f64().unwrap(), w["memory"][k][0].as_f64().unwrap());
            assert!((a - b).abs() <= 0.005 + 1e-9, "{what} {k}: {a} vs {b}");
        }
        // The details page has no DRAM read/write split: absent, not zero.
        assert!(g["memory"].get("dram_read_bytes").is_none(), "{what}");
    }
    assert_eq!(rules, 210);
}

/// Damaged rule results never panic: every 211th byte of a report with rule results (the esmm
/// report, older ncu), flipped, parses to launches or to an error naming a byte offset, and
/// whatever parses goes through the whole analysis and its JSON and text.
#[test]
fn damaged_reports_with_rule_results_are_read_or_refused_cleanly() {
    let bytes = std::fs::read(sample("ncu_esmm.ncu-rep")).unwrap();
    let rules = ncu_rep::parse(&bytes).unwrap().launches.iter().map(|l| l.rules.len()).sum::<usize>();
    assert_eq!(rules, 12);
    let (mut ok, mut refused) = (0, 0);
    for at in (8..bytes.len()).step_by(211) {
        let mut b = bytes.clone();
        b[at] ^= 0xA5;
        match ncu_rep::parse(&b) {
            Ok(rep) => {
                let r = analyse(&rep);
                let _ = serde_json::to_string(&r).unwrap();
                let _ = strobe_analysis::roofline::to_text(&r);
                ok += 1;
            }
            Err(e) => {
                assert!(e.contains("byte") || e.contains("version"), "{e}");
                refused += 1;
            }
        }
    }
    assert!(ok > 0 && refused > 0, "{ok} read, {refused} refused");
}
