"""Writes a synthetic flight-recorder fixture of point-to-point faults (NCCL's entry layout,
`send A->B` / `recv B<-A` in group ranks), for the P2P matching and the readers' gzip and
`rank`-field paths. Synthetic because gloo writes no P2P entries and NCCL needs a GPU per rank:
tests/tools/record_flight_recorder.py --backend nccl --fault p2p_size on two GPUs records the
real thing.

Four ranks; group "1" (`pp_0_1`, ranks [0, 1]) carries rank 0's sends to rank 1, group "0"
(the world) carries rank 2's sends to ranks 1 and 3:
- group 1, p2p seq 1 and 2: matched; seq 3: rank 1 receives 16 floats where rank 0 sent 32
  (size); seq 4: rank 0's send, rank 1 never posts the receive (missing);
- world: rank 2 sends to 1 then 3 then 1; rank 1 receives once from 2 (the second send to 1
  is missing), rank 3 receives a bfloat16 where 2 sent float (dtype).

Forms: rank_0 a plain pickle-free JSON dump, rank_1 gzipped JSON (`rank_1.json.gz`),
rank_2 JSON named `trace_b.json` with its own `rank` field, rank_3 gzipped with the field.

Run: python3 make_fr_p2p_fixture.py OUTDIR
"""
import gzip
import json
import os
import sys


def entry(rid, group, desc, seq, name, n, dtype="Float", state="completed"):
    return {
        "record_id": rid, "pg_id": int(group), "process_group": [group, desc], "collective_seq_id": 0,
        "p2p_seq_id": seq, "op_id": seq, "profiling_name": f"nccl:{name}", "time_created_ns": 1000 + rid,
        "input_sizes": [[n]], "input_dtypes": [dtype], "output_sizes": [[n]], "output_dtypes": [dtype],
        "state": state, "time_discovered_started_ns": 0, "time_discovered_completed_ns": 0,
        "retired": state == "completed", "timeout_ms": 600000, "is_p2p": True, "frames": [],
    }


def dump(rank, entries, with_rank=False):
    d = {
        "version": "2.10", "comm_lib_version": "2.21.5",
        "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2, 3]"},
                      "1": {"name": "1", "desc": "pp_0_1", "ranks": "[0, 1]"}},
        "pg_status": {}, "entries": entries,
    }
    if with_rank:
        d["rank"] = rank
    return json.dumps(d).encode()


def main(out):
    os.makedirs(out, exist_ok=True)
    pp = ("1", "pp_0_1")
    r0 = [entry(i, *pp, i + 1, "send 0->1", 32) for i in range(3)]
    r0.append(entry(3, *pp, 4, "send 0->1", 32, state="started"))
    r1 = [entry(0, *pp, 1, "recv 1<-0", 32), entry(1, *pp, 2, "recv 1<-0", 32),
          entry(2, *pp, 3, "recv 1<-0", 16, state="started"),
          entry(3, "0", "default_pg", 1, "recv 1<-2", 8)]
    w = ("0", "default_pg")
    r2 = [entry(0, *w, 1, "send 2->1", 8), entry(1, *w, 2, "send 2->3", 8),
          entry(2, *w, 3, "send 2->1", 8, state="started")]
    r3 = [entry(0, *w, 1, "recv 3<-2", 8, dtype="BFloat16")]
    with open(os.path.join(out, "rank_0"), "wb") as f:
        f.write(dump(0, r0))
    with open(os.path.join(out, "rank_1.json.gz"), "wb") as f:
        f.write(gzip.compress(dump(1, r1), mtime=0))
    with open(os.path.join(out, "trace_b.json"), "wb") as f:
        f.write(dump(2, r2, with_rank=True))
    with open(os.path.join(out, "trace_c.json.gz"), "wb") as f:
        f.write(gzip.compress(dump(3, r3, with_rank=True), mtime=0))


if __name__ == "__main__":
    main(sys.argv[1])
