#!/usr/bin/env python3
"""Independent oracle for the memory categories and the by-source breakdown (docs/memory.md,
"Categories: what the bytes are"), written from the rules there, not from Strobe's code.

Reads the snapshot with the standard library's pickle (globals refused: snapshots are plain
data). Per device:
  allocations: an `alloc` at entry a freed by the next `free_completed` of its address at entry f
  is alive at positions a+1 ..= f (position k = after k entries); a `free_completed` of an address
  not allocated in the trace is an allocation alive from position 0 to f (its stack: that
  entry's); a final active (allocated or awaiting-free) block whose address is not open at the end
  lived through it all (size: requested_size, else size). The peak is the first position where
  the sum of alive sizes is largest.
  phases, categories, first user frame: as docs/memory.md says (see the functions below).
Prints, per device, the breakdown at the peak and at the end of each annotated backward:
  {"devices": {"0": {"peak": B, "after_backward": [B, ...]}}},
  B = {"position", "allocated_bytes", "categories": {cat: [bytes, count]},
       "by_source": {frame: [bytes, count, category]}, "source": "annotations"|"frames"|"none"}

Usage: memory_categories_expected.py SNAPSHOT.pickle > STEM.categories.json
"""
import bisect, gzip, json, pickle, sys


class PlainData(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refusing global {module}.{name}")


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    import io
    return PlainData(io.BytesIO(raw)).load()


# --- frames -----------------------------------------------------------------------------------

def norm(f):
    return (f.get("filename") or "").replace("\\", "/")


def hints(frames):
    h = set()
    for f in frames:
        h.add("frames")
        n, file = f.get("name") or "", norm(f)
        if "setWorkspaceForHandle" in n or "getCUDABlasLtWorkspace" in n:
            h.add("workspace")
        if "AccumulateGrad" in n:
            h.add("accumulate_grad")
        if "autograd::Engine::" in n or n == "_engine_run_backward" or (
            n == "backward" and (file.endswith("torch/autograd/__init__.py") or file.endswith("torch/_tensor.py"))
        ):
            h.add("engine")
        if "torch/optim/" in file:
            h.add("optim")
        module_py = file.endswith("torch/nn/modules/module.py")
        if module_py and n in ("_call_impl", "_wrapped_call_impl"):
            h.add("module_call")
        if (
            (module_py and n in ("_apply", "to", "cuda", "to_empty"))
            or file.endswith("torch/nn/init.py")
            or file.endswith("torch/nn/parameter.py")
            or n == "reset_parameters"
            or ("torch/nn/modules/" in file and n == "__init__")
        ):
            h.add("param_maker")
    return h


INTERNAL_NAMES = ["unwind::unwind", "CapturedTraceback", "gather_with_cpp", "CUDACachingAllocator",
                  "c10::cuda::", "c10::impl::", "c10::Dispatcher", "c10::detail", "at::_ops::",
                  "at::native::", "at::detail::", "at::empty", "torch::autograd::", "torch::jit::",
                  "THPVariable", "pybind11::", "_PyEval", "PyEval_", "PyObject_", "PyFunction_",
                  "_PyObject", "_PyFunction", "PyVectorcall", "method_vectorcall", "cfunction_",
                  "slot_tp_", "_start", "__libc_start"]
INTERNAL_FILES = ["core/boxing", "/Register", "/Redispatch", "pythonrun.c", "Modules/main.c",
                  "Objects/call.c", "Objects/methodobject.c", "pycore_ceval.h", "ceval.c",
                  "cpython/abstract.h", "CUDACachingAllocator"]


def internal(f):
    n, file = f.get("name") or "", f.get("filename") or ""
    return n == "??" or any(x in n for x in INTERNAL_NAMES) or any(x in file for x in INTERNAL_FILES)


def torch_or_stdlib(f):
    file = norm(f)
    if "/torch/" in file or file.startswith("torch/") or "<frozen " in file:
        return True
    return "/lib/python3" in file and "/site-packages/" not in file and "/dist-packages/" not in file


def first_user(frames):
    py = [f for f in frames if norm(f).endswith(".py")]
    for f in py:
        if not torch_or_stdlib(f):
            return f
    if py:
        return py[0]
    for f in frames:
        n = f.get("name") or ""
        if n.startswith("torch::autograd::") and "::apply(" in n:
            return f
    for f in frames:
        if not internal(f):
            return f
    return None


def short(name):
    i = name.find("(")
    return name[:i] if i > 0 and "::" in name else name


def label(f):
    if f is None:
        return "(no stack)"
    file = f.get("filename") or ""
    if file in ("", "??"):
        return short(f["name"])
    return f"{short(f['name'])} {file}:{f['line']}"


# --- phases -----------------------------------------------------------------------------------

def kind_of(name):
    l = name.lower()
    if "zero_grad" in l:
        return "zero_grad"
    if l.startswith("optimizer.step") or "optimizer" in l:
        return "optimizer"
    if "backward" in l:
        return "backward"
    if "forward" in l:
        return "forward"
    return None


def merge(rs):
    out = []
    for s, e in sorted(r for r in rs if r[1] > r[0]):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def inside(rs, p):
    for s, e in rs:
        if s <= p < e:
            return (s, e)
    return None


def annotation_phases(snap, dev, trace):
    times = [e.get("time_us") for e in trace]
    if not trace or any(t is None for t in times):
        return None
    ann = [a for a in snap.get("external_annotations") or [] if a.get("device") == dev]
    raw = {"forward": [], "backward": [], "optimizer": [], "zero_grad": []}
    opened = []
    for a in ann:
        t = a.get("time_us")
        if t is None:
            continue
        if a["stage"] == "START":
            opened.append((a["name"], bisect.bisect_left(times, t)))
        else:
            for i in range(len(opened) - 1, -1, -1):
                if opened[i][0] == a["name"]:
                    nm, p0 = opened.pop(i)
                    k = kind_of(nm)
                    if k:
                        raw[k].append((p0, bisect.bisect_right(times, t)))
                    break
    for nm, p0 in opened:
        k = kind_of(nm)
        if k:
            raw[k].append((p0, len(trace)))
    ph = {k: merge(v) for k, v in raw.items()}
    if not (ph["forward"] or ph["backward"] or ph["optimizer"]):
        return None
    return ph


def frame_phases(allocs_in_order, n):
    """Runs of allocs under the engine (backward) and under torch/optim (optimizer)."""
    bw, opt = [], []
    b0 = o0 = None
    for i, h in allocs_in_order:
        if "engine" in h:
            b0 = i if b0 is None else b0
        elif b0 is not None:
            bw.append((b0, i))
            b0 = None
        if "optim" in h and "engine" not in h:
            o0 = i if o0 is None else o0
        elif o0 is not None:
            opt.append((o0, i))
            o0 = None
    if b0 is not None:
        bw.append((b0, n))
    if o0 is not None:
        opt.append((o0, n))
    return {"forward": [], "backward": merge(bw), "optimizer": merge(opt), "zero_grad": []}


# --- the rules --------------------------------------------------------------------------------

def wrapped(trace):
    """Frees of blocks or segments the trace never allocated (docs/memory.md, history window)."""
    open_, pending, segs = set(), set(), set()
    for e in trace:
        a, addr = e["action"], e.get("addr")
        if a == "alloc":
            open_.add(addr)
        elif a == "free_requested":
            if addr not in open_ and addr not in pending:
                return True
        elif a == "free_completed":
            if addr in open_:
                open_.discard(addr)
            elif addr in pending:
                pending.discard(addr)
            else:
                return True
        elif a == "segment_alloc":
            segs.add(addr)
        elif a == "segment_free":
            if addr not in segs:
                return True
            segs.discard(addr)
    return False


def category(al, ph, source, n, kept_from, is_wrapped):
    h, made, freed = al["hints"], al["made"], al["freed"]
    kept = freed is None or freed >= kept_from
    if "workspace" in h:
        return "other"
    if "accumulate_grad" in h and source != "none":
        return "gradient"
    if "param_maker" in h and not ({"engine", "optim"} & h) and kept:
        return "parameter"
    if source == "none":
        return "other"
    if made is None and is_wrapped:
        return "other"
    f = n if freed is None else freed
    if made is not None:
        for kind in ("zero_grad", "optimizer", "backward", "forward"):
            r = inside(ph[kind], made)
            if r is None:
                continue
            end = r[1]
            if kind == "backward":
                return "gradient" if kept or f >= end else "temporary"
            if kind == "optimizer":
                return "optimizer_state" if kept else ("temporary" if f < end else "other")
            if kind == "zero_grad":
                return "gradient" if kept or f >= end else "temporary"
            if not kept and f < end:
                return "temporary"
            if not kept and inside(ph["backward"], f):
                return "activation"
            return "other"
        if source == "frames" and "module_call" in h:
            starts = [s for s, _ in ph["backward"] + ph["optimizer"] if s > made]
            if not kept and inside(ph["backward"], f):
                return "activation"
            if not kept and (not starts or f < min(starts)):
                return "temporary"
            return "other"
    m = 0 if made is None else made
    if source == "frames":
        firsts = [r[0] for r in ph["backward"][:1]] or [r[0] for r in ph["optimizer"][:1]]
        first = firsts[0] if firsts else float("inf")
        if freed is None and m < first:
            return "parameter"
        if freed is not None and made is not None and inside(ph["backward"], freed):
            return "activation"
        if freed is not None and not any(m < s <= freed for s, _ in ph["backward"] + ph["optimizer"]):
            return "temporary"
        return "other"
    first_fwd = ph["forward"][0][0] if ph["forward"] else float("inf")
    if kept and m < first_fwd:
        return "parameter"
    if any(m < s <= f for s, _ in ph["forward"]):
        return "input_batch"
    everything = ph["forward"] + ph["backward"] + ph["optimizer"]
    if not kept and not any(m < s <= f for s, _ in everything):
        return "temporary"
    return "other"


# --- per device ------------------------------------------------------------------------------

def device(snap, dev, trace):
    n = len(trace)
    allocs, open_ = [], {}
    for i, e in enumerate(trace):
        if e["action"] == "alloc":
            open_[e["addr"]] = len(allocs)
            allocs.append({"size": e["size"], "frames": e.get("frames") or [], "made": i, "freed": None})
        elif e["action"] == "free_completed":
            j = open_.pop(e["addr"], None)
            if j is not None:
                allocs[j]["freed"] = i
            else:
                allocs.append({"size": e["size"], "frames": e.get("frames") or [], "made": None, "freed": i})
    for seg in snap["segments"]:
        if seg.get("device", 0) != dev:
            continue
        addr = seg["address"]
        for b in seg["blocks"]:
            if b["state"] in ("active_allocated", "active_awaiting_free", "active_pending_free") and addr not in open_:
                req = b.get("requested_size") or b["size"]
                allocs.append({"size": req, "frames": b.get("frames") or [], "made": None, "freed": None})
            addr += b["size"]
    for a in allocs:
        a["hints"] = hints(a["frames"])
    # the peak: sum of alive sizes per position, first largest
    delta = [0] * (n + 2)
    for a in allocs:
        s = 0 if a["made"] is None else a["made"] + 1
        e = n + 1 if a["freed"] is None else a["freed"] + 1
        delta[s] += a["size"]
        delta[e] -= a["size"]
    best, peak, run = None, 0, 0
    for k in range(n + 1):
        run += delta[k]
        if best is None or run > best:
            best, peak = run, k
    ph = annotation_phases(snap, dev, trace)
    source = "annotations"
    kept_from = n
    if ph is None:
        has_frames = any(a["frames"] for a in allocs)
        order = sorted((a["made"], a["hints"]) for a in allocs if a["made"] is not None)
        ph = frame_phases(order, n) if has_frames else {"forward": [], "backward": [], "optimizer": [], "zero_grad": []}
        source = "frames" if has_frames else "none"
    else:
        kept_from = max(e for v in ph.values() for _, e in v)
    is_wrapped = wrapped(trace)
    for a in allocs:
        a["category"] = category(a, ph, source, n, kept_from, is_wrapped)
        a["source"] = label(first_user(a["frames"]))

    def at(k):
        cats, srcs, total = {}, {}, 0
        for a in allocs:
            s = 0 if a["made"] is None else a["made"] + 1
            e = n if a["freed"] is None else a["freed"]
            if not (s <= k <= e):
                continue
            total += a["size"]
            c = cats.setdefault(a["category"], [0, 0])
            c[0] += a["size"]
            c[1] += 1
            x = srcs.setdefault(a["source"], [0, 0, {}])
            x[0] += a["size"]
            x[1] += 1
            x[2][a["category"]] = x[2].get(a["category"], 0) + a["size"]
        order = ["parameter", "gradient", "optimizer_state", "activation", "temporary", "input_batch", "other"]
        by_source = {
            f: [b, c, max(per, key=lambda x: (per[x], -order.index(x)))] for f, (b, c, per) in srcs.items()
        }
        return {"position": k, "allocated_bytes": total, "categories": cats, "by_source": by_source, "source": source}

    after_bw = [at(e) for _, e in ph["backward"]] if source == "annotations" else []
    return {"peak": at(peak), "after_backward": after_bw}


def main():
    snap = load(sys.argv[1])
    out = {}
    traces = snap.get("device_traces") or []
    for dev, trace in enumerate(traces):
        if trace:
            out[str(dev)] = device(snap, dev, trace)
    json.dump({"devices": out}, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
