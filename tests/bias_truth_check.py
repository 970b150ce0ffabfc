#!/usr/bin/env python3
"""The canonical truth of a torch attention layer with biases, from its tensors
alone, against the balls of an mhaq recover run.

    python3 tests/bias_truth_check.py LAYER_DIR RECOVER.json

LAYER_DIR holds attention.safetensors and map.json as
examples/python/write_safetensors.py --bias writes them; RECOVER.json is
`mhaq recover --json` of a ball run that learned the layer (through an
oracle, told nothing but d, H and --bias). This script shares no code with
mhaq: it reads the tensors' bytes itself, forms in exact rationals

    W_h = s Wk_h^T Wq_h,  c_h = s Wk_h^T b_q,h,  v_h = Wv_h^T Wo_h^T u,
    beta = sum_h b_v,h . (Wo_h^T u) + u . b_out,      s = 1/sqrt(d_k)

(torch's rows: q = Wq x + b_q; Wo_h the columns of head h), encloses s in an
mpmath interval at 640 bits, and requires every recovered ball to contain
its entry under one assignment of heads, beta's ball to contain beta, the
run to end ok, and its query count to be 4Hd^2 + 4Hd - 2H + 1.
Exit 0 when all hold, 1 otherwise.
"""
import itertools
import json
import os
import re
import struct
import sys
from fractions import Fraction

from mpmath import iv, mp

iv.prec = mp.prec = 640


def read_tensors(path):
    """{name: (shape, [Fraction])} of the F64 and F32 tensors, decoded from their bytes."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        fmt = {"F64": ("<d", 8), "F32": ("<f", 4)}[e["dtype"]]
        b, en = e["data_offsets"]
        raw = data[8 + n + b:8 + n + en]
        vals = [Fraction(struct.unpack(fmt[0], raw[i:i + fmt[1]])[0]) for i in range(0, len(raw), fmt[1])]
        out[name] = (e["shape"], vals)
    return out


def matrix(t):
    (r, c), v = t
    return [v[i * c:(i + 1) * c] for i in range(r)]


def truth(layer):
    with open(os.path.join(layer, "map.json")) as f:
        m = json.load(f)
    t = read_tensors(os.path.join(layer, "attention.safetensors"))
    W = matrix(t[m["in_proj"]])
    Wo = matrix(t[m["out"]])
    u = t[m["readout"]][1]
    b = t[m["in_proj_bias"]][1]
    bo = t[m["out_bias"]][1]
    H = int(m["heads"])
    d = len(W[0])
    dk = d // H
    Wq, Wk, Wv = W[:d], W[d:2 * d], W[2 * d:]
    bq, bk, bv = b[:d], b[d:2 * d], b[2 * d:]
    s = 1 / iv.sqrt(iv.mpf(dk))
    q = lambda x: iv.mpf(x.numerator) / x.denominator  # noqa: E731
    heads, beta = [], sum(u[o] * bo[o] for o in range(d))
    for h in range(H):
        rows = range(h * dk, (h + 1) * dk)
        Ou = {r: sum(Wo[o][r] * u[o] for o in range(d)) for r in rows}
        Wh = [[q(sum(Wk[r][a] * Wq[r][c] for r in rows)) * s for c in range(d)] for a in range(d)]
        ch = [q(sum(Wk[r][a] * bq[r] for r in rows)) * s for a in range(d)]
        vh = [q(sum(Wv[r][a] * Ou[r] for r in rows)) for a in range(d)]
        beta += sum(bv[r] * Ou[r] for r in rows)
        heads.append((Wh, vh, ch))
    return d, H, heads, q(beta)


BALL = re.compile(r"^\[(?:(?P<mid>[-+0-9.e]+) )?\+/- (?P<rad>[0-9.e+-]+)\]$")


def ball(text):
    """An Arb ball string "[mid +/- rad]", "[+/- rad]" or an exact "mid", as an interval containing it."""
    mt = BALL.match(text)
    if not mt:
        x = iv.mpf(text)
        return x
    mid = iv.mpf(mt.group("mid") or "0")
    rad = iv.mpf(mt.group("rad"))
    return iv.mpf([(mid - rad).a, (mid + rad).b])


def inside(x, y):
    """The interval x lies in the interval y."""
    return x.a >= y.a and x.b <= y.b


def main():
    layer, result = sys.argv[1], sys.argv[2]
    with open(result) as f:
        r = json.load(f)
    d, H, heads, beta = truth(layer)
    fails = []
    if r.get("status") != "ok":
        fails.append(f"status {r.get('status')}: {r.get('message')}")
    want = 4 * H * d * d + 4 * H * d - 2 * H + 1
    if r.get("queries") != want:
        fails.append(f"queries {r.get('queries')}, expected 4Hd^2 + 4Hd - 2H + 1 = {want}")
    got = r.get("heads", [])
    if len(got) != H:
        fails.append(f"{len(got)} heads recovered, the layer has {H}")
    elif "beta" not in r or not inside(beta, ball(r["beta"])):
        fails.append("beta's ball does not contain the layer's beta")
    best = None
    for perm in itertools.permutations(range(H)) if len(got) == H else []:
        bad = 0
        for g, h in enumerate(perm):
            Wh, vh, ch = heads[h]
            for a in range(d):
                bad += not inside(vh[a], ball(got[g]["v"][a]))
                bad += not inside(ch[a], ball(got[g]["c"][a]))
                bad += sum(not inside(Wh[a][c], ball(got[g]["W"][a][c])) for c in range(d))
        best = bad if best is None else min(best, bad)
    if best:
        fails.append(f"{best} entries of W, c, v outside their balls under the best assignment of heads")
    name = os.path.basename(os.path.normpath(layer))
    rads = [float(BALL.match(x).group("rad")) for h in got for x in [*h["v"], *h["c"], *(y for row in h["W"] for y in row)] if BALL.match(x)]
    if fails:
        print(f"{name}: FAIL: " + "; ".join(fails))
        return 1
    print(f"{name}: d={d}, H={H}, d_k={d // H}: ok, {r['queries']} queries, every ball of W_h, c_h, v_h and beta "
          f"({H * (d * d + 2 * d) + 1} entries) contains the truth from the tensors; largest radius {max(rads, default=0):.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
