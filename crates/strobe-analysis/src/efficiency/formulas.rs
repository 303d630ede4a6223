//! FLOPs and bytes of one CPU op from its recorded shapes (docs/efficiency.md has every
//! formula). Bytes are the minimum traffic: every input read once and every output written
//! once (what a perfectly fused kernel would move), so `bytes / bandwidth` is a floor on the
//! op's time, as `flops / peak` is.

use super::shapes::{broadcast, numel, Dims, OpArgs};
use serde::Serialize;

/// Which ceiling an op's FLOPs run against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    TensorFp8,
    TensorInt8,
    TensorBf16,
    TensorFp16,
    TensorTf32,
    TensorFp64,
    /// FP32 FMA on the CUDA cores (also every non-matrix op's FLOPs).
    Fp32,
    Fp64,
}

impl Unit {
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::TensorFp8 => "tensor_fp8",
            Unit::TensorInt8 => "tensor_int8",
            Unit::TensorBf16 => "tensor_bf16",
            Unit::TensorFp16 => "tensor_fp16",
            Unit::TensorTf32 => "tensor_tf32",
            Unit::TensorFp64 => "tensor_fp64",
            Unit::Fp32 => "fp32",
            Unit::Fp64 => "fp64",
        }
    }
}

/// What kind of op: decides nothing numeric, but says which formula was used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpClass {
    Gemm,
    Conv,
    Attention,
    Norm,
    Softmax,
    Elementwise,
    Copy,
    Reduction,
    Optimizer,
    Gather,
}

/// The work of one op instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Work {
    pub flops: f64,
    pub bytes: f64,
    pub unit: Unit,
    pub class: OpClass,
}

/// The matrix unit a GEMM-like op of this input dtype runs on. FP32 inputs count against
/// the FP32 FMA peak: PyTorch leaves TF32 off for matmuls by default
/// (`torch.backends.cuda.matmul.allow_tf32 = False`); a job that enables it can show an
/// efficiency above 1.
pub fn matrix_unit(dtype: &str) -> Unit {
    match dtype {
        "c10::BFloat16" => Unit::TensorBf16,
        "c10::Half" => Unit::TensorFp16,
        "signed char" | "unsigned char" => Unit::TensorInt8,
        "double" => Unit::TensorFp64,
        t if t.starts_with("c10::Float8_") => Unit::TensorFp8,
        _ => Unit::Fp32,
    }
}

fn vector_unit(dtype: &str) -> Unit {
    if dtype == "double" {
        Unit::Fp64
    } else {
        Unit::Fp32
    }
}

/// A formula: the work of an op (its name without `aten::`) from its recorded shapes.
pub type Formula = fn(&str, &OpArgs) -> Option<Work>;

/// The work of op `name` (with or without `aten::`), or None when there is no formula for
/// it or its recorded shapes do not fit the formula.
pub fn work(name: &str, a: &OpArgs) -> Option<Work> {
    apply(formula(name)?, name, a)
}

/// `f`, the formula of op `name` (with or without `aten::`), on its shapes.
pub fn apply(f: Formula, name: &str, a: &OpArgs) -> Option<Work> {
    f(name.strip_prefix("aten::").unwrap_or(name), a)
}

/// The formula for op `name` (with or without `aten::`), decided by the name alone: an op
/// without one needs its args read only for Kineto's own `flops`.
pub fn formula(name: &str) -> Option<Formula> {
    let op = name.strip_prefix("aten::").unwrap_or(name);
    let f: Formula = match op {
        "mm" => |_, a| gemm(a, 0, 1, None),
        "addmm" | "_addmm_activation" => |_, a| gemm(a, 1, 2, Some(0)),
        "bmm" => |_, a| gemm(a, 0, 1, None),
        "baddbmm" => |_, a| gemm(a, 1, 2, Some(0)),
        "matmul" => |_, a| gemm(a, 0, 1, None),
        "linear" => |_, a| linear(a),
        "_scaled_mm" => |_, a| scaled_mm(a),
        "convolution" | "_convolution" => {
            |_, a| conv(a, ConvArgs { stride: 3, padding: 4, dilation: 5, groups: 8, transposed: Some(6) })
        }
        "conv1d" | "conv2d" | "conv3d" => {
            |_, a| conv(a, ConvArgs { stride: 3, padding: 4, dilation: 5, groups: 6, transposed: None })
        }
        "cudnn_convolution" => {
            |_, a| conv_no_bias(a, ConvArgs { stride: 3, padding: 2, dilation: 4, groups: 5, transposed: None })
        }
        "miopen_convolution" => {
            |_, a| conv(a, ConvArgs { stride: 4, padding: 3, dilation: 5, groups: 6, transposed: None })
        }
        "convolution_backward" => |_, a| conv_backward(a),
        _ if super::attention::is_attention(op) => super::attention::attention,
        _ => pointwise(op)?,
    };
    Some(f)
}

/// GEMM dimensions of `a @ b` under matmul's rules: (batch, M, N, K). A 1-d operand is a
/// vector; batch dimensions broadcast.
fn gemm_dims(x: &[i64], y: &[i64]) -> Option<(f64, f64, f64, f64)> {
    let (xm, xk) = match x.len() {
        0 => return None,
        1 => (1, x[0]),
        n => (x[n - 2], x[n - 1]),
    };
    let (yk, yn) = match y.len() {
        0 => return None,
        1 => (y[0], 1),
        n => (y[n - 2], y[n - 1]),
    };
    if xk != yk {
        return None;
    }
    let xb = if x.len() > 2 { &x[..x.len() - 2] } else { &[][..] };
    let yb = if y.len() > 2 { &y[..y.len() - 2] } else { &[][..] };
    // `[B, M, K] @ [K, N]` folds the batch into M (one GEMM), as PyTorch runs it.
    if yb.is_empty() {
        return Some((1.0, numel(xb) * xm as f64, yn as f64, xk as f64));
    }
    let batch = numel(&broadcast(&[xb, yb])?);
    Some((batch, xm as f64, yn as f64, xk as f64))
}

/// `2·batch·M·N·K` FLOPs; bytes: both operands, the bias (when `bias` names one) and the
/// output, in the first operand's dtype.
fn gemm(a: &OpArgs, x: usize, y: usize, bias: Option<usize>) -> Option<Work> {
    let (b, m, n, k) = gemm_dims(a.tensor(x)?, a.tensor(y)?)?;
    let e = a.elem(x)?;
    let mut bytes = a.tensor_bytes(x)? + a.tensor_bytes(y)? + b * m * n * e;
    if let Some(c) = bias.and_then(|i| a.tensor_bytes(i)) {
        bytes += c;
    }
    Some(Work { flops: 2.0 * b * m * n * k, bytes, unit: matrix_unit(a.dtype(x)), class: OpClass::Gemm })
}

/// `linear(x[…, K], w[N, K], bias)`: `x @ wᵀ`.
fn linear(a: &OpArgs) -> Option<Work> {
    let x = a.tensor(0)?;
    let w = a.tensor(1)?;
    if w.len() != 2 {
        return None;
    }
    let wt = [w[1], w[0]];
    let (b, m, n, k) = gemm_dims(x, &wt)?;
    let e = a.elem(0)?;
    let bytes = a.tensor_bytes(0)? + a.tensor_bytes(1)? + a.tensor_bytes(2).unwrap_or(0.0) + b * m * n * e;
    Some(Work { flops: 2.0 * b * m * n * k, bytes, unit: matrix_unit(a.dtype(0)), class: OpClass::Gemm })
}

/// `_scaled_mm(a, b, scale_a, scale_b, bias, scale_result, out_dtype, …)`: an FP8 GEMM;
/// the output is counted at 2 bytes (bf16, the usual `out_dtype`).
fn scaled_mm(a: &OpArgs) -> Option<Work> {
    let (b, m, n, k) = gemm_dims(a.tensor(0)?, a.tensor(1)?)?;
    let bytes = a.tensor_bytes(0)? + a.tensor_bytes(1)? + a.tensor_bytes(4).unwrap_or(0.0) + b * m * n * 2.0;
    Some(Work { flops: 2.0 * b * m * n * k, bytes, unit: matrix_unit(a.dtype(0)), class: OpClass::Gemm })
}

/// Argument positions of a convolution schema.
struct ConvArgs {
    stride: usize,
    padding: usize,
    dilation: usize,
    groups: usize,
    transposed: Option<usize>,
}

/// A per-spatial-dimension list argument (`[2, 2]`, or one value for all).
fn per_dim(a: &OpArgs, i: usize, n: usize, default: i64) -> Option<Vec<i64>> {
    match a.int_list(i) {
        Some(v) if v.len() == n => Some(v),
        Some(v) if v.len() == 1 => Some(vec![v[0]; n]),
        Some(v) if v.is_empty() => Some(vec![default; n]),
        Some(_) => None,
        None => a.int(i).map(|x| vec![x; n]).or_else(|| match a.concrete.get(i).map(|s| s.trim()) {
            // conv2d's string padding: "valid" is 0; "same" keeps the size (stride 1).
            Some("valid") => Some(vec![0; n]),
            _ => None,
        }),
    }
}

/// Forward convolution: FLOPs = 2 × output elements × (C_in / groups) × kernel volume;
/// bytes = input + weight + bias + output.
fn conv(a: &OpArgs, c: ConvArgs) -> Option<Work> {
    let w = conv_forward(a, &c)?;
    let bias = a.tensor_bytes(2).unwrap_or(0.0);
    Some(Work { bytes: w.bytes + bias, ..w })
}

fn conv_no_bias(a: &OpArgs, c: ConvArgs) -> Option<Work> {
    conv_forward(a, &c)
}

fn conv_forward(a: &OpArgs, c: &ConvArgs) -> Option<Work> {
    let x = a.tensor(0)?;
    let w = a.tensor(1)?;
    if x.len() < 3 || w.len() != x.len() {
        return None;
    }
    let n = x.len() - 2;
    let groups = a.int(c.groups).unwrap_or(1).max(1);
    let transposed = c.transposed.and_then(|i| a.flag(i)).unwrap_or(false);
    let stride = per_dim(a, c.stride, n, 1)?;
    let dilation = per_dim(a, c.dilation, n, 1)?;
    let same = a.concrete.get(c.padding).is_some_and(|s| s.trim() == "same");
    let padding = if same { vec![0; n] } else { per_dim(a, c.padding, n, 0)? };
    let k = &w[2..];
    let (c_out, macs_per_out) = if transposed {
        // Weight [C_in, C_out/g, k…]: every input element feeds C_out/g × kernel outputs.
        (w[1] * groups, None)
    } else {
        (w[0], Some(w[1] as f64 * numel(k)))
    };
    let mut out = Vec::with_capacity(n);
    for d in 0..n {
        let i = x[2 + d];
        let o = if same {
            i
        } else if transposed {
            (i - 1) * stride[d] - 2 * padding[d] + dilation[d] * (k[d] - 1) + 1
        } else {
            (i + 2 * padding[d] - dilation[d] * (k[d] - 1) - 1).div_euclid(stride[d].max(1)) + 1
        };
        if o <= 0 {
            return None;
        }
        out.push(o);
    }
    let out_elems = x[0] as f64 * c_out as f64 * numel(&out);
    let flops = match macs_per_out {
        Some(m) => 2.0 * out_elems * m,
        None => 2.0 * numel(x) * w[1] as f64 * numel(k),
    };
    let e = a.elem(0)?;
    let bytes = a.tensor_bytes(0)? + a.tensor_bytes(1)? + out_elems * e;
    Some(Work { flops, bytes, unit: matrix_unit(a.dtype(0)), class: OpClass::Conv })
}

/// `convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
/// transposed, output_padding, groups, output_mask)`: the forward's FLOPs once for the input
/// gradient and once for the weight gradient (each only when `output_mask` asks for it);
/// bytes: grad_output, input and weight read, the asked-for gradients written.
fn conv_backward(a: &OpArgs) -> Option<Work> {
    let g = a.tensor(0)?;
    let x = a.tensor(1)?;
    let w = a.tensor(2)?;
    if g.len() < 3 || x.len() != g.len() || w.len() != g.len() {
        return None;
    }
    let transposed = a.flag(7).unwrap_or(false);
    // Forward MACs: per output element C_in/g × kernel (normal, weight [C_out, C_in/g, k…]);
    // per input element C_out/g × kernel (transposed), the forward's output being grad_output.
    let k = numel(&w[2..]);
    let fwd = if transposed { 2.0 * numel(x) * w[1] as f64 * k } else { 2.0 * numel(g) * w[1] as f64 * k };
    let mask: Vec<bool> = match a.concrete.get(10).map(|s| s.trim()) {
        Some(s) if s.starts_with('[') => {
            s.trim_matches(|c| c == '[' || c == ']').split(',').map(|t| t.trim() == "True").collect()
        }
        _ => vec![true, true, false],
    };
    let want = |i: usize| mask.get(i).copied().unwrap_or(false);
    let flops = fwd * (want(0) as u8 + want(1) as u8) as f64;
    let mut bytes = a.tensor_bytes(0)? + a.tensor_bytes(1)? + a.tensor_bytes(2)?;
    if want(0) {
        bytes += a.tensor_bytes(1)?;
    }
    if want(1) {
        bytes += a.tensor_bytes(2)?;
    }
    Some(Work { flops, bytes, unit: matrix_unit(a.dtype(0)), class: OpClass::Conv })
}

/// Tensor arguments (index, sizes), lists excluded.
fn tensors(a: &OpArgs) -> Vec<(usize, &[i64])> {
    (0..a.dims.len()).filter_map(|i| a.tensor(i).filter(|_| a.elem(i).is_some()).map(|s| (i, s))).collect()
}

/// FLOPs `f` per element of input 0; bytes: input 0 read, an output of its size written.
fn first(a: &OpArgs, f: f64, class: OpClass) -> Option<Work> {
    let x = a.tensor(0)?;
    let b = a.tensor_bytes(0)?;
    Some(Work { flops: f * numel(x), bytes: 2.0 * b, unit: vector_unit(a.dtype(0)), class })
}

/// Normalisations, softmax, elementwise, copies, reductions, gathers, fused optimizers.
fn pointwise(op: &str) -> Option<Formula> {
    let f: Formula = match op {
        // native_layer_norm(input, normalized_shape, weight, bias, eps) → (out, mean, rstd):
        // 8 FLOP/element (mean 1, variance 3, normalise 2, affine 2).
        "native_layer_norm" | "layer_norm" => |_, a| {
            let w = first(a, 8.0, OpClass::Norm)?;
            let extra = a.tensor_bytes(2).unwrap_or(0.0) + a.tensor_bytes(3).unwrap_or(0.0);
            Some(Work { bytes: w.bytes + extra + rows_stats(a), ..w })
        },
        // rms_norm(input, normalized_shape, weight, eps): 4 FLOP/element.
        "rms_norm" | "_fused_rms_norm" => |_, a| {
            let w = first(a, 4.0, OpClass::Norm)?;
            Some(Work { bytes: w.bytes + a.tensor_bytes(2).unwrap_or(0.0), ..w })
        },
        "native_batch_norm" | "cudnn_batch_norm" | "miopen_batch_norm" | "native_group_norm" => {
            |_, a| first(a, 8.0, OpClass::Norm)
        }
        // native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight,
        // bias, output_mask): grad_out and input read, grad_input written; 16 FLOP/element
        // (twice the forward).
        "native_layer_norm_backward" => |_, a| {
            let w = first(a, 16.0, OpClass::Norm)?;
            let wb = a.tensor_bytes(5).unwrap_or(0.0);
            Some(Work { bytes: 1.5 * w.bytes + 3.0 * wb + rows_stats(a), ..w })
        },
        "native_batch_norm_backward" | "cudnn_batch_norm_backward" | "miopen_batch_norm_backward" => |_, a| {
            let w = first(a, 16.0, OpClass::Norm)?;
            Some(Work { bytes: 1.5 * w.bytes, ..w })
        },
        // _softmax(self, dim, half_to_float): 5 FLOP/element (max, subtract, exp, sum, divide);
        // input read, output written (fp32 when half_to_float).
        "_softmax" | "_log_softmax" | "softmax" | "log_softmax" => |op, a| {
            let w = first(a, 5.0, OpClass::Softmax)?;
            let half_to_float = op.starts_with('_') && a.flag(2) == Some(true);
            let out = if half_to_float { numel(a.tensor(0)?) * 4.0 } else { w.bytes / 2.0 };
            Some(Work { bytes: w.bytes / 2.0 + out, ..w })
        },
        // _softmax_backward_data(grad_output, output, dim, input_dtype): two read, one written.
        "_softmax_backward_data" | "_log_softmax_backward_data" => |_, a| {
            let w = first(a, 4.0, OpClass::Softmax)?;
            Some(Work { bytes: 1.5 * w.bytes, ..w })
        },
        "copy_" => |_, a| {
            // copy_(dst, src): src read, dst written, no FLOPs.
            let bytes = a.tensor_bytes(0)? + a.tensor_bytes(1)?;
            Some(Work { flops: 0.0, bytes, unit: Unit::Fp32, class: OpClass::Copy })
        },
        "fill_" | "zero_" => |_, a| {
            let bytes = a.tensor_bytes(0)?;
            Some(Work { flops: 0.0, bytes, unit: Unit::Fp32, class: OpClass::Copy })
        },
        "embedding" => |_, a| {
            // embedding(weight[V, D], indices[…]): one row of D read and written per index.
            let w = a.tensor(0)?;
            let idx = a.tensor(1)?;
            let row = *w.last()? as f64 * a.elem(0)?;
            let bytes = 2.0 * numel(idx) * row + a.tensor_bytes(1)?;
            Some(Work { flops: 0.0, bytes, unit: Unit::Fp32, class: OpClass::Gather })
        },
        "embedding_dense_backward" => |_, a| {
            // (grad_output[…, D], indices, num_weights, …): grad rows read and accumulated.
            let g = a.tensor(0)?;
            let bytes = 2.0 * a.tensor_bytes(0)? + a.tensor_bytes(1)?;
            Some(Work { flops: numel(g), bytes, unit: Unit::Fp32, class: OpClass::Gather })
        },
        "sum" | "mean" | "amax" | "amin" | "max" | "min" | "prod" | "norm" | "linalg_vector_norm" | "var" | "std"
        | "argmax" | "argmin" | "any" | "all" | "logsumexp" => |op, a| reduction(op, a),
        _ if op.starts_with("_fused_adam") => |_, a| adam(a),
        _ if op.starts_with("_foreach_") => |_, a| foreach(a),
        _ if is_elementwise(op) => |_, a| elementwise(a),
        _ => return None,
    };
    Some(f)
}

/// Per-row mean and rstd (fp32) of a norm over the trailing `normalized_shape`.
fn rows_stats(a: &OpArgs) -> f64 {
    let Some(x) = a.tensor(if a.dims.len() > 7 { 1 } else { 0 }) else { return 0.0 };
    let norm_dims = a.int_list(if a.dims.len() > 7 { 2 } else { 1 }).map(|v| v.len()).unwrap_or(1);
    if norm_dims > x.len() {
        return 0.0;
    }
    2.0 * 4.0 * numel(&x[..x.len() - norm_dims])
}

const ELEMENTWISE: &[&str] = &[
    "add",
    "sub",
    "mul",
    "div",
    "rsub",
    "neg",
    "exp",
    "exp2",
    "log",
    "log1p",
    "sqrt",
    "rsqrt",
    "pow",
    "tanh",
    "sigmoid",
    "relu",
    "gelu",
    "gelu_backward",
    "silu",
    "silu_backward",
    "threshold_backward",
    "sigmoid_backward",
    "tanh_backward",
    "where",
    "clamp",
    "clamp_min",
    "clamp_max",
    "lerp",
    "addcmul",
    "addcdiv",
    "maximum",
    "minimum",
    "masked_fill",
    "abs",
    "sign",
    "reciprocal",
    "square",
    "hardtanh",
    "leaky_relu",
    "elu",
    "mish",
    "sin",
    "cos",
    "native_dropout",
    "native_dropout_backward",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "logical_not",
    "bitwise_and",
    "erf",
    "floor",
    "ceil",
    "round",
    "trunc",
    "fmod",
    "remainder",
    "sgn",
    "hardswish",
    "softplus",
];

fn is_elementwise(op: &str) -> bool {
    let base = op.strip_suffix('_').unwrap_or(op);
    ELEMENTWISE.contains(&base)
}

/// Elementwise: the tensor inputs read, an output of their broadcast shape written (in the
/// widest input dtype); 1 FLOP per output element.
fn elementwise(a: &OpArgs) -> Option<Work> {
    let ts = tensors(a);
    if ts.is_empty() {
        return None;
    }
    let shapes: Vec<&[i64]> = ts.iter().map(|t| t.1).collect();
    let out = numel(&broadcast(&shapes)?);
    let e = ts.iter().filter_map(|t| a.elem(t.0)).fold(0.0, f64::max);
    let read: f64 = ts.iter().filter_map(|t| a.tensor_bytes(t.0)).sum();
    Some(Work { flops: out, bytes: read + out * e, unit: vector_unit(a.dtype(ts[0].0)), class: OpClass::Elementwise })
}

/// Reductions `op(input, dim, keepdim, …)`: input read, the reduced output written; 1 FLOP
/// per input element.
fn reduction(op: &str, a: &OpArgs) -> Option<Work> {
    let x = a.tensor(0)?;
    let n = numel(x);
    let dims = a.int_list(1).or_else(|| a.int(1).map(|d| vec![d]));
    let out = match dims {
        Some(d) if !d.is_empty() && !op.starts_with("linalg") => {
            let r = x.len() as i64;
            let mut keep = x.to_vec();
            for &k in &d {
                let k = if k < 0 { k + r } else { k };
                if (0..r).contains(&k) {
                    keep[k as usize] = 1;
                }
            }
            numel(&keep)
        }
        _ => 1.0,
    };
    let e = a.elem(0)?;
    Some(Work { flops: n, bytes: n * e + out * e, unit: vector_unit(a.dtype(0)), class: OpClass::Reduction })
}

fn list_numel(a: &OpArgs, i: usize) -> Option<f64> {
    match a.dims.get(i)? {
        Dims::List(l) if !l.is_empty() => Some(l.iter().map(|s| numel(s)).sum()),
        _ => None,
    }
}

/// `_fused_adam(w)_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, …)`:
/// per parameter element 4 tensors read (param, grad, both moments) and 3 written, at 4 bytes
/// (a tensor list records no dtype; optimizer state is fp32), 16 FLOPs (the two moment
/// updates 7, the denominator 3, the step 3, weight decay 2, bias correction 1). None when
/// the profiler did not record the lists' shapes.
fn adam(a: &OpArgs) -> Option<Work> {
    let n = list_numel(a, 0)?;
    Some(Work { flops: 16.0 * n, bytes: 7.0 * 4.0 * n, unit: Unit::Fp32, class: OpClass::Optimizer })
}

/// `_foreach_<op>(list, other…)`: every tensor list read (4 bytes/element), the first written
/// (in place) or a new list written; 1 FLOP per element.
fn foreach(a: &OpArgs) -> Option<Work> {
    let n = list_numel(a, 0)?;
    let lists = (0..a.dims.len()).filter_map(|i| list_numel(a, i)).count() as f64;
    Some(Work { flops: n, bytes: 4.0 * n * (lists + 1.0), unit: Unit::Fp32, class: OpClass::Optimizer })
}
