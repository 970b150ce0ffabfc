#!/usr/bin/env python3
"""torch float32 attention's own error, measured: the figures behind the stated
accuracy of examples/oracles/torch_mha.py --dtype float32.

usage: float32_error.py [--d 8] [--heads 2] [--seeds 1-5] [--queries 600] [TRANSCRIPT ...]

For each seed, torch.nn.MultiheadAttention(d, H) in float32 (the weights of
torch_mha.py) answers queries of the kinds mhaq asks: [a x k, b] (a run of k
copies of a, then the final token b; k on a geometric list up to 65,536,
entries of a up to 2^7 in magnitude as the placed design's offsets reach on
torch's small weights), and short sequences of up to 17 distinct tokens (the
paper and scaled designs'), plus every query of the transcripts given
(`mhaq recover --transcript`). The reference is the same layer in float64
with the float32 weights copied exactly: its own error (at most
64 n 2^-53 relative, docs/recover-your-own-model.md) is below 2^-34 at these
lengths, far under float32's. Prints, per length bucket, the worst |error|
and the worst |error| / ((n + M) u (1 + |y|)), u = 2^-24, n the tokens'
count, M the largest |entry| of the tokens: the ratio that the stated bound
64 (N + M) u (abs and rel, for n <= N and entries <= M) must exceed. Not part
of ctest.
"""
import argparse
import json
import math
import os
import random
import sys
from fractions import Fraction

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "oracles"))
import torch_mha  # noqa: E402


def queries(d, count, rng, transcripts):
    qs = []
    for f in transcripts:
        for line in open(f):
            o = json.loads(line)
            if "runs" in o:
                qs.append([([float(Fraction(x)) for x in r["token"]], r["count"]) for r in o["runs"]])
    ks = [1, 2, 3, 5, 8, 16, 32, 64, 128, 256, 1024, 4096, 16384, 65536]
    for _ in range(count):
        s = rng.randint(0, 7)
        a = [rng.uniform(-1, 1) * 2**s for _ in range(d)]
        b = [rng.uniform(-1, 1) * 2 ** rng.randint(0, 3) for _ in range(d)]
        qs.append([(a, rng.choice(ks)), (b, 1)])
    for _ in range(count // 2):
        s = rng.randint(0, 4)
        qs.append([([rng.uniform(-1, 1) * 2**s for _ in range(d)], 1) for _ in range(rng.randint(1, 17))])
    return qs


def answer(m, u, q, dtype):
    t = torch.tensor([t for t, _ in q], dtype=dtype)
    x = torch.repeat_interleave(t, torch.tensor([c for _, c in q]), dim=0).unsqueeze(1)
    o, _ = m(x[-1:], x, x, need_weights=False)
    return float(o[-1, 0] @ u)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--d", type=int, default=8)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--queries", type=int, default=600)
    ap.add_argument("transcripts", nargs="*")
    a = ap.parse_args()
    lo, hi = (int(x) for x in a.seeds.split("-")) if "-" in a.seeds else (int(a.seeds),) * 2
    rng = random.Random(7)
    qs = queries(a.d, a.queries, rng, a.transcripts)
    u = 2.0**-24
    worst = {}  # (n bucket, M bucket) -> [count, max |e|, max |e| / (u (1 + |y|)), max |e| / ((n + M) u (1 + |y|))]
    torch.set_num_threads(1)
    for seed in range(lo, hi + 1):
        m32, u32 = torch_mha.build(a.d, a.heads, seed, torch.float32)
        m64 = torch.nn.MultiheadAttention(a.d, a.heads, bias=False, dtype=torch.float64)
        m64.load_state_dict({k: v.double() for k, v in m32.state_dict().items()})  # exact copies
        m64.eval()
        with torch.no_grad():
            for q in qs:
                n = sum(c for _, c in q)
                M = max(max(abs(x) for x in t) for t, _ in q)
                y32, y64 = answer(m32, u32, q, torch.float32), answer(m64, u32.double(), q, torch.float64)
                e = abs(y32 - y64)
                b = (17 if n <= 17 else 2 ** math.ceil(math.log2(n)), 2 ** max(0, math.ceil(math.log2(M))))
                w = worst.setdefault(b, [0, 0.0, 0.0, 0.0])
                w[0] += 1
                w[1] = max(w[1], e)
                w[2] = max(w[2], e / (u * (1 + abs(y64))))
                w[3] = max(w[3], e / ((n + M) * u * (1 + abs(y64))))
    print("torch %s float32, d=%d H=%d seeds %s: error against float64 with the same weights" % (torch.__version__, a.d, a.heads, a.seeds))
    print("| tokens n <= | entries M <= | queries | worst abs error | worst e / (u (1+|y|)) | worst e / ((n+M) u (1+|y|)) |")
    print("|---|---|---|---|---|---|")
    for b in sorted(worst):
        c, e, r, rn = worst[b]
        print("| %d | %d | %d | %.2e | %.1f | %.2f |" % (b[0], b[1], c, e, r, rn))
    top = max(w[3] for w in worst.values())
    print("worst e / ((n + M) u (1 + |y|)) over all: %.2f (the stated 64 (N + M) u has a margin of %.1f over it)" % (top, 64 / top))


if __name__ == "__main__":
    main()
