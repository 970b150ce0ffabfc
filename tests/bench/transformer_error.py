#!/usr/bin/env python3
"""torch_transformer.py's own error, measured: the figures behind the stated
accuracy of examples/oracles/torch_transformer.py in float64 and float32.

usage: transformer_error.py [--shapes 3,2,3 ...] [--seeds 1-5] [--dtype float32|float64|both]
                            [--queries 300] [--large] [TRANSCRIPT ...]

For each shape d,H,m (d_k = 4) and seed, the torch transformer of
torch_transformer.py in the dtype answers, through the oracle's own answer
function, queries of the kinds mhaq asks, and the answers are compared with
the same weights (every float32 or float64 weight exactly) evaluated at 128
bits by mpmath on the exact query tokens (its own error is below 2^-100
relative here: nothing next to float64's). The queries: every query of the
transcripts given (`mhaq recover --transcript`, with a transformer model:
the paper and scaled designs' attention part, regions stage and
verification), and random ones: [a x k, b] (a run of k copies of a, then
the final token b; k on a geometric list up to 65,536, entries of a up to
a size in 1, 2, 4, 8, 16, 17, 32, 64, 128 (17: the scaled design's tokens
keep within it), of b up to 8), the same with a head's scores of a and b in
balance (as the designs' poles are: a large score's rounding error then
moves the answer most), sequences of 1 to 17 distinct tokens, and single
tokens; with --large also single tokens of size 2^8 to 2^19 (the paper
design's far single tokens reach 2^19).

Prints, per bucket of length n and largest entry M, the worst |error|, the
worst |error| / (u (1 + |y|)) and the worst |error| / ((n + M) u (1 + |y|)) and / ((n + M^2) u (1 + |y|)),
y the exact value, u = 2^-24 (float32) or 2^-53 (float64): the ratio that a
statement c (N + M^2) u, abs and rel, for n <= N and entries <= M must exceed
(a score is a product of two tokens' entries, rounded relative to its size,
and moves the answer by up to the values' difference: the (n + M) form of
torch_mha.py's attention alone grows past it on balanced scores).
Not part of ctest (minutes: --queries 300, three shapes, five seeds).
"""
import argparse
import json
import math
import os
import random
import sys
from fractions import Fraction

import torch
from mpmath import mp, mpf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "oracles"))
import torch_transformer  # noqa: E402

mp.prec = 128


def transcript_queries(paths):
    qs = []
    for f in paths:
        for line in open(f):
            o = json.loads(line)
            if "runs" in o:
                qs.append([([Fraction(x) for x in r["token"]], r["count"]) for r in o["runs"]])
    return qs


# the entry sizes drawn (17: the scaled design's tokens stay within it) and,
# with --large, the single tokens' beyond them
SIZES = [1, 2, 4, 8, 16, 17, 32, 64, 128]
LARGE = [2**s for s in range(8, 20)]


def random_queries(d, count, rng, large):
    """Runs [(token, count)] of exact dyadic tokens (float64 numbers, so that the oracle's input is exact in float64)."""
    def token(size):
        return [Fraction(rng.uniform(-1, 1) * size) for _ in range(d)]
    ks = [1, 2, 3, 5, 8, 16, 32, 64, 128, 256, 1024, 4096, 16384, 65536]
    qs = []
    for _ in range(count):
        qs.append([(token(rng.choice(SIZES)), rng.choice(ks)), (token(rng.choice(SIZES[:4])), 1)])
    for _ in range(count // 2):
        size = rng.choice(SIZES)
        qs.append([(token(size), 1) for _ in range(rng.randint(1, 17))])
    for _ in range(count // 2):
        qs.append([(token(rng.choice(SIZES + (LARGE if large else []))), 1)])
    return qs


def tie_queries(t, d, count, rng):
    """[a x k, b] with head h's scores of a and b in balance (k e^{s_a} within e^{+-2} of e^{s_b}) while a and b
    lie far apart: the scores' rounding error, which grows as the square of the entries, then moves the
    answer by up to their values' difference. b and e are random with entries up to a size; a = b + e + t w,
    e with its component along w = K_h^T q_h(b) removed (the score's gradient in a), t solving the balance."""
    Wq, Wk = (lin.weight.detach().double() for lin in (t.q, t.k))
    ks = [1, 2, 3, 5, 8, 16, 32, 64, 128, 256, 1024, 4096, 16384, 65536]
    qs = []
    while len(qs) < count:
        size = rng.choice(SIZES)
        b = torch.tensor([rng.uniform(-1, 1) * size for _ in range(d)], dtype=torch.float64)
        e = torch.tensor([rng.uniform(-1, 1) * size for _ in range(d)], dtype=torch.float64)
        h, k = rng.randrange(t.H), rng.choice(ks)
        rows = slice(h * t.dk, (h + 1) * t.dk)
        w = t.scale * Wk[rows].T @ (Wq[rows] @ b)  # s_a - s_b = w . (a - b)
        ww = float(w @ w)
        if ww == 0:
            continue
        e = e - (float(w @ e) / ww) * w
        a = b + e + ((rng.uniform(-2, 2) - math.log(k)) / ww) * w
        if float(a.abs().max()) > size:  # keep the entries within the size of b and e
            continue
        qs.append([([Fraction(x) for x in a.tolist()], k), ([Fraction(x) for x in b.tolist()], 1)])
    return qs


class Exact:
    """The transformer t's weights exactly, evaluated at 128 bits on exact tokens."""

    def __init__(self, t):
        def rows(lin):
            return [[mpf(x) for x in r] for r in lin.weight.detach().double().tolist()]
        self.H, self.dk = t.H, t.dk
        self.q, self.k, self.v, self.o, self.ffn = rows(t.q), rows(t.k), rows(t.v), rows(t.o), rows(t.ffn)
        self.u = [mpf(x) for x in t.u.detach().double().tolist()]
        self.scale = mpf(t.scale)

    @staticmethod
    def mul(W, x):
        return [mp.fsum(w * xi for w, xi in zip(r, x)) for r in W]

    def __call__(self, runs):
        toks = [[mpf(x.numerator) / x.denominator for x in t] for t, _ in runs]
        q = self.mul(self.q, toks[-1])
        ks = [self.mul(self.k, x) for x in toks]
        vs = [self.mul(self.v, x) for x in toks]
        z = []
        for h in range(self.H):
            c = slice(h * self.dk, (h + 1) * self.dk)
            s = [self.scale * mp.fsum(a * b for a, b in zip(q[c], k[c])) for k in ks]
            top = max(s)
            w = [cnt * mp.exp(si - top) for si, (_, cnt) in zip(s, runs)]
            tot = mp.fsum(w)
            z += [mp.fsum(wi * v[j] for wi, v in zip(w, vs)) / tot for j in range(h * self.dk, (h + 1) * self.dk)]
        hid = [max(p, mpf(0)) for p in self.mul(self.ffn, self.mul(self.o, z))]
        return mp.fsum(a * b for a, b in zip(self.u, hid))


def bucket(n, M):
    return (17 if n <= 17 else 2 ** math.ceil(math.log2(n)), next(b for b in SIZES + LARGE + [2**40] if M <= b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", nargs="+", default=["3,2,3"], help="d,H,m (d_k = 4)")
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--dtype", choices=["float32", "float64", "both"], default="both")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--large", action="store_true", help="also single tokens with entries of 2^8 to 2^19")
    ap.add_argument("transcripts", nargs="*")
    a = ap.parse_args()
    lo, hi = (int(x) for x in a.seeds.split("-")) if "-" in a.seeds else (int(a.seeds),) * 2
    dtypes = ["float32", "float64"] if a.dtype == "both" else [a.dtype]
    torch.set_num_threads(1)
    fromfile = transcript_queries(a.transcripts)
    for dtname in dtypes:
        dtype, u = getattr(torch, dtname), 2.0 ** (-24 if dtname == "float32" else -53)
        # (n bucket, M bucket) -> [count, max |e|, max |e| / (u (1 + |y|)), max |e| / ((n + M) u (1 + |y|)),
        # max |e| / ((n + M^2) u (1 + |y|))]
        worst = {}
        for shape in a.shapes:
            d, H, m = (int(x) for x in shape.split(","))
            rng = random.Random(7)
            qs = [q for q in fromfile if len(q[0][0]) == d] + random_queries(d, a.queries, rng, a.large)
            for seed in range(lo, hi + 1):
                torch.manual_seed(seed)
                t = torch_transformer.Transformer(d, H, 4, m, dtype)
                t.eval()
                ref = Exact(t)
                for q in qs + tie_queries(t, d, a.queries, rng):
                    n = sum(c for _, c in q)
                    M = float(max(max(abs(x) for x in tok) for tok, _ in q))
                    y = torch_transformer.answer(t, [([float(x) for x in tok], c) for tok, c in q], dtype)
                    yx = ref(q)
                    e = float(abs(mpf(y) - yx))
                    b = bucket(n, M)
                    w = worst.setdefault(b, [0, 0.0, 0.0, 0.0, 0.0])
                    w[0] += 1
                    w[1] = max(w[1], e)
                    w[2] = max(w[2], e / (u * (1 + abs(float(yx)))))
                    w[3] = max(w[3], e / ((n + M) * u * (1 + abs(float(yx)))))
                    w[4] = max(w[4], e / ((n + M * M) * u * (1 + abs(float(yx)))))
        print("torch %s %s, shapes (d,H,m) %s, d_k 4, seeds %s: error against the exact weights at 128 bits" % (torch.__version__, dtname, " ".join(a.shapes), a.seeds))
        print("| tokens n <= | entries M <= | queries | worst abs error | worst e / (u (1+|y|)) | worst e / ((n+M) u (1+|y|)) | worst e / ((n+M^2) u (1+|y|)) |")
        print("|---|---|---|---|---|---|---|")
        for b in sorted(worst):
            c, e, r, rn, rq = worst[b]
            print("| %d | %d | %d | %.2e | %.1f | %.2f | %.3f |" % (b[0], b[1], c, e, r, rn, rq))
        for cap in (4, 8, 16, 17, 32, 64, 128, 2**19):
            within = [w for b, w in worst.items() if b[1] <= cap]
            if within:
                print("entries up to %d: worst abs %.2e (n <= 17: %.2e), worst e / ((n + M) u (1 + |y|)) %.2f, e / ((n + M^2) u (1 + |y|)) %.3f" % (
                    cap, max(w[1] for w in within), max([w[1] for b, w in worst.items() if b[1] <= cap and b[0] == 17] or [0.0]),
                    max(w[3] for w in within), max(w[4] for w in within)))
        print()


if __name__ == "__main__":
    main()
