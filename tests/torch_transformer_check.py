#!/usr/bin/env python3
"""Checks a transformer that recover --oracle learned from torch against torch.

usage: torch_transformer_check.py RESULT.json --d D --heads H --neurons M --seed S [--sequences N] [--bound EPS]

RESULT.json is recover's --json record of a ball run (status ok). Its
"model" holds the recovered canonical transformer as balls: heads W_h and
neurons (u_j = +-1, U_{h,j}), T(X) = sum_j u_j ReLU(sum_h U_{h,j}^T A_h(X)),
A_h(X) the softmax average of the tokens x_i with scores x_i^T W_h x_last.
The script draws N fresh sequences (tokens k/16 in [-1, 1], 1 to 4 runs of
counts 1 to 3), evaluates the recovered balls on each in interval arithmetic
(mpmath.iv, outward rounding) and torch's model of the same seed in float64,
and requires torch's value within the enclosure widened by EPS, the bound
stated on torch's error. Exit 1 on any miss.
"""
import argparse
import json
import os
import random
import re
import sys

from mpmath import iv, mpf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "oracles"))
import torch  # noqa: E402

import torch_transformer  # noqa: E402

iv.prec = 128


def ball(s):
    """An interval containing Arb's printed ball "[m +/- r]" or exact "m"."""
    m = re.fullmatch(r"\[(\S+) \+/- (\S+)\]", s)
    if m:
        mid, rad = mpf(m.group(1)), mpf(m.group(2))
        # the decimals themselves are read to 128 bits: widen by their rounding
        slack = (abs(mid) + rad) * mpf(2) ** -120
        return iv.mpf([mid - rad - slack, mid + rad + slack])
    x = mpf(s)
    slack = abs(x) * mpf(2) ** -120
    return iv.mpf([x - slack, x + slack])


def relu(x):
    lo, hi = x.a, x.b
    return iv.mpf([max(lo, 0), max(hi, 0)])


def evaluate(model, runs, d):
    W = [[[ball(x) for x in row] for row in h["W"]] for h in model["heads"]]
    last = runs[-1][0]
    A = []
    for Wh in W:
        # scores x_i^T W_h x_last, shifted by the last token's own score (softmax is shift-invariant)
        Wx = [sum((Wh[a][b] * last[b] for b in range(d)), iv.mpf(0)) for a in range(d)]
        s = [sum((tok[a] * Wx[a] for a in range(d)), iv.mpf(0)) for tok, _ in runs]
        w = [c * iv.exp(si - s[-1]) for si, (_, c) in zip(s, runs)]
        tot = sum(w, iv.mpf(0))
        A.append([sum((wi * tok[a] for wi, (tok, _) in zip(w, runs)), iv.mpf(0)) / tot for a in range(d)])
    out = iv.mpf(0)
    for n in model["neurons"]:
        U = [[ball(x) for x in row] for row in n["U"]]
        pre = sum((U[h][a] * A[h][a] for h in range(len(W)) for a in range(d)), iv.mpf(0))
        out += ball(n["u"]) * relu(pre)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("result")
    ap.add_argument("--d", type=int, required=True)
    ap.add_argument("--heads", type=int, required=True)
    ap.add_argument("--neurons", type=int, required=True)
    ap.add_argument("--d-k", type=int, default=4)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--sequences", type=int, default=200)
    ap.add_argument("--bound", default="5e-14")
    a = ap.parse_args()
    r = json.load(open(a.result))
    if r.get("status") != "ok":
        sys.exit(f"the run did not end ok: {r.get('status')}: {r.get('message')}")
    torch.manual_seed(a.seed)
    t = torch_transformer.Transformer(a.d, a.heads, a.d_k, a.neurons)
    t.eval()
    rng = random.Random(20261205)
    eps = mpf(a.bound)
    worst_width, misses = mpf(0), 0
    for _ in range(a.sequences):
        runs = []
        for _ in range(rng.randint(1, 4)):
            tok = [rng.randint(-16, 16) for _ in range(a.d)]  # sixteenths: exact in binary
            runs.append((tok, rng.randint(1, 3)))
        X = [[k / 16 for k in tok] for tok, c in runs for _ in range(c)]
        with torch.no_grad():
            y = float(t(torch.tensor(X, dtype=torch.float64)))
        e = evaluate(r["model"], [([iv.mpf(k) / 16 for k in tok], c) for tok, c in runs], a.d)
        worst_width = max(worst_width, e.b - e.a)
        if not (e.a - eps <= y <= e.b + eps):
            misses += 1
            print(f"miss: torch {y!r} outside [{e.a}, {e.b}] +- {a.bound}", file=sys.stderr)
    print(f"{a.sequences} fresh sequences: {a.sequences - misses} within the recovered enclosures +- {a.bound} "
          f"(widest enclosure {float(worst_width):.3g})")
    sys.exit(1 if misses else 0)


if __name__ == "__main__":
    main()
