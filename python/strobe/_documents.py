"""The documents ``strobe.open`` returns. Each wraps a handle of the compiled module
(``strobe._strobe``), which runs the same analyses as ``strobe report``; here their tables
become pandas DataFrames. Times are integer nanoseconds in the trace's own clock."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any, Dict, Iterable, List, Literal, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from . import _strobe
from ._binary import show as _show
from ._frames import from_json, maybe, records

PathLike = Union[str, "os.PathLike[str]"]

KERNEL_COLUMNS = ("name", "count", "total_ns", "mean_ns", "min_ns", "max_ns", "pct_kernel_time")
STEP_COLUMNS = ("name", "start_ns", "dur_ns", "source", "gpu_busy_ns", "gpu_idle_ns")
GAP_COLUMNS = (
    "device", "start_ns", "end_ns", "len_ns", "cause", "prev_span", "next_span", "next_launch", "held_by", "held_by_name",
)
SPAN_COLUMNS = (
    "pid", "tid", "process_name", "thread_name", "lane", "device", "stream", "depth", "ts_ns", "dur_ns", "name",
    "category", "lane_id",
)
LANE_COLUMNS = ("lane_id", "pid", "tid", "process_name", "thread_name", "lane", "device", "stream", "spans")
COLLECTIVE_COLUMNS = ("name", "device", "stream", "start_ns", "end_ns", "dur_ns", "launch_ns")


class Document:
    """What every opened document has: the files it came from, its report, and the window."""

    def __init__(self, handle: Any, cache_dir: Optional[PathLike] = None) -> None:
        self._h = handle
        self._cache_dir = None if cache_dir is None else os.fspath(cache_dir)

    @property
    def files(self) -> List[str]:
        """The files (or folder) this document was opened from."""
        return list(self._h.files())

    @property
    def kind(self) -> str:
        """``trace``, ``ranks``, ``memory_snapshot``, ``ncu``, ``memory_stats`` or ``flight_recorder``."""
        return str(self._h.kind)

    def report(self) -> Dict[str, Any]:
        """Exactly what ``strobe report --json`` prints for the same files."""
        return json.loads(self._h.report())

    def show(self) -> "subprocess.Popen[bytes]":
        """Opens the Strobe window on the same files, in a process of its own (the call
        returns at once; the window stays open after the notebook or script goes on)."""
        return _show(self.files, self._cache_dir)

    def __repr__(self) -> str:
        return f"<strobe.{type(self).__name__} {', '.join(self.files)}>"


class Trace(Document):
    """One timeline: a PyTorch profiler (Kineto) trace, an Nsight Systems export, a JAX
    XSpace profile, a Perfetto trace or any Chrome trace. Each figure is computed once and
    kept: asking again, or for the report after a table, reuses it."""

    @property
    def kind(self) -> str:
        return "trace"

    def report(self, top: int = 20) -> Dict[str, Any]:
        """``strobe report --json --top TOP``: GPU busy and idle, kernels, streams, steps,
        idle breakdown, efficiency, ops, largest gaps, step breakdown."""
        return json.loads(self._h.report(top))

    def kernels(self) -> pd.DataFrame:
        """Every kernel name: count, total, mean, min and max duration, share of kernel time
        (the report's ``top_kernels``, all of them), longest total first."""
        return from_json(self._h.kernels(), KERNEL_COLUMNS)

    def ops(self) -> pd.DataFrame:
        """Efficiency per op: FLOPs, bytes, GPU time, TFLOP/s, % of peak, bound, time lost
        (the report's ``efficiency.ops``)."""
        return from_json(self._h.ops())

    def kernel_efficiency(self) -> pd.DataFrame:
        """Efficiency per kernel name (the report's ``efficiency.kernels``)."""
        return from_json(self._h.kernel_efficiency())

    def op_table(self) -> pd.DataFrame:
        """torch.profiler's ``key_averages()`` per op name: calls, CPU and device time,
        total and self (the report's ``ops``)."""
        return from_json(self._h.op_table())

    def steps(self) -> pd.DataFrame:
        """The steps with the GPU's busy and idle time in each (the report's ``steps``)."""
        return from_json(self._h.steps(), STEP_COLUMNS)

    def idle_gaps(self, threshold_ns: int = 10_000) -> pd.DataFrame:
        """Every GPU idle gap at least ``threshold_ns`` long, longest first, with its cause
        (``host_wait``, ``kernel_wait``, ``other``) and the op that held the launching
        thread (the report's ``largest_gaps``, all of them)."""
        return from_json(self._h.idle_gaps(int(threshold_ns)), GAP_COLUMNS)

    def idle_breakdown(self) -> pd.DataFrame:
        """Each device's idle time split into host wait, kernel wait and other (the
        report's ``idle_breakdown``)."""
        return from_json(self._h.idle_breakdown())

    def step_breakdown(self) -> pd.DataFrame:
        """Where each step's time went, in parts that add up to the step (the report's
        ``step_breakdown``): ``parts.*`` columns in ns, ``details.*`` beside them."""
        return from_json(self._h.step_breakdown(), ("step", "start_ns", "dur_ns"), nested=("parts", "details"))

    def collectives(self) -> pd.DataFrame:
        """Every NCCL/RCCL kernel on the GPU streams, by start, with the start of the CPU
        call that launched it."""
        return from_json(self._h.collectives(), COLLECTIVE_COLUMNS)

    def lanes(self) -> pd.DataFrame:
        """The timeline's lanes (CPU threads, GPU streams, NVTX and async tracks) as
        ``strobe export --what spans`` names them; ``lane_id`` is what ``spans(lanes=…)`` takes."""
        return from_json(self._h.lanes(), LANE_COLUMNS)

    def spans(
        self,
        lanes: Union[None, str, int, Iterable[Union[str, int]]] = None,
        window: Optional[Tuple[Optional[int], Optional[int]]] = None,
    ) -> pd.DataFrame:
        """Spans as ``strobe export --what spans`` gives them (without ``args``), lane by
        lane in ``lanes()`` order, each lane's by start.

        ``lanes``: lane names (the ``lane`` column) or ``lane_id``s; None: every lane.
        ``window``: ``(start_ns, end_ns)``: only spans overlapping it (either end may be
        None). ``name`` and ``category`` are categoricals; ``dur_ns`` is -1 for a span never
        closed.
        """
        table = self.lanes()
        ids: Optional[List[int]] = None
        if lanes is not None:
            wanted = [lanes] if isinstance(lanes, (str, int)) else list(lanes)
            ids = []
            for w in wanted:
                if isinstance(w, str):
                    hit = table.loc[table["lane"] == w, "lane_id"].tolist()
                    if not hit:
                        raise ValueError(f"no lane named {w!r}; Trace.lanes() lists them")
                    ids.extend(int(h) for h in hit)
                else:
                    ids.append(int(w))
        start, end = window if window is not None else (None, None)
        c = self._h.spans(ids, start, end)
        lane_id = np.frombuffer(c["lane_id"], dtype="<u4").astype(np.int64)
        if len(table) and len(lane_id):
            per_lane = table.set_index("lane_id").loc[lane_id]
        else:
            per_lane = pd.DataFrame({k: pd.Series(dtype="object") for k in LANE_COLUMNS[1:]})
        out = pd.DataFrame(
            {
                "pid": per_lane["pid"].to_numpy(),
                "tid": per_lane["tid"].to_numpy(),
                "process_name": per_lane["process_name"].to_numpy(),
                "thread_name": per_lane["thread_name"].to_numpy(),
                "lane": per_lane["lane"].to_numpy(),
                "device": pd.array(per_lane["device"].to_numpy(), dtype="Int64"),
                "stream": pd.array(per_lane["stream"].to_numpy(), dtype="Int64"),
                "depth": np.frombuffer(c["depth"], dtype="<u4").astype(np.int64),
                "ts_ns": np.frombuffer(c["ts_ns"], dtype="<i8"),
                "dur_ns": np.frombuffer(c["dur_ns"], dtype="<i8"),
                "name": pd.Categorical.from_codes(np.frombuffer(c["name_codes"], dtype="<u4").astype(np.int64), c["names"]),
                "category": pd.Categorical.from_codes(np.frombuffer(c["cat_codes"], dtype="<u4").astype(np.int64), c["cats"]),
                "lane_id": lane_id,
            }
        )
        return out


class Ranks(Document):
    """Several ranks of one job: traces given together, a folder of them, an Nsight Systems
    export of several GPU processes, or a folder of ``strobe summarize`` summaries."""

    @property
    def kind(self) -> str:
        return "ranks"

    def report(self, top: int = 20, align: str = "collective", link_gbps: Optional[float] = None) -> Dict[str, Any]:
        """``strobe report --json --top TOP --align ALIGN A B …``: ranks, alignment, the
        rank × step table, stragglers with evidence, collectives, HTA's tables."""
        return json.loads(self._h.report(top, align, link_gbps))

    @property
    def ranks(self) -> List[Tuple[str, int]]:
        """(name, rank) of each trace, in the order given (empty for a summary folder)."""
        return [(n, int(r)) for n, r in self._h.rank_names()]

    def traces(self) -> List[Trace]:
        """Each rank's file opened as a ``Trace`` (from the store cache: no parse again)."""
        if len(self.files) < 2:
            raise ValueError("these ranks are not one file per rank (an export of several processes, or summaries)")
        return [open(f, cache_dir=self._cache_dir) for f in self.files]  # type: ignore[misc]

    def steps(self) -> pd.DataFrame:
        """The rank × step table, one row per (step, rank): start, duration, compute,
        communication (exposed), idle, wait on other ranks, straggler score."""
        rows = []
        for s in self.report()["steps"]:
            for r in s["per_rank"]:
                rows.append({"step": s["name"], **r})
        return records(rows, ("step", "rank", "start_ns", "dur_ns"))

    def step_table(self, value: str = "dur_ns") -> pd.DataFrame:
        """``steps()`` as a rank × step grid of one column (``dur_ns``, ``idle_ns``,
        ``exposed_comm_ns``…): a row per rank, a column per step in step order."""
        long = self.steps()
        order = list(dict.fromkeys(long["step"]))
        grid = long.pivot(index="rank", columns="step", values=value)
        return grid[order]

    def stragglers(self) -> pd.DataFrame:
        """The ranks that held the others back, how (``kind``), in which steps, and the
        evidence (the report's ``stragglers``)."""
        return maybe(self.report().get("stragglers"), ("rank", "kind", "steps", "evidence"))

    def straggler_steps(self) -> pd.DataFrame:
        """One row per (step, straggler) with the waits behind the verdict (the report's
        ``straggler_steps``)."""
        return maybe(self.report().get("straggler_steps"), ("step", "rank", "kind"))

    def collectives(self) -> pd.DataFrame:
        """Each collective matched across ranks: per-rank starts, ends and arrival, skew,
        the last ranks to arrive (the report's ``collectives``)."""
        return maybe(self.report().get("collectives"), ("name", "occurrence", "step", "skew_ns"))

    def temporal_breakdown(self) -> pd.DataFrame:
        """HTA's temporal breakdown per rank: compute, non-compute and idle time."""
        return maybe(self.report().get("temporal_breakdown"), ("rank",))

    def kernel_breakdown(self) -> pd.DataFrame:
        """HTA's kernel breakdown per rank and kernel type (compute, communication, memory)."""
        rows = []
        for r in self.report().get("kernel_breakdown") or []:
            for t in r.get("types", []):
                rows.append({"rank": r["rank"], **{k: v for k, v in t.items() if k != "top"}})
        return records(rows, ("rank", "kind", "count", "total_ns", "pct"))

    def step_breakdown(self) -> pd.DataFrame:
        """Each rank's step breakdown (the report's ``step_breakdown``, with ``rank``)."""
        return maybe(self.report().get("step_breakdown"), ("step", "rank"), nested=("parts", "details"))


class MemorySnapshot(Document):
    """A CUDA memory snapshot (``torch.cuda.memory._dump_snapshot``)."""

    @property
    def kind(self) -> str:
        return "memory_snapshot"

    def allocations(self) -> pd.DataFrame:
        """Every allocation of each device's replay (the Memory tab's active-memory
        timeline), bottom of the stack first: address, requested size, stream, the trace
        entries (and times, ns) of its alloc and free, its innermost user frame."""
        return from_json(
            self._h.allocations(),
            ("device", "addr", "size", "stream", "alloc_entry", "free_entry", "alloc_ns", "free_ns", "frame"),
        )

    def segments(self) -> pd.DataFrame:
        """The segments the allocator holds at the snapshot, with their blocks' bytes by
        state (allocated, awaiting free, inactive)."""
        return from_json(self._h.segments(), ("device", "address", "total_size", "stream"))

    def peak_breakdown(self, by: Literal["category", "source"] = "category") -> pd.DataFrame:
        """What is alive at each device's peak allocated memory (requested bytes, the
        report's ``devices[].peak_breakdown``), one row per device and ``by``:

        - ``"category"``: every category (parameter, gradient, optimizer state, activation,
          …, in a fixed order, empty ones included) with its ``bytes``, ``count`` and the
          ``rules`` that put them there; a device's rows add up to its peak.
        - ``"source"``: each source line (the first user frame of the allocations' stacks),
          largest first, with the ``category`` holding most of its bytes and its bytes per
          category (``categories``: ``[category, bytes]`` pairs).
        """
        if by == "category":
            return from_json(self._h.peak_categories(), ("device", "category", "bytes", "count", "rules"))
        if by == "source":
            return from_json(
                self._h.peak_sources(),
                ("device", "frame", "function", "file", "line", "bytes", "count", "category", "categories"),
            )
        raise ValueError(f"peak_breakdown(by={by!r}): by is 'category' or 'source'")


class NcuReport(Document):
    """An Nsight Compute export (``ncu --csv``) or ``.ncu-rep`` report."""

    @property
    def kind(self) -> str:
        return "ncu"

    def kernels(self) -> pd.DataFrame:
        """One row per launch with its Speed of Light, roofline figures and verdict (the
        report's ``kernels``)."""
        return from_json(self._h.kernels(), ("id", "name"))

    def by_name(self) -> pd.DataFrame:
        """One row per kernel name, longest total first (the report's ``by_name``)."""
        return from_json(self._h.by_name(), ("name", "launches"))


_CLASSES = {
    _strobe.TraceHandle: Trace,
    _strobe.RanksHandle: Ranks,
    _strobe.MemoryHandle: MemorySnapshot,
    _strobe.NcuHandle: NcuReport,
    _strobe.ReportHandle: Document,
}

OpenResult = Union[Trace, Ranks, MemorySnapshot, NcuReport, Document]


def open(  # noqa: A001 - the name users expect (strobe.open), as io.open
    paths: Union[PathLike, Sequence[PathLike]],
    cache_dir: Optional[PathLike] = None,
    steps: Optional[str] = None,
) -> OpenResult:
    """Opens what ``strobe report`` would: one file, several (one per rank), or a folder.

    Returns a ``Trace``, ``Ranks``, ``MemorySnapshot`` or ``NcuReport`` (a
    ``torch.cuda.memory_stats()`` or flight-recorder dump: a ``Document`` with its report).
    The format is detected as the command line detects it, and a trace's store is built once
    into the same cache (``cache_dir``, else ``$STROBE_CACHE_DIR``, else the platform's cache
    folder): opening it again only maps it. ``steps``: a regex whose whole-name matches are
    the steps (``strobe report --steps``). A file Strobe cannot read raises ``StrobeError``
    with the command line's message.
    """
    if isinstance(paths, (str, bytes, os.PathLike)):
        given = [os.fspath(paths)]
    else:
        given = [os.fspath(p) for p in paths]
    handle = _strobe.open(given, None if cache_dir is None else os.fspath(cache_dir), steps)
    return _CLASSES[type(handle)](handle, cache_dir)
