//! The step-time attribution of one trace.

use super::StepBreakdown;
use crate::figures::TraceFigures;
use strobe_store::Store;

/// Every step of the trace, its time split into parts.
pub fn of_trace(_store: &Store, _figs: &TraceFigures) -> Vec<StepBreakdown> {
    Vec::new()
}
