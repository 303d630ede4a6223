//! XLA's own step markers on the device: XProf's `Steps` line of a GPU plane (one event per
//! step, from the step grouping of the host's root events; the importer names each `step`
//! with its `step_num`). Used where the host recorded no step ranges of its own, from one
//! GPU only (every GPU's line marks the same steps), before steps are inferred.

use super::{Step, StepSource};
use strobe_model::LaneKind;
use strobe_store::Store;

/// The steps the lowest-numbered GPU's step markers give, by start; empty when none has any.
pub fn device_steps(store: &Store) -> Vec<Step> {
    let mut best: Option<(i64, Vec<Step>)> = None;
    for (lane, d) in store.lanes.iter().enumerate() {
        let LaneKind::GpuAnnotation { device, .. } = d.kind else { continue };
        if best.as_ref().is_some_and(|(b, _)| *b < device) {
            continue;
        }
        let v = store.lane_spans(lane as u32);
        let mut steps: Vec<Step> = Vec::new();
        for (k, &sid) in v.span.iter().enumerate() {
            if v.ends[k] <= v.starts[k] {
                continue;
            }
            let Some(n) = super::step_num::step_num(store.span_args_raw(sid)) else { continue };
            let name = format!("{} {n}", store.span_name(sid));
            steps.push(Step {
                name,
                start_ns: v.starts[k],
                dur_ns: v.ends[k] - v.starts[k],
                source: StepSource::Annotation,
            });
        }
        if !steps.is_empty() {
            steps.sort_by(|a, b| (a.start_ns, &a.name).cmp(&(b.start_ns, &b.name)));
            best = Some((device, steps));
        }
    }
    best.map(|b| b.1).unwrap_or_default()
}
