//! One trace's step attribution as the viewer reads it: the steps' breakdowns (each with its
//! critical path), which step is the median one, and every critical-path span in time order
//! (what the timeline outlines and the next / previous keys walk). Computed once on the
//! analyses thread from `TraceFigures::step_breakdown` and `TraceFigures::critical_paths`.

use strobe_analysis::attribution::{CriticalPath, StepBreakdown};
use strobe_analysis::figures::TraceFigures;
use strobe_store::Store;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepFigures {
    /// In step order; each one's `critical_path` filled from the trace's critical paths where
    /// the breakdown did not carry one.
    pub steps: Vec<StepBreakdown>,
    /// The index of the step of median length (the lower middle of an even count).
    pub median: Option<usize>,
    /// Every step's critical-path spans, by start time, without repeats.
    pub path_spans: Vec<u32>,
}

impl StepFigures {
    /// From the trace's figures (found by `figs` unless there).
    pub fn of(store: &Store, figs: &TraceFigures) -> StepFigures {
        StepFigures::with_paths(store, figs.step_breakdown(store).to_vec(), figs.critical_paths(store))
    }

    /// `steps` with the critical path of step `i` taken from `paths[i]` where it has none.
    pub fn with_paths(store: &Store, mut steps: Vec<StepBreakdown>, paths: &[Option<CriticalPath>]) -> StepFigures {
        for (s, p) in steps.iter_mut().zip(paths) {
            if s.critical_path.is_none() {
                s.critical_path = p.clone();
            }
        }
        let n = store.span_count() as u32;
        let mut path_spans: Vec<u32> = steps
            .iter()
            .filter_map(|s| s.critical_path.as_ref())
            .flat_map(|p| p.spans.iter().copied())
            // a span id the store does not have is skipped, never drawn or jumped to
            .filter(|&s| s < n)
            .collect();
        path_spans.sort_by_key(|&s| (store.span_start(s), s));
        path_spans.dedup();
        StepFigures::new_sorted(steps, path_spans)
    }

    /// `path_spans` already in time order.
    pub fn new_sorted(steps: Vec<StepBreakdown>, path_spans: Vec<u32>) -> StepFigures {
        let median = median_index(&steps);
        StepFigures { steps, median, path_spans }
    }

    /// Whether `span` is on some step's critical path.
    pub fn on_path(&self, span: u32) -> bool {
        self.steps.iter().filter_map(|s| s.critical_path.as_ref()).any(|p| p.spans.contains(&span))
    }

    /// The index of the step whose range holds `t` (the trace's own clock).
    pub fn step_at(&self, t: i64) -> Option<usize> {
        self.steps.iter().position(|s| t >= s.start_ns && t < s.start_ns + s.dur_ns)
    }
}

/// The index of the median-length step: of the steps sorted by length (then start), the
/// lower middle one.
pub fn median_index(steps: &[StepBreakdown]) -> Option<usize> {
    if steps.is_empty() {
        return None;
    }
    let mut order: Vec<usize> = (0..steps.len()).collect();
    order.sort_by_key(|&i| (steps[i].dur_ns, steps[i].start_ns));
    Some(order[(order.len() - 1) / 2])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(dur_ns: i64, start_ns: i64) -> StepBreakdown {
        StepBreakdown { step: format!("s{start_ns}"), start_ns, dur_ns, ..Default::default() }
    }

    #[test]
    fn the_median_step_is_the_lower_middle_by_length() {
        assert_eq!(median_index(&[]), None);
        let steps = [step(90, 0), step(120, 100), step(80, 300), step(95, 400)];
        // by length: 80 (2), 90 (0), 95 (3), 120 (1): the lower middle is 90
        assert_eq!(median_index(&steps), Some(0));
        assert_eq!(median_index(&steps[..3]), Some(0));
        assert_eq!(median_index(&steps[1..2]), Some(0));
    }
}
