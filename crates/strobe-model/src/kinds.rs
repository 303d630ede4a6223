use serde::{Deserialize, Serialize};

/// Direction of a copy, which decides its copy-engine lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[repr(u8)]
pub enum CopyDir {
    HtoD = 0,
    DtoH = 1,
    DtoD = 2,
    PtoP = 3,
    Memset = 4,
    /// Host to host, unified memory, or a kind the source did not say.
    Other = 5,
}

impl CopyDir {
    pub fn from_u8(v: u8) -> CopyDir {
        match v {
            0 => CopyDir::HtoD,
            1 => CopyDir::DtoH,
            2 => CopyDir::DtoD,
            3 => CopyDir::PtoP,
            4 => CopyDir::Memset,
            _ => CopyDir::Other,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            CopyDir::HtoD => "H2D",
            CopyDir::DtoH => "D2H",
            CopyDir::DtoD => "D2D",
            CopyDir::PtoP => "P2P",
            CopyDir::Memset => "memset",
            CopyDir::Other => "other",
        }
    }

    /// Reads the direction out of a copy's name, as Kineto writes it
    /// (`Memcpy HtoD (Pinned -> Device)`, `Memcpy DtoD (Device -> Device)`, `Memcpy PtoP`).
    pub fn from_memcpy_name(name: &str) -> CopyDir {
        if name.contains("HtoD") {
            CopyDir::HtoD
        } else if name.contains("DtoH") {
            CopyDir::DtoH
        } else if name.contains("DtoD") {
            CopyDir::DtoD
        } else if name.contains("PtoP") || name.contains("Peer") {
            CopyDir::PtoP
        } else {
            CopyDir::Other
        }
    }
}

/// What a span is; decides its colour class and which analyses see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[repr(u8)]
pub enum SpanKind {
    Kernel = 0,
    Memcpy = 1,
    Memset = 2,
    CudaRuntime = 3,
    CudaDriver = 4,
    CpuOp = 5,
    PythonFunction = 6,
    UserAnnotation = 7,
    GpuAnnotation = 8,
    Nvtx = 9,
    Instant = 10,
    Async = 11,
    OsRuntime = 12,
    Other = 13,
}

impl SpanKind {
    pub fn from_u8(v: u8) -> SpanKind {
        use SpanKind::*;
        [
            Kernel,
            Memcpy,
            Memset,
            CudaRuntime,
            CudaDriver,
            CpuOp,
            PythonFunction,
            UserAnnotation,
            GpuAnnotation,
            Nvtx,
            Instant,
            Async,
            OsRuntime,
            Other,
        ]
        .get(v as usize)
        .copied()
        .unwrap_or(Other)
    }

    /// GPU activity as `strobe report` defines it: kernels, memcpy and memset.
    pub fn is_gpu_activity(self) -> bool {
        matches!(self, SpanKind::Kernel | SpanKind::Memcpy | SpanKind::Memset)
    }

    /// Kineto categories, old and new spellings, and the other producers' names.
    pub fn from_chrome_category(cat: &str) -> SpanKind {
        match cat.to_ascii_lowercase().as_str() {
            "kernel" => SpanKind::Kernel,
            "gpu_memcpy" | "memcpy" => SpanKind::Memcpy,
            "gpu_memset" | "memset" => SpanKind::Memset,
            "cuda_runtime" | "runtime" | "hip_runtime" => SpanKind::CudaRuntime,
            "cuda_driver" | "driver" => SpanKind::CudaDriver,
            "cpu_op" | "operator" => SpanKind::CpuOp,
            "python_function" | "python" => SpanKind::PythonFunction,
            "user_annotation" => SpanKind::UserAnnotation,
            // CUPTI's synchronization records (`enable_cuda_sync_events`) happen on a stream
            // (or the whole device) while the host waits: GPU-side marks, not GPU work
            "gpu_user_annotation" | "cuda_sync" => SpanKind::GpuAnnotation,
            _ => SpanKind::Other,
        }
    }
}

/// Lane identity. A lane is one row group of the timeline and one index in the store.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum LaneKind {
    /// Kernels, memcpy and memset as issued on one CUDA/HIP stream.
    GpuStream { device: i64, stream: i64 },
    /// A second index over the copy spans of one device, by direction: shows what the copy
    /// engines did regardless of which stream issued the copy.
    CopyEngine { device: i64, dir: CopyDir },
    /// GPU-side annotation ranges (`gpu_user_annotation`) of one stream.
    GpuAnnotation { device: i64, stream: i64 },
    /// A CPU thread: ops, runtime calls, python functions and `user_annotation` ranges nest
    /// here together, as Perfetto and Kineto show them.
    CpuThread { pid: crate::IdKey, tid: crate::IdKey },
    /// NVTX ranges of one thread.
    Nvtx { pid: crate::IdKey, tid: crate::IdKey },
    /// Async (`b`/`e`/`n`) events of one process, grouped by category and name.
    Async { pid: crate::IdKey, track: String },
}

impl LaneKind {
    pub fn device(&self) -> Option<i64> {
        match self {
            LaneKind::GpuStream { device, .. }
            | LaneKind::CopyEngine { device, .. }
            | LaneKind::GpuAnnotation { device, .. } => Some(*device),
            _ => None,
        }
    }
}
