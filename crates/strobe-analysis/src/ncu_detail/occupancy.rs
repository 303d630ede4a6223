//! Occupancy of one launch, as ncu's Occupancy and Launch Statistics sections show it.
//!
//! - theoretical: `sm__maximum_warps_per_active_cycle_pct`; achieved:
//!   `sm__warps_active.avg.pct_of_peak_sustained_active`;
//! - the limiter: the smallest of the per-SM block limits `launch__occupancy_limit_{registers,
//!   shared_mem, warps, blocks, barriers}` (several where they tie);
//! - registers per thread (`launch__registers_per_thread`), shared memory per block
//!   (`launch__shared_mem_per_block`, else its static + dynamic + driver parts), waves per SM
//!   (`launch__waves_per_multiprocessor`);
//! - what would raise it: ncu's own occupancy rule message where the report has one, else a
//!   line from the limiter.

use strobe_model::ncu::NcuLaunch;

/// The block limits in the order the limiter names them: (metric suffix, name).
const LIMITS: [(&str, &str); 5] = [
    ("registers", "registers"),
    ("shared_mem", "shared_memory"),
    ("warps", "warps"),
    ("blocks", "blocks"),
    ("barriers", "barriers"),
];

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Occupancy {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theoretical_pct: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub achieved_pct: Option<f64>,
    /// What caps the blocks per SM: `registers`, `shared_memory`, `warps` (threads per block),
    /// `blocks` (the SM's block limit) or `barriers`; tied limits joined by `+`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limiter: Option<String>,
    /// Each limit in blocks per SM, as (name, blocks), where the report has it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub block_limits: Vec<(String, f64)>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registers_per_thread: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared_mem_per_block_bytes: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waves_per_sm: Option<f64>,
    /// What would raise it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advice: Option<String>,
}

pub fn occupancy(l: &NcuLaunch) -> Option<Occupancy> {
    let block_limits: Vec<(String, f64)> = LIMITS
        .iter()
        .filter_map(|(m, name)| l.value(&format!("launch__occupancy_limit_{m}")).map(|v| (name.to_string(), v)))
        .collect();
    let min = block_limits.iter().map(|(_, v)| *v).fold(f64::INFINITY, f64::min);
    let limiter = (!block_limits.is_empty())
        .then(|| block_limits.iter().filter(|(_, v)| *v == min).map(|(n, _)| n.as_str()).collect::<Vec<_>>().join("+"));
    let parts = ["static", "dynamic", "driver"].map(|p| l.value(&format!("launch__shared_mem_per_block_{p}")));
    let shared = l
        .value("launch__shared_mem_per_block")
        .or_else(|| parts.iter().all(Option::is_some).then(|| parts.iter().flatten().sum()));
    let mut o = Occupancy {
        theoretical_pct: l.value("sm__maximum_warps_per_active_cycle_pct"),
        achieved_pct: l.value("sm__warps_active.avg.pct_of_peak_sustained_active"),
        limiter,
        block_limits,
        registers_per_thread: l.value("launch__registers_per_thread"),
        shared_mem_per_block_bytes: shared,
        waves_per_sm: l.value("launch__waves_per_multiprocessor"),
        advice: None,
    };
    o.advice = advice(l, &o);
    let empty = o.theoretical_pct.is_none()
        && o.achieved_pct.is_none()
        && o.limiter.is_none()
        && o.registers_per_thread.is_none()
        && o.shared_mem_per_block_bytes.is_none()
        && o.waves_per_sm.is_none();
    (!empty).then_some(o)
}

/// ncu's occupancy rule message (the largest estimate first), else a line of our own from
/// the limiter and the gap between theoretical and achieved.
fn advice(l: &NcuLaunch, o: &Occupancy) -> Option<String> {
    let ncu = super::rules::ranked_rules(&l.rules)
        .into_iter()
        .find(|r| r.section == "Occupancy" || r.name.contains("Occupancy"))
        .map(|r| r.message);
    if ncu.is_some() {
        return ncu;
    }
    let (t, a) = (o.theoretical_pct?, o.achieved_pct);
    if t < 100.0 {
        let first = o.limiter.as_deref()?.split('+').next()?;
        let how = match first {
            "registers" => "fewer registers per thread (__launch_bounds__, -maxrregcount) would fit more blocks per SM",
            "shared_memory" => "less shared memory per block would fit more blocks per SM",
            "warps" => "the block size caps it: a block size that divides the SM's warp slots would fit more warps",
            "blocks" => "the SM's block limit caps it: larger blocks would fit more warps",
            "barriers" => "fewer named barriers per block would fit more blocks per SM",
            _ => return None,
        };
        return Some(format!("theoretical occupancy {t:.1} % is limited by {}: {how}", first.replace('_', " ")));
    }
    match a {
        Some(a) if a < 0.8 * t => Some(format!(
            "achieved occupancy {a:.1} % is well below the theoretical {t:.1} %: too few blocks{} or uneven work per block",
            o.waves_per_sm.map(|w| format!(" ({w:.2} waves per SM)")).unwrap_or_default()
        )),
        _ => None,
    }
}
