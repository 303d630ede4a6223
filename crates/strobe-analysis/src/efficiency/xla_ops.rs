//! XLA's own cost figures: in an XSpace profile an HLO op's GPU work can carry the `flops`
//! and `bytes_accessed` stats of XLA's cost analysis (as `tsl/profiler/utils/xplane_schema`
//! names them), which the importer keeps as the span's args. Each such span is an op run of
//! its own, named by its `hlo_op`, with those figures as its work (`Source::Xla`): no
//! formula and no recorded shapes are needed, and no CPU op owns it.

use super::dtype_guess;
use super::formulas::{matrix_unit, OpClass, Unit, Work};
use super::ops::{on_device, OpRun, Source};
use strobe_model::LaneKind;
use strobe_store::Store;

const FLOPS_KEY: &[u8] = b"\"flops\"";
const BYTES_KEY: &[u8] = b"\"bytes_accessed\"";

/// What an HLO op is, by its name (`dot.3`, `gemm_fusion_dot`, `cudnn-conv.1`,
/// `custom-call.2` for cuBLAS, `loop_add_fusion`): matrix work runs on the tensor cores.
fn class_of(hlo_op: &str) -> OpClass {
    let n = hlo_op.to_ascii_lowercase();
    if n.contains("conv") {
        OpClass::Conv
    } else if n.contains("dot") || n.contains("gemm") || n.contains("matmul") || n.contains("cublas") {
        OpClass::Gemm
    } else if n.contains("reduce") {
        OpClass::Reduction
    } else if n.contains("copy") || n.contains("transpose") {
        OpClass::Copy
    } else {
        OpClass::Elementwise
    }
}

/// A non-negative finite number, or None.
fn figure(v: Option<&serde_json::Value>) -> Option<f64> {
    v?.as_f64().filter(|x| x.is_finite() && *x >= 0.0)
}

/// Every GPU span that carries XLA's `flops` or `bytes_accessed`, as a run of its own, by
/// start. Spans whose figures cannot be read are left to the CPU ops (as any other).
pub fn xla_op_runs(store: &Store) -> Vec<OpRun> {
    let (flops_key, bytes_key) = (memchr::memmem::Finder::new(FLOPS_KEY), memchr::memmem::Finder::new(BYTES_KEY));
    let mut found: Vec<(u32, f64, f64, String)> = Vec::new();
    for (lane, d) in store.lanes.iter().enumerate() {
        if !matches!(d.kind, LaneKind::GpuStream { .. }) {
            continue;
        }
        for &s in store.lane_spans(lane as u32).span.iter() {
            let raw = store.span_args_raw(s);
            if (flops_key.find(raw).is_none() && bytes_key.find(raw).is_none()) || !on_device(store, s) {
                continue;
            }
            let Ok(v) = serde_json::from_slice::<serde_json::Value>(raw) else { continue };
            let (f, b) = (figure(v.get("flops")), figure(v.get("bytes_accessed")));
            if f.is_none() && b.is_none() {
                continue;
            }
            let name = v.get("hlo_op").and_then(|x| x.as_str()).unwrap_or(store.span_name(s)).to_string();
            found.push((s, f.unwrap_or(0.0), b.unwrap_or(0.0), name));
        }
    }
    if found.is_empty() {
        return Vec::new();
    }
    // the dtype the kernels' names tell, for the tensor-core ops' peak
    let default = dtype_guess::trace_default(found.iter().map(|x| store.span_name(x.0)));
    let mut out: Vec<OpRun> = found
        .into_iter()
        .map(|(s, flops, bytes, name)| {
            let class = class_of(&name);
            let (dtype, _) = dtype_guess::op_dtype(std::iter::once(store.span_name(s)), || default);
            let unit = match class {
                OpClass::Gemm | OpClass::Conv if flops > 0.0 => matrix_unit(dtype),
                _ if dtype == "double" => Unit::Fp64,
                _ => Unit::Fp32,
            };
            OpRun {
                span: s,
                name,
                work: Some(Work { flops, bytes, unit, class }),
                source: Some(Source::Xla),
                gpu_spans: vec![s],
                gpu_ns: store.span_end(s) - store.span_start(s),
                recompute: false,
            }
        })
        .collect();
    out.sort_by_key(|r| (store.span_start(r.span), r.span));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{finished, span};
    use strobe_model::SpanKind;
    use strobe_store::{SpanInput, StoreBuilder};

    #[test]
    fn hlo_kernels_with_xla_costs_are_runs_of_their_own() {
        let mut b = StoreBuilder::in_memory();
        let lane = b.lane(LaneKind::GpuStream { device: 0, stream: 7 });
        let cat = b.intern("");
        let gemm = b.intern("sm90_xmma_gemm_bf16bf16_bf16f32");
        let add = b.intern("loop_add_fusion");
        let plain = b.intern("other_kernel");
        let with = |s: SpanInput<'static>, args: &'static [u8]| SpanInput { args, ..s };
        let k = SpanKind::Kernel;
        b.push_span(with(
            span(lane, 100, 1100, gemm, cat, k),
            br#"{"hlo_op":"gemm_fusion_dot.3","flops":2000000,"bytes_accessed":30000}"#,
        ))
        .unwrap();
        b.push_span(with(
            span(lane, 2000, 2500, add, cat, k),
            br#"{"hlo_op":"loop_add_fusion","bytes_accessed":4096}"#,
        ))
        .unwrap();
        // no costs, and costs that are not numbers: not XLA-costed
        b.push_span(with(span(lane, 3000, 3100, plain, cat, k), br#"{"hlo_op":"x"}"#)).unwrap();
        b.push_span(with(span(lane, 4000, 4100, plain, cat, k), br#"{"flops":"many"}"#)).unwrap();
        let s = finished(b);
        let runs = xla_op_runs(&s);
        assert_eq!(runs.len(), 2);
        let w = runs[0].work.clone().unwrap();
        assert_eq!((runs[0].name.as_str(), w.flops, w.bytes, w.class), ("gemm_fusion_dot.3", 2e6, 3e4, OpClass::Gemm));
        assert_eq!((w.unit, runs[0].gpu_ns, runs[0].source), (Unit::TensorBf16, 1000, Some(Source::Xla)));
        let w = runs[1].work.clone().unwrap();
        assert_eq!((runs[1].name.as_str(), w.flops, w.bytes, w.unit), ("loop_add_fusion", 0.0, 4096.0, Unit::Fp32));
    }
}
