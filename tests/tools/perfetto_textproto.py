#!/usr/bin/env python3
"""Converts a Perfetto trace written as a text proto (the form of Perfetto's own trace
processor diff tests, test/trace_processor/diff_tests/**/*.textproto) into the binary
`.pftrace` it stands for, with the `perfetto` package's protobuf classes. The one extension
those tests use that the package does not declare, `[perfetto.protos.GpuTrackEvent.gpu_correlation]`
(TrackEvent field 3000), is cut out before parsing and appended to its packet as raw bytes.

  perfetto_textproto.py IN.textproto OUT.pftrace      (needs: pip install perfetto protobuf)
"""
import re
import sys

from google.protobuf import text_format
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

EXT = re.compile(r"\[perfetto\.protos\.GpuTrackEvent\.gpu_correlation\]\s*\{([^}]*)\}")


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def main(src, dst):
    text = re.sub(r"#[^\n]*", "", open(src).read())
    # split into top-level packets to know which packet each extension belongs to
    packets, depth, start = [], 0, None
    for m in re.finditer(r"packet\s*\{|\{|\}", text):
        tok = m.group(0)
        if tok.startswith("packet") and depth == 0:
            start = m.start()
            depth = 1
        elif tok == "{":
            depth += 1
        elif tok == "}":
            depth -= 1
            if depth == 0 and start is not None:
                packets.append(text[start:m.end()])
                start = None
    with open(dst, "wb") as out:
        for ptext in packets:
            raw = b""
            for body in EXT.findall(ptext):
                corr = b""
                for name, value in re.findall(r"(render_stage_\w+_event_ids)\s*:\s*(\d+)", body):
                    num = 1 if "submission" in name else 2
                    corr += varint(num << 3) + varint(int(value))
                raw += field(11, field(3000, corr))
            ptext = EXT.sub("", ptext)
            t = pb.Trace()
            text_format.Parse(ptext, t)
            out.write(field(1, t.packet[0].SerializeToString() + raw))
    print(f"{dst}: {len(packets)} packets")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
