#!/usr/bin/env python3
"""A plain NumPy float64 multi-head attention as an mhaq oracle.

usage: numpy_mha.py MODEL.json [--max-length N]

MODEL.json is an mhaq model file, plain (heads W_h, v_h) or factored (Q_h,
K_h, V_h, O, readout; docs/oracle-protocol.md, README "Model file"). The
oracle evaluates f(X) = sum_h sum_i alpha_{h,i} v_h^T x_i, alpha_h the softmax
of x_i^T W_h x_N (the factored form: the same with W_h = scale K_h Q_h^T and
v_h = V_h O_h u, computed the way a framework does: projections first), in
float64 with the maximum score subtracted, over the whole sequence (each run
expanded to its copies): O(n d) per head for n tokens.

Its stated error (docs/recover-your-own-model.md) covers sequences of at
most N tokens (default 17, the paper and scaled designs' longest at H <= 8):
abs 5e-14 up to 17 tokens; beyond, abs and rel 64 N 2^-53 each (4.9e-10 for
N = 65537, the placed design's longest), since the float64 sums round once
per token. A longer sequence is refused with an error, so the statement is
never false for an answer given.

    mhaq recover --oracle "python3 numpy_mha.py m.json" --model m.json --arith ball --bits 256 --design scaled
    mhaq recover --oracle "python3 numpy_mha.py m.json --max-length 65537" --model m.json --arith mpfr --bits 256 --design placed
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


def expanded(runs):
    """The whole sequence as an (n, d) float64 array: each run's token repeated
    count times (np.repeat, not a Python list of n rows, so a run of 65,536
    copies costs milliseconds)."""
    tokens = np.array([t for t, _ in runs], dtype=np.float64)
    return np.repeat(tokens, [c for _, c in runs], axis=0)


def main(argv):
    if len(argv) == 3 and argv[1] == "--max-length" and argv[2].isdigit():
        max_length = int(argv[2])
    elif len(argv) == 1:
        max_length = mhaq_oracle.SHORT
    else:
        raise SystemExit(__doc__)
    d, f = load(argv[0])

    def answer(runs):
        mhaq_oracle.check_length(sum(c for _, c in runs), max_length)
        return f(expanded(runs))

    mhaq_oracle.serve(answer, d=d, name="numpy_mha.py float64 (%s)" % argv[0], accuracy=mhaq_oracle.stated_accuracy(max_length), runs=True)


if __name__ == "__main__":
    main(sys.argv[1:])
