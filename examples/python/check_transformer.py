#!/usr/bin/env python3
"""Check a float64 one-layer transformer implementation against mhaq golden vectors.

    python3 examples/python/check_transformer.py tests/golden/transformer_d2_h1_m2_seed8.json [more files]
            [--variant correct|no-relu|transposed-W] [--max-ulps X] [--quiet] [--json]

A transformer golden file (tests/golden/SCHEMA.md, "Transformer files") holds
a one-layer transformer with exact rational parameters -- multi-head softmax
attention followed by a bias-free ReLU feed-forward network, scalar output at
the final token,

    T(X) = sum_j u_j ReLU( sum_h U_{h,j}^T z_h(X) ),  z_h(X) = sum_i alpha_hi x_i,
    alpha_h = softmax_i(s_hi),  s_hi = x_i^T W_h x_N,

-- every query the exact transformer learner sent, and every exact answer as a
certified, correctly rounded decimal. This script evaluates `transformer`
below in NumPy float64 on every recorded query and prints, per query, the
error against the exact answer in units in the last place (ulps) next to an
a-priori bound, then the worst case. It is the sibling of check_attention.py
(same output, options and exit codes) and imports that script's reader
helpers and attention bound, so keep both files together when you copy them.

Copy it to check your own implementation: replace the body of `transformer`
(keep its arguments and its float64 result), and run it on the golden files.
Only the standard library and NumPy are used.

The bound. Neuron j's pre-activation g_j = sum_h U_{h,j}^T z_h is the
attention f of check_attention.py with heads (W_h, v_h = U_{h,j}): computed as
U^T (alpha X) or as alpha (X U) it is a sum over i and a of alpha_hi x_ia U_a
with two roundings per term, and an error in alpha_hi enters as
delta alpha_hi (U^T x_i), so that script's bound B_j (any summation order)
covers it. ReLU is 1-Lipschitz, so |ReLU(g~_j) - ReLU(g_j)| <= B_j. Rounding
u_j to float64, the products u_j ReLU(g~_j) and their sum over the m neurons
add at most gamma(m+1) sum_j |u_j| (G_j + B_j), with G_j = sum_h sum_i
alpha_hi |U_{h,j}^T x_i| >= |g_j|. So

    |T~ - T| <= B = sum_j |u_j| B_j + gamma(m+1) sum_j |u_j| (G_j + B_j),

evaluated in float64 and enlarged by 1%. A query passes when
|T~ - answer| <= B + |answer| 10^(1-digits) / 2 (the decimal's own rounding).
Errors and bounds are printed in ulps of the correctly rounded float64 of the
answer; an exact answer of 0 (every neuron cut off by its ReLU) has no ulp of
its own, so it is measured in ulps of S = sum_j |u_j| G_j, the size of the
terms it is made of. `--max-ulps X` replaces B with a fixed tolerance of X ulps.

The two wrong variants are what the test suite uses to show that the check
can fail: `no-relu` drops the ReLU (T becomes linear in the z_h), and
`transposed-W` computes the scores x_N^T W x_i.

Exit status: 0 every query passes, 10 some query does not, 3 unreadable or
unsupported file, 2 usage.
"""
import json
import math
import os
import sys
from fractions import Fraction

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_attention import InputError, U, a_priori_bound, finish_file, gamma, rational, run_cli, ulp  # noqa: E402


# ---------------------------------------------------------------- the implementation under test
# Replace this function's body with a call to your implementation.
#   X       : (N, d) float64 array, the sequence x_1 .. x_N; X[-1] is the query token x_N
#   Ws      : list of H (d, d) float64 arrays W_h
#   neurons : list of (u_j, U_j), u_j a float and U_j an (H, d) float64 array whose row h is U_{h,j}
#   return  : T(X) as a Python float
def transformer(X, Ws, neurons):
    x_n = X[-1]
    Z = []
    for W in Ws:
        s = X @ (W @ x_n)            # s_i = x_i^T W x_N
        e = np.exp(s - s.max())      # subtract the max: exp never overflows
        Z.append((e / e.sum()) @ X)  # z_h = sum_i alpha_i x_i
    Z = np.array(Z)                  # (H, d)
    t = 0.0
    for u, Uj in neurons:
        g = float(np.sum(Uj * Z))    # sum_h U_{h,j}^T z_h
        t += u * max(g, 0.0)         # ReLU
    return t


# Deliberately wrong variants, selected with --variant (the ctest checks that they fail).
def transformer_no_relu(X, Ws, neurons):
    x_n = X[-1]
    Z = []
    for W in Ws:
        s = X @ (W @ x_n)
        e = np.exp(s - s.max())
        Z.append((e / e.sum()) @ X)
    Z = np.array(Z)
    return float(sum(u * float(np.sum(Uj * Z)) for u, Uj in neurons))  # ReLU dropped


def transformer_transposed_W(X, Ws, neurons):
    return transformer(X, [W.T for W in Ws], neurons)  # x_N^T W x_i instead of x_i^T W x_N


VARIANTS = {
    "correct": transformer,
    "no-relu": transformer_no_relu,
    "transposed-W": transformer_transposed_W,
}


# ---------------------------------------------------------------- reading a golden file
def load(path):
    """The fields the checker relies on (SCHEMA.md, "Transformer files", "What a float checker reads")."""
    try:
        with open(path, encoding="utf-8") as fh:
            g = json.load(fh)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: {e}")
    if g.get("format") != "mhaq-golden" or g.get("version") != 1:
        raise InputError(f"{path}: not an mhaq-golden version 1 file")
    if g.get("model_kind") != "transformer":
        raise InputError(f"{path}: not a transformer golden file (model_kind {g.get('model_kind')!r}); use check_attention.py")
    model = g["model"]
    if model.get("format") != "mhaq-transformer":
        raise InputError(f"{path}: model format {model.get('format')!r} is not supported by this checker")
    d = int(model["d"])
    Ws = []
    for h, head in enumerate(model["heads"]):
        W = [[rational(x, f"model.heads[{h}].W") for x in row] for row in head["W"]]
        if len(W) != d or any(len(row) != d for row in W):
            raise InputError(f"{path}: model.heads[{h}].W: expected d x d entries, d = {d}")
        Ws.append(W)
    neurons = []
    for j, n in enumerate(model["neurons"]):
        u = rational(n["u"], f"model.neurons[{j}].u")
        Uj = [[rational(x, f"model.neurons[{j}].U[{h}]") for x in row] for h, row in enumerate(n["U"])]
        if len(Uj) != len(Ws) or any(len(row) != d for row in Uj):
            raise InputError(f"{path}: model.neurons[{j}].U: expected one vector of d = {d} entries per head")
        neurons.append((u, Uj))
    if not Ws or not neurons:
        raise InputError(f"{path}: the model has no heads or no neurons")
    digits = int(g["digits"])
    answers = {int(a["index"]): a["decimal"] for a in g["answers"]}
    queries = []
    for q in g["queries"]:
        i = int(q["index"])
        X = []
        for r, run in enumerate(q["runs"]):
            tok = [rational(x, f"queries[{i}].runs[{r}].token") for x in run["token"]]
            if len(tok) != d:
                raise InputError(f"{path}: queries[{i}].runs[{r}].token has {len(tok)} entries, d = {d}")
            X.extend([tok] * int(run["count"]))
        if not X or i not in answers:
            raise InputError(f"{path}: queries[{i}] is empty or has no answer")
        queries.append((i, X, answers[i], rational(answers[i], f"answers[{i}].decimal")))
    return d, Ws, neurons, digits, queries


# ---------------------------------------------------------------- error analysis
def transformer_bound(X, Ws, neurons):
    """(B, S): B of the module docstring for the exact query X and model, and the scale S = sum_j |u_j| G_j."""
    Xf = np.array([[float(x) for x in row] for row in X])
    x_n = Xf[-1]
    alphas = []
    for W in Ws:
        s = np.array([float(sum(xi[a] * W[a][b] * X[-1][b] for a in range(len(W)) for b in range(len(W)))) for xi in X])
        e = np.exp(s - s.max())
        alphas.append(e / e.sum())
    del x_n
    lin, mags, scale = 0.0, 0.0, 0.0
    for u, Uj in neurons:
        Bj = a_priori_bound(X, list(zip(Ws, Uj)))  # check_attention.py: f with heads (W_h, U_{h,j})
        Gj = sum(float(alphas[h] @ np.abs(Xf @ np.array([float(x) for x in Uj[h]]))) for h in range(len(Ws)))
        lin += abs(float(u)) * Bj
        mags += abs(float(u)) * (Gj + Bj)
        scale += abs(float(u)) * Gj
    return 1.01 * (lin + gamma(len(neurons) + 1) * mags), scale


# ---------------------------------------------------------------- the check
def check_file(path, impl, max_ulps, quiet, out):
    d, Ws, neurons, digits, queries = load(path)
    Ws_f = [np.array([[float(x) for x in row] for row in W]) for W in Ws]
    neurons_f = [(float(u), np.array([[float(x) for x in row] for row in Uj])) for u, Uj in neurons]
    rows = []
    for i, X, decimal, ans in queries:
        Xf = np.array([[float(x) for x in row] for row in X])
        with np.errstate(all="ignore"):
            y = impl(Xf, Ws_f, neurons_f)
        ref = float(ans)
        B, scale = transformer_bound(X, Ws, neurons)
        # ulps of the answer; an answer of exactly 0 (every neuron cut off, or
        # cancelling) is measured in ulps of the scale S of its terms instead
        u_ref = ulp(ref) if ref != 0 or scale == 0 else ulp(scale)
        if math.isfinite(y):
            err = abs(Fraction(y) - ans)
            try:
                err_ulps = float(err / Fraction(u_ref))
            except OverflowError:
                err_ulps = math.inf
        else:
            err, err_ulps = None, math.inf
        dec_err = abs(ans) / 2 / 10 ** (digits - 1)
        if max_ulps is not None:
            bound_ulps = max_ulps
            limit = Fraction(max_ulps) * Fraction(u_ref)
        else:
            bound_ulps = B / u_ref
            limit = Fraction(B)
        ok = err is not None and err <= limit + dec_err
        rows.append({"index": i, "length": len(X), "answer": ref, "computed": y, "error_ulps": err_ulps,
                     "bound_ulps": bound_ulps, "correctly_rounded": y == ref, "ok": ok})
    header = (f"{path}: transformer, d={d}, {len(Ws)} head{'s' if len(Ws) != 1 else ''}, {len(neurons)} neuron{'s' if len(neurons) != 1 else ''}, "
              f"{len(rows)} queries, answers to {digits} digits")
    return finish_file(path, rows, digits, header, max_ulps, quiet, out)


def main(argv=None):
    return run_cli(argv, "check_transformer", "Check a float64 one-layer transformer implementation against mhaq golden vectors.",
                   "transformer golden files (mhaq golden export --ffn M, or --model TRANSFORMER.json)", VARIANTS, check_file)


if __name__ == "__main__":
    sys.exit(main())
