//! A collective read from an nsys export's NCCL NVTX range: its bytes, group and bandwidth in
//! the details pane and the tooltip, against tests/expected/nsys_nccl_expected.py (the first
//! all-gather of a one-rank H100 job: NCCL's per-rank message × the communicator's ranks).

use crate::common;
use egui_kittest::kittest::Queryable;
use strobe_ui::commands::Command;
use strobe_ui::workspace::SpanRef;

#[test]
fn an_nccl_ranges_details_give_its_bytes_and_bandwidth() {
    let want = common::expected("nsys_nccl.expected.json");
    let w = want["json"].as_array().unwrap().iter().find(|r| r["kind"] == "all_gather").unwrap().clone();
    let mut app = common::app_with(&["nsys_nccl_1rank_json.sqlite"]);
    let t = &app.ws.traces[0];
    let st = &t.store;
    let span = (0..st.span_count() as u32)
        .filter(|&s| st.span_name(s) == "ncclAllGather")
        .min_by_key(|&s| st.span_start(s))
        .expect("an ncclAllGather range");
    let id = t.id;
    app.push(Command::SelectSpan(SpanRef { trace: id, span }));
    let mut h = common::harness(app);
    h.run_steps(3);
    let bytes = w["bytes"].as_u64().unwrap();
    let alg = format!("{:.2} GB/s", w["algbw_gbps"].as_f64().unwrap());
    h.get_by_label("Collective");
    h.get_by_label("all_gather (allgather)");
    h.get_by_label(&format!("{} (NCCL communicator), 1 ranks", w["group"].as_str().unwrap()));
    assert!(h.query_all_by_label_contains(&format!("({bytes} B)")).count() >= 1);
    assert!(h.query_all_by_label(&alg).count() >= 1, "{alg}");
    let tip = strobe_ui::collective_bandwidth::tooltip(&h.state().ws, 0, span);
    assert!(tip.contains(&format!("({bytes} B)")) && tip.contains(&alg), "{tip}");
}
