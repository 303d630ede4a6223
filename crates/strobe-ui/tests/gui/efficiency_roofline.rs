//! The Efficiency tab's roofline and ops table with egui_kittest, on gpt_train (H200,
//! record_shapes): a hovered point names its op with its figures, the roofs are distinct and
//! labelled, and the table's figures stay on one line in a narrow window. Expected figures
//! from tests/expected/gpt_train.efficiency.json (the independent Python oracle) and the
//! H200 datasheet (989 TFLOP/s dense BF16, 67 TFLOP/s FP32, 4.8 TB/s HBM3e).

use crate::common::*;
use egui_kittest::kittest::Queryable;
use strobe_ui::app::BottomTab;

fn efficiency_harness(size: [f32; 2]) -> egui_kittest::Harness<'static, strobe_ui::StrobeApp> {
    let mut app = app_with(&["gpt_train.json.gz"]);
    app.set_bottom_tab(BottomTab::Efficiency);
    let mut h = harness_sized(app, size);
    step_until(&mut h, |a| a.ws.traces[0].ops().is_some());
    h.run_steps(3);
    h
}

#[test]
fn hovering_a_point_names_the_op_and_its_share_of_the_roof() {
    let exp = expected("gpt_train.efficiency.json");
    let mut h = efficiency_harness([1600.0, 1000.0]);
    raise_bottom_panel(&mut h, 250.0);
    let at = h.state().efficiency().points.iter().find(|(n, _)| n == "aten::mm").expect("aten::mm is plotted").1;
    h.hover_at(at);
    h.run_steps(3);
    let mm = &exp["aten::mm"];
    let (flops, bytes, ns) =
        (mm["flops"].as_f64().unwrap(), mm["bytes"].as_f64().unwrap(), mm["gpu_ns"].as_f64().unwrap());
    let achieved = flops / (ns * 1e-9);
    let roof = (flops / bytes * 4.8e12).min(989e12);
    let pct = format!("{:.1} % of the roof", achieved / roof * 100.0);
    let tip = h.get_by_label_contains(&pct);
    let text = format!("{tip:?}");
    assert!(text.contains("aten::mm"), "{text}");
    assert!(text.contains(&format!("achieved {:.0} TFLOP/s", achieved / 1e12)), "{text}");
}

#[test]
fn the_roofs_are_distinct_and_labelled() {
    let h = efficiency_harness([1600.0, 1000.0]);
    let ops = h.state().ws.traces[0].ops_blocking();
    let roofs = strobe_ui::efficiency_pane::roofs(&ops.efficiency.ops, &ops.efficiency.device);
    let labels: Vec<&str> = roofs.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, vec!["tensor_bf16 989 TFLOP/s", "fp32 67 TFLOP/s"]);
    assert_ne!(roofs[0].color, roofs[1].color);
    // the legend is above the plot, a widget of its own per line
    h.get_by_label("HBM 4.8 TB/s");
    h.get_by_label("tensor_bf16 989 TFLOP/s");
    h.get_by_label("compute-bound");
}

#[test]
fn the_ops_table_keeps_each_figure_on_one_line_in_a_narrow_window() {
    let mut h = efficiency_harness([900.0, 800.0]);
    raise_bottom_panel(&mut h, 150.0);
    let exp = expected("gpt_train.efficiency.json");
    let gpu = strobe_analysis::report::fmt_ns(exp["aten::mm"]["gpu_ns"].as_i64().unwrap());
    let cell = h.get_by_label(&gpu).rect();
    let line = h.get_by_label("Count").rect().height();
    assert!(cell.height() <= line + 1.0, "{gpu}: {} px tall (a line is {line})", cell.height());
    assert!(cell.width() > cell.height() * 2.0, "{gpu}: one line, not a column of characters: {cell:?}");
}
