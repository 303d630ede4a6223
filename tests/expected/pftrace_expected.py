#!/usr/bin/env python3
"""Independent oracle for Strobe's Perfetto protobuf reader: slices, GPU work, counters,
flows and steps of a `.pftrace`, decoded with the `perfetto` package's own protobuf classes
(`perfetto_trace_pb2`, generated from Perfetto's protos by Google), sharing no code with the
Rust reader.

Rules (Perfetto's trace processor's, restricted to what the test files use):
- Sequences: a packet with SEQ_NEEDS_INCREMENTAL_STATE on a sequence that has not had a
  SEQ_INCREMENTAL_STATE_CLEARED packet yet is dropped (`dropped_packets`).
- Time: packet timestamps are BOOTTIME ns unless the packet (or its sequence's
  trace_packet_defaults) names another clock; an incremental clock of a clock snapshot
  adds each packet's timestamp to its last value, times unit_multiplier_ns, and is mapped
  to BOOTTIME through the snapshot.
- Slices: SLICE_BEGIN / SLICE_END pair per track as a stack; an END on an empty stack is
  counted in `ends_without_begin`. Names are the inline name, else the interned name.
- GPU work: each GpuRenderStageEvent is one span of `duration` ns, named by name_iid,
  else the interned compute kernel, else its stage's name; "Kernel" stages are kernels,
  "Memcpy" copies. rocprofv3-style TrackEvent slices on tracks named `COMPUTE ... (GPU)` are
  kernels and on `COPY ... (GPU)` copies.
- Flows: a flow id's slices in time order, one arrow per consecutive pair, a slice that
  lists the id in terminating_flow_ids ending that chain; GpuTrackEvent.gpu_correlation
  (TrackEvent field 3000, read from the unknown fields) one arrow per listed render stage;
  event_wait_ids one arrow per wait.
- Counters: TrackEvent counters per track name (count, sum, last); GpuCounterEvents per
  counter name from the interned descriptor (count, sum, min, max).
- Steps: slices named ProfilerStep#N, with their durations.

usage: pftrace_expected.py TRACE.pftrace > TRACE-stem.pftrace.json   (needs: pip install perfetto protobuf)
"""
import gzip
import json
import sys
from collections import defaultdict

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

NEEDS, CLEARED = 2, 1


def read_varint(b, p):
    v, shift = 0, 0
    while True:
        x = b[p]
        p += 1
        v |= (x & 0x7F) << shift
        shift += 7
        if x < 0x80:
            return v, p


def gpu_correlation(te):
    """render_stage_submission_event_ids of TrackEvent field 3000 (not declared by pb2)."""
    ids = []
    raw = te.SerializeToString()
    p = 0
    while p < len(raw):
        tag, p = read_varint(raw, p)
        f, wt = tag >> 3, tag & 7
        if wt == 0:
            _, p = read_varint(raw, p)
        elif wt == 1:
            p += 8
        elif wt == 5:
            p += 4
        elif wt == 2:
            n, p = read_varint(raw, p)
            body = raw[p:p + n]
            p += n
            if f == 3000:
                q = 0
                while q < len(body):
                    t2, q = read_varint(body, q)
                    v, q = read_varint(body, q)
                    if t2 >> 3 == 1:
                        ids.append(v)
    return ids


def compute_kernels(idata):
    """InternedData field 1000 (compute_kernels): iid -> demangled name."""
    out = {}
    raw = idata.SerializeToString()
    p = 0
    while p < len(raw):
        tag, p = read_varint(raw, p)
        f, wt = tag >> 3, tag & 7
        if wt == 0:
            _, p = read_varint(raw, p)
            continue
        if wt == 1:
            p += 8
            continue
        if wt == 5:
            p += 4
            continue
        n, p = read_varint(raw, p)
        body = raw[p:p + n]
        p += n
        if f == 1000:
            kk = pb.InternedComputeKernel()
            kk.ParseFromString(body)
            out[kk.iid] = kk.demangled_name or kk.name
    return out


def main(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    if data.lstrip()[:1] in (b"{", b"["):
        # torch without a .pftrace backend writes Kineto JSON under the .pftrace name
        sys.exit(f"{path}: chrome/Kineto JSON, not a Perfetto protobuf: use kineto_expected.py")
    trace = pb.Trace()
    trace.ParseFromString(data)
    seqs = {}
    tracks = {}
    snap = {}  # (seq or 0, clock) -> (clock ns, boot ns)
    slices = []  # [track, name, ts, end, flows, terms, launches]
    stacks = defaultdict(list)
    gpu = []  # (event_id, name, ts, dur, kind, waits)
    gpu_counters = defaultdict(list)
    counters = defaultdict(list)
    dropped = ends_without_begin = instants = 0

    def seq_state(sid):
        return seqs.setdefault(sid, {"valid": False, "names": {}, "cats": {}, "specs": {}, "kernels": {},
                                     "cdesc": {}, "clock": None, "track": None, "incr": {}})

    for p in trace.packet:
        sid = p.trusted_packet_sequence_id
        st = seq_state(sid)
        if p.sequence_flags & CLEARED:
            st.update({"valid": True, "names": {}, "cats": {}, "specs": {}, "kernels": {}, "cdesc": {},
                       "clock": None, "track": None, "incr": {}})
        if p.HasField("trace_packet_defaults"):
            d = p.trace_packet_defaults
            st["clock"] = d.timestamp_clock_id if d.HasField("timestamp_clock_id") else None
            st["track"] = d.track_event_defaults.track_uuid if d.HasField("track_event_defaults") else None
        if p.sequence_flags & NEEDS and not st["valid"]:
            dropped += 1
            continue
        if p.HasField("interned_data"):
            i = p.interned_data
            st["names"].update({e.iid: e.name for e in i.event_names})
            st["cats"].update({e.iid: e.name for e in i.event_categories})
            st["specs"].update({e.iid: e.name for e in i.gpu_specifications})
            st["kernels"].update(compute_kernels(i))
            for c in i.gpu_counter_descriptors:
                st["cdesc"][c.iid] = {s.counter_id: s.name for s in c.counter_descriptor.specs}
        if p.HasField("clock_snapshot"):
            cl = p.clock_snapshot.clocks
            boot = next(c.timestamp * (c.unit_multiplier_ns or 1) for c in cl if c.clock_id == 6)
            for c in cl:
                mult = c.unit_multiplier_ns or 1
                snap[(sid if c.clock_id >= 64 else 0, c.clock_id)] = (c.timestamp * mult, boot)
                if c.is_incremental:
                    st["incr"][c.clock_id] = [c.timestamp, mult]
        if p.HasField("track_descriptor"):
            td = p.track_descriptor
            name = td.name or (td.thread.thread_name if td.HasField("thread") else "") or (
                td.process.process_name if td.HasField("process") else "")
            tracks[td.uuid] = name
        ts = None
        if p.HasField("timestamp"):
            clock = p.timestamp_clock_id if p.HasField("timestamp_clock_id") else (st["clock"] or 6)
            if clock in st["incr"]:
                st["incr"][clock][0] += p.timestamp
                ns = st["incr"][clock][0] * st["incr"][clock][1]
            else:
                ns = p.timestamp
            if clock != 6:
                at, boot = snap[(sid if clock >= 64 else 0, clock)]
                ns = boot + ns - at
            ts = ns
        if p.HasField("track_event"):
            te = p.track_event
            track = te.track_uuid if te.HasField("track_uuid") else st["track"]
            if te.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
                name = te.name if te.HasField("name") else st["names"].get(te.name_iid, "")
                slices.append([track, name, ts, None, list(te.flow_ids), list(te.terminating_flow_ids),
                               gpu_correlation(te)])
                stacks[track].append(len(slices) - 1)
            elif te.type == pb.TrackEvent.TYPE_SLICE_END:
                if stacks[track]:
                    slices[stacks[track].pop()][3] = ts
                else:
                    ends_without_begin += 1
            elif te.type == pb.TrackEvent.TYPE_INSTANT:
                instants += 1
            elif te.type == pb.TrackEvent.TYPE_COUNTER:
                v = te.double_counter_value if te.HasField("double_counter_value") else te.counter_value
                counters[tracks.get(track, "")].append(v)
        if p.HasField("gpu_render_stage_event"):
            g = p.gpu_render_stage_event
            stage = st["specs"].get(g.stage_iid, "")
            name = st["names"].get(g.name_iid) or st["kernels"].get(g.kernel_iid) or stage
            kind = {"Kernel": "kernel", "Memcpy": "memcpy", "Memset": "memset"}.get(stage, "other")
            gpu.append((g.event_id, name, ts, g.duration, kind, list(g.event_wait_ids)))
        if p.HasField("gpu_counter_event"):
            g = p.gpu_counter_event
            names = st["cdesc"].get(g.counter_descriptor_iid, {})
            for c in g.counters:
                v = c.double_value if c.HasField("double_value") else c.int_value
                gpu_counters[names.get(c.counter_id, f"counter {c.counter_id}")].append(v)

    spans = defaultdict(lambda: [0, 0])
    kernels = defaultdict(lambda: [0, 0])
    memcpy = 0
    for s in slices:
        assert s[3] is not None, "an unclosed slice: not in the test files"
        spans[s[1]][0] += 1
        spans[s[1]][1] += s[3] - s[2]
        tn = tracks.get(s[0], "")
        if tn.endswith("(GPU)"):
            if tn.startswith("COPY"):
                memcpy += 1
            else:
                kernels[s[1]][0] += 1
                kernels[s[1]][1] += s[3] - s[2]
    for (_e, name, _ts, dur, kind, _w) in gpu:
        spans[name][0] += 1
        spans[name][1] += dur
        if kind == "kernel":
            kernels[name][0] += 1
            kernels[name][1] += dur
        elif kind == "memcpy":
            memcpy += 1
    # flows
    steps = defaultdict(list)
    for i, s in enumerate(slices):
        for f in s[4]:
            steps[f].append((s[2], i, False))
        for f in s[5]:
            steps[f].append((s[2], i, True))
    track_flows = 0
    for f, lst in steps.items():
        lst.sort()
        for a, b in zip(lst, lst[1:]):
            if not a[2] and a[1] != b[1]:
                track_flows += 1
    ids = {g[0] for g in gpu}
    launch_flows = sum(1 for s in slices for e in s[6] if e in ids)
    graph_flows = sum(1 for g in gpu for w in g[5] if w in ids)
    out = {
        "packets": len(trace.packet),
        "dropped_packets": dropped,
        "ends_without_begin": ends_without_begin,
        "instants": instants,
        "spans": {k: v for k, v in sorted(spans.items())},
        "kernels": {k: v for k, v in sorted(kernels.items())},
        "memcpy": memcpy,
        "flows": {"track_event": track_flows, "launch": launch_flows, "graph": graph_flows},
        "counters": {k: {"count": len(v), "sum": sum(v), "last": v[-1]} for k, v in sorted(counters.items())},
        "gpu_counters": {k: {"count": len(v), "sum": sum(v), "min": min(v), "max": max(v)}
                         for k, v in sorted(gpu_counters.items())},
        "steps": [[s[1], s[3] - s[2]] for s in slices if s[1].startswith("ProfilerStep#")],
    }
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1])
