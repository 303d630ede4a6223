#!/usr/bin/env python3
"""Records a JAX profile of a small transformer's training loop, as a user would with
`jax.profiler.trace(create_perfetto_trace=True)`: the run directory holds the XSpace
(`<host>.xplane.pb`) and the Chrome JSON forms (`<host>.trace.json.gz`,
`perfetto_trace.json.gz`).

    record_jax_profile.py OUT_DIR [--stall-step N] [--stall-ms MS] [--steps N] [--gpu]

Each iteration runs under `jax.profiler.StepTraceAnnotation("train", step_num=i)`.
`--stall-step N` sleeps MS milliseconds on the host inside step N before its work is
dispatched: a planted host stall, the device idle meanwhile. Without `--gpu` JAX runs on
the CPU (JAX_PLATFORMS=cpu); with it, on the default accelerator.
"""

import argparse
import os
import sys
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--stall-step", type=int, default=-1)
    ap.add_argument("--stall-ms", type=float, default=80.0)
    ap.add_argument("--gpu", action="store_true")
    a = ap.parse_args()
    if not a.gpu:
        os.environ["JAX_PLATFORMS"] = "cpu"
    import jax
    import jax.numpy as jnp

    vocab, d, heads, seq, batch, layers = 256, 64, 4, 32, 8, 2

    def init(key):
        ks = jax.random.split(key, 2 + 6 * layers)
        p = {"emb": jax.random.normal(ks[0], (vocab, d)) * 0.02, "out": jax.random.normal(ks[1], (d, vocab)) * 0.02}
        for i in range(layers):
            k = ks[2 + 6 * i : 8 + 6 * i]
            p[f"l{i}"] = {
                "wq": jax.random.normal(k[0], (d, d)) * 0.02,
                "wk": jax.random.normal(k[1], (d, d)) * 0.02,
                "wv": jax.random.normal(k[2], (d, d)) * 0.02,
                "wo": jax.random.normal(k[3], (d, d)) * 0.02,
                "w1": jax.random.normal(k[4], (d, 4 * d)) * 0.02,
                "w2": jax.random.normal(k[5], (4 * d, d)) * 0.02,
            }
        return p

    def norm(x):
        m = x.mean(-1, keepdims=True)
        return (x - m) / jnp.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5)

    def block(p, x):
        h = norm(x)
        b, t, _ = h.shape
        split = lambda y: y.reshape(b, t, heads, d // heads).transpose(0, 2, 1, 3)
        q, k, v = split(h @ p["wq"]), split(h @ p["wk"]), split(h @ p["wv"])
        att = (q @ k.transpose(0, 1, 3, 2)) / jnp.sqrt(d // heads)
        att = jnp.where(jnp.tril(jnp.ones((t, t), bool)), att, -1e9)
        y = jax.nn.softmax(att, -1) @ v
        x = x + y.transpose(0, 2, 1, 3).reshape(b, t, d) @ p["wo"]
        return x + jax.nn.gelu(norm(x) @ p["w1"]) @ p["w2"]

    def loss(p, tok):
        x = p["emb"][tok[:, :-1]]
        for i in range(layers):
            x = block(p[f"l{i}"], x)
        logits = norm(x) @ p["out"]
        lp = jax.nn.log_softmax(logits)
        return -jnp.take_along_axis(lp, tok[:, 1:, None], -1).mean()

    @jax.jit
    def train_step(p, tok):
        l, g = jax.value_and_grad(loss)(p, tok)
        return jax.tree_util.tree_map(lambda w, gw: w - 0.1 * gw, p, g), l

    key = jax.random.PRNGKey(0)
    params = init(key)
    tok = jax.random.randint(key, (batch, seq + 1), 0, vocab)
    params, l = train_step(params, tok)  # compile outside the profile
    l.block_until_ready()

    with jax.profiler.trace(a.out, create_perfetto_trace=True):
        for i in range(a.steps):
            with jax.profiler.StepTraceAnnotation("train", step_num=i):
                if i == a.stall_step:
                    time.sleep(a.stall_ms / 1000.0)  # the planted host stall
                params, l = train_step(params, tok)
                l.block_until_ready()
    print(f"loss {float(l):.4f}; profile under {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
