//! Keyboard moves from the selected span, as in Perfetto: `.` / `,` the next / previous span
//! at the same depth of its lane, `]` / `[` along its flows (to the span it flows into — a
//! launch's kernel — or back to the one flowing into it).

use crate::workspace::{SpanRef, Workspace};

/// The next (or previous) span after `r` on its lane at its depth, by start time.
pub fn step_on_lane(ws: &Workspace, r: SpanRef, forward: bool) -> Option<SpanRef> {
    let st = ws.store(r.trace)?;
    let m = st.span_meta(r.span);
    let v = st.lane_view(m.lane);
    let at = v.span.iter().position(|&s| s == r.span)?;
    let depth = v.depth[at];
    let found = if forward {
        (at + 1..v.span.len()).find(|&i| v.depth[i] == depth)
    } else {
        (0..at).rev().find(|&i| v.depth[i] == depth)
    }?;
    Some(SpanRef { trace: r.trace, span: v.span[found] })
}

/// The span `r` flows into (`forward`) or the one flowing into it; the first of several.
pub fn follow_flow(ws: &Workspace, r: SpanRef, forward: bool) -> Option<SpanRef> {
    let st = ws.store(r.trace)?;
    let span = if forward { st.flows_from(r.span).next()?.to } else { st.flows_to(r.span).next()?.from };
    Some(SpanRef { trace: r.trace, span })
}

#[cfg(test)]
mod tests {
    use super::*;
    use strobe_model::{IdKey, LaneKind, SourceFormat, SpanKind, TraceMeta};
    use strobe_store::{SpanInput, StoreBuilder};

    #[test]
    fn steps_along_a_lane_and_its_flows() {
        let mut b = StoreBuilder::in_memory();
        let cpu = b.lane(LaneKind::CpuThread { pid: IdKey::Num(1), tid: IdKey::Num(1) });
        let gpu = b.lane(LaneKind::GpuStream { device: 0, stream: 7 });
        let push = |b: &mut StoreBuilder, lane, name: &str, (start, end), kind, correlation| {
            let (name, cat) = (b.intern(name), b.intern("c"));
            let input =
                SpanInput { lane, start, end, name, cat, kind, flags: 0, args: b"", correlation, copy_dir: None };
            b.push_span(input).unwrap()
        };
        push(&mut b, cpu, "step", (0, 100), SpanKind::CpuOp, 0);
        push(&mut b, cpu, "cudaLaunchKernel", (10, 20), SpanKind::CudaRuntime, 1);
        push(&mut b, cpu, "cudaLaunchKernel", (30, 40), SpanKind::CudaRuntime, 2);
        push(&mut b, gpu, "k", (50, 60), SpanKind::Kernel, 1);
        let st = b.finish(&TraceMeta::new(SourceFormat::Kineto, "t")).unwrap().into_store().unwrap();
        let find = |lane: u32, start: i64| {
            let v = st.lane_view(lane);
            v.span[v.starts.iter().position(|&s| s == start).unwrap()]
        };
        let (l1, l2, k1) = (find(cpu, 10), find(cpu, 30), find(gpu, 50));
        let mut ws = Workspace::default();
        let id = ws.add_trace(crate::workspace::Trace::new(
            "t".into(),
            st,
            &crate::workspace::FigureSettings { idle_threshold_ns: 1000, ..Default::default() },
        ));
        let at = |span| SpanRef { trace: id, span };
        assert_eq!(step_on_lane(&ws, at(l1), true), Some(at(l2)), "the next launch, not its parent");
        assert_eq!(step_on_lane(&ws, at(l2), false), Some(at(l1)));
        assert_eq!(step_on_lane(&ws, at(l2), true), None);
        assert_eq!(follow_flow(&ws, at(l1), true), Some(at(k1)));
        assert_eq!(follow_flow(&ws, at(k1), false), Some(at(l1)));
        assert_eq!(follow_flow(&ws, at(l2), true), None, "its kernel is not in the trace");
    }
}
