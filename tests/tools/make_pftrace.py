#!/usr/bin/env python3
"""Writes Perfetto protobuf traces shaped like PyTorch's `.pftrace` profiler export (host
slices on thread tracks with interned names and categories, GPU work as GpuRenderStageEvents
on "[07] stream 7" queues with host links through gpu_correlation, CUDA-graph node waits,
GpuCounterEvents "SM Active" / "DRAM BW") and like rocprofv3's (GPU work as TrackEvent slices
on "COMPUTE AGENT [0] STREAM [1] (GPU)" tracks, flows from the HIP launch). Packets are built
with the `perfetto` package's protobuf classes; the two extension fields the package does not
declare (InternedData.compute_kernels = 1000, TrackEvent.gpu_correlation = 3000) are appended
as raw fields, which protobuf merges into the same message.

  make_pftrace.py torch OUT.pftrace [--steps N] [--ops K] [--json OUT.json]
  make_pftrace.py rocprof OUT.pftrace

--json also writes the same trace as Kineto-style Chrome JSON (for `strobe bench ingest`).
Needs: pip install perfetto protobuf
"""
import argparse
import json

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

NEEDS = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
CLEARED = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
BOOT = 6
REALTIME = 1


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def vfield(num, value):
    return varint(num << 3) + varint(value)


class Writer:
    def __init__(self, f):
        self.f = f
        self.packets = 0

    def put(self, packet, raw=b""):
        body = packet.SerializeToString() + raw
        self.f.write(field(1, body))
        self.packets += 1


def packet(seq, ts=None, flags=0):
    p = pb.TracePacket()
    p.trusted_packet_sequence_id = seq
    if ts is not None:
        p.timestamp = ts
    if flags:
        p.sequence_flags = flags
    return p


PID, MAIN_TID, LOADER_TID = 4242, 4242, 4250
MAIN_TRACK, LOADER_TRACK, PROC_TRACK = 11, 12, 10
COMM_TRACK, MEM_TRACK, GPU_GROUP, POWER_TRACK = 20, 21, 30, 31
BASE = 10_000_000_000  # BOOTTIME at the trace's start (ns)
WALL = 1_765_000_000_000_000_000

NAMES = [
    "ProfilerStep#", "aten::linear", "cudaLaunchKernel", "aten::relu", "aten::copy_",
    "cudaMemcpyAsync", "cudaGraphLaunch", "optimizer.step", "checkpoint",
]
CATS = ["user_annotation", "cpu_op", "cuda_runtime"]
KERNELS = ["ampere_sgemm_128x64_nn", "void at::native::vectorized_elementwise_kernel<4>", "graph_gemm", "graph_bias", "graph_act"]


def write_torch(path, steps, ops, json_path=None):
    ev = []  # Kineto JSON form, for --json
    with open(path, "wb") as f:
        w = Writer(f)
        # clocks: BOOTTIME (the trace clock) and REALTIME at the start
        p = packet(1)
        p.timestamp = BASE
        cs = p.clock_snapshot
        for cid, t in ((BOOT, BASE), (REALTIME, WALL)):
            c = cs.clocks.add()
            c.clock_id, c.timestamp = cid, t
        w.put(p)
        for uuid, pd in ((PROC_TRACK, None),):
            p = packet(1)
            td = p.track_descriptor
            td.uuid = uuid
            td.process.pid = PID
            td.process.process_name = "python3 train.py"
            w.put(p)
        for uuid, tid, name in ((MAIN_TRACK, MAIN_TID, "python3"), (LOADER_TRACK, LOADER_TID, "dataloader")):
            p = packet(1)
            td = p.track_descriptor
            td.uuid, td.parent_uuid = uuid, PROC_TRACK
            td.thread.pid, td.thread.tid, td.thread.thread_name = PID, tid, name
            w.put(p)
        # custom tracks: a comm track and a counter under the process, a GPU group with a
        # power counter
        for uuid, parent, name, counter in (
            (COMM_TRACK, PROC_TRACK, "NCCL comm", False),
            (MEM_TRACK, PROC_TRACK, "Host memory (MB)", True),
            (GPU_GROUP, None, "GPU 0", False),
            (POWER_TRACK, GPU_GROUP, "Power (W)", True),
        ):
            p = packet(1)
            td = p.track_descriptor
            td.uuid, td.name = uuid, name
            if parent:
                td.parent_uuid = parent
            if counter:
                td.counter.unit_name = "MB" if uuid == MEM_TRACK else "W"
            w.put(p)
        # a sequence that names interned data before ever setting it: dropped
        p = packet(3, BASE, NEEDS)
        p.track_event.type = pb.TrackEvent.TYPE_INSTANT
        p.track_event.track_uuid = MAIN_TRACK
        p.track_event.name_iid = 1
        w.put(p)
        # interned data of sequence 1
        p = packet(1, flags=CLEARED)
        idata = p.interned_data
        for i, n in enumerate(NAMES):
            e = idata.event_names.add()
            e.iid, e.name = i + 1, n
        for i, n in enumerate(CATS):
            e = idata.event_categories.add()
            e.iid, e.name = i + 1, n
        e = idata.debug_annotation_names.add()
        e.iid, e.name = 1, "correlation"
        for iid, name, cat in ((1, "Kernel", 2), (2, "Memcpy", 0), (3, "Memset", 0), (100, "[07] stream 7", 0), (101, "[20] stream 20", 0)):
            s = idata.gpu_specifications.add()
            s.iid, s.name, s.category = iid, name, cat
        gc = idata.gpu_counter_descriptors.add()
        gc.iid, gc.gpu_id = 1, 0
        for cid, name in ((0, "SM Active"), (1, "DRAM BW")):
            sp = gc.counter_descriptor.specs.add()
            sp.counter_id, sp.name = cid, name
        raw = b"".join(field(1000, vfield(1, i + 1) + field(3, k.encode())) for i, k in enumerate(KERNELS))
        w.put(p, field(12, raw))
        # sequence 2 (the loader thread): an incremental clock in µs, defaults naming the
        # clock and the track
        p = packet(2, flags=CLEARED)
        c = p.clock_snapshot.clocks.add()
        c.clock_id, c.timestamp = BOOT, BASE
        c = p.clock_snapshot.clocks.add()
        c.clock_id, c.timestamp, c.is_incremental, c.unit_multiplier_ns = 64, BASE // 1000, True, 1000
        p.trace_packet_defaults.timestamp_clock_id = 64
        p.trace_packet_defaults.track_event_defaults.track_uuid = LOADER_TRACK
        e = p.interned_data.event_names.add()
        e.iid, e.name = 1, "load_batch"
        w.put(p)
        loader_last_us = BASE // 1000

        def slice_begin(seq, ts, track, name_iid, cat_iid, corr=None, launches=None, flow=None, term=None):
            p = packet(seq, ts, NEEDS)
            te = p.track_event
            te.type = pb.TrackEvent.TYPE_SLICE_BEGIN
            te.track_uuid = track
            te.name_iid = name_iid
            if cat_iid:
                te.category_iids.append(cat_iid)
            if corr is not None:
                a = te.debug_annotations.add()
                a.name_iid, a.int_value = 1, corr
            if flow:
                te.flow_ids.append(flow)
            if term:
                te.terminating_flow_ids.append(term)
            raw = b""
            if launches:
                raw = field(11, field(3000, b"".join(vfield(1, x) for x in launches)))
            w.put(p, raw)

        def slice_end(seq, ts, track):
            p = packet(seq, ts)
            p.track_event.type = pb.TrackEvent.TYPE_SLICE_END
            p.track_event.track_uuid = track
            w.put(p)

        event_id = [0]
        host_ev = []

        def stage(ts, dur, queue, stage_iid, kernel_iid=0, corr=0, waits=(), bytes_=0, name=""):
            event_id[0] += 1
            p = packet(1, ts, NEEDS)
            g = p.gpu_render_stage_event
            g.event_id, g.duration, g.gpu_id = event_id[0], dur, 0
            g.hw_queue_iid, g.stage_iid, g.context = queue, stage_iid, 1
            if kernel_iid:
                g.kernel_iid = kernel_iid
                g.launch.grid_size.x, g.launch.grid_size.y, g.launch.grid_size.z = 128, 2, 1
                g.launch.workgroup_size.x, g.launch.workgroup_size.y, g.launch.workgroup_size.z = 256, 1, 1
            g.event_wait_ids.extend(waits)
            for k, v in (("device id", 0), ("stream id", 7 if queue == 100 else 20), ("correlation", corr), ("bytes", bytes_)):
                if v or k in ("device id", "stream id"):
                    d = g.extra_data.add()
                    d.name, d.value = k, str(v)
            w.put(p)
            stream = 7 if queue == 100 else 20
            cat = "kernel" if stage_iid == 1 else "gpu_memcpy"
            args = {"device": 0, "stream": stream, "correlation": corr}
            if bytes_:
                args["bytes"] = bytes_
            if json_path:
                ev.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": ts / 1000, "dur": dur / 1000, "args": args})
            return event_id[0]

        corr = 0
        t = BASE + 10_000
        for step in range(steps):
            step_start = t
            # the step name is written inline (not interned): "ProfilerStep#N"
            p = packet(1, t, NEEDS)
            te = p.track_event
            te.type, te.track_uuid, te.name = pb.TrackEvent.TYPE_SLICE_BEGIN, MAIN_TRACK, f"ProfilerStep#{step}"
            te.category_iids.append(1)
            w.put(p)
            host = [("ProfilerStep#%d" % step, "user_annotation", t, None, None)]
            # the loader's batch for this step, flowing into the step's copy
            lt = t - 8_000
            for delta_kind, at in ((pb.TrackEvent.TYPE_SLICE_BEGIN, lt), (pb.TrackEvent.TYPE_SLICE_END, lt + 5_000)):
                at_us = at // 1000
                p = packet(2, at_us - loader_last_us, NEEDS)
                loader_last_us = at_us
                p.track_event.type = delta_kind
                if delta_kind == pb.TrackEvent.TYPE_SLICE_BEGIN:
                    p.track_event.name_iid = 1
                    p.track_event.flow_ids.append(1_000_000 + step)
                w.put(p)
            if json_path:
                ev.append({"ph": "X", "name": "load_batch", "cat": "", "pid": PID, "tid": LOADER_TID, "ts": (lt // 1000) * 1.0, "dur": 5.0})
            t += 1_000
            gpu_t = t + 20_000
            for k in range(ops):
                for op_iid, kern in ((2, 1), (4, 2)):
                    corr += 1
                    op_start = t
                    slice_begin(1, t, MAIN_TRACK, op_iid, 2)
                    t += 2_000
                    kt = max(gpu_t, t + 5_000)
                    eid = stage(kt, 15_000 if kern == 1 else 6_000, 100, 1, kern, corr, name=KERNELS[kern - 1])
                    gpu_t = kt + (15_000 if kern == 1 else 6_000) + 1_000
                    slice_begin(1, t, MAIN_TRACK, 3, 3, corr=corr, launches=[eid])
                    if json_path:
                        ev.append({"ph": "X", "cat": "cpu_op", "name": NAMES[op_iid - 1], "pid": PID, "tid": MAIN_TID, "ts": op_start / 1000, "dur": 9.0})
                        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": PID, "tid": MAIN_TID, "ts": t / 1000, "dur": 5.0, "args": {"correlation": corr}})
                        ev.append({"ph": "s", "id": corr, "cat": "ac2g", "name": "ac2g", "pid": PID, "tid": MAIN_TID, "ts": t / 1000})
                        ev.append({"ph": "f", "id": corr, "cat": "ac2g", "name": "ac2g", "pid": 0, "tid": 7, "ts": kt / 1000, "bp": "e"})
                    t += 5_000
                    slice_end(1, t, MAIN_TRACK)
                    t += 2_000
                    slice_end(1, t, MAIN_TRACK)
                    t += 1_000
            # the copy that takes the loader's batch (the flow ends here)
            corr += 1
            slice_begin(1, t, MAIN_TRACK, 5, 2, term=1_000_000 + step)
            t += 1_000
            mt = max(gpu_t, t + 3_000)
            eid = stage(mt, 4_000, 101, 2, 0, corr, bytes_=1 << 20, name="Memcpy HtoD (Pinned -> Device)")
            slice_begin(1, t, MAIN_TRACK, 6, 3, corr=corr, launches=[eid])
            t += 3_000
            slice_end(1, t, MAIN_TRACK)
            t += 1_000
            slice_end(1, t, MAIN_TRACK)
            # a CUDA graph of three nodes, each waiting on the one before
            corr += 1
            gt = max(gpu_t, mt + 5_000, t + 10_000)
            first = None
            prev = None
            for n, kern in enumerate((3, 4, 5)):
                eid = stage(gt, 5_000, 100, 1, kern, corr, waits=[prev] if prev else [], name=KERNELS[kern - 1])
                first = first or eid
                prev = eid
                gt += 6_000
            gpu_t = gt
            slice_begin(1, t, MAIN_TRACK, 7, 3, corr=corr, launches=[first])
            t += 8_000
            slice_end(1, t, MAIN_TRACK)
            # host memory counter and an instant
            p = packet(1, t, NEEDS)
            p.track_event.type, p.track_event.track_uuid = pb.TrackEvent.TYPE_COUNTER, MEM_TRACK
            p.track_event.counter_value = 1000 + step
            w.put(p)
            p = packet(1, t, NEEDS)
            p.track_event.type, p.track_event.track_uuid, p.track_event.name_iid = pb.TrackEvent.TYPE_INSTANT, MAIN_TRACK, 9
            w.put(p)
            t = max(t, gpu_t) + 2_000
            slice_end(1, t, MAIN_TRACK)
            # a comm slice on the custom track and the GPU power counter
            p = packet(1, step_start + 2_000)
            p.track_event.type, p.track_event.track_uuid, p.track_event.name = pb.TrackEvent.TYPE_SLICE_BEGIN, COMM_TRACK, "nccl:all_reduce"
            w.put(p)
            slice_end(1, t - 1_000, COMM_TRACK)
            p = packet(1, t)
            p.track_event.type, p.track_event.track_uuid = pb.TrackEvent.TYPE_COUNTER, POWER_TRACK
            p.track_event.double_counter_value = 250.5 + step % 7
            w.put(p)
            # GPU counters over the step: every 20 µs
            for s_ts in range(step_start, t, 20_000):
                p = packet(1, s_ts, NEEDS)
                g = p.gpu_counter_event
                g.counter_descriptor_iid = 1
                c = g.counters.add()
                c.counter_id, c.double_value = 0, 50.0 + (s_ts // 20_000) % 40
                c = g.counters.add()
                c.counter_id, c.int_value = 1, 100 + (s_ts // 20_000) % 300
                w.put(p)
            if json_path:
                ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": PID, "tid": MAIN_TID, "ts": step_start / 1000, "dur": (t - step_start) / 1000})
            t += 1_000
        # a slice end with no begin on the comm track
        slice_end(1, t, COMM_TRACK)
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"traceEvents": ev, "baseTimeNanoseconds": WALL - BASE}, f)
    return w.packets


def write_rocprof(path):
    """rocprofv3's shape: thread tracks for the HIP API, GPU work on named TrackEvent tracks,
    process-scoped flows from each launch to its kernel."""
    with open(path, "wb") as f:
        w = Writer(f)
        p = packet(1)
        td = p.track_descriptor
        td.uuid, td.process.pid, td.process.process_name = 1, 777, "rocprof app"
        w.put(p)
        p = packet(1)
        td = p.track_descriptor
        td.uuid, td.parent_uuid = 2, 1
        td.thread.pid, td.thread.tid, td.thread.thread_name = 777, 778, "main"
        w.put(p)
        tracks = {3: "COMPUTE AGENT [0] STREAM [1] (GPU)", 4: "COPY to AGENT [0] STREAM [1] (GPU)", 5: "COMPUTE AGENT [1] STREAM [2] (GPU)"}
        for uuid, name in tracks.items():
            p = packet(1)
            p.track_descriptor.uuid, p.track_descriptor.name = uuid, name
            w.put(p)
        t = 1_000_000
        for i in range(12):
            for api, track, kname, cat in (("hipLaunchKernel", 3 if i % 3 else 5, f"Cijk_gemm_{i % 2}", "kernel_dispatch"), ("hipMemcpyAsync", 4, "MEMORY_COPY_HOST_TO_DEVICE", "memory_copy")):
                flow = 0x5000 + i * 2 + (cat == "memory_copy")
                p = packet(1, t)
                te = p.track_event
                te.type, te.track_uuid, te.name = pb.TrackEvent.TYPE_SLICE_BEGIN, 2, api
                te.categories.append("hip_api")
                te.flow_ids.append(flow)
                a = te.debug_annotations.add()
                a.name, a.int_value = "corr_id", flow
                w.put(p)
                p = packet(1, t + 3_000)
                p.track_event.type, p.track_event.track_uuid = pb.TrackEvent.TYPE_SLICE_END, 2
                w.put(p)
                p = packet(1, t + 5_000)
                te = p.track_event
                te.type, te.track_uuid, te.name = pb.TrackEvent.TYPE_SLICE_BEGIN, track, kname
                te.categories.append(cat)
                te.terminating_flow_ids.append(flow)
                w.put(p)
                p = packet(1, t + 5_000 + 7_000 + 1_000 * (i % 3))
                p.track_event.type, p.track_event.track_uuid = pb.TrackEvent.TYPE_SLICE_END, track
                w.put(p)
                t += 20_000
    return w.packets


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["torch", "rocprof"])
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--ops", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()
    n = write_torch(a.out, a.steps, a.ops, a.json) if a.kind == "torch" else write_rocprof(a.out)
    print(f"{a.out}: {n} packets")
