#!/usr/bin/env python3
"""A plain NumPy float64 multi-head attention as an mhaq oracle.

usage: numpy_mha.py MODEL.json

MODEL.json is an mhaq model file, plain (heads W_h, v_h) or factored (Q_h,
K_h, V_h, O, readout; docs/oracle-protocol.md, README "Model file"). The
oracle evaluates f(X) = sum_h sum_i alpha_{h,i} v_h^T x_i, alpha_h the softmax
of x_i^T W_h x_N (the factored form: the same with W_h = scale K_h Q_h^T and
v_h = V_h O_h u, computed the way a framework does: projections first), in
float64 with the maximum score subtracted.

Its stated error, abs 5e-14 (docs/recover-your-own-model.md): the rounding
of these few float64 sums, bounded for entries of size about 1 and tokens in
[-1, 1].

    mhaq recover --oracle "python3 numpy_mha.py m.json" --model m.json --arith ball --bits 256 --design scaled
"""
import sys
from fractions import Fraction

import numpy as np

import mhaq_oracle


def load(path):
    import json

    with open(path) as fh:
        m = json.load(fh)
    num = lambda x: float(Fraction(str(x)))
    mat = lambda a: np.array([[num(x) for x in row] for row in a], dtype=np.float64)
    if m["format"] == "mhaq-model":
        heads = [(mat(h["W"]), np.array([num(x) for x in h["v"]])) for h in m["heads"]]
        return m["d"], lambda X: plain(heads, X)
    if m["format"] == "mhaq-model-factored":
        scale = num(m.get("scale", "1"))
        H, dv = len(m["heads"]), m["d_v"]
        Q = [mat(h["Q"]) for h in m["heads"]]
        K = [mat(h["K"]) for h in m["heads"]]
        V = [mat(h["V"]) for h in m["heads"]]
        O = mat(m["O"]) if "O" in m else np.vstack([mat(h["O"]) for h in m["heads"]])
        u = np.array([num(x) for x in m["readout"]])
        return m["d"], lambda X: factored(Q, K, V, O, u, scale, dv, X)
    raise SystemExit("%s: format %r is not an attention model file" % (path, m["format"]))


def softmax_last(scores):
    s = scores - scores.max()
    w = np.exp(s)
    return w / w.sum()


def plain(heads, X):
    X = np.asarray(X, dtype=np.float64)
    xN = X[-1]
    return float(sum(softmax_last(X @ (W @ xN)) @ (X @ v) for W, v in heads))


def factored(Q, K, V, O, u, scale, dv, X):
    X = np.asarray(X, dtype=np.float64)
    ys = []
    for Qh, Kh, Vh in zip(Q, K, V):
        q = X[-1] @ Qh
        a = softmax_last(scale * ((X @ Kh) @ q))
        ys.append(a @ (X @ Vh))
    return float(np.concatenate(ys) @ O @ u)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    d, f = load(sys.argv[1])
    mhaq_oracle.serve(f, d=d, name="numpy_mha.py float64 (%s)" % sys.argv[1], accuracy={"abs": "5e-14"})
