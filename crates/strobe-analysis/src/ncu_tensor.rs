//! Tensor-core work of an Nsight Compute launch, as the "GPU Speed Of Light Hierarchical
//! Roofline Chart (Tensor Core)" section (`SpeedOfLight_HierarchicalTensorRooflineChart.section`,
//! Nsight Compute 2025.3) counts it.
//!
//! The section plots one roofline per family of `sm__ops_path_tensor_*` counters. These count
//! **operations** (one multiply-add = 2, as FLOPs are counted), so their weight is 1: achieved
//! work = `<family>.sum.per_cycle_elapsed` × `sm__cycles_elapsed.avg.per_second`, ceiling =
//! `<family>.sum.peak_sustained` × the same SM frequency. The families differ by architecture:
//! - GH100 and later: per instruction and source type, `sm__ops_path_tensor_op_<inst>_src_<type>…`
//!   (`op_hgmma_src_bf16_dst_fp32_sparsity_off`, `op_hmma_…`, `op_imma_…`, `op_bgmma_…`,
//!   on Blackwell `op_utchmma_…`, `op_utcqmma_…`), plus `src_fp64` (DMMA has no `op_` family).
//! - TU10x to AD10x: per source type, `sm__ops_path_tensor_src_<type>[_sparsity_on|off]`
//!   (`src_bf16_dst_fp32_sparsity_off`, `src_fp16_dst_fp16_sparsity_on`, `src_fp64`, `src_int8…`).
//!
//! The families of one architecture's chart are disjoint, so the launch's tensor FLOPs are
//! their sum. An export holds more of these counters than the chart uses (the `src_` totals
//! beside the `op_` families on GH100; `src_bf16_dst_fp32` beside its `_sparsity_on/off`
//! parts): a counter is left out when finer ones of the same work are present — every `src_`
//! counter when `op_` counters cover its type, and a counter whose name is a prefix of another
//! present one.

use strobe_model::ncu::NcuLaunch;

const PREFIX: &str = "sm__ops_path_tensor_";
const SM_HZ: [&str; 2] = ["sm__cycles_elapsed.avg.per_second", "smsp__cycles_elapsed.avg.per_second"];

/// Tensor work of one launch.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorWork {
    /// Operations (FLOPs; integer ops for INT8/INT4/INT1 families).
    pub flops: f64,
    pub flops_per_s: Option<f64>,
    /// The family with the most work (`op_hgmma_src_bf16_dst_fp32_sparsity_off`).
    pub main_family: String,
    /// That family's ceiling: `peak_sustained` × SM frequency.
    pub main_peak_flops_per_s: Option<f64>,
}

/// The counter families the chart would plot for this launch (see the module doc).
pub fn families(l: &NcuLaunch) -> Vec<String> {
    let mut fams: Vec<String> = l
        .metrics
        .keys()
        .filter_map(|k| k.strip_prefix(PREFIX))
        .filter_map(|k| k.strip_suffix(".sum").or_else(|| k.strip_suffix(".sum.per_cycle_elapsed")))
        .map(String::from)
        .collect();
    fams.sort();
    fams.dedup();
    let op_srcs: Vec<String> = fams
        .iter()
        .filter_map(|f| f.strip_prefix("op_"))
        .filter_map(|f| f.split_once("_src_").map(|(_, s)| s.to_string()))
        .collect();
    let all = fams.clone();
    fams.retain(|f| {
        if let Some(src) = f.strip_prefix("src_") {
            if !op_srcs.is_empty()
                && (op_srcs.iter().any(|o| o.starts_with(src) || src.starts_with(o.as_str()))
                    || src_covered(src, &op_srcs))
            {
                return false;
            }
        }
        !all.iter().any(|g| g != f && g.starts_with(f.as_str()) && g.as_bytes().get(f.len()) == Some(&b'_'))
    });
    fams
}

/// `src_<type>` work counted by `op_` families of the same source type (`src_fp16` by
/// `op_hgmma_src_fp16_sparsity_off`, `src_fp8_sparsity_off` by `op_…_src_fp8_…`).
fn src_covered(src: &str, op_srcs: &[String]) -> bool {
    let ty = src.split('_').next().unwrap_or(src);
    op_srcs.iter().any(|o| o.split('_').next() == Some(ty))
}

fn family_value(l: &NcuLaunch, fam: &str, dur_s: Option<f64>, hz: Option<f64>) -> Option<(f64, Option<f64>)> {
    let count = l.value(&format!("{PREFIX}{fam}.sum"));
    let per_cycle = l.value(&format!("{PREFIX}{fam}.sum.per_cycle_elapsed"));
    let rate =
        per_cycle.zip(hz).map(|(c, h)| c * h).or_else(|| count.zip(dur_s.filter(|d| *d > 0.0)).map(|(c, d)| c / d));
    let flops = count.or_else(|| rate.zip(dur_s).map(|(r, d)| r * d))?;
    Some((flops, rate))
}

/// The launch's tensor work, or None when the export has no tensor-op counters.
pub fn tensor_work(l: &NcuLaunch) -> Option<TensorWork> {
    let fams = families(l);
    if fams.is_empty() {
        return None;
    }
    let hz = l.first_value(&SM_HZ);
    let dur_s = l.value(crate::roofline::DURATION).map(|d| d * 1e-9);
    let mut flops = 0.0;
    let mut rate: Option<f64> = None;
    let mut main: Option<(&str, f64)> = None;
    for f in &fams {
        let Some((fl, r)) = family_value(l, f, dur_s, hz) else { continue };
        flops += fl;
        if let Some(r) = r {
            *rate.get_or_insert(0.0) += r;
        }
        if main.is_none_or(|m| fl > m.1) {
            main = Some((f, fl));
        }
    }
    let (main_family, _) = main?;
    let peak = l.value(&format!("{PREFIX}{main_family}.sum.peak_sustained")).zip(hz).map(|(p, h)| p * h);
    Some(TensorWork { flops, flops_per_s: rate, main_family: main_family.to_string(), main_peak_flops_per_s: peak })
}

#[cfg(test)]
mod tests {
    use super::*;
    use strobe_model::ncu::NcuMetric;

    fn launch(metrics: &[(&str, f64)]) -> NcuLaunch {
        let mut l = NcuLaunch::default();
        for (k, v) in metrics {
            l.metrics.insert(
                k.to_string(),
                NcuMetric { value: Some(*v), unit: String::new(), raw: String::new(), raw_unit: String::new() },
            );
        }
        l
    }

    #[test]
    fn gh100_uses_op_families() {
        let l = launch(&[
            ("sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum", 100.0),
            ("sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_on.sum", 0.0),
            ("sm__ops_path_tensor_src_bf16_dst_fp32.sum", 100.0),
            ("sm__ops_path_tensor_src_fp16.sum", 0.0),
            ("sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum", 0.0),
            ("sm__ops_path_tensor_src_fp64.sum", 6.0),
            ("gpu__time_duration.sum", 1000.0),
        ]);
        let f = families(&l);
        assert!(f.contains(&"src_fp64".to_string()) && !f.iter().any(|x| x == "src_bf16_dst_fp32" || x == "src_fp16"));
        let w = tensor_work(&l).unwrap();
        assert_eq!(w.flops, 106.0);
        assert_eq!(w.main_family, "op_hgmma_src_bf16_dst_fp32_sparsity_off");
        assert!((w.flops_per_s.unwrap() - 106.0e6).abs() < 1e-3);
    }

    #[test]
    fn ga100_uses_the_finest_src_families() {
        let l = launch(&[
            ("sm__ops_path_tensor_src_bf16_dst_fp32.sum", 10.0),
            ("sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off.sum", 8.0),
            ("sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_on.sum", 2.0),
            ("sm__ops_path_tensor_src_int8_sparsity_off.sum", 1.0),
        ]);
        assert_eq!(tensor_work(&l).unwrap().flops, 11.0);
        assert!(tensor_work(&launch(&[("gpu__time_duration.sum", 5.0)])).is_none());
    }
}
