//! `strobe export`: rows checked against the independent oracle
//! (tests/expected/chrome_expected.py, kineto_expected.py) on real traces, and against rows
//! written by hand for the small fixtures `sample-traces/export_*.json`.

mod common;
use common::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use strobe_analysis::export::{export, Format, What};
use strobe_store::Store;

const ALL: [What; 4] = [What::Spans, What::Flows, What::Counters, What::Kernels];

fn csv_text(store: &Store, what: What) -> String {
    let mut out = Vec::new();
    let n = export(store, what, Format::Csv, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    // read back with the csv crate, and written again by it: the same bytes
    let mut r = csv::ReaderBuilder::new().has_headers(false).from_reader(text.as_bytes());
    let mut again = csv::WriterBuilder::new().from_writer(Vec::new());
    let mut records = 0u64;
    for rec in r.records() {
        again.write_record(&rec.unwrap()).unwrap();
        records += 1;
    }
    assert_eq!(records, n + 1, "row count returned (plus the header)");
    assert!(again.into_inner().unwrap() == text.as_bytes(), "CSV differs from the csv crate's own writing");
    text
}

fn csv_rows(store: &Store, what: What) -> Vec<csv::StringRecord> {
    let text = csv_text(store, what);
    let mut r = csv::ReaderBuilder::new().has_headers(true).from_reader(text.as_bytes());
    let head: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(head, what.columns());
    r.records().map(|x| x.unwrap()).collect()
}

fn jsonl_rows(store: &Store, what: What) -> Vec<Value> {
    let mut out = Vec::new();
    let n = export(store, what, Format::Jsonl, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let rows: Vec<Value> =
        text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    assert_eq!(rows.len() as u64, n);
    for r in &rows {
        let keys: Vec<&str> = r.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        let mut want: Vec<&str> = what.columns().to_vec();
        want.sort();
        let mut keys = keys;
        keys.sort();
        assert_eq!(keys, want);
    }
    rows
}

fn i(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// The oracle's thread key (pid, tid) as JSON values.
fn thread_of(r: &Value) -> (Value, Value) {
    (r["pid"].clone(), r["tid"].clone())
}

/// `process_scope_instants`: (name, ts_ns) of `"s": "p"` instants. KNOWN PRODUCT BUG: the
/// importer puts process-scope instants on the emitting thread's lane; the oracle (like
/// Perfetto, which gives them a process track) does not count them as thread slices. They
/// are named here one by one so that fixing the importer makes this test fail and the
/// list be emptied.
fn check_chrome(file: &str, stem: &str, process_scope_instants: &[(&str, i64)]) {
    let store = load(file);
    let exp = expected(&format!("{stem}.chrome.json"));
    let rows = jsonl_rows(&store, What::Spans);
    // thread slices only: async tracks (tid null) are not thread slices in the oracle
    let mut thread_rows: Vec<&Value> = rows.iter().filter(|r| !r["tid"].is_null()).collect();
    for (name, ts) in process_scope_instants {
        let before = thread_rows.len();
        thread_rows.retain(|r| !(r["name"] == *name && r["ts_ns"] == *ts && r["dur_ns"] == 0));
        assert_eq!(before - thread_rows.len(), 1, "{file}: process-scope instant {name} no longer on a thread lane?");
    }
    assert_eq!(thread_rows.len() as u64, exp["slices"].as_u64().unwrap(), "{file}: slices");
    let unclosed = thread_rows.iter().filter(|r| i(&r["dur_ns"]) == -1).count() as u64;
    assert_eq!(unclosed, exp["unclosed"].as_u64().unwrap(), "{file}: unclosed");

    let mut by_thread: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for r in &thread_rows {
        by_thread.entry(format!("{:?}", thread_of(r))).or_default().push(r);
    }
    let threads = exp["threads"].as_array().unwrap();
    assert_eq!(by_thread.len(), threads.len(), "{file}: threads");
    for t in threads {
        let key = format!("{:?}", (t["pid"].clone(), t["tid"].clone()));
        let rs = by_thread.get(&key).unwrap_or_else(|| panic!("{file}: no rows for thread {key}"));
        let n = |k: &str| t[k].as_u64().unwrap();
        assert_eq!(rs.len() as u64, n("slices"), "{file} {key}: slices");
        assert_eq!(rs.iter().filter(|r| i(&r["dur_ns"]) == -1).count() as u64, n("unclosed"), "{file} {key}");
        assert_eq!(
            rs.iter().filter(|r| i(&r["dur_ns"]) == 0).count() as u64,
            n("instants_or_zero_dur"),
            "{file} {key}"
        );
        let sum: i64 = rs.iter().map(|r| i(&r["dur_ns"])).filter(|&d| d >= 0).sum();
        assert_eq!(sum, t["sum_dur_ns"].as_i64().unwrap(), "{file} {key}: sum_dur_ns");
        let mut depths: BTreeMap<String, u64> = BTreeMap::new();
        for r in rs {
            *depths.entry(i(&r["depth"]).to_string()).or_default() += 1;
        }
        let want: BTreeMap<String, u64> = serde_json::from_value(t["depth_counts"].clone()).unwrap();
        assert_eq!(depths, want, "{file} {key}: depth counts");
        assert_eq!(rs.iter().map(|r| i(&r["depth"])).max().unwrap(), t["max_depth"].as_i64().unwrap());
        if let Some(list) = t.get("list") {
            let got: Vec<Value> = rs.iter().map(|r| json!([r["ts_ns"], r["dur_ns"], r["depth"], r["name"]])).collect();
            assert_eq!(&got, list.as_array().unwrap(), "{file} {key}: slice list in export order");
        }
    }

    // flows: the bound slices' names and start times; the oracle sorts and keeps duplicates
    let mut flows: Vec<(i64, i64, String, String)> = jsonl_rows(&store, What::Flows)
        .iter()
        .filter(|f| f["kind"] == "flow")
        .map(|f| {
            (
                i(&f["from_ts_ns"]),
                i(&f["to_ts_ns"]),
                f["from_name"].as_str().unwrap().into(),
                f["to_name"].as_str().unwrap().into(),
            )
        })
        .collect();
    flows.sort();
    let mut want: Vec<(i64, i64, String, String)> = exp["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (i(&f[1]), i(&f[3]), f[0].as_str().unwrap().into(), f[2].as_str().unwrap().into()))
        .collect();
    want.sort();
    assert_eq!(flows.len(), want.len(), "{file}: flow count");
    assert_eq!(flows, want, "{file}: flows");
}

#[test]
fn chrome_perfetto_flow_v1_matches_oracle() {
    check_chrome("perfetto_flow_events_json_v1.json", "perfetto_flow_events_json_v1", &[]);
}

#[test]
fn chrome_speedscope_partial_matches_oracle() {
    check_chrome("speedscope_trace-event_simple-partial.json", "speedscope_trace-event_simple-partial", &[]);
}

#[test]
fn chrome_catapult_flow_matches_oracle() {
    check_chrome("catapult_flow.json", "catapult_flow", &[]);
}

#[test]
fn chrome_catapult_unclosed_matches_oracle() {
    check_chrome("catapult_main_thread_has_unclosed_slices.json", "catapult_main_thread_has_unclosed_slices", &[]);
}

#[test]
fn chrome_catapult_lthi_matches_oracle() {
    check_chrome("catapult_lthi_cats.json.gz", "catapult_lthi_cats", &[("LoadFinished", 456439012032000)]);
}

/// Rows come in (pid, tid or stream, ts, depth) order, integers before strings.
fn assert_span_order(rows: &[Value]) {
    fn id_key(v: &Value) -> (u8, i64, String) {
        match v {
            Value::Number(n) => (0, n.as_i64().unwrap(), String::new()),
            Value::String(s) => (1, 0, s.clone()),
            _ => (2, 0, String::new()),
        }
    }
    let key = |r: &Value| (id_key(&r["pid"]), id_key(&r["tid"]), i(&r["ts_ns"]), i(&r["depth"]));
    for w in rows.windows(2) {
        let (a, b) = (key(&w[0]), key(&w[1]));
        // async tracks (tid null) of a process follow its threads, one track after another
        if w[0]["tid"].is_null() && w[1]["tid"].is_null() && w[0]["lane"] != w[1]["lane"] {
            continue;
        }
        assert!(a <= b, "out of order:\n{}\n{}", w[0], w[1]);
    }
}

#[test]
fn kineto_gpt_train_spans_kernels_and_flows() {
    let store = load("gpt_train.json.gz");
    let exp = expected("gpt_train.report.json");
    let rows = jsonl_rows(&store, What::Spans);
    // every span once: copy-engine lanes are a second index, not exported twice
    assert_eq!(rows.len(), store.span_count());
    assert_span_order(&rows);

    // GPU activity per (device, stream), as the oracle counts it
    let gpu_cats = ["kernel", "gpu_memcpy", "memcpy", "gpu_memset", "memset"];
    let mut per_stream: BTreeMap<(i64, i64), (u64, u64)> = BTreeMap::new();
    for r in &rows {
        let cat = r["category"].as_str().unwrap().to_ascii_lowercase();
        if gpu_cats.contains(&cat.as_str()) {
            let (d, s) = (i(&r["device"]), i(&r["stream"]));
            assert_eq!((i(&r["pid"]), i(&r["tid"])), (d, s), "GPU rows: pid = device, tid = stream");
            let e = per_stream.entry((d, s)).or_default();
            e.0 += 1;
            e.1 += (cat == "kernel") as u64;
        }
    }
    let want: BTreeMap<(i64, i64), (u64, u64)> = exp["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| ((i(&s["device"]), i(&s["stream"])), (s["events"].as_u64().unwrap(), s["kernels"].as_u64().unwrap())))
        .collect();
    assert_eq!(per_stream, want);

    // steps: exact epoch-based ns from fractional microseconds
    for s in exp["steps"].as_array().unwrap() {
        let hit = rows
            .iter()
            .filter(|r| {
                r["name"] == s["name"]
                    && r["category"] == s["cat"]
                    && r["ts_ns"] == s["start_ns"]
                    && r["dur_ns"] == s["dur_ns"]
            })
            .count();
        assert_eq!(hit, 1, "step {s}");
    }
    // args are the source's object, parsed back
    let k = rows.iter().find(|r| r["category"] == "kernel").unwrap();
    assert_eq!(k["args"]["stream"], k["stream"]);
    assert!(k["args"]["correlation"].is_i64());

    // kernels: the report's kernel table, every name
    let ks = jsonl_rows(&store, What::Kernels);
    assert_eq!(ks.len() as u64, exp["distinct_kernels"].as_u64().unwrap());
    assert_eq!(ks.iter().map(|k| k["count"].as_u64().unwrap()).sum::<u64>(), exp["kernel_count"].as_u64().unwrap());
    assert_eq!(ks.iter().map(|k| i(&k["total_ns"])).sum::<i64>(), i(&exp["kernel_total_ns"]));
    for (k, e) in ks.iter().zip(exp["top_kernels"].as_array().unwrap()) {
        for f in ["name", "count", "total_ns", "mean_ns", "min_ns", "max_ns"] {
            assert_eq!(k[f], e[f], "kernel {f}");
        }
        assert!((k["pct_kernel_time"].as_f64().unwrap() - e["pct_kernel_time"].as_f64().unwrap()).abs() < 1e-9);
    }

    // flows: Kineto's ac2g s/f pairs link a runtime call to its GPU work
    let flows = jsonl_rows(&store, What::Flows);
    let ac2g: Vec<&Value> = flows.iter().filter(|f| f["category"] == "ac2g").collect();
    assert!(!ac2g.is_empty());
    let gpu_keys: std::collections::HashSet<String> = rows
        .iter()
        .filter(|r| !r["device"].is_null())
        .map(|r| format!("{}|{}|{}", r["pid"], r["ts_ns"], r["name"]))
        .collect();
    for f in &ac2g {
        assert!(
            gpu_keys.contains(&format!("{}|{}|{}", f["to_pid"], f["to_ts_ns"], f["to_name"])),
            "ac2g ends on the GPU: {f}"
        );
    }
    // both ends of every flow are exported spans: (pid, tid, ts, name) joins flows to spans
    let key = |p: &Value, t: &Value, ts: &Value, n: &Value| format!("{p}|{t}|{ts}|{n}");
    let span_keys: std::collections::HashSet<String> =
        rows.iter().map(|r| key(&r["pid"], &r["tid"], &r["ts_ns"], &r["name"])).collect();
    for f in &flows {
        assert!(span_keys.contains(&key(&f["from_pid"], &f["from_tid"], &f["from_ts_ns"], &f["from_name"])), "{f}");
        assert!(span_keys.contains(&key(&f["to_pid"], &f["to_tid"], &f["to_ts_ns"], &f["to_name"])), "{f}");
    }
}

#[test]
fn lthi_rows_are_ordered_and_counters_complete() {
    let store = load("catapult_lthi_cats.json.gz");
    assert_span_order(&jsonl_rows(&store, What::Spans));
    // Expected by a stdlib-Python count over the file: one row per (C event, numeric arg).
    //   sum(len([v for v in e.get('args', {}).values() if isinstance(v, (int, float))
    //            and not isinstance(v, bool)]) for e in evs if e.get('ph') == 'C')
    let rows = jsonl_rows(&store, What::Counters);
    assert_eq!(rows.len(), LTHI_COUNTER_ROWS);
    for w in rows.windows(2) {
        let k = |r: &Value| {
            (r["pid"].to_string(), r["name"].as_str().unwrap().to_string(), r["series"].as_str().unwrap().to_string())
        };
        assert!(k(&w[0]) < k(&w[1]) || (k(&w[0]) == k(&w[1]) && i(&w[0]["ts_ns"]) <= i(&w[1]["ts_ns"])));
    }
}

const LTHI_COUNTER_ROWS: usize = 1627;

/// CSV and JSON Lines carry the same values.
#[test]
fn csv_and_jsonl_agree() {
    for file in [
        "catapult_lthi_cats.json.gz",
        "gpt_train.json.gz",
        "export_ids_and_names.json",
        "export_flows_v2_counters.json",
    ] {
        let store = load(file);
        for what in ALL {
            let c = csv_rows(&store, what);
            let j = jsonl_rows(&store, what);
            assert_eq!(c.len(), j.len(), "{file} {what:?}");
            for (cr, jr) in c.iter().zip(&j) {
                for (col, field) in what.columns().iter().zip(cr.iter()) {
                    let v = &jr[*col];
                    match v {
                        Value::Null => assert_eq!(field, "", "{file} {col}"),
                        Value::String(s) => assert_eq!(field, s, "{file} {col}"),
                        Value::Number(n) if n.is_f64() => {
                            // serde_json's default float parser is not correctly rounded
                            let (a, b) = (field.parse::<f64>().unwrap(), n.as_f64().unwrap());
                            assert!((a - b).abs() <= 1e-12 * a.abs().max(1.0), "{file} {col}: {a} vs {b}")
                        }
                        Value::Number(n) => assert_eq!(field, n.to_string(), "{file} {col}"),
                        Value::Object(_) => {
                            let parsed: Value = serde_json::from_str(field).unwrap();
                            assert_eq!(&parsed, v, "{file} {col}");
                        }
                        other => panic!("unexpected {other}"),
                    }
                }
            }
        }
    }
}

/// String pid/tid, missing tid, `displayTimeUnit: ns` (a display hint: times stay µs), later metadata names winning, args
/// with line breaks and big integers, a non-object args, an unclosed B and an instant.
#[test]
fn fixture_ids_names_units() {
    let store = load("export_ids_and_names.json");
    let want = r#"pid,tid,process_name,thread_name,lane,device,stream,depth,ts_ns,dur_ns,name,category,args
7,7,seven,main thread,CPU · main thread (tid 7),,,0,1790857026000000000,10,main,,{}
7,7,seven,main thread,CPU · main thread (tid 7),,,1,1790857026000000001,2,no tid,,"{""value"":5}"
7,8,seven,,CPU · seven (tid 8),,,0,5000,1000,other thread,,{}
Renderer,Compositor,renderer,comp,CPU · comp (tid Compositor),,,0,1000000,2000000,outer,c1,{}
Renderer,Compositor,renderer,comp,CPU · comp (tid Compositor),,,1,1500000,250000,inner,c2,"{      ""big"": 12345678901234567890,      ""text"": ""line\nbreak \""quoted\"", comma""    }"
Renderer,Compositor,renderer,comp,CPU · comp (tid Compositor),,,2,1600000,0,mark,,{}
Renderer,Compositor,renderer,comp,CPU · comp (tid Compositor),,,0,3500000,-1,never ends,,{}
"#;
    assert_eq!(csv_text(&store, What::Spans), want);
    let j = jsonl_rows(&store, What::Spans);
    assert_eq!(j[3]["pid"], "Renderer");
    assert_eq!(j[3]["tid"], "Compositor");
    assert_eq!(j[0]["pid"], 7);
    assert_eq!(j[0]["device"], Value::Null);
    // the big integer survives as written (no float round trip)
    let line = {
        let mut out = Vec::new();
        export(&store, What::Spans, Format::Jsonl, &mut out).unwrap();
        String::from_utf8(out).unwrap().lines().nth(4).unwrap().to_string()
    };
    assert!(line.contains(r#""big": 12345678901234567890"#), "{line}");
    assert_eq!(j[4]["args"]["text"], "line\nbreak \"quoted\", comma");
    assert_eq!(csv_text(&store, What::Flows).lines().count(), 1);
    assert_eq!(csv_text(&store, What::Counters), "pid,device,name,series,ts_ns,value\n");
    assert_eq!(csv_text(&store, What::Kernels), "name,count,total_ns,mean_ns,min_ns,max_ns,pct_kernel_time\n");
}

/// v2 flows (bind_id, flow_in, flow_out), C counters with several series, a counter id, a
/// string pid, a non-numeric counter value (skipped), and fractional µs.
#[test]
fn fixture_flows_v2_and_counters() {
    let store = load("export_flows_v2_counters.json");
    assert_eq!(
        csv_text(&store, What::Flows),
        "flow_id,from_ts_ns,from_name,from_pid,from_tid,to_ts_ns,to_name,to_pid,to_tid,category,kind,from_event_ts_ns,to_event_ts_ns
42,10500,producer,1,1,20000,relay,1,2,flow_v2,flow,10500,20000
42,20000,relay,1,2,30001,consumer,2,3,flow_v2,flow,20000,30001
"
    );
    assert_eq!(
        csv_text(&store, What::Counters),
        "pid,device,name,series,ts_ns,value
1,,memory,heap,5000,50.0
1,,memory,heap,10000,100.0
1,,memory,heap,20000,75.0
1,,memory,stack,10000,2.5
1,,memory,stack,20000,3.0
gpu,,ctr 3,v,1500,-0.001
"
    );
    let c = jsonl_rows(&store, What::Counters);
    assert_eq!(
        c[5],
        json!({"pid": "gpu", "device": null, "name": "ctr 3", "series": "v", "ts_ns": 1500, "value": -0.001})
    );
    assert_eq!(c[0]["value"], json!(50.0));
    let s = csv_text(&store, What::Spans);
    assert_eq!(s.lines().nth(1).unwrap(), "1,1,,,CPU · pid 1 (tid 1),,,0,10500,5000,producer,a,{}");
    assert_eq!(s.lines().count(), 5);
}

/// A failing writer surfaces as an error, not a panic or a silent short file.
#[test]
fn write_errors_propagate() {
    struct Fails(usize);
    impl std::io::Write for Fails {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if self.0 < b.len() {
                return Err(std::io::Error::other("disk full"));
            }
            self.0 -= b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let store = load("catapult_flow.json");
    for format in [Format::Csv, Format::Jsonl] {
        let e = export(&store, What::Spans, format, Fails(1000)).unwrap_err();
        assert!(e.to_string().contains("disk full"), "{e}");
    }
}

/// Spans are formatted in pieces on all cores; cutting anywhere, including inside lane groups
/// that are merged (a stream's kernels with its GPU annotations), gives the same bytes.
#[test]
fn pieces_do_not_change_span_rows() {
    use strobe_analysis::export::export_spans_in_pieces;
    for file in ["gpt_train.json.gz", "catapult_flow.json", "export_ids_and_names.json"] {
        let store = load(file);
        for format in [Format::Csv, Format::Jsonl] {
            let mut whole = Vec::new();
            let n = export_spans_in_pieces(&store, format, usize::MAX, &mut whole).unwrap();
            assert_eq!(n as usize, store.span_count());
            for piece in [1, 2, 7, 1000] {
                let mut cut = Vec::new();
                assert_eq!(export_spans_in_pieces(&store, format, piece, &mut cut).unwrap(), n);
                assert!(cut == whole, "{file} {format:?}: pieces of {piece} differ");
            }
        }
    }
}
