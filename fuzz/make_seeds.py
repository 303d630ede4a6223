#!/usr/bin/env python3
"""Writes the committed seed corpora under fuzz/seeds/<target>/ from sample-traces/: small
files as they are, and big ones cut down to a few KB that still hold every kind of record
(so mutations start from meaningful input). Stdlib only. Run from the repository root:

    python3 fuzz/make_seeds.py

The store_reader seeds are stores built by Strobe itself: fuzz/make_store_seeds.sh.
Pickles are read with an unpickler that refuses every global, so nothing in them runs.
"""
import csv
import glob
import gzip
import io
import json
import os
import pickle
import re
import shutil
import sqlite3

SAMPLES = "sample-traces"
SEEDS = "fuzz/seeds"


def out(target, name, data):
    d = os.path.join(SEEDS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def sample(name):
    with open(os.path.join(SAMPLES, name), "rb") as f:
        return f.read()


def load_json(name):
    raw = sample(name)
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw)


# ---- chrome / Kineto JSON -------------------------------------------------------------

def trim_kineto(doc, kernels=5, cpu_ops=30):
    """A few kernels with everything tied to them: their launches (by correlation), the
    ac2g flows between, the CPU ops around the launches, metadata, counters, instants."""
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")][:kernels]
    corr = {(e.get("args") or {}).get("correlation") for e in gpu} - {None}
    launches = [e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver")
                and (e.get("args") or {}).get("correlation") in corr]
    keep = set(map(id, gpu + launches))
    for e in events:
        ph = e.get("ph")
        if ph == "M" or (ph in ("s", "f") and e.get("cat") == "ac2g" and e.get("id") in corr):
            keep.add(id(e))
    for e in events:
        if ph_counter(e) and sum(1 for x in events if id(x) in keep and ph_counter(x)) < 6:
            keep.add(id(e))
    n = 0
    for e in events:
        if n >= cpu_ops or e.get("ph") != "X" or e.get("cat") not in ("cpu_op", "python_function", "user_annotation"):
            continue
        for l in launches:
            if e.get("tid") == l.get("tid") and e["ts"] <= l["ts"] and e["ts"] + e.get("dur", 0) >= l["ts"]:
                keep.add(id(e))
                n += 1
                break
    inst = [e for e in events if e.get("ph") == "i"][:2]
    keep |= set(map(id, inst))
    kept = [e for e in events if id(e) in keep]
    if isinstance(doc, dict):
        d = dict(doc)
        d["traceEvents"] = kept
        return d
    return kept


def ph_counter(e):
    return e.get("ph") == "C"


def chrome_seeds():
    small = ["export_flows_v2_counters.json", "export_ids_and_names.json", "nesting_near_miss.json",
             "perfetto_flow_events_json_v1.json", "speedscope_trace-event_simple-partial.json"]
    for name in small:
        out("chrome_json", name, sample(name))
    trimmed = {}
    for name in ["gpt_train.json.gz", "hta_nccl_data.json.gz", "ddp_rank0.json.gz",
                 "kineto_tbplugin_resnet50.json.gz", "tracelens_mi300_resnet_act_checkpoint.json.gz",
                 "hta_sampled_rank0.json.gz"]:
        stem = name.replace(".json.gz", "")
        text = json.dumps(trim_kineto(load_json(name)), indent=1).encode()
        trimmed[stem] = text
        out("chrome_json", stem + ".trim.json", text)
    # catapult traces: bare arrays and objects with B/E, async, flow v1 and unclosed slices
    for name in ["catapult_flow.json", "catapult_main_thread_has_unclosed_slices.json"]:
        doc = load_json(name)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        cut = events[:60]
        doc = dict(doc, traceEvents=cut) if isinstance(doc, dict) else cut
        out("chrome_json", name.replace(".json", ".head.json"), json.dumps(doc).encode())
    # a partial copy: the file cut mid-event
    out("chrome_json", "gpt_train.cut.json", trimmed["gpt_train"][: len(trimmed["gpt_train"]) * 2 // 3])
    return trimmed


def gzip_seeds(trimmed):
    for stem in ["gpt_train", "hta_nccl_data", "ddp_rank0"]:
        out("gzip_json", stem + ".trim.json.gz", gzip.compress(trimmed[stem], mtime=0))
    # two members, as `cat a.gz b.gz` makes
    out("gzip_json", "two_members.json.gz",
        gzip.compress(b'{"traceEvents": [', mtime=0) + gzip.compress(trimmed["gpt_train"][18:], mtime=0))
    # a gzip copy cut short: the first KBs of a real .json.gz
    out("gzip_json", "hta_sampled_rank0.head.json.gz", sample("hta_sampled_rank0.json.gz")[:6000])
    # plain text: the target compresses it (whole and cut)
    out("gzip_json", "kineto_resnet50.trim.json", trimmed["kineto_tbplugin_resnet50"])


# ---- pickles ---------------------------------------------------------------------------

class PlainUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"refused global {module}.{name}")


def load_pickle(name):
    raw = sample(name)
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return PlainUnpickler(io.BytesIO(raw)).load()


def trim_frames(x, frames=3):
    if isinstance(x, dict):
        return {k: (v[:frames] if k == "frames" and isinstance(v, list) else trim_frames(v, frames)) for k, v in x.items()}
    if isinstance(x, list):
        return [trim_frames(v, frames) for v in x]
    return x


def trim_snapshot(snap, segments=3, blocks=4, actions=30):
    if isinstance(snap, list):
        snap = snap[:segments]
        for s in snap:
            if isinstance(s, dict) and "blocks" in s:
                s["blocks"] = s["blocks"][:blocks]
        return trim_frames(snap)
    s = dict(snap)
    s["segments"] = s.get("segments", [])[:segments]
    for seg in s["segments"]:
        seg["blocks"] = seg.get("blocks", [])[:blocks]
    if "device_traces" in s:
        # the newest actions: the ones the segments' current state follows from
        s["device_traces"] = [t[-actions:] for t in s["device_traces"]]
    return trim_frames(s)


def pickle_seeds():
    small = ["mem_cpp_line.pickle", "mem_legacy_history.pickle", "mem_legacy_list.pickle",
             "mem_legacy_traces.pickle"]
    for name in small:
        for target in ("pickle", "memory_snapshot"):
            out(target, name, sample(name))
    for i, name in enumerate(["mem_train.pickle", "mem_frag_oom.pickle", "mem_expandable_oom.pickle",
                              "mem_cache_held_oom.pickle", "mem_cranberrii.pickle", "mem_silmont.pickle",
                              "mem_yiyi_legacy.pickle", "mem_train_wrapped.pickle"]):
        snap = trim_snapshot(load_pickle(name))
        proto = [4, 2, 5, 3, 4, 0, 2, 1][i]
        data = pickle.dumps(snap, protocol=proto)
        stem = name.replace(".pickle", "")
        out("memory_snapshot", f"{stem}.trim.p{proto}.pickle", data)
        if i < 4:
            out("pickle", f"{stem}.trim.p{proto}.pickle", data)
    # plain pickles of every value kind the reader knows, in each protocol
    values = {"int": [0, -1, 255, 65535, 2**31, -2**63, 2**64, -(2**100)], "float": [0.5, -1e300, float("inf")],
              "str": ["", "é", "x" * 300], "bytes": [b"", b"\x00" * 300], "tuple": [(), (1,), (1, 2), (1, 2, 3, 4)],
              "none": None, "bool": [True, False], "nested": {"a": [{"b": ({},)}]}}
    shared = [1, 2]
    values["shared"] = [shared, shared]
    for proto in range(0, 6):
        out("pickle", f"values.p{proto}.pickle", pickle.dumps(values, protocol=proto))


# ---- memory_stats JSON -----------------------------------------------------------------

def stats_seeds():
    for name in glob.glob(os.path.join(SAMPLES, "*.memory_stats.json")):
        out("memory_stats", os.path.basename(name), sample(os.path.basename(name)))


# ---- Nsight Compute CSV and .ncu-rep ---------------------------------------------------

def csv_head(name, rows):
    """The header lines (and any ==PROF== preamble) plus the first `rows` records."""
    text = sample(name).decode("utf-8", "replace")
    lines = text.splitlines(keepends=True)
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID"') or l.startswith('"Process ID"')
                 or l.startswith("ID,"))
    # records can span lines (quoted newlines): cut on csv record boundaries
    body = "".join(lines[start:])
    reader = csv.reader(io.StringIO(body))
    keep_rows = []
    for i, row in enumerate(reader):
        keep_rows.append(row)
        if i >= rows:
            break
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(keep_rows)
    return ("".join(lines[:start]) + buf.getvalue()).encode()


def ncu_seeds():
    for name in ["ncu_llmperf_details.csv", "ncu_llmperf_metrics.csv", "ncu_llmperf_raw_error_only.csv",
                 "ncu_llmperf_section_occupancy.csv", "ncu_llmperf_section_roofline.csv", "ncu_esmm.raw.csv",
                 "ncu_flashattn_a30.raw.csv"]:
        out("ncu_csv", name, sample(name))
    out("ncu_csv", "ncu_details.head.csv", csv_head("ncu_details.csv", 60))
    out("ncu_csv", "ncu_raw.head.csv", csv_head("ncu_raw.csv", 2))
    out("ncu_rep", "ncu_esmm.ncu-rep", sample("ncu_esmm.ncu-rep"))
    out("ncu_rep", "ncu_flashattn_a30.head.ncu-rep", sample("ncu_flashattn_a30.ncu-rep")[:24000])
    out("ncu_rep", "ncu_full_h100.rules.ncu-rep", ncu_rep_one_result("ncu_full_h100.ncu-rep.gz", 40))


def ncu_rep_one_result(name, metrics):
    """A report of its first kernel result only, with its rule results (ProfileResult field
    19) whole and only its first `metrics` metrics (field 13): a small seed that reaches the
    rule-message decoding. Container as in crates/strobe-import/src/ncu_rep/framing.rs."""
    import gzip
    import struct

    def varint(b, i):
        r = sh = 0
        while True:
            c = b[i]
            i += 1
            r |= (c & 0x7F) << sh
            sh += 7
            if c < 0x80:
                return r, i

    def enc(v):
        o = bytearray()
        while v >= 0x80:
            o.append((v & 0x7F) | 0x80)
            v >>= 7
        o.append(v)
        return bytes(o)

    def fields(b):
        i = 0
        while i < len(b):
            st = i
            k, i = varint(b, i)
            t, v = k & 7, None
            if t == 0:
                v, i = varint(b, i)
            elif t == 1:
                i += 8
            elif t == 5:
                i += 4
            else:
                n, i = varint(b, i)
                i += n
            yield k >> 3, b[st:i], v

    data = gzip.decompress(sample(name))
    n = struct.unpack("<I", data[4:8])[0]
    pos = 8 + n
    res = bytearray(data[:pos])
    while pos < len(data):
        n = struct.unpack("<I", data[pos : pos + 4])[0]
        header = data[pos + 4 : pos + 4 + n]
        pos += 4 + n
        h = {f: v for f, _, v in fields(header) if v is not None}
        payload = data[pos : pos + h.get(5, 0)]
        pos += h.get(5, 0)
        if not h.get(2):
            res += struct.pack("<I", len(header)) + header + payload
            continue
        m = struct.unpack("<I", payload[:4])[0]
        kept, seen = [], 0
        for f, raw, _ in fields(payload[4 : 4 + m]):
            if f == 13:
                seen += 1
                if seen > metrics:
                    continue
            kept.append(raw)
        item = b"".join(kept)
        new_payload = struct.pack("<I", len(item)) + item
        hdr = b"".join(raw for f, raw, _ in fields(header) if f not in (2, 5))
        hdr += enc(2 << 3) + enc(1) + enc(5 << 3) + enc(len(new_payload))
        res += struct.pack("<I", len(hdr)) + hdr + new_payload
        break
    return bytes(res)


# ---- Nsight Systems SQLite -------------------------------------------------------------

def nsys_tables_read():
    src = ""
    for f in ["crates/strobe-import/src/nsys_sqlite.rs"] + glob.glob("crates/strobe-import/src/nsys_sqlite/*.rs"):
        with open(f) as fh:
            src += fh.read()
    return src


DICTIONARY = re.compile(r"^(StringIds|StringTable|ENUM_.*|TARGET_INFO_.*|META_DATA_.*|EXPORT_.*)$")


def trim_nsys(name, rows, only=None):
    """The tables the importer reads (others dropped), each event table cut to its first
    rows by start (of those matching `only[table]`, an SQL condition, where given), runtime
    rows kept where they launched a kept GPU row, and the string, thread and process rows
    those reference; written with 512-byte pages and vacuumed."""
    src = nsys_tables_read()
    con = sqlite3.connect(os.path.join(SAMPLES, name))
    con.text_factory = lambda b: b.decode("utf-8", "replace")
    dst_path = os.path.join(SEEDS, "nsys_sqlite", name.replace(".sqlite", ".trim.sqlite"))
    os.makedirs(os.path.dirname(dst_path), exist_ok=True)
    if os.path.exists(dst_path):
        os.remove(dst_path)
    dst = sqlite3.connect(dst_path)
    dst.execute("PRAGMA page_size=512")
    tables = [(n, sql) for n, sql in con.execute("SELECT name, sql FROM sqlite_master WHERE type='table'")
              if re.search(r"\b" + re.escape(n) + r"\b", src)]
    cols = {n: [r[1] for r in con.execute(f'PRAGMA table_info("{n}")')] for n, _ in tables}
    picked = {}
    corr = set()
    gpu = [n for n, _ in tables if n.startswith("CUPTI_ACTIVITY_KIND_") and n != "CUPTI_ACTIVITY_KIND_RUNTIME"]
    for n in gpu + [n for n, _ in tables if n not in gpu]:
        if DICTIONARY.match(n) or n in ("ThreadNames", "PROCESSES"):
            continue
        order = ' ORDER BY "start"' if "start" in cols[n] else ""
        cond = f" WHERE {only[n]}" if only and n in only else ""
        got = con.execute(f'SELECT * FROM "{n}"{cond}{order} LIMIT {rows}').fetchall()
        if n == "CUPTI_ACTIVITY_KIND_RUNTIME" and "correlationId" in cols[n] and corr:
            q = ",".join(str(c) for c in corr)
            got += con.execute(f'SELECT * FROM "{n}" WHERE correlationId IN ({q}) LIMIT {rows * 2}').fetchall()
            got = list(dict.fromkeys(got))
        if "correlationId" in cols[n]:
            i = cols[n].index("correlationId")
            corr |= {r[i] for r in got if isinstance(r[i], int)}
        picked[n] = got
    ints = {v for got in picked.values() for r in got for v in r if isinstance(v, int)}
    for n, _ in tables:
        if n in picked:
            continue
        got = con.execute(f'SELECT * FROM "{n}"').fetchall()
        if n in ("StringIds", "StringTable", "ThreadNames", "PROCESSES"):
            got = [r for r in got if any(v in ints for v in r if isinstance(v, int))][:8]
        picked[n] = got
    # ThreadNames name their threads by string id: keep those strings too
    for n in ("ThreadNames", "PROCESSES"):
        ints |= {v for r in picked.get(n, []) for v in r if isinstance(v, int)}
    for n in ("StringIds", "StringTable"):
        if n in picked:
            picked[n] = [r for r in con.execute(f'SELECT * FROM "{n}"') if any(v in ints for v in r if isinstance(v, int))]
    for n, _ in tables:
        dst.execute(compact_create(con, n))
        if picked[n]:
            marks = ",".join("?" * len(picked[n][0]))
            dst.executemany(f'INSERT INTO "{n}" VALUES ({marks})', picked[n])
    dst.commit()
    dst.execute("VACUUM")
    dst.close()


def compact_create(con, table):
    """The table's CREATE statement without the per-column comments nsys writes (a third
    of a small export's pages): the same names, types, NOT NULL and primary key."""
    cols = []
    for _, name, typ, notnull, _, pk in con.execute(f'PRAGMA table_info("{table}")'):
        c = f'"{name}" {typ}'.rstrip()
        if pk == 1:
            c += " PRIMARY KEY"
        if notnull:
            c += " NOT NULL"
        cols.append(c)
    return f'CREATE TABLE "{table}" ({", ".join(cols)})'


def nsys_seeds():
    for name, rows in [("nsys_gpt_single.sqlite", 6), ("nsys_fx_string_table.sqlite", 6),
                       ("nsys_fx_v2_tables.sqlite", 6), ("nsys_fuser_h200.sqlite", 6),
                       ("nsys_pipit_saxpy_mpi.sqlite", 6), ("nsys_extrap_concurrent.sqlite", 4),
                       ("nsys_gpu_metrics_h100.sqlite", 6)]:
        trim_nsys(name, rows)
    # kernels run as CUDA graph nodes (the first kernels of the export are not), with the
    # node creations they lead back to
    trim_nsys("nsys_cuda_graphs.sqlite", 6, only={"CUPTI_ACTIVITY_KIND_KERNEL": "graphNodeId > 0"})


def emit_nvtx_seed():
    """The trimmed GPT export with PyTorch emit_nvtx op ranges (getNvtxStr's text: name, seq,
    op_id, sizes, input_op_ids) around its kept launch calls, and two malformed ones."""
    base = os.path.join(SEEDS, "nsys_sqlite", "nsys_gpt_single.trim.sqlite")
    dst_path = os.path.join(SEEDS, "nsys_sqlite", "nsys_emit_nvtx.trim.sqlite")
    shutil.copyfile(base, dst_path)
    con = sqlite3.connect(dst_path)
    calls = con.execute(
        "SELECT r.start, r.end, r.globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
        "JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId ORDER BY r.start"
    ).fetchall()
    # a trimmed export may keep no launch of its kept kernels: then around its first calls
    calls = calls or con.execute(
        "SELECT start, end, globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start LIMIT 6"
    ).fetchall()
    texts = [
        "aten::mm, seq = 12, op_id = 40, sizes = [[8192, 2048], [2048, 5632]], input_op_ids = [(38,0), (39,0)]",
        "aten::addmm, seq = 3, sizes = [[4096], [8192, 1024], [1024, 4096], [], []]",
        "aten::add, op_id = 41, sizes = [[8, 1024, 1024], [1024, 1024], []]",
        "aten::mm, op_id = 42, sizes = [[8192, 1024], [1024",
        "aten::mm, op_id = 43, sizes = [[99999999999999999999999, 2], [2, 2]]",
        "aten::empty",
    ]
    for (s, e, tid), t in zip(calls, texts):
        con.execute(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (?, ?, 59, ?, ?, 0)",
            (s - 5, e + 5, t, tid),
        )
    con.commit()
    con.execute("VACUUM")
    con.close()


def sqlite_page_seeds():
    """Small databases whose tables have interior pages, overflow chains, every serial type
    and a column added later (short records), for the page-by-page reader."""
    import sqlite3
    out = os.path.join(SEEDS, "sqlite_pages")
    os.makedirs(out, exist_ok=True)
    for page, rows, long in [(512, 120, 1500), (1024, 40, 5000)]:
        path = os.path.join(out, f"pages_{page}.sqlite")
        c = sqlite3.connect(path)
        c.execute(f"PRAGMA page_size = {page}")
        c.execute("CREATE TABLE t (a INTEGER, b REAL, c TEXT, d BLOB)")
        for i in range(rows):
            v = [None, 0, 1, -1, 127, -32768, 1 << 23, 1 << 31, 1 << 47, -(1 << 62)][i % 10]
            text = "é" * (long if i % 17 == 0 else i % 7)
            c.execute("INSERT INTO t VALUES (?, ?, ?, ?)", (v, i / 3.0, text, bytes([i % 256]) * (i % 5)))
        c.execute("ALTER TABLE t ADD COLUMN e")
        c.execute("INSERT INTO t VALUES (1, 2.5, 'x', NULL, 5)")
        c.commit()
        c.close()
    # the trimmed nsys exports: real activity tables
    for f in glob.glob(os.path.join(SEEDS, "nsys_sqlite", "*.sqlite"))[:3]:
        shutil.copy(f, out)


def main():
    for t in ["chrome_json", "gzip_json", "pickle", "memory_snapshot", "memory_stats", "ncu_csv", "ncu_rep",
              "nsys_sqlite", "sqlite_pages"]:
        shutil.rmtree(os.path.join(SEEDS, t), ignore_errors=True)
    trimmed = chrome_seeds()
    gzip_seeds(trimmed)
    pickle_seeds()
    stats_seeds()
    ncu_seeds()
    nsys_seeds()
    emit_nvtx_seed()
    sqlite_page_seeds()


if __name__ == "__main__":
    main()
