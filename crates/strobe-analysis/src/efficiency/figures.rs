//! The roofline arithmetic of one piece of work against one device: achieved rates, the
//! bound by the ridge point, theoretical time, efficiency and time lost.

use super::formulas::Unit;
use super::peaks::DevicePeaks;
use serde::Serialize;

/// Compute or memory bound, by the ridge point (peak FLOP/s ÷ bandwidth) of the op's unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    Compute,
    Memory,
}

impl Bound {
    pub fn as_str(self) -> &'static str {
        match self {
            Bound::Compute => "compute",
            Bound::Memory => "memory",
        }
    }
}

/// Figures of `flops` and `bytes` that took `gpu_ns` on the GPU.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Figures {
    pub tflops_per_s: Option<f64>,
    pub gbps: Option<f64>,
    /// FLOP per byte.
    pub arithmetic_intensity: Option<f64>,
    /// Achieved FLOP/s as % of the unit's peak.
    pub pct_of_peak: Option<f64>,
    /// Achieved bytes/s as % of the bandwidth.
    pub pct_of_bandwidth: Option<f64>,
    pub bound: Option<Bound>,
    /// max(FLOPs / peak, bytes / bandwidth), summed over the instances.
    pub theoretical_ns: Option<f64>,
    /// theoretical / measured (1 = at the roofline).
    pub efficiency: Option<f64>,
    /// measured − theoretical.
    pub lost_ns: Option<f64>,
}

/// The shortest time `flops` and `bytes` can take on `d`'s `unit` and memory: the larger of
/// the two ceilings' times (whichever exists).
pub fn theoretical_ns(d: &DevicePeaks, unit: Unit, flops: f64, bytes: f64) -> Option<f64> {
    let c = d.flops(unit).filter(|p| *p > 0.0).map(|p| flops / p * 1e9);
    let m = d.bandwidth().filter(|b| *b > 0.0).map(|b| bytes / b * 1e9);
    match (c, m) {
        (Some(c), Some(m)) => Some(c.max(m)),
        (c, m) => c.or(m),
    }
}

/// Ridge point of `unit` on `d`: FLOP/byte where its compute and memory ceilings meet.
pub fn ridge(d: &DevicePeaks, unit: Unit) -> Option<f64> {
    Some(d.flops(unit)? / d.bandwidth().filter(|b| *b > 0.0)?)
}

/// Figures of work (summed over instances) whose summed theoretical time is `theoretical`.
pub fn figures(d: &DevicePeaks, unit: Unit, flops: f64, bytes: f64, gpu_ns: i64, theoretical: Option<f64>) -> Figures {
    let secs = gpu_ns as f64 * 1e-9;
    let rate = |x: f64| (secs > 0.0).then(|| x / secs);
    let fps = rate(flops);
    let bps = rate(bytes);
    let ai = (bytes > 0.0).then(|| flops / bytes);
    let bound = match (ai, ridge(d, unit)) {
        (Some(ai), Some(r)) => Some(if ai >= r { Bound::Compute } else { Bound::Memory }),
        (None, _) if flops > 0.0 => Some(Bound::Compute),
        _ if bytes > 0.0 => Some(Bound::Memory),
        _ => None,
    };
    Figures {
        tflops_per_s: fps.map(|f| f / 1e12),
        gbps: bps.map(|b| b / 1e9),
        arithmetic_intensity: ai,
        pct_of_peak: fps.zip(d.flops(unit)).filter(|(_, p)| *p > 0.0).map(|(f, p)| f / p * 100.0),
        pct_of_bandwidth: bps.zip(d.bandwidth()).filter(|(_, p)| *p > 0.0).map(|(b, p)| b / p * 100.0),
        bound,
        theoretical_ns: theoretical,
        efficiency: theoretical.filter(|_| gpu_ns > 0).map(|t| t / gpu_ns as f64),
        lost_ns: theoretical.map(|t| gpu_ns as f64 - t),
    }
}
