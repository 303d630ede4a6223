//! What the pointer is over (found while the frame is prepared) and what its tooltip says.

use crate::workspace::Workspace;
use strobe_analysis::idle::IdleGap;
use strobe_analysis::report::fmt_ns;
use strobe_model::SpanKind;
use strobe_store::LodItem;

#[derive(Clone, Copy, Debug)]
pub enum Hover {
    /// A span or a run of folded spans; `span` is the drawn one (the longest when folded).
    Item { trace: usize, item: LodItem, span: u32 },
    /// A long GPU idle gap (trace-local times).
    Gap { trace: usize, gap: IdleGap },
    /// Communication overlapped by compute, or exposed (trace-local times).
    Band { device: i64, overlapped: bool, iv: (i64, i64) },
    /// An iteration in the step strip (index into `Derived::steps`).
    Step { trace: usize, step: usize },
    /// A CPU range projected onto the GPU (index into `Derived::nvtx_gpu`).
    Projected { trace: usize, index: usize },
    /// A pipeline stage's microbatch (index into its `PipelineRank::microbatches`).
    Microbatch { trace: usize, index: usize },
    /// A part of a pipeline stage's bubble in a step (index into `PipelineRank::bubbles`).
    Bubble { trace: usize, step: usize, kind: super::pipeline_strip::BubbleKind, iv: (i64, i64) },
}

/// Index of the interval of `ivs` (sorted, disjoint) containing `t`, or within `slack` ns of it.
pub fn find_containing<T>(ivs: &[T], iv: impl Fn(&T) -> (i64, i64), t: i64, slack: f64) -> Option<usize> {
    let lo = ivs.partition_point(|x| iv(x).1 <= t);
    let s = slack as i64;
    [lo.wrapping_sub(1), lo].into_iter().find(|&k| {
        ivs.get(k).is_some_and(|x| {
            let (a, b) = iv(x);
            a - s <= t && t < b + s
        })
    })
}

pub fn hover_text(ws: &Workspace, h: &Hover) -> String {
    match *h {
        Hover::Item { trace, item, span, .. } => {
            let st = &*ws.traces[trace].store;
            let m = st.span_meta(span);
            if item.count > 1 {
                format!(
                    "{} spans folded here\nbusy {} of {}\nlongest: {} ({})\ndouble-click to zoom in",
                    item.count,
                    fmt_ns(item.busy),
                    fmt_ns(item.end - item.start),
                    st.span_name(span),
                    fmt_ns(item.longest)
                )
            } else {
                format!("{}\n{:?} · {}", st.span_name(span), SpanKind::from_u8(m.kind), fmt_ns(item.end - item.start))
            }
        }
        Hover::Gap { trace, gap } => {
            let st = &*ws.traces[trace].store;
            let mut s =
                format!("GPU idle {} — {}\n{}", fmt_ns(gap.end - gap.start), gap.cause.label(), gap.cause.explain());
            s.push_str(&format!("\nbefore: {}\nafter: {}", st.span_name(gap.prev_span), st.span_name(gap.next_span)));
            if let Some(l) = gap.next_launch {
                let dt = st.span_start(l) - gap.start;
                s.push_str(&format!(
                    "\nlaunch: {} at {}{} from the gap's start",
                    st.span_name(l),
                    if dt >= 0 { "+" } else { "-" },
                    fmt_ns(dt.abs())
                ));
            }
            s
        }
        Hover::Projected { trace, index } => {
            let Some(p) = ws.traces[trace].nvtx_gpu().get(index) else { return String::new() };
            format!(
                "{} on GPU {}\nGPU time {} over {} ({} GPU spans)\nclick to select the CPU range",
                p.name,
                p.device,
                fmt_ns(p.gpu_ns),
                fmt_ns(p.end_ns - p.start_ns),
                p.gpu_spans
            )
        }
        Hover::Step { trace, step } => {
            let steps = ws.traces[trace].steps();
            let Some(s) = steps.get(step) else { return String::new() };
            let durs: Vec<i64> = steps.iter().map(|s| s.dur_ns).collect();
            let typical = strobe_analysis::stats::median(&durs).unwrap_or(0);
            let mut out = format!(
                "{} ({}): {} · median step {}\nclick to show it",
                s.name,
                s.source.as_str(),
                fmt_ns(s.dur_ns),
                fmt_ns(typical)
            );
            for a in ws.traces[trace].step_anomalies().iter().filter(|a| a.step == s.name) {
                out.push_str(&format!("\n{}", a.evidence));
            }
            out
        }
        Hover::Microbatch { trace, index } => super::pipeline_strip::microbatch_text(ws, trace, index),
        Hover::Bubble { trace, step, kind, iv } => super::pipeline_strip::bubble_text(ws, trace, step, kind, iv),
        Hover::Band { device, overlapped, iv, .. } => {
            if overlapped {
                format!("GPU {device}: comm under compute for {}", fmt_ns(iv.1 - iv.0))
            } else {
                format!("GPU {device}: exposed comm (nothing computes under it) for {}", fmt_ns(iv.1 - iv.0))
            }
        }
    }
}
