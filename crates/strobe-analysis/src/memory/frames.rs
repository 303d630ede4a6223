//! Which frames of an allocation's stack are the user's. `context="all"` stacks start with the
//! allocator's own C++ frames (`torch::unwind::unwind`, `CUDACachingAllocator::malloc`, the
//! dispatcher, CPython's eval loop), so the line that asked for the memory sits dozens of
//! frames down. memory_viz hides such frames by name and file (`_frame_filter` in
//! torch/cuda/_memory_viz.py); here the same kinds of frames are *internal*, and the first
//! user frame is the innermost Python frame outside torch and the standard library (the
//! training script, or a model library such as transformers), else the first Python frame,
//! else the first frame that is not internal.

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

/// A C++ function's name without its parameter list (`ns::Node::apply(std::vector<…>&&)` →
/// `ns::Node::apply()`), for one-line labels.
pub fn short_name(name: &str) -> &str {
    match name.find('(') {
        Some(i) if i > 0 && name.contains("::") => &name[..i],
        _ => name,
    }
}

pub fn is_internal(f: &Frame) -> bool {
    f.name == "??"
        || INTERNAL_NAMES.iter().any(|n| f.name.contains(n))
        || INTERNAL_FILES.iter().any(|n| f.filename.contains(n))
}

fn is_python(f: &Frame) -> bool {
    f.filename.ends_with(".py")
}

/// torch's own Python files, and the standard library's (contextlib's decorators, runpy):
/// the frames between the user's line and the allocator. Another installed package (a model
/// library) is the user's code as far as the allocation is concerned.
fn is_library(f: &Frame) -> bool {
    let file = f.filename.replace('\\', "/");
    if file.contains("/torch/") || file.starts_with("torch/") || file.contains("<frozen ") {
        return true;
    }
    // the standard library: .../lib/python3.X/<module>.py, not inside site- or dist-packages
    let in_packages = file.contains("/site-packages/") || file.contains("/dist-packages/");
    !in_packages && file.contains("/lib/python3")
}

/// Index of the first user frame of `frames` (innermost first, as snapshots store them).
pub fn first_user_frame(frames: &[&Frame]) -> Option<usize> {
    frames
        .iter()
        .position(|f| is_python(f) && !is_library(f))
        .or_else(|| frames.iter().position(|f| is_python(f)))
        // the autograd engine's threads run no Python: the node (`MmBackward0::apply`) says
        // which op of the backward asked
        .or_else(|| frames.iter().position(|f| f.name.starts_with("torch::autograd::") && f.name.contains("::apply(")))
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
        // a model library outside torch is the user's code; contextlib's wrapper is not
        let lib = [
            f("forward", "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py"),
            f("decorate_context", "/usr/lib/python3.12/contextlib.py"),
            f("forward", "/venv/lib/python3.12/site-packages/transformers/models/llama/modeling_llama.py"),
            f("train_step", "/home/me/train.py"),
        ];
        assert_eq!(first_user_frame(&lib.iter().collect::<Vec<_>>()), Some(2));
        // C++ only: the first frame that is not the allocator's
        let cpp = [f("torch::unwind::unwind()", "??"), f("my_extension::launch", "ext.cpp")];
        assert_eq!(first_user_frame(&cpp.iter().collect::<Vec<_>>()), Some(1));
        // an autograd engine thread: the node that ran, not the kernel wrapper under it
        let bw = [
            f("torch::unwind::unwind()", "??"),
            f("at::(anonymous namespace)::create_out(c10::ArrayRef<long>)", "RegisterCUDA_0.cpp"),
            f("torch::autograd::generated::MmBackward0::apply(std::vector<at::Tensor>&&)", "??"),
            f("torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)", "??"),
        ];
        assert_eq!(first_user_frame(&bw.iter().collect::<Vec<_>>()), Some(2));
    }
}
