//! Attention FLOPs and bytes for `scaled_dot_product_attention` and the kernels it
//! dispatches to (flash, memory-efficient, cuDNN; forward and backward).
//!
//! Forward: `S = Q·Kᵀ` (2·B·H·Lq·Lk·D) and `O = P·V` (2·B·H·Lq·Lk·Dv), counted over the
//! (query, key) pairs the mask keeps: all Lq·Lk, or with causal masking (PyTorch's
//! top-left alignment, `tril(ones(Lq, Lk))`) Σᵢ min(i + 1, Lk). Softmax FLOPs are not
//! counted (the convention of FlashAttention's and PyTorch's FLOP counters). Backward:
//! 2.5 × the forward (recomputing S, and dV, dP, dQ, dK: five matmuls against two).
//! Bytes: Q, K, V and O (forward); Q, K, V, O, dO read and dQ, dK, dV written (backward).

use super::formulas::{matrix_unit, OpClass, Work};
use super::shapes::OpArgs;

/// Where an attention schema keeps its tensors and its causal flag.
struct Schema {
    /// Index of Q (K and V follow).
    q: usize,
    /// Q is `[B, L, H, D]` (the `_flash_attention_*` / `_efficient_attention_*` kernels'
    /// layout) rather than `[B, H, L, D]`.
    blhd: bool,
    /// Index of `is_causal` (a bool) or of `custom_mask_type` (an int, 1 and 2 = causal).
    causal: Option<usize>,
    mask_type: bool,
    backward: bool,
}

fn schema(op: &str) -> Option<Schema> {
    let s = |q, blhd, causal, mask_type, backward| Some(Schema { q, blhd, causal, mask_type, backward });
    match op {
        // scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa)
        "scaled_dot_product_attention" => s(0, false, Some(5), false, false),
        // _scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal, return_debug_mask, scale)
        "_scaled_dot_product_flash_attention" | "_scaled_dot_product_flash_attention_for_cpu" => {
            s(0, false, Some(4), false, false)
        }
        // _scaled_dot_product_efficient_attention(q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal, scale)
        // _scaled_dot_product_cudnn_attention(q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal, return_debug_mask, scale)
        "_scaled_dot_product_efficient_attention" | "_scaled_dot_product_cudnn_attention" => {
            s(0, false, Some(6), false, false)
        }
        // _cudnn_attention_forward(q, k, v, attn_bias, cum_seq_q, cum_seq_k, max_q, max_k,
        //   compute_log_sumexp, dropout_p, is_causal, return_debug_mask, scale)
        "_cudnn_attention_forward" => s(0, false, Some(10), false, false),
        // _flash_attention_forward(q, k, v, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, …)
        "_flash_attention_forward" => s(0, true, Some(8), false, false),
        // _efficient_attention_forward(q, k, v, bias, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
        //   max_seqlen_k, dropout_p, custom_mask_type, …)
        "_efficient_attention_forward" => s(0, true, Some(9), true, false),
        // _scaled_dot_product_flash_attention_backward(grad_out, q, k, v, out, logsumexp,
        //   cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, …)
        "_scaled_dot_product_flash_attention_backward" => s(1, false, Some(11), false, true),
        // _scaled_dot_product_efficient_attention_backward(grad_out, q, k, v, attn_bias, out,
        //   logsumexp, philox_seed, philox_offset, dropout_p, grad_input_mask, is_causal, scale)
        "_scaled_dot_product_efficient_attention_backward" => s(1, false, Some(11), false, true),
        // _scaled_dot_product_cudnn_attention_backward / _cudnn_attention_backward(grad_out, q, k,
        //   v, out, logsumexp, philox_seed, philox_offset, attn_bias, cum_seq_q, cum_seq_k, max_q,
        //   max_k, dropout_p, is_causal, scale)
        "_scaled_dot_product_cudnn_attention_backward" | "_cudnn_attention_backward" => {
            s(1, false, Some(14), false, true)
        }
        // _flash_attention_backward(grad_out, q, k, v, out, logsumexp, cum_seq_q, cum_seq_k,
        //   max_q, max_k, dropout_p, is_causal, …)
        "_flash_attention_backward" => s(1, true, Some(11), false, true),
        // _efficient_attention_backward(grad_out, q, k, v, bias, out, cu_seqlens_q, cu_seqlens_k,
        //   max_seqlen_q, max_seqlen_k, logsumexp, dropout_p, philox_seed, philox_offset,
        //   custom_mask_type, …)
        "_efficient_attention_backward" => s(1, true, Some(14), true, true),
        _ => None,
    }
}

/// Kept (query, key) pairs of an `lq × lk` score matrix.
pub fn kept_pairs(lq: f64, lk: f64, causal: bool) -> f64 {
    if !causal {
        return lq * lk;
    }
    // Σ_{i<lq} min(i + 1, lk): rows up to lk grow by one, the rest are full.
    let grow = lq.min(lk);
    grow * (grow + 1.0) / 2.0 + (lq - grow).max(0.0) * lk
}

/// Whether `op` (without `aten::`) is an attention op with a formula.
pub fn is_attention(op: &str) -> bool {
    schema(op).is_some()
}

pub fn attention(op: &str, a: &OpArgs) -> Option<Work> {
    let s = schema(op)?;
    let q = a.tensor(s.q)?;
    let k = a.tensor(s.q + 1)?;
    let v = a.tensor(s.q + 2)?;
    if q.len() != 4 || k.len() != 4 || v.len() != 4 {
        return None;
    }
    let (b, h, lq, d) = if s.blhd { (q[0], q[2], q[1], q[3]) } else { (q[0], q[1], q[2], q[3]) };
    let lk = if s.blhd { k[1] } else { k[2] };
    let dv = v[3];
    let causal = match s.causal {
        Some(i) if s.mask_type => a.int(i).is_some_and(|t| t == 1 || t == 2),
        Some(i) => a.flag(i).unwrap_or(false),
        None => false,
    };
    let pairs = kept_pairs(lq as f64, lk as f64, causal);
    let fwd = 2.0 * (b * h) as f64 * pairs * (d + dv) as f64;
    let e = a.elem(s.q)?;
    let qkv = a.tensor_bytes(s.q)? + a.tensor_bytes(s.q + 1)? + a.tensor_bytes(s.q + 2)?;
    let out = (b * h) as f64 * lq as f64 * dv as f64 * e;
    let (flops, bytes) = if s.backward {
        // dO and O read, dQ dK dV written (the size of Q K V).
        (2.5 * fwd, 2.0 * qkv + 2.0 * out)
    } else {
        (fwd, qkv + out)
    };
    Some(Work { flops, bytes, unit: matrix_unit(a.dtype(s.q)), class: OpClass::Attention })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causal_pairs() {
        assert_eq!(kept_pairs(4.0, 4.0, true), 10.0);
        assert_eq!(kept_pairs(4.0, 4.0, false), 16.0);
        // 3 queries on 5 keys (top-left): 1 + 2 + 3.
        assert_eq!(kept_pairs(3.0, 5.0, true), 6.0);
        // 5 queries on 3 keys: 1 + 2 + 3 + 3 + 3.
        assert_eq!(kept_pairs(5.0, 3.0, true), 12.0);
    }
}
