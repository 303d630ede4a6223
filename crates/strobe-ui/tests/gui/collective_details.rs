//! A collective's bytes, group and bandwidth in the details pane and the timeline's tooltip:
//! the DDP pair's first all-reduce on rank 0, against tests/expected/comm_expected.py (its
//! bytes from the kernel's args, its transfer after both ranks arrived, algbw and busbw).

use crate::common;
use egui_kittest::kittest::Queryable;
use strobe_analysis::report::fmt_ns;
use strobe_model::SpanKind;
use strobe_ui::commands::Command;
use strobe_ui::workspace::SpanRef;

#[test]
fn a_collectives_details_and_tooltip_give_its_bandwidth() {
    let want = common::expected("comm.expected.json");
    let w = &want["ddp"][0];
    let mut app = common::app_with_ranks(&["ddp_rank0.json.gz", "ddp_rank1.json.gz"]);
    let t = &app.ws.traces[0];
    let st = &t.store;
    let span = (0..st.span_count() as u32)
        .filter(|&s| st.span_kind(s) == SpanKind::Kernel && st.span_name(s).starts_with("nccl"))
        .min_by_key(|&s| (st.span_start(s), st.span_end(s)))
        .expect("an NCCL kernel");
    let id = t.id;
    app.push(Command::SelectSpan(SpanRef { trace: id, span }));
    let mut h = common::harness(app);
    common::step_until(&mut h, |a| a.ws.collectives.is_some());
    h.run_steps(2);
    let transfer = fmt_ns(w["transfer_ns"].as_i64().unwrap());
    let alg = format!("{:.2} GB/s", w["algbw_gbps"].as_f64().unwrap());
    let bytes = w["bytes"].as_u64().unwrap();
    h.get_by_label("Collective");
    h.get_by_label("transfer (after all arrived)");
    assert!(h.query_all_by_label(&transfer).count() >= 1, "{transfer}");
    h.get_by_label("0 (default_pg), 2 ranks");
    assert!(h.query_all_by_label_contains(&format!("({bytes} B)")).count() >= 1);
    // algbw and busbw are equal on two ranks; rank 0 arrived last here, so its own duration
    // is the transfer and the own-duration rows say the same
    assert_eq!(h.query_all_by_label(&alg).count(), 4, "{alg}");
    let tip = strobe_ui::collective_bandwidth::tooltip(&h.state().ws, 0, span);
    assert!(tip.contains(&format!("transfer {transfer} after all arrived: algbw {alg} · busbw {alg}")), "{tip}");
    assert!(tip.contains("all_reduce on group 0 (default_pg), 2 ranks"), "{tip}");
    // a compute kernel has no collective lines
    let st = &h.state().ws.traces[0].store;
    let gemm = (0..st.span_count() as u32)
        .find(|&s| st.span_kind(s) == SpanKind::Kernel && !st.span_name(s).starts_with("nccl"));
    assert_eq!(strobe_ui::collective_bandwidth::tooltip(&h.state().ws, 0, gemm.unwrap()), "");
}
