//! How XLA's profiler (`jax.profiler`, TensorFlow, XProf) names devices, streams and GPU
//! work, for both forms it writes: the XSpace planes and lines, and the Chrome JSON it
//! converts them to (a process per plane, `/device:GPU:0`; a thread per line, `Stream
//! #14(Compute,Memset)`).

use strobe_model::{CopyDir, SpanKind};

/// The ordinal of a GPU device plane or process (`/device:GPU:3` → 3); None for any other
/// plane (`/host:CPU`, `/device:CUSTOM:…`, `/device:TPU:0`).
pub fn gpu_ordinal(plane: &str) -> Option<i64> {
    let n = plane.strip_prefix("/device:GPU:")?;
    (!n.is_empty() && n.len() <= 9 && n.bytes().all(|b| b.is_ascii_digit())).then(|| n.parse().ok()).flatten()
}

/// The stream number of a device line (`Stream #14(Compute,Memset)` → 14, `Stream #2` → 2).
pub fn stream_number(line: &str) -> Option<i64> {
    let rest = line.strip_prefix("Stream #")?;
    let digits = rest.bytes().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 12 {
        return None;
    }
    rest[..digits].parse().ok()
}

/// What a device line's event is, by its name: XLA's CUPTI collector names copies
/// `MemcpyH2D`, `MemcpyD2H`, `MemcpyD2D`, `MemcpyP2P` (and `Memcpy…` otherwise), memsets
/// `Memset`; everything else on a stream is a kernel.
pub fn device_event_kind(name: &str) -> (SpanKind, Option<CopyDir>) {
    if let Some(rest) = name.strip_prefix("Memcpy") {
        let dir = match rest.get(..3) {
            Some("H2D") => CopyDir::HtoD,
            Some("D2H") => CopyDir::DtoH,
            Some("D2D") => CopyDir::DtoD,
            Some("P2P") => CopyDir::PtoP,
            _ => CopyDir::from_memcpy_name(rest),
        };
        return (SpanKind::Memcpy, Some(dir));
    }
    if name.starts_with("Memset") {
        return (SpanKind::Memset, Some(CopyDir::Memset));
    }
    (SpanKind::Kernel, None)
}

/// The kind of a host event that carries a launch's `correlation_id`: a driver call
/// (`cuLaunchKernel`, `cuGraphLaunch`), else a runtime call (`cudaLaunchKernel`,
/// `hipModuleLaunchKernel`, `hipMemcpyDtoDAsync`).
pub fn launch_kind(name: &str) -> SpanKind {
    let b = name.as_bytes();
    if b.len() > 2 && b.starts_with(b"cu") && !b.starts_with(b"cuda") && b[2].is_ascii_uppercase() {
        SpanKind::CudaDriver
    } else {
        SpanKind::CudaRuntime
    }
}

/// Rows an XLA device plane derives from its streams (XProf's `XLA Modules`, `XLA Ops`,
/// `Steps`, name scopes, …): annotations over the kernels, not GPU work of their own.
pub fn is_derived_line(line: &str) -> bool {
    stream_number(line).is_none()
}

/// `kernel_details` (`regs:32 static_shared:0 dynamic_shared:0 grid:1,1,1 block:128,1,1
/// occ_pct:50.0`, ROCm: `grid:16,1,1 block:512,1,1 private_mem:0 group_mem:0 occ_pct:0`) as
/// the members Kineto gives a kernel (`"grid"`, `"block"`, `"registers per thread"`,
/// `"shared memory"`, `"est. achieved occupancy %"`), each `,"key":value`. Unknown keys and
/// values that are not numbers are left out.
pub fn kernel_details_members(details: &str, out: &mut String) {
    let mut shared: Option<u64> = None;
    for tok in details.split_ascii_whitespace() {
        let Some((k, v)) = tok.split_once(':') else { continue };
        match k {
            "grid" | "block" => {
                let dims: Option<Vec<u64>> = v.split(',').map(|x| x.parse().ok()).collect();
                if let Some(d) = dims.filter(|d| !d.is_empty() && d.len() <= 3) {
                    let list: Vec<String> = d.iter().map(|x| x.to_string()).collect();
                    out.push_str(&format!(",\"{k}\":[{}]", list.join(",")));
                }
            }
            "regs" => {
                if let Ok(n) = v.parse::<u64>() {
                    out.push_str(&format!(",\"registers per thread\":{n}"));
                }
            }
            "static_shared" | "dynamic_shared" | "group_mem" => {
                if let Ok(n) = v.parse::<u64>() {
                    shared = Some(shared.unwrap_or(0).saturating_add(n));
                }
            }
            "occ_pct" => {
                if let Ok(x) = v.parse::<f64>() {
                    if x.is_finite() {
                        out.push_str(&format!(",\"est. achieved occupancy %\":{x}"));
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(s) = shared {
        out.push_str(&format!(",\"shared memory\":{s}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_as_xla_writes_them() {
        assert_eq!(gpu_ordinal("/device:GPU:3"), Some(3));
        for n in ["/host:CPU", "/device:GPU:", "/device:GPU:x", "/device:TPU:0", "/device:CUSTOM:Megascale Trace"] {
            assert_eq!(gpu_ordinal(n), None, "{n}");
        }
        assert_eq!(stream_number("Stream #14(Compute,Memset)"), Some(14));
        assert_eq!(stream_number("Stream #2"), Some(2));
        assert_eq!(stream_number("XLA Ops"), None);
        assert_eq!(device_event_kind("MemcpyH2D").1, Some(CopyDir::HtoD));
        assert_eq!(device_event_kind("Memset").0, SpanKind::Memset);
        assert_eq!(device_event_kind("loop_fusion").0, SpanKind::Kernel);
        assert_eq!(launch_kind("cuLaunchKernel"), SpanKind::CudaDriver);
        assert_eq!(launch_kind("cudaLaunchKernel"), SpanKind::CudaRuntime);
        assert_eq!(launch_kind("hipModuleLaunchKernel"), SpanKind::CudaRuntime);
        let mut s = String::new();
        kernel_details_members(
            "regs:32 static_shared:16 dynamic_shared:0 grid:4,1,1 block:128,1,1 occ_pct:50.5",
            &mut s,
        );
        assert_eq!(
            s,
            ",\"registers per thread\":32,\"grid\":[4,1,1],\"block\":[128,1,1],\"est. achieved occupancy %\":50.5,\"shared memory\":16"
        );
    }
}
