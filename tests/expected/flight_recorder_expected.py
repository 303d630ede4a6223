#!/usr/bin/env python3
"""Independent oracle for flight-recorder dumps matched across ranks.

    python3 tests/expected/flight_recorder_expected.py DIR > tests/expected/<name>.flight_recorder.json

DIR holds one dump per rank, named ...<rank> (torchtitan's rank_<r>). A dump is a pickle
(read with pickle.load, every global refused) or the JSON form. Rules (docs/flight_recorder.md):

- A group is keyed by the name in `process_group` (name, desc). Its members: the group's
  `pg_config` ranks where a dump gives a non-empty list under that name; else every rank from 0
  to the highest one seen for the default group (name "0" or desc "default_pg"); else the ranks
  whose dumps have an entry on it.
- Ranks with no dump: members of any group, and every number below the highest rank open,
  that no dump was opened for.
- Per group, per collective sequence number s (entries with is_p2p false) seen on any member:
  a member with a dump whose highest collective seq on the group is below s (or that has none)
  is missing; among the entries at s the op (profiling_name after the last ':') is compared,
  then if all ops agree the sizes ("in <input_sizes> out <output_sizes>", for ops other than
  gather/scatter/all-to-all) and the dtypes. The majority value is the one most ranks have,
  ties broken by the smaller value; the odd ranks are all the others.
- An entry is completed when its state is "completed", or its rank's pg_status for its pg_id
  has last_completed_collective >= s.
- The last completed everywhere: the highest s with no mismatch, nobody missing and every
  entry completed. Stuck: the first s that is not so: who has an entry there, who of those has
  not completed it, who never arrived (with their last seq on the group).
- Point-to-point entries (is_p2p true) named `send A->B` / `recv B<-A` (group ranks A, B;
  global = the group's members list at that index). For each group and pair of ranks with
  both dumps: if neither rank has any other peer on the group, the pair's entries line up by
  p2p_seq_id (an id below the lowest the other rank still holds is not judged); else the k-th
  send from A to B lines up with the k-th recv on B from A (by p2p_seq_id order). At each
  place: one end only -> "missing" (the odd rank: the peer); two sends or two recvs -> "op";
  else the send's input_sizes against the recv's output_sizes -> "size", input_dtypes against
  output_dtypes -> "dtype" (the odd rank: the second end's holder, the first being the lower
  rank in the by-seq case and the sender in the by-order case); a clean place counts as
  matched. Dumps gzipped or not; a top-level integer `rank` names the dump's rank over its file
  name.
"""

import json
import os
import pickle
import re
import sys


class NoGlobals(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"global {module}.{name} refused")


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        import gzip

        data = gzip.decompress(data)
    if data[:1] == b"\x80":
        import io

        return NoGlobals(io.BytesIO(data)).load()
    return json.loads(data)


def rank_of(name):
    for ext in (".gz", ".pickle", ".pkl", ".json", ".bin"):
        if name.endswith(ext):
            name = name[: -len(ext)]
    m = re.search(r"(\d+)\D*$", name)
    return int(m.group(1)) if m else None


def op_of(e):
    return e["profiling_name"].split(":")[-1]


def may_differ(op):
    op = op.lower()
    return ("gather" in op and "all" not in op) or ("scatter" in op and "reduce" not in op) or "alltoall" in op or "all_to_all" in op


def main(d):
    dumps = {}
    for name in sorted(os.listdir(d)):
        dump = load(os.path.join(d, name))
        r = dump.get("rank") if isinstance(dump.get("rank"), int) else rank_of(name)
        if r is not None:
            dumps[r] = dump

    def pg(e):
        p = e["process_group"]
        return (p[0], p[1]) if isinstance(p, (list, tuple)) else (p, "")

    groups = {}
    for r, dump in dumps.items():
        for e in dump.get("entries") or []:
            name, desc = pg(e)
            g = groups.setdefault(name, {"desc": desc, "with_entries": set(), "seqs": set()})
            g["with_entries"].add(r)
            if not e["is_p2p"]:
                g["seqs"].add(e["collective_seq_id"])
    config = {}
    for r in sorted(dumps):
        for key, c in (dumps[r].get("pg_config") or {}).items():
            ranks = json.loads(c["ranks"]) if isinstance(c["ranks"], str) else c["ranks"]
            if c.get("name") and ranks and c["name"] not in config:
                config[c["name"]] = ranks
    highest = max(list(dumps) + [x for v in config.values() for x in v])
    members = {}
    for name, g in groups.items():
        if name in config:
            members[name] = sorted(config[name])
        elif name == "0" or g["desc"] == "default_pg":
            members[name] = list(range(highest + 1))
        else:
            members[name] = sorted(g["with_entries"])
    no_dump = set(x for m in members.values() for x in m) | set(range(max(dumps)))
    no_dump = sorted(no_dump - set(dumps))

    def completed(r, e):
        if e["state"] == "completed":
            return True
        st = (dumps[r].get("pg_status") or {}).get(str(e["pg_id"]))
        return bool(st) and int(st["last_completed_collective"]) >= e["collective_seq_id"]

    mismatches, last_completed, stuck = [], [], []
    for name in sorted(groups):
        g = groups[name]
        mem = [r for r in members[name] if r in dumps]
        by = {r: {} for r in mem}
        for r in mem:
            for e in dumps[r].get("entries") or []:
                if pg(e)[0] == name and not e["is_p2p"]:
                    by[r][e["collective_seq_id"]] = e
        first_bad = None
        last_ok = None
        for s in sorted(g["seqs"]):
            here = {r: by[r][s] for r in mem if s in by[r]}
            missing = [r for r in mem if not by[r] or max(by[r]) < s]

            def tally(f):
                vals = {}
                for r in sorted(here):
                    vals.setdefault(f(here[r]), []).append(r)
                order = sorted(vals, key=lambda v: (-len(vals[v]), v))
                return order, vals

            odd = []
            ops, opv = tally(op_of)
            if len(ops) > 1:
                odd.append(("op", ops, opv))
            elif here:
                if not may_differ(ops[0]):
                    sz, szv = tally(lambda e: f"in {e['input_sizes']} out {e['output_sizes']}")
                    if len(sz) > 1:
                        odd.append(("size", sz, szv))
                dt, dtv = tally(lambda e: f"in {e['input_dtypes']} out {e['output_dtypes']}")
                if len(dt) > 1:
                    odd.append(("dtype", dt, dtv))
            for kind, order, vals in odd:
                mismatches.append(
                    {"group": name, "seq": s, "kind": kind, "majority": order[0], "ranks": sorted(x for v in order[1:] for x in vals[v])}
                )
            majority_op = ops[0] if ops else ""
            if missing:
                mismatches.append({"group": name, "seq": s, "kind": "missing", "majority": majority_op, "ranks": missing})
            done = all(completed(r, e) for r, e in here.items())
            if not odd and not missing and done:
                last_ok = {"group": name, "seq": s, "op": majority_op}
            elif first_bad is None:
                first_bad = s
                stuck.append(
                    {
                        "group": name,
                        "seq": s,
                        "op": majority_op,
                        "arrived": sorted(here),
                        "not_completed": sorted(r for r, e in here.items() if not completed(r, e)),
                        "not_arrived": [{"rank": r, "last_seq": max(by[r]) if by[r] else None} for r in missing],
                    }
                )
        if last_ok:
            last_completed.append(last_ok)
    p2p_matched = p2p(dumps, members, pg, mismatches)
    json.dump(
        {
            "p2p_matched": p2p_matched,
            "ranks": sorted(dumps),
            "missing_dumps": no_dump,
            "groups": {n: members[n] for n in sorted(members)},
            "mismatches": sorted(mismatches, key=lambda m: (m["group"], m["seq"], m["kind"], m.get("p2p", False), m["ranks"])),
            "last_completed_everywhere": last_completed,
            "stuck": stuck,
        },
        sys.stdout,
        indent=1,
        sort_keys=True,
    )
    print()


def p2p(dumps, members, pg, mismatches):
    ends = {}  # group -> list of (me, peer, way, entry)
    for r, dump in dumps.items():
        for e in dump.get("entries") or []:
            if not e["is_p2p"]:
                continue
            m = re.fullmatch(r"(send|recv) (\d+)(->|<-)(\d+)", op_of(e).strip())
            name = pg(e)[0]
            if not m or name not in members:
                continue
            a, b = int(m.group(2)), int(m.group(4))
            ms = members[name]
            if max(a, b) >= len(ms):
                continue
            # send A->B: me A, peer B; recv B<-A: me B, peer A
            me, peer = ms[a], ms[b]
            if me != r:
                continue
            ends.setdefault(name, []).append((me, peer, m.group(1), e))
    matched = 0

    def judge(name, seq, x, y):
        nonlocal matched
        if x[2] == y[2] or x[1] != y[0] or y[1] != x[0]:
            mismatches.append({"group": name, "seq": seq, "kind": "op", "ranks": [y[0]], "p2p": True,
                               "majority": ("send to " if x[2] == "send" else "recv from ") + str(x[1])})
            return
        snd, rcv = (x, y) if x[2] == "send" else (y, x)
        bad = []
        if snd[3]["input_sizes"] != rcv[3]["output_sizes"]:
            bad.append("size")
        if snd[3]["input_dtypes"] != rcv[3]["output_dtypes"]:
            bad.append("dtype")
        for k in bad:
            mismatches.append({"group": name, "seq": seq, "kind": k, "ranks": [y[0]], "p2p": True})
        if not bad:
            matched += 1

    def lonely(name, x):
        mismatches.append({"group": name, "seq": x[3]["p2p_seq_id"], "kind": "missing", "ranks": [x[1]],
                           "p2p": True, "majority": ("send to " if x[2] == "send" else "recv from ") + str(x[1])})

    for name, es in sorted(ends.items()):
        peers = {}
        for me, peer, _, _ in es:
            peers.setdefault(me, set()).add(peer)
        pairs = sorted({(min(me, peer), max(me, peer)) for me, peer, _, _ in es if peer in dumps})
        for a, b in pairs:
            if len(peers.get(a, ())) <= 1 and len(peers.get(b, ())) <= 1:
                sa = {x[3]["p2p_seq_id"]: x for x in es if x[0] == a}
                sb = {x[3]["p2p_seq_id"]: x for x in es if x[0] == b}
                for seq in sorted(set(sa) | set(sb)):
                    if seq in sa and seq in sb:
                        judge(name, seq, sa[seq], sb[seq])
                    else:
                        x = sa.get(seq) or sb.get(seq)
                        other = sb if x[0] == a else sa
                        if other and seq < min(other):
                            continue
                        lonely(name, x)
            else:
                for s_, t_ in ((a, b), (b, a)):
                    sends = sorted((x for x in es if x[0] == s_ and x[1] == t_ and x[2] == "send"), key=lambda x: x[3]["p2p_seq_id"])
                    recvs = sorted((x for x in es if x[0] == t_ and x[1] == s_ and x[2] == "recv"), key=lambda x: x[3]["p2p_seq_id"])
                    for k in range(max(len(sends), len(recvs))):
                        if k < len(sends) and k < len(recvs):
                            judge(name, sends[k][3]["p2p_seq_id"], sends[k], recvs[k])
                        else:
                            lonely(name, sends[k] if k < len(sends) else recvs[k])
    return matched


if __name__ == "__main__":
    main(sys.argv[1])
