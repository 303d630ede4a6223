//! ncu's rule results of a launch, ranked, and the speedup they estimate for it.
//!
//! ncu's estimates are % of the kernel's duration. A `global` estimate is of the whole
//! kernel; a `local` one is of the part the rule looks at (one pipe, one cache), so only
//! global ones say how much of the kernel's time could go. Several rules' estimates overlap
//! (they look at the same stalls from different sides), so a kernel's estimate is the
//! largest global one, never their sum.

use strobe_model::ncu::NcuRule;

/// Largest estimate first (rules without one after, in report order); `OPT` before other
/// types at equal estimates.
pub fn ranked_rules(rules: &[NcuRule]) -> Vec<NcuRule> {
    let mut v: Vec<(usize, &NcuRule)> = rules.iter().enumerate().collect();
    v.sort_by(|(ia, a), (ib, b)| {
        let key = |r: &NcuRule| r.speedup_pct.unwrap_or(f64::NEG_INFINITY);
        key(b).total_cmp(&key(a)).then_with(|| (b.kind == "OPT").cmp(&(a.kind == "OPT"))).then(ia.cmp(ib))
    });
    v.into_iter().map(|(_, r)| r.clone()).collect()
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct EstimatedSpeedup {
    /// % of the kernel's duration.
    pub pct: f64,
    /// The rule that estimates it.
    pub rule: String,
}

/// The launch's largest global estimate (on a tie, the rule whose name sorts first, so the
/// answer does not depend on the order a report lists its rules in).
pub fn estimated_speedup(rules: &[NcuRule]) -> Option<EstimatedSpeedup> {
    rules
        .iter()
        .filter(|r| r.speedup_type.as_deref() == Some("global"))
        .filter_map(|r| Some((r.speedup_pct?, r)))
        .min_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)))
        .map(|(pct, r)| EstimatedSpeedup { pct, rule: r.name.clone() })
}
