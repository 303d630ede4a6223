//! One collective's bandwidth from its own trace: what the details and the tooltip show for
//! a collective span. The record names the collective, its group and sizes (NCCL kernels carry
//! `record_param_comms`' args, or the record that launched them does; gloo's work record
//! gives its tensor), so its bytes follow nccl-tests' convention (`bandwidth::bytes_of`).
//! Its time here is the span's own duration, which includes any wait for a late peer; the
//! matched instance across ranks (`group_match`) gives the transfer after everyone arrived.

use super::bandwidth::{bandwidth, bytes_of};
use super::comm_ops::{is_record, kind_of, op_from_args, op_from_work_record, CommOp, TimedBy};
use serde::Serialize;
use strobe_model::{is_comm_kernel, SpanKind};
use strobe_store::Store;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpanBandwidth {
    /// The family (`all_reduce`, …) and the name as recorded.
    pub kind: String,
    pub name: String,
    /// The group's label (`0 (default_pg)`), where the record names it.
    pub group: Option<String>,
    pub group_size: Option<usize>,
    pub bytes: Option<u64>,
    /// Why the bytes are unknown, where they are.
    pub size_unknown: Option<String>,
    /// The span's own duration.
    pub dur_ns: i64,
    pub algbw_gbps: Option<f64>,
    /// With the group's size known.
    pub busbw_gbps: Option<f64>,
}

/// The collective record of `span`: its own args, or those of the record that launched it.
fn op_of(st: &Store, span: u32) -> Option<CommOp> {
    let name = st.span_name(span);
    let t = (st.span_start(span), st.span_end(span));
    if is_record(name) {
        return op_from_args(&st.span_args(span), span, t, TimedBy::Call);
    }
    if name.starts_with("gloo:") || name.starts_with("nccl:") {
        return op_from_work_record(name, &st.span_args(span), span, t);
    }
    if st.span_kind(span) != SpanKind::Kernel || !is_comm_kernel(name) {
        return None;
    }
    op_from_args(&st.span_args(span), span, t, TimedBy::Kernel).or_else(|| {
        let launch = st.launch_of(span)?;
        let rec = st.enclosing_stack(launch).into_iter().rev().find(|&p| is_record(st.span_name(p)))?;
        op_from_args(&st.span_args(rec), span, t, TimedBy::Kernel)
    })
}

/// Why the record of `span` (its own, or the one that launched it) has no size, where the
/// importer said (`Size unknown`: an nsys export without NCCL's payload values).
fn recorded_why(st: &Store, span: u32) -> Option<String> {
    let why = |s: u32| {
        let a: serde_json::Value = serde_json::from_str(&st.span_args(s)).ok()?;
        a.get("Size unknown")?.as_str().map(String::from)
    };
    why(span).or_else(|| {
        let launch = st.launch_of(span)?;
        st.enclosing_stack(launch).into_iter().rev().find(|&p| is_record(st.span_name(p))).and_then(why)
    })
}

/// What an NCCL kernel's name tells (`ncclDevKernel_AllReduce_Sum_f32_RING_LL`,
/// `ncclKernel_AllGather_RING_LL_Sum_int8_t`): the collective and, where named, the element
/// type; never the count.
pub fn kernel_name_collective(name: &str) -> Option<(String, Option<String>)> {
    let rest = name.strip_prefix("ncclDevKernel_").or_else(|| name.strip_prefix("ncclKernel_"))?;
    let rest = rest.split('(').next().unwrap_or(rest);
    let mut parts = rest.split('_');
    let coll = parts.next().filter(|c| !c.is_empty())?;
    // newer names (`f32`, `bf16`, …) and older ones (`float`, `half`, `int8_t` → `int8`)
    const TYPES: &[&str] = &[
        "f32", "f16", "bf16", "f64", "f8e4m3", "f8e5m2", "i8", "u8", "i32", "u32", "i64", "u64", "float", "half",
        "double", "bfloat16", "int8", "uint8", "int32", "uint32", "int64", "uint64",
    ];
    let dtype = parts.find(|p| TYPES.contains(p)).map(String::from);
    Some((kind_of(coll), dtype))
}

/// An NCCL kernel with no record: its collective from its name, its size unknown.
fn from_kernel_name(st: &Store, span: u32) -> Option<SpanBandwidth> {
    let name = st.span_name(span);
    if st.span_kind(span) != SpanKind::Kernel || !is_comm_kernel(name) {
        return None;
    }
    let (kind, dtype) = kernel_name_collective(name)?;
    let why = match dtype {
        Some(d) => format!("the kernel's name gives {kind} of {d}, not its element count; no record of its size"),
        None => format!("the kernel's name gives {kind}, not its size; no record of its size"),
    };
    Some(SpanBandwidth {
        name: name.to_string(),
        kind,
        group: None,
        group_size: None,
        bytes: None,
        size_unknown: Some(why),
        dur_ns: st.span_end(span) - st.span_start(span),
        algbw_gbps: None,
        busbw_gbps: None,
    })
}

/// `span`'s bandwidth, when it is a collective whose record Strobe reads (an NCCL kernel
/// without one: its collective, its size unknown); None otherwise.
pub fn span_bandwidth(st: &Store, span: u32) -> Option<SpanBandwidth> {
    let Some(mut op) = op_of(st, span) else { return from_kernel_name(st, span) };
    let kind = kind_of(&op.name);
    if kind == "send" || kind == "recv" {
        op.group_size.get_or_insert(2);
    }
    let (declared, _) = super::groups::declared_groups(st);
    let decl = op.group.as_ref().and_then(|g| declared.iter().find(|d| &d.name == g));
    let size = op
        .group_size
        .and_then(|n| usize::try_from(n).ok())
        .or_else(|| (!op.group_ranks.is_empty()).then_some(op.group_ranks.len()))
        .or_else(|| decl.map(|d| d.ranks.len()));
    if let Some(n) = size {
        op.group_size = Some(n as i64);
    }
    let label = op.group.as_ref().map(|g| match op.group_desc.as_deref().or(decl.and_then(|d| d.desc.as_deref())) {
        Some(d) if !d.is_empty() && d != "undefined" => format!("{g} ({d})"),
        _ => g.clone(),
    });
    let dur_ns = st.span_end(span) - st.span_start(span);
    let (bytes, size_unknown) = match bytes_of(&op) {
        Ok(b) => (Some(b), None),
        Err(why) => (None, Some(recorded_why(st, span).unwrap_or(why))),
    };
    let bw = bytes.and_then(|b| bandwidth(&kind, size.unwrap_or(1), b, dur_ns));
    Some(SpanBandwidth {
        kind,
        name: op.name.clone(),
        group: label,
        group_size: size,
        bytes,
        size_unknown,
        dur_ns,
        algbw_gbps: bw.map(|b| b.0),
        busbw_gbps: bw.and_then(|b| size.map(|_| b.1)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nccl_kernel_names() {
        let k = |n: &str| kernel_name_collective(n);
        assert_eq!(
            k("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            Some(("all_reduce".into(), Some("f32".into())))
        );
        assert_eq!(k("ncclKernel_AllGather_RING_LL_Sum_int8_t"), Some(("all_gather".into(), Some("int8".into()))));
        assert_eq!(k("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"), Some(("sendrecv".into(), None)));
        assert_eq!(
            k("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"),
            Some(("reduce_scatter".into(), Some("bf16".into())))
        );
        assert_eq!(k("ampere_sgemm_128x64_nn"), None);
        assert_eq!(k("ncclDevKernel_"), None);
    }
}
