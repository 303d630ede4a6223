//! The critical path of each step.

use super::CriticalPath;
use crate::figures::TraceFigures;
use strobe_store::Store;

/// One entry per step of `figs.steps(store)`, in order.
pub fn of_trace(store: &Store, figs: &TraceFigures) -> Vec<Option<CriticalPath>> {
    vec![None; figs.steps(store).len()]
}
