//! Device ceilings: published dense peaks per GPU (no structured-sparsity figures) and the
//! HBM bandwidth, picked by the device name the trace records (Kineto `deviceProperties`,
//! nsys `TARGET_INFO_GPU`), overridable on the command line.
//!
//! Sources (datasheet figures marked "with sparsity" are halved to the dense rate):
//! - V100: NVIDIA Tesla V100 datasheet (SXM2: 125 TFLOPS tensor, 15.7 FP32, 7.8 FP64,
//!   900 GB/s; PCIe: 112, 14, 7, 900 GB/s). FP16 non-tensor: 2 × FP32.
//! - A100: NVIDIA A100 Tensor Core GPU datasheet (2021): TF32 156, BF16/FP16 312, INT8 624,
//!   FP64 tensor 19.5, FP32 19.5, FP64 9.7 TFLOPS; HBM 1,555 GB/s (40GB), 2,039 GB/s
//!   (80GB SXM), 1,935 GB/s (80GB PCIe). FP16 non-tensor 78 from the A100 architecture
//!   whitepaper, table 1.
//! - H100: NVIDIA H100 Tensor Core GPU datasheet: SXM FP8 1,979, BF16/FP16 989, TF32 495,
//!   FP64 tensor 67, FP32 67, FP64 34 TFLOPS, 3.35 TB/s; PCIe FP8 1,513, BF16 756, TF32 378,
//!   FP64 tensor 51, FP32 51, FP64 26, 2 TB/s; NVL FP8 1,670, BF16 835, TF32 418, FP64 tensor
//!   60, FP32 60, FP64 30, 3.9 TB/s. FP16 non-tensor (SXM) 133.8 from the H100 architecture
//!   whitepaper v1.04, table 2.
//! - H200: NVIDIA H200 Tensor Core GPU datasheet: SXM as H100 SXM with 4.8 TB/s; NVL FP8
//!   1,670, BF16 835, TF32 418, FP64 tensor 60, FP32 60, FP64 30, 4.8 TB/s.
//! - B200: NVIDIA HGX B200 datasheet, 8-GPU totals ÷ 8: FP8 4.5 PFLOPS, BF16 2.25, TF32
//!   1.125, FP64 tensor 37, FP32 75, FP64 37 TFLOPS, 8 TB/s.
//! - MI250X / MI250: AMD Instinct MI250X and MI250 datasheets: BF16/FP16 383 / 362.1,
//!   INT8 383 / 362.1, FP64 matrix 95.7 / 90.5, FP32 vector 47.9 / 45.3, FP64 vector
//!   47.9 / 45.3 TFLOPS, 3.2768 TB/s.
//! - MI300X: AMD Instinct MI300X datasheet: FP8 2,614.9, INT8 2,614.9, BF16/FP16 1,307.4,
//!   TF32 653.7, FP64 matrix 163.4, FP32 vector 163.4, FP64 vector 81.7 TFLOPS, 5.3 TB/s.

use super::formulas::Unit;
use serde::Serialize;
use std::collections::BTreeMap;
use strobe_model::DeviceInfo;

/// Published peaks of one GPU, in TFLOP/s (TOP/s for INT8) and GB/s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Published {
    pub name: &'static str,
    pub tensor_fp8: Option<f64>,
    pub tensor_int8: Option<f64>,
    pub tensor_bf16: Option<f64>,
    pub tensor_fp16: f64,
    pub tensor_tf32: Option<f64>,
    pub tensor_fp64: Option<f64>,
    pub fp32: f64,
    pub fp64: f64,
    /// Non-tensor FP16 (packed half2 FMA), where published.
    pub fp16: Option<f64>,
    pub hbm_gbps: f64,
    pub citation: &'static str,
}

/// Compute peaks: ([FP8, INT8, BF16] tensor, FP16 tensor, [TF32, FP64] tensor, [FP32, FP64]).
type Compute = ([Option<f64>; 3], f64, [Option<f64>; 2], [f64; 2]);

const fn gpu(
    name: &'static str,
    ([fp8, int8, bf16], fp16_tensor, [tf32, fp64_tensor], [fp32, fp64]): Compute,
    fp16: Option<f64>,
    hbm_gbps: f64,
    citation: &'static str,
) -> Published {
    Published {
        name,
        tensor_fp8: fp8,
        tensor_int8: int8,
        tensor_bf16: bf16,
        tensor_fp16: fp16_tensor,
        tensor_tf32: tf32,
        tensor_fp64: fp64_tensor,
        fp32,
        fp64,
        fp16,
        hbm_gbps,
        citation,
    }
}

const V100: &str = "NVIDIA Tesla V100 datasheet";
const A100: &str = "NVIDIA A100 datasheet / A100 architecture whitepaper";
const H100: &str = "NVIDIA H100 datasheet / H100 architecture whitepaper";
const H200: &str = "NVIDIA H200 datasheet / H100 architecture whitepaper";
const B200: &str = "NVIDIA HGX B200 datasheet (8-GPU totals / 8)";

pub const V100_SXM2: Published =
    gpu("V100 SXM2", ([None, None, None], 125.0, [None, None], [15.7, 7.8]), Some(31.4), 900.0, V100);
pub const V100_PCIE: Published =
    gpu("V100 PCIe", ([None, None, None], 112.0, [None, None], [14.0, 7.0]), Some(28.0), 900.0, V100);
const A100_COMPUTE: Compute = ([None, Some(624.0), Some(312.0)], 312.0, [Some(156.0), Some(19.5)], [19.5, 9.7]);
pub const A100_SXM_80: Published = gpu("A100 SXM4 80GB", A100_COMPUTE, Some(78.0), 2039.0, A100);
pub const A100_PCIE_80: Published = gpu("A100 PCIe 80GB", A100_COMPUTE, Some(78.0), 1935.0, A100);
pub const A100_40: Published = gpu("A100 40GB", A100_COMPUTE, Some(78.0), 1555.0, A100);
const HOPPER_SXM: Compute = ([Some(1979.0), Some(1979.0), Some(989.0)], 989.0, [Some(495.0), Some(67.0)], [67.0, 34.0]);
const HOPPER_NVL: Compute = ([Some(1670.0), Some(1670.0), Some(835.0)], 835.0, [Some(418.0), Some(60.0)], [60.0, 30.0]);
pub const H100_SXM: Published = gpu("H100 SXM5", HOPPER_SXM, Some(133.8), 3350.0, H100);
pub const H100_PCIE: Published = gpu(
    "H100 PCIe",
    ([Some(1513.0), Some(1513.0), Some(756.0)], 756.0, [Some(378.0), Some(51.0)], [51.0, 26.0]),
    None,
    2000.0,
    H100,
);
pub const H100_NVL: Published = gpu("H100 NVL", HOPPER_NVL, None, 3900.0, H100);
pub const H200_SXM: Published = gpu("H200 SXM", HOPPER_SXM, Some(133.8), 4800.0, H200);
pub const H200_NVL: Published = gpu("H200 NVL", HOPPER_NVL, None, 4800.0, H200);
pub const B200_: Published = gpu(
    "B200",
    ([Some(4500.0), Some(4500.0), Some(2250.0)], 2250.0, [Some(1125.0), Some(37.0)], [75.0, 37.0]),
    None,
    8000.0,
    B200,
);
pub const MI250X: Published = gpu(
    "MI250X",
    ([None, Some(383.0), Some(383.0)], 383.0, [None, Some(95.7)], [47.9, 47.9]),
    None,
    3276.8,
    "AMD Instinct MI250X datasheet",
);
pub const MI250: Published = gpu(
    "MI250",
    ([None, Some(362.1), Some(362.1)], 362.1, [None, Some(90.5)], [45.3, 45.3]),
    None,
    3276.8,
    "AMD Instinct MI250 datasheet",
);
pub const MI300X: Published = gpu(
    "MI300X",
    ([Some(2614.9), Some(2614.9), Some(1307.4)], 1307.4, [Some(653.7), Some(163.4)], [163.4, 81.7]),
    None,
    5300.0,
    "AMD Instinct MI300X datasheet",
);

/// The table entry for a device name as CUDA/ROCm report it (`NVIDIA H200`, `NVIDIA H100
/// 80GB HBM3`, `NVIDIA A100-SXM4-40GB`, `Tesla V100-DGXS-32GB`, `AMD Instinct MI300X`);
/// `memory_bytes` tells the A100's 40 GB and 80 GB parts apart.
pub fn published(name: &str, memory_bytes: Option<u64>) -> Option<Published> {
    let n = name.to_ascii_lowercase();
    let has = |s: &str| n.contains(s);
    Some(if has("mi300x") {
        MI300X
    } else if has("mi250x") {
        MI250X
    } else if has("mi250") {
        MI250
    } else if has("b200") {
        B200_
    } else if has("h200") {
        if has("nvl") {
            H200_NVL
        } else {
            H200_SXM
        }
    } else if has("h100") {
        if has("pcie") {
            H100_PCIE
        } else if has("nvl") {
            H100_NVL
        } else {
            H100_SXM
        }
    } else if has("a100") {
        let big = has("80gb") || memory_bytes.is_some_and(|b| b > 50_000_000_000);
        match (big, has("pcie")) {
            (true, true) => A100_PCIE_80,
            (true, false) => A100_SXM_80,
            _ => A100_40,
        }
    } else if has("v100") {
        if has("pcie") {
            V100_PCIE
        } else {
            V100_SXM2
        }
    } else {
        return None;
    })
}

/// By compute capability, for sources that record no name (ncu exports): CC 9.0 is H200
/// when the DRAM clock is HBM3e's (≥ 2.9 GHz), else H100.
pub fn published_by_cc(cc: &str, dram_hz: Option<f64>) -> Option<Published> {
    Some(match cc.trim() {
        "7.0" => V100_SXM2,
        "8.0" => A100_SXM_80,
        "9.0" if dram_hz.is_some_and(|h| h >= 2.9e9) => H200_SXM,
        "9.0" => H100_SXM,
        "10.0" => B200_,
        _ => return None,
    })
}

/// The ceilings the efficiency figures use.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DevicePeaks {
    /// The device name the trace records ("" when it records none).
    pub name: String,
    /// The table entry the name matched.
    pub matched: Option<String>,
    /// `published` (the table), `override` (command line), `published+override`, `device`
    /// (bandwidth the trace records, nsys), or `none`.
    pub source: String,
    pub citation: Option<String>,
    /// FLOP/s per unit (`tensor_bf16`, `fp32`, …) and `hbm_bytes_per_s`.
    pub peaks: BTreeMap<String, f64>,
}

/// Command-line overrides: one compute peak for every unit, and the memory bandwidth.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PeakOverride {
    pub tflops: Option<f64>,
    pub gbps: Option<f64>,
}

pub const HBM: &str = "hbm_bytes_per_s";

impl DevicePeaks {
    pub fn from_published(p: &Published) -> BTreeMap<String, f64> {
        let t = 1e12;
        let mut m = BTreeMap::new();
        let mut put = |u: Unit, v: Option<f64>| {
            if let Some(v) = v {
                m.insert(u.as_str().to_string(), v * t);
            }
        };
        put(Unit::TensorFp8, p.tensor_fp8);
        put(Unit::TensorInt8, p.tensor_int8);
        put(Unit::TensorBf16, p.tensor_bf16);
        put(Unit::TensorFp16, Some(p.tensor_fp16));
        put(Unit::TensorTf32, p.tensor_tf32);
        put(Unit::TensorFp64, p.tensor_fp64);
        put(Unit::Fp32, Some(p.fp32));
        put(Unit::Fp64, Some(p.fp64));
        m.insert(HBM.to_string(), p.hbm_gbps * 1e9);
        m
    }

    /// Ceilings of `device` (None: the trace names none), with `ov` applied.
    pub fn of(device: Option<&DeviceInfo>, ov: PeakOverride) -> DevicePeaks {
        let mut d = DevicePeaks { name: device.map(|d| d.name.clone()).unwrap_or_default(), ..Default::default() };
        let mut sources = Vec::new();
        if let Some(p) = device.and_then(|x| published(&x.name, x.total_memory_bytes)) {
            d.matched = Some(p.name.to_string());
            d.citation = Some(p.citation.to_string());
            d.peaks = Self::from_published(&p);
            sources.push("published");
        }
        // nsys records the device's memory bandwidth: the measured part beats the table.
        if let Some(bw) = device.and_then(|x| x.extra.get("memory_bandwidth_bytes_per_s")).and_then(|v| v.as_f64()) {
            if bw > 0.0 {
                d.peaks.insert(HBM.to_string(), bw);
                sources.push("device");
            }
        }
        if let Some(t) = ov.tflops.filter(|t| t.is_finite() && *t > 0.0) {
            for u in ALL_UNITS {
                d.peaks.insert(u.as_str().to_string(), t * 1e12);
            }
            sources.push("override");
        }
        if let Some(g) = ov.gbps.filter(|g| g.is_finite() && *g > 0.0) {
            d.peaks.insert(HBM.to_string(), g * 1e9);
            if !sources.contains(&"override") {
                sources.push("override");
            }
        }
        d.source = if sources.is_empty() { "none".into() } else { sources.join("+") };
        d
    }

    /// Peak FLOP/s of `unit`; a unit the device lacks falls back to the one its kernels
    /// would run on instead (FP8/INT8/BF16 → FP16 tensor, TF32 → FP32, FP64 tensor → FP64).
    pub fn flops(&self, unit: Unit) -> Option<f64> {
        let get = |u: Unit| self.peaks.get(u.as_str()).copied();
        get(unit).or_else(|| match unit {
            Unit::TensorFp8 | Unit::TensorInt8 | Unit::TensorBf16 => get(Unit::TensorFp16),
            Unit::TensorTf32 => get(Unit::Fp32),
            Unit::TensorFp64 => get(Unit::Fp64),
            _ => None,
        })
    }

    pub fn bandwidth(&self) -> Option<f64> {
        self.peaks.get(HBM).copied()
    }
}

pub const ALL_UNITS: [Unit; 8] = [
    Unit::TensorFp8,
    Unit::TensorInt8,
    Unit::TensorBf16,
    Unit::TensorFp16,
    Unit::TensorTf32,
    Unit::TensorFp64,
    Unit::Fp32,
    Unit::Fp64,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let p = |n: &str, m: Option<u64>| published(n, m).map(|p| p.name);
        assert_eq!(p("NVIDIA H200", None), Some("H200 SXM"));
        assert_eq!(p("NVIDIA H200 NVL", None), Some("H200 NVL"));
        assert_eq!(p("NVIDIA H100 80GB HBM3", None), Some("H100 SXM5"));
        assert_eq!(p("NVIDIA H100 PCIe", None), Some("H100 PCIe"));
        assert_eq!(p("NVIDIA A100-PG509-200", Some(42_297_524_224)), Some("A100 40GB"));
        assert_eq!(p("NVIDIA A100-SXM4-80GB", None), Some("A100 SXM4 80GB"));
        assert_eq!(p("Tesla V100-DGXS-32GB", None), Some("V100 SXM2"));
        assert_eq!(p("AMD Instinct MI300X", None), Some("MI300X"));
        assert_eq!(p("NVIDIA GeForce RTX 4090", None), None);
    }

    #[test]
    fn overrides_and_fallbacks() {
        let dev = DeviceInfo { name: "NVIDIA A100-SXM4-80GB".into(), ..Default::default() };
        let d = DevicePeaks::of(Some(&dev), PeakOverride::default());
        assert_eq!(d.source, "published");
        assert_eq!(d.flops(Unit::TensorBf16), Some(312e12));
        // A100 has no FP8: FP8 GEMMs are measured against the FP16 tensor peak.
        assert_eq!(d.flops(Unit::TensorFp8), Some(312e12));
        let d = DevicePeaks::of(Some(&dev), PeakOverride { tflops: Some(100.0), gbps: Some(1000.0) });
        assert_eq!(d.source, "published+override");
        assert_eq!(d.flops(Unit::TensorBf16), Some(100e12));
        assert_eq!(d.bandwidth(), Some(1e12));
        assert_eq!(DevicePeaks::of(None, PeakOverride::default()).source, "none");
    }
}
