//! Which frames of an allocation's stack are the user's. `context="all"` stacks start with the
//! allocator's own C++ frames (`torch::unwind::unwind`, `CUDACachingAllocator::malloc`, the
//! dispatcher, CPython's eval loop), so the line that asked for the memory sits dozens of
//! frames down. memory_viz hides such frames by name and file (`_frame_filter` in
//! torch/cuda/_memory_viz.py); here the same kinds of frames are *internal*, and the first
//! user frame is the first Python frame outside an installed package (the training script),
//! else the first Python frame, else the first frame that is not internal.

use strobe_model::memory::Frame;

/// Function names (substrings) of frames that are the allocator's, the unwinder's, the
/// dispatcher's or the interpreter's, never the user's.
const INTERNAL_NAMES: &[&str] = &[
    "unwind::unwind",
    "CapturedTraceback",
    "gather_with_cpp",
    "CUDACachingAllocator",
    "c10::cuda::",
    "c10::impl::",
    "c10::Dispatcher",
    "c10::detail",
    "at::_ops::",
    "at::native::",
    "at::detail::",
    "at::empty",
    "torch::autograd::",
    "torch::jit::",
    "THPVariable",
    "pybind11::",
    "_PyEval",
    "PyEval_",
    "PyObject_",
    "PyFunction_",
    "_PyObject",
    "_PyFunction",
    "PyVectorcall",
    "method_vectorcall",
    "cfunction_",
    "slot_tp_",
    "_start",
    "__libc_start",
];

/// File names (substrings) of frames that are internal whatever their function.
const INTERNAL_FILES: &[&str] = &[
    "core/boxing",
    "/Register",
    "/Redispatch",
    "pythonrun.c",
    "Modules/main.c",
    "Objects/call.c",
    "Objects/methodobject.c",
    "pycore_ceval.h",
    "ceval.c",
    "cpython/abstract.h",
    "CUDACachingAllocator",
];

pub fn is_internal(f: &Frame) -> bool {
    f.name == "??"
        || INTERNAL_NAMES.iter().any(|n| f.name.contains(n))
        || INTERNAL_FILES.iter().any(|n| f.filename.contains(n))
}

fn is_python(f: &Frame) -> bool {
    f.filename.ends_with(".py")
}

/// An installed library's file (torch, its dependencies, the standard library): a user's
/// script is anywhere else.
fn is_library(f: &Frame) -> bool {
    ["/site-packages/", "/dist-packages/", "/lib/python3", "<frozen "].iter().any(|p| f.filename.contains(p))
}

/// Index of the first user frame of `frames` (innermost first, as snapshots store them).
pub fn first_user_frame(frames: &[&Frame]) -> Option<usize> {
    frames
        .iter()
        .position(|f| is_python(f) && !is_library(f))
        .or_else(|| frames.iter().position(|f| is_python(f)))
        .or_else(|| frames.iter().position(|f| !is_internal(f)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(name: &str, file: &str) -> Frame {
        Frame { name: name.into(), filename: file.into(), line: 1 }
    }

    #[test]
    fn the_script_line_under_the_allocator_and_torch() {
        let st = [
            f("torch::unwind::unwind()", "??"),
            f("c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(...)", ""),
            f("at::native::empty_cuda(...)", "aten/src/ATen/native/cuda/EmptyTensor.cpp"),
            f("_PyEval_EvalFrameDefault", "Python/ceval.c"),
            f("forward", "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py"),
            f("train_step", "/home/me/train.py"),
            f("<module>", "/home/me/train.py"),
        ];
        let refs: Vec<&Frame> = st.iter().collect();
        assert_eq!(first_user_frame(&refs), Some(5));
        assert!(is_internal(&st[0]) && is_internal(&st[1]) && is_internal(&st[3]));
        assert!(!is_internal(&st[4]));
        // only library Python frames: the first of them
        assert_eq!(first_user_frame(&refs[..5]), Some(4));
        // C++ only: the first frame that is not the allocator's
        let cpp = [f("torch::unwind::unwind()", "??"), f("my_extension::launch", "ext.cpp")];
        assert_eq!(first_user_frame(&cpp.iter().collect::<Vec<_>>()), Some(1));
    }
}
