//! Lane names people read (`GPU 0 · stream 7`, `GPU 0 · copy H2D`, `CPU · python (tid 1234)`)
//! and the order lanes appear in.

use rustc_hash::FxHashMap;
use strobe_model::{IdKey, LaneKind};

pub fn lane_display_name(
    kind: &LaneKind,
    procs: &FxHashMap<IdKey, String>,
    threads: &FxHashMap<(IdKey, IdKey), String>,
) -> String {
    match kind {
        LaneKind::GpuStream { device, stream } => format!("GPU {device} · stream {stream}"),
        LaneKind::CopyEngine { device, dir } => format!("GPU {device} · copy {}", dir.label()),
        // no stream: a device-wide synchronization (`cudaDeviceSynchronize`, event syncs)
        LaneKind::GpuAnnotation { device, stream } if *stream < 0 => format!("GPU {device} · device syncs"),
        LaneKind::GpuAnnotation { device, stream } => format!("GPU {device} · annotations (stream {stream})"),
        LaneKind::CpuThread { pid, tid } => {
            if let Some(what) = strobe_model::profiler_pseudo_process(pid) {
                let tid = tid.to_string();
                return if tid.is_empty() || tid == "0" { what.to_string() } else { format!("{what} · {tid}") };
            }
            let t = threads.get(&(pid.clone(), tid.clone())).map(|s| s.trim().to_string());
            let p = procs.get(pid).cloned();
            match (t, p) {
                (Some(t), _) if !t.is_empty() => format!("CPU · {t} (tid {tid})"),
                (_, Some(p)) => format!("CPU · {p} (tid {tid})"),
                _ if pid.as_num().is_none() => format!("{pid} · {tid}"),
                _ => format!("CPU · pid {pid} (tid {tid})"),
            }
        }
        LaneKind::Nvtx { pid, tid } => {
            let t = threads.get(&(pid.clone(), tid.clone())).cloned().unwrap_or_default();
            if t.is_empty() {
                format!("NVTX · tid {tid}")
            } else {
                format!("NVTX · {t} (tid {tid})")
            }
        }
        LaneKind::Async { pid, track } => format!("async · {track} (pid {pid})"),
    }
}

/// GPU lanes first (by device, stream), then CPU threads by their metadata sort index.
pub fn lane_sort_key(kind: &LaneKind, psort: &FxHashMap<IdKey, i64>, tsort: &FxHashMap<(IdKey, IdKey), i64>) -> i64 {
    match kind {
        LaneKind::GpuStream { device, stream } => device * 1_000_000 + (*stream).clamp(0, 999_999),
        LaneKind::GpuAnnotation { device, stream } => device * 1_000_000 + (*stream).clamp(0, 999_999),
        LaneKind::CopyEngine { device, dir } => device * 1_000_000 + 999_000 + *dir as i64,
        LaneKind::CpuThread { pid, tid } | LaneKind::Nvtx { pid, tid } => {
            let p = psort.get(pid).copied().or(pid.as_num()).unwrap_or(0);
            let t = tsort.get(&(pid.clone(), tid.clone())).copied().or(tid.as_num()).unwrap_or(0);
            (1i64 << 40) + (p.clamp(0, 1 << 20) << 20) + t.clamp(0, (1 << 20) - 1)
        }
        LaneKind::Async { .. } => 1i64 << 62,
    }
}
