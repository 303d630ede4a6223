//! The dtype of an op whose shapes were recorded without dtypes: PyTorch's `emit_nvtx`
//! writes each input's sizes into the op's NVTX range, never its dtype. The kernels an op
//! launched usually say it in their names (`…<c10::BFloat16>…`, `ampere_bf16_s16816gemm…`,
//! `…_f16_…`, `volta_sgemm…`); where they do not (Hopper's `nvjet_…` GEMMs), the 16-bit type
//! the trace's kernels name most is taken (a mixed-precision run's matrices are in it,
//! autocast's casts show it: `bfloat16_copy_kernel_cuda`), else FP32. docs/efficiency.md
//! states the rule.

use super::shapes::OpArgs;

/// A dtype a kernel name tells, strongest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NamedType {
    Fp8,
    Bf16,
    Half,
    /// `f16` / `h16…` alone: a 16-bit type, BF16 or FP16 (cuDNN's attention kernels say
    /// `f16` for both).
    Sixteen,
    Double,
    Float,
}

/// The dtype kernel name `name` tells, if any (the strongest when it names several: an
/// accumulator `float` beside a `c10::BFloat16` input is the input's).
pub fn named_type(name: &str) -> Option<NamedType> {
    let n = name.to_ascii_lowercase();
    let has = |s: &str| n.contains(s);
    if has("e4m3") || has("e5m2") || has("fp8") || has("float8") {
        return Some(NamedType::Fp8);
    }
    if has("bf16") || has("bfloat16") {
        return Some(NamedType::Bf16);
    }
    if has("c10::half")
        || has("__half")
        || has("fp16")
        || has("<half")
        || has("_h884")
        || has("_h1688")
        || has("_h16816")
    {
        return Some(NamedType::Half);
    }
    if has("f16") {
        return Some(NamedType::Sixteen);
    }
    if has("double") || has("dgemm") {
        return Some(NamedType::Double);
    }
    if has("float") || has("sgemm") || has("tf32") || has("f32") {
        return Some(NamedType::Float);
    }
    None
}

/// The 16-bit type a trace's kernels name most (`Half` when they name only `f16`), or FP32:
/// what an op whose own kernels name no type is taken to be in.
pub fn trace_default<'a>(kernel_names: impl Iterator<Item = &'a str>) -> &'static str {
    let (mut bf16, mut half, mut sixteen) = (0u64, 0u64, 0u64);
    for n in kernel_names {
        match named_type(n) {
            Some(NamedType::Bf16) => bf16 += 1,
            Some(NamedType::Half) => half += 1,
            Some(NamedType::Sixteen) => sixteen += 1,
            _ => {}
        }
    }
    if bf16 > 0 && bf16 >= half {
        "c10::BFloat16"
    } else if half > 0 || sixteen > 0 {
        "c10::Half"
    } else {
        "float"
    }
}

/// The dtype (as Kineto names it) of an op that launched kernels named `names`, with
/// `default()` (`trace_default`) where they name none, or name only a 16-bit type without
/// saying which; true when the names told it.
pub fn op_dtype<'a>(
    names: impl Iterator<Item = &'a str>,
    default: impl FnOnce() -> &'static str,
) -> (&'static str, bool) {
    let best = names.filter_map(named_type).min_by_key(|t| *t as u8);
    let t = match best {
        None => return (default(), false),
        Some(t) => t,
    };
    let d = match t {
        NamedType::Fp8 => "c10::Float8_e4m3fn",
        NamedType::Bf16 => "c10::BFloat16",
        NamedType::Half => "c10::Half",
        NamedType::Sixteen if default() == "c10::BFloat16" => "c10::BFloat16",
        NamedType::Sixteen => "c10::Half",
        NamedType::Double => "double",
        NamedType::Float => "float",
    };
    (d, true)
}

/// Shapes without dtypes (`emit_nvtx`): `Input Dims` recorded, `Input type` not.
pub fn untyped(a: &OpArgs) -> bool {
    a.types.is_empty() && !a.dims.is_empty()
}

/// `a` with every non-empty shape typed `dtype` (an empty shape stays untyped: in an
/// emit_nvtx range it is a scalar, an absent tensor or a tensor list as often as a 0-d tensor).
pub fn typed(a: &OpArgs, dtype: &str) -> OpArgs {
    let types = a
        .dims
        .iter()
        .map(|d| match d {
            super::shapes::Dims::Tensor(s) if !s.is_empty() => dtype.to_string(),
            _ => String::new(),
        })
        .collect();
    OpArgs { types, ..a.clone() }
}

/// Args text of an op read from an `emit_nvtx` NVTX range (the nsys importer marks them).
pub const EMIT_NVTX_MARK: &[u8] = b"\"source\":\"emit_nvtx\"";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_tell_dtypes() {
        let t = |n| named_type(n);
        assert_eq!(t("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn"), Some(NamedType::Bf16));
        assert_eq!(t("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"), Some(NamedType::Bf16));
        assert_eq!(
            t("void at::native::vectorized_layer_norm_kernel<c10::BFloat16, float, (bool)0>(int, T2)"),
            Some(NamedType::Bf16)
        );
        assert_eq!(
            t("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::Half>>"),
            Some(NamedType::Half)
        );
        assert_eq!(t("volta_h884gemm_64x64_ldg8_nn"), Some(NamedType::Half));
        assert_eq!(t("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7"), Some(NamedType::Sixteen));
        assert_eq!(t("ampere_sgemm_128x64_nn"), Some(NamedType::Float));
        assert_eq!(t("sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32"), Some(NamedType::Fp8));
        assert_eq!(t("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"), None);
    }

    #[test]
    fn an_op_s_kernels_then_the_trace_s_type() {
        let names = ["nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "void foo<float>"];
        assert_eq!(op_dtype(names.iter().copied(), || "c10::BFloat16"), ("float", true));
        assert_eq!(op_dtype(names[..1].iter().copied(), || "c10::BFloat16"), ("c10::BFloat16", false));
        assert_eq!(op_dtype(["x_f16_y"].iter().copied(), || "c10::BFloat16"), ("c10::BFloat16", true));
        assert_eq!(op_dtype(["x_f16_y"].iter().copied(), || "float"), ("c10::Half", true));
        let trace = ["bfloat16_copy_kernel_cuda", "sdpa_f16_knob", "CUDAFunctor_add<float>", "nvjet"];
        assert_eq!(trace_default(trace.iter().copied()), "c10::BFloat16");
        assert_eq!(trace_default(["sgemm", "nvjet"].iter().copied()), "float");
        assert_eq!(trace_default(["sdpa_f16"].iter().copied()), "c10::Half");
    }

    #[test]
    fn typing_leaves_empty_shapes_untyped() {
        let a = OpArgs::parse(r#"{"Input Dims": [[4096], [8192, 1024], [1024, 4096], [], []]}"#).unwrap();
        assert!(untyped(&a));
        let t = typed(&a, "c10::BFloat16");
        assert_eq!(t.types, vec!["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", ""]);
        assert_eq!(t.tensor_bytes(1), Some(8192.0 * 1024.0 * 2.0));
        assert_eq!(t.tensor(3), None);
        assert!(!untyped(&t));
    }
}
