//! What a user does to the selection and the lanes, driven through the whole app frame with
//! kittest: the kernel figures in Details follow the selection, jumps bring a deep span's
//! row on screen, long names keep to one line, the area shade covers its lanes only, Esc ends
//! a search, and right-click menus pin, hide and find.

use crate::common::{app_with, click_at, harness, harness_sized, step_until};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use strobe_ui::commands::Command;
use strobe_ui::timeline::{RowKind, ROW_H};
use strobe_ui::workspace::SpanRef;
use strobe_ui::StrobeApp;

const KERNEL_BLOCK: &str = "Kernel (all occurrences)";

/// Whether span `r`'s row (its lane's top plus its depth) lies in the rows the timeline shows.
fn row_on_screen(h: &Harness<'static, StrobeApp>, r: SpanRef) -> bool {
    let app = h.state();
    let st = app.ws.store(r.trace).unwrap();
    let m = st.span_meta(r.span);
    let Some(&lane_y) = app.timeline().layout.lane_y.get(&(r.trace, m.lane)) else { return false };
    let row = lane_y + m.depth as f32 * ROW_H;
    let (top, bottom) = app.timeline().visible_rows(app.timeline_state());
    row >= top && row + ROW_H <= bottom
}

/// Clicks the kernel table's row of kernel `name` (Details may show the name too).
fn click_table_row(h: &mut Harness<'static, StrobeApp>, name: &str) {
    let details_x = h.get_by_label("Details").rect().left();
    let row = h.get_all_by_label(name).find(|n| n.rect().left() < details_x).expect("a table row");
    row.click();
    h.run_steps(3);
}

/// A span on screen, at least 8 px wide (a click there hits it, not a folded run), whose
/// name is not `not`, and where to click it.
fn wide_span_on_screen(h: &Harness<'static, StrobeApp>, not: &str) -> Option<(SpanRef, egui::Pos2)> {
    let app = h.state();
    let (tl, state) = (app.timeline(), app.timeline_state());
    for t in &app.ws.traces {
        let st = &t.store;
        for span in 0..st.span_count() as u32 {
            let r = SpanRef { trace: t.id, span };
            if st.span_name(span) == not {
                continue;
            }
            let Some((a, b)) = app.ws.span_range_shared(r) else { continue };
            if ((b - a) as f64) < 8.0 * state.view.npp {
                continue;
            }
            if let Some(p) = tl.span_pos(state, &app.ws, r) {
                return Some((r, p));
            }
        }
    }
    None
}

/// A right-click at `p`, as a user makes it.
fn right_click_at(h: &mut Harness<'static, StrobeApp>, p: egui::Pos2) {
    h.event(egui::Event::PointerMoved(p));
    h.run_steps(1);
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos: p,
            button: egui::PointerButton::Secondary,
            pressed,
            modifiers: Default::default(),
        });
        h.run_steps(1);
    }
    h.run_steps(2);
}

/// What the last frame put on the clipboard.
fn copied(h: &Harness<'static, StrobeApp>) -> Vec<String> {
    h.output()
        .platform_output
        .commands
        .iter()
        .filter_map(|c| if let egui::OutputCommand::CopyText(t) = c { Some(t.clone()) } else { None })
        .collect()
}

/// A kernel row clicked in the table, then spans of other names selected (a Details link, a
/// click on the timeline): the kernel's figures go with the kernel's selection each time.
#[test]
fn kernel_figures_follow_the_selection() {
    // tall enough for Details to show the link below the kernel's args without scrolling
    let mut h = harness_sized(app_with(&["ddp_rank0.json.gz"]), [1600.0, 1500.0]);
    let top = h.state().ws.traces[0].kernels()[0].name.clone();
    click_table_row(&mut h, &top);
    h.get_by_label(KERNEL_BLOCK);
    let kernel = h.state().sel.span.expect("the longest occurrence is selected");

    // its launch, through Details' "Launched by" link: a CPU span of another name
    let (link, launch) = {
        let st = &h.state().ws.traces[0].store;
        let l = st.launch_of(kernel.span).expect("a linked launch");
        let kind = strobe_model::SpanKind::from_u8(st.span_meta(l).kind);
        let dur = strobe_analysis::report::fmt_ns(st.span_end(l) - st.span_start(l));
        (format!("{} · {kind:?} · {dur}", st.span_name(l)), l)
    };
    h.get_by_label(&link).click();
    h.run_steps(3);
    let st = &h.state().ws.traces[0].store;
    let got = h.state().sel.span.unwrap().span;
    assert_eq!(got, launch, "{} at depth {}", st.span_name(got), st.span_meta(got).depth);
    assert!(h.query_by_label(KERNEL_BLOCK).is_none(), "the kernel's figures stay under its launch");
    assert!(h.state().sel.kernel.is_none());
    assert!(!h.state().highlight().active, "nor does its highlight");

    // the kernel again, then a click on the timeline on a neighbour of another name
    click_table_row(&mut h, &top);
    h.get_by_label(KERNEL_BLOCK);
    let other = wide_span_on_screen(&h, &top);
    let (other, p) = other.expect("a span of another name on screen");
    click_at(&mut h, p);
    assert_eq!(h.state().sel.span, Some(other));
    assert!(h.query_by_label(KERNEL_BLOCK).is_none(), "the figures of the kernel clicked before are gone");

    // a span of the kernel itself keeps them
    click_table_row(&mut h, &top);
    let p = h.state().timeline().span_pos(h.state().timeline_state(), &h.state().ws, kernel).unwrap();
    click_at(&mut h, p);
    assert_eq!(h.state().sel.span, Some(kernel));
    h.get_by_label(KERNEL_BLOCK);
}

/// A search for a CPU op that only runs deep in the stack (every one of the 18
/// `aten::_cudnn_attention_forward` of gpt_train nests 17 or more deep: counted over the JSON
/// with python) scrolls to its row, not just to its lane; so does F after scrolling away.
#[test]
fn jumps_bring_a_deep_span_on_screen() {
    // a window as short as a laptop's: the span's lane starts above the rows shown
    let mut h = harness_sized(app_with(&["gpt_train.json.gz"]), [1600.0, 760.0]);
    h.get_by_label("Search").focus();
    h.get_by_label("Search").type_text("aten::_cudnn_attention_forward");
    h.run_steps(2);
    assert_eq!(h.state().search().matches.len(), 18);
    h.key_press(egui::Key::Enter);
    h.run_steps(3);
    let r = h.state().sel.span.expect("Enter selects the first match");
    let depth = h.state().ws.traces[0].store.span_meta(r.span).depth;
    assert!(depth >= 15, "depth {depth}");
    assert!(row_on_screen(&h, r), "the span's row is in view");
    let lane_y = h.state().timeline().layout.lane_y[&(r.trace, h.state().ws.traces[0].store.span_meta(r.span).lane)];
    assert!(lane_y < h.state().timeline_state().scroll_y, "the lane's top is scrolled away");
    // and drawn there, its lane's top scrolled away or not: a click on it selects it
    let p = h.state().timeline().span_pos(h.state().timeline_state(), &h.state().ws, r).expect("on screen");
    click_at(&mut h, p);
    assert_eq!(h.state().sel.span, Some(r), "the span is drawn where its row is");

    // scrolled back to the top, F frames the selection and its row again
    h.get_by_label("Search").focus();
    h.key_press(egui::Key::Escape);
    h.run_steps(1);
    assert_eq!(h.state().sel.span, Some(r), "Esc in the search box ends the search only");
    h.state_mut().timeline_state_mut().scroll_y = 0.0;
    h.run_steps(2);
    assert!(!row_on_screen(&h, r), "scrolled away");
    h.key_press(egui::Key::F);
    h.run_steps(3);
    assert!(row_on_screen(&h, r), "F brings the row back");
    let (w0, w1) = h.state().timeline_state().view.window(h.state().timeline().plot_width);
    let st = &h.state().ws.traces[0].store;
    assert!(st.span_start(r.span) >= w0 && st.span_end(r.span) <= w1);
}

/// A templated kernel's name (hundreds of characters) is one line in Details, whole on hover,
/// and its copy button puts all of it on the clipboard.
#[test]
fn a_long_kernel_name_takes_one_line() {
    let mut h = harness(app_with(&["gpt_train.json.gz"]));
    let (id, name) = {
        let t = &h.state().ws.traces[0];
        let k = t.kernels().iter().max_by_key(|k| k.name.len()).unwrap();
        (t.id, k.name.clone())
    };
    assert!(name.len() > 200, "{name}");
    h.state_mut().push(Command::SelectKernel { trace: id, name: name.clone() });
    h.run_steps(3);
    h.get_by_label(KERNEL_BLOCK);
    let details_x = h.get_by_label("Details").rect().left();
    let shown: Vec<egui::Rect> =
        h.get_all_by_label(&name).map(|n| n.rect()).filter(|r| r.left() >= details_x - 1.0).collect();
    assert_eq!(shown.len(), 2, "the span's name and the kernel's");
    for r in shown {
        assert!(r.height() < 2.0 * ROW_H, "one line: {r:?}");
    }
    h.get_all_by_label(strobe_ui::name_line::COPY_LABEL).next().unwrap().click();
    h.step();
    assert_eq!(copied(&h), vec![name]);
}

/// The area shade covers the lanes the area took, not the whole height of the timeline.
#[test]
fn area_shade_covers_its_lanes_only() {
    let mut h = harness(app_with(&["ddp_rank0.json.gz"]));
    let (t0, t1) = h.state().ws.extent().unwrap();
    let id = h.state().ws.traces[0].id;
    // the first two lanes laid out one under the other
    let rows: Vec<(u32, f32, f32)> = h
        .state()
        .timeline()
        .layout
        .rows
        .iter()
        .filter_map(|r| if let RowKind::Lane { lane, .. } = r.kind { Some((lane, r.y, r.h)) } else { None })
        .take(2)
        .collect();
    assert_eq!(rows.len(), 2);
    let ctx = h.ctx.clone();
    let lanes = rows.iter().map(|&(l, ..)| (id, l)).collect();
    h.state_mut().apply(Command::AreaSelected { t0, t1, lanes }, &ctx);
    h.run_steps(2);
    let app = h.state();
    let plot = app.timeline().last_plot();
    let rects = app.timeline().layout.area_rects(app.timeline_state(), &app.ws, &app.sel, plot, plot);
    let scroll = app.timeline_state().scroll_y;
    let (top, bottom) = (rows[0].1, rows[1].1 + rows[1].2);
    let adjacent = (rows[0].1 + rows[0].2 - rows[1].1).abs() < 0.5;
    assert_eq!(rects.len(), if adjacent { 1 } else { 2 }, "{rects:?}");
    assert!((rects[0].top() - (plot.top() + top - scroll)).abs() < 0.5, "{rects:?}");
    assert!((rects.last().unwrap().bottom() - (plot.top() + bottom - scroll)).abs() < 0.5, "{rects:?}");
    assert!(rects.iter().map(|r| r.height()).sum::<f32>() < plot.height() / 2.0);
}

/// Esc in the search box ends the search (its highlight no longer dims the rest); so does Esc
/// on the timeline once nothing is selected.
#[test]
fn esc_ends_the_search() {
    let mut h = harness(app_with(&["ddp_rank0.json.gz"]));
    h.get_by_label("Search").focus();
    h.get_by_label("Search").type_text("ncclDevKernel");
    h.run_steps(2);
    assert!(h.state().highlight().active);
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert_eq!(h.state().search().query, "");
    assert!(!h.state().highlight().active, "nothing dimmed");

    h.get_by_label("Search").focus();
    h.get_by_label("Search").type_text("ncclDevKernel");
    h.key_press(egui::Key::Enter);
    h.run_steps(3);
    assert!(h.state().sel.span.is_some());
    // leave the box (a click on the timeline's empty corner), then Esc twice: the selection,
    // then the search
    let plot = h.state().timeline().last_plot();
    click_at(&mut h, plot.left_bottom() + egui::vec2(-20.0, -4.0));
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert!(h.state().sel.span.is_none());
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert_eq!(h.state().search().query, "");
    assert!(!h.state().highlight().active);
}

/// Right-click on a span: copy its name, find all of it, pin its lane, hide it; the hidden
/// lane comes back from the ruler's "Hidden lanes" menu and from the track finder.
#[test]
fn span_and_lane_menus() {
    let mut h = harness(app_with(&["ddp_rank0.json.gz"]));
    let (id, top) = (h.state().ws.traces[0].id, h.state().ws.traces[0].kernels()[0].name.clone());
    click_table_row(&mut h, &top);
    let r = h.state().sel.span.unwrap();
    let lane = h.state().ws.traces[0].store.span_meta(r.span).lane;
    let at = |h: &Harness<'static, StrobeApp>| {
        h.state().timeline().span_pos(h.state().timeline_state(), &h.state().ws, r).expect("on screen")
    };

    let p = at(&h);
    right_click_at(&mut h, p);
    h.get_by_label("Copy name").click();
    h.step();
    assert_eq!(copied(&h), vec![top.clone()]);
    h.run_steps(2);

    right_click_at(&mut h, p);
    h.get_by_label("Find all with this name").click();
    h.run_steps(3);
    assert_eq!(h.state().search().query, format!("^{}$", regex::escape(&top)));
    assert_eq!(h.state().search().matches.len(), h.state().ws.traces[0].kernels()[0].count as usize);

    right_click_at(&mut h, p);
    h.get_by_label("Pin lane to top").click();
    h.run_steps(3);
    assert_eq!(h.state().timeline_state().pinned, vec![(id, lane)]);

    let p = at(&h);
    right_click_at(&mut h, p);
    h.get_by_label("Hide lane").click();
    h.run_steps(3);
    assert_eq!(h.state().timeline_state().hidden, vec![(id, lane)]);
    assert!(h.state().timeline_state().pinned.is_empty(), "a hidden lane leaves the pinned rows");
    assert!(!h.state().timeline().layout.lane_y.contains_key(&(id, lane)), "not laid out");

    h.get_by_label("Hidden lanes (1)").click();
    h.run_steps(2);
    h.get_by_label("Show all").click();
    h.run_steps(3);
    assert!(h.state().timeline_state().hidden.is_empty());
    assert!(h.state().timeline().layout.lane_y.contains_key(&(id, lane)));
    assert!(h.query_by_label("Hidden lanes (1)").is_none());

    // the track finder's check box hides and shows it too
    let label =
        format!("{} · {}", h.state().ws.traces[0].label, h.state().ws.traces[0].store.lanes[lane as usize].name);
    h.state_mut().push(Command::FindTrack);
    // (a window's first frame only measures it)
    h.run_steps(3);
    h.get_by_label(&format!("show {label}")).click();
    h.run_steps(2);
    assert_eq!(h.state().timeline_state().hidden, vec![(id, lane)]);
    h.get_by_label(&format!("show {label}")).click();
    h.run_steps(2);
    assert!(h.state().timeline_state().hidden.is_empty());
}

/// Right-click on a lane's label: the lane's menu (no span entries), and a jump to a span on a
/// hidden lane shows the lane again.
#[test]
fn lane_label_menu_and_jumps_to_hidden_lanes() {
    let mut h = harness(app_with(&["ddp_rank0.json.gz"]));
    let top = h.state().ws.traces[0].kernels()[0].name.clone();
    click_table_row(&mut h, &top);
    let r = h.state().sel.span.unwrap();
    let lane = h.state().ws.traces[0].store.span_meta(r.span).lane;
    let p = h.state().timeline().span_pos(h.state().timeline_state(), &h.state().ws, r).unwrap();
    let label_x = h.state().timeline().last_plot().left() - 60.0;
    right_click_at(&mut h, egui::pos2(label_x, p.y));
    assert!(h.query_by_label("Copy name").is_none(), "a lane's menu has no span entries");
    h.get_by_label("Hide lane").click();
    h.run_steps(3);
    assert_eq!(h.state().timeline_state().hidden, vec![(r.trace, lane)]);
    // a jump to its kernel shows it again
    click_table_row(&mut h, &top);
    step_until(&mut h, |a| a.timeline().layout.lane_y.contains_key(&(r.trace, lane)));
    assert!(h.state().timeline_state().hidden.is_empty());
    h.run_steps(2);
    assert!(row_on_screen(&h, r));
}
