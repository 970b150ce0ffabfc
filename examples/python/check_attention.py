#!/usr/bin/env python3
"""Check a float64 attention implementation against mhaq golden vectors.

    python3 examples/python/check_attention.py tests/golden/d2_h1_seed1.json [more files]
            [--variant correct|no-max-subtraction|transposed-W] [--max-ulps X] [--quiet] [--json]

A golden file (tests/golden/SCHEMA.md) holds a bias-free multi-head attention
model with exact rational parameters, every query the learner sent and every
exact answer as a certified, correctly rounded decimal. This script evaluates
`attention` below in NumPy float64 on every recorded query and prints, per
query, the error against the exact answer in units in the last place (ulps)
next to an a-priori bound, then the worst case.

Copy it to check your own implementation: replace the body of `attention`
(keep its arguments and its float64 result), and run it on the golden files.
Only the standard library and NumPy are used.

The bound. For a query X (N tokens of dimension d) and a model with H heads,
float64 evaluation of

    s_hi = x_i^T W_h x_N,  alpha_hi = exp(s_hi - max_j s_hj) / sum_j exp(s_hj - max_j s_hj),
    f    = sum_h sum_i alpha_hi (v_h^T x_i)

in any summation order, with inputs rounded to float64 and exp accurate to
4 ulps, has |f_computed - f| <= B, where, with u = 2^-53, g(n) = nu/(1-nu),
S_hi = |x_i|^T |W_h| |x_N|, V_hi = |v_h|^T |x_i|, spread_h = max_i s_hi - min_i s_hi:

    D_h     = 2 g(2d+3) max_i S_hi + u (spread_h + 2 g(2d+3) max_i S_hi)   (error of s_hi - max, in the exponent)
    rho_h   = exp(D_h)(1 + 8u) - 1                                         (relative error of each exp term)
    k_h     = (1 + rho_h)(1 + u) / ((1 - rho_h)(1 - g(N-1))) - 1           (relative error of each alpha_hi)
    B_h     = k_h sum_i alpha_hi |v_h^T x_i| + g(N+d+2)(1 + k_h) sum_i alpha_hi V_hi + 2^-1070 sum_i |v_h^T x_i|
    B       = sum_h B_h + g(H-1) sum_h (sum_i alpha_hi |v_h^T x_i| + B_h)

(the last term of B_h covers exp results that underflow or are subnormal).
When every token and W_h entry is a dyadic rational m/2^a and the scaled
magnitudes satisfy 2 d^2 max|m_x|^2 max|m_W| < 2^53, every partial sum of
s_hi and of s_hi - max_j s_hj is an exactly representable multiple of a
common 2^-a, whatever the order, so D_h = 0 (mhaq's default exact tokens are
integers and its W entries quarters, so this holds for every committed
fixture, and the bound is a few tens of ulps instead of thousands).
B is evaluated in float64 from the exact model and tokens and enlarged by 1%,
which covers its own rounding. A query passes when
|f_computed - answer| <= B + |answer| 10^(1-digits) / 2, the second term being
the decimal's own rounding; errors and bounds are printed in ulps of the
correctly rounded float64 of the answer. The bound grows with the scores (an
error in s shifts the exponent) and with cancellation between the terms of f.
`--max-ulps X` replaces it with a fixed tolerance of X ulps.

The two wrong variants are what the test suite uses to show that the check
can fail: `no-max-subtraction` overflows exp once a score passes ~709.78
(inf/inf = nan), and `transposed-W` computes x_N^T W x_i.

Exit status: 0 every query passes, 10 some query does not (as mhaq's checkers), 3 unreadable or
unsupported file, 2 usage.
"""
import argparse
import json
import math
import sys
from fractions import Fraction

import numpy as np

U = 2.0 ** -53


# ---------------------------------------------------------------- the implementation under test
# Replace this function's body with a call to your implementation.
#   X     : (N, d) float64 array, the sequence x_1 .. x_N; X[-1] is the query token x_N
#   heads : list of (W, v), W a (d, d) and v a (d,) float64 array
#   return: f(X) as a Python float
def attention(X, heads):
    x_n = X[-1]
    f = 0.0
    for W, v in heads:
        s = X @ (W @ x_n)            # s_i = x_i^T W x_N
        e = np.exp(s - s.max())      # subtract the max: exp never overflows
        alpha = e / e.sum()
        f += float(alpha @ (X @ v))  # sum_i alpha_i v^T x_i
    return f


# Deliberately wrong variants, selected with --variant (the ctest checks that they fail).
def attention_no_max_subtraction(X, heads):
    x_n = X[-1]
    f = 0.0
    for W, v in heads:
        e = np.exp(X @ (W @ x_n))    # overflows to inf for scores above ~709.78
        f += float((e / e.sum()) @ (X @ v))
    return f


def attention_transposed_W(X, heads):
    x_n = X[-1]
    f = 0.0
    for W, v in heads:
        s = X @ (W.T @ x_n)          # x_N^T W x_i instead of x_i^T W x_N
        e = np.exp(s - s.max())
        f += float((e / e.sum()) @ (X @ v))
    return f


VARIANTS = {
    "correct": attention,
    "no-max-subtraction": attention_no_max_subtraction,
    "transposed-W": attention_transposed_W,
}


# ---------------------------------------------------------------- reading a golden file
class InputError(Exception):
    pass


def rational(s, where):
    try:
        return Fraction(str(s))  # "p/q", "-3", "0.125", and decimals such as "-1.55e+01"
    except (ValueError, ZeroDivisionError):
        raise InputError(f"{where}: not an exact number: {s!r}")


def load(path):
    """The fields the checker relies on (SCHEMA.md, "What a float checker reads")."""
    try:
        with open(path, encoding="utf-8") as fh:
            g = json.load(fh)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: {e}")
    if g.get("format") != "mhaq-golden" or g.get("version") != 1:
        raise InputError(f"{path}: not an mhaq-golden version 1 file")
    model = g["model"]
    if model.get("format") != "mhaq-model":
        # Transformer golden files (model format mhaq-transformer) are checked by check_transformer.py.
        raise InputError(f"{path}: model format {model.get('format')!r} is not supported by this checker")
    d = int(model["d"])
    heads = []
    for h, head in enumerate(model["heads"]):
        W = [[rational(x, f"model.heads[{h}].W") for x in row] for row in head["W"]]
        v = [rational(x, f"model.heads[{h}].v") for x in head["v"]]
        if len(W) != d or any(len(row) != d for row in W) or len(v) != d:
            raise InputError(f"{path}: model.heads[{h}]: expected W of d x d and v of d entries, d = {d}")
        heads.append((W, v))
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
    return d, heads, digits, queries


# ---------------------------------------------------------------- error analysis
def gamma(n):
    return n * U / (1 - n * U) if n > 0 else 0.0


def dyadic(values):
    """(a, m): every value is an integer multiple of 2^-a and m = max |value| 2^a; None if some denominator is no power of 2."""
    a = 0
    for x in values:
        q = x.denominator
        if q & (q - 1):
            return None
        a = max(a, q.bit_length() - 1)
    return a, max(abs(x) * 2 ** a for x in values)


def scores_exact(X, W):
    """True when float64 computes every s_i and s_i - max_j s_j exactly, in any order (module docstring)."""
    dx, dw = dyadic([x for row in X for x in row]), dyadic([w for row in W for w in row])
    if dx is None or dw is None:
        return False
    d = len(X[0])
    return 2 * d * d * dx[1] ** 2 * dw[1] < 2 ** 53


def a_priori_bound(X, heads):
    """B of the module docstring for the exact query X and model heads."""
    N, d, H = len(X), len(X[0]), len(heads)
    Xf = np.array([[float(x) for x in row] for row in X])
    total, mags = 0.0, 0.0
    for W, v in heads:
        Wf = np.array([[float(x) for x in row] for row in W])
        vf = np.array([float(x) for x in v])
        s = np.array([float(sum(xi[j] * W[j][k] * X[-1][k] for j in range(d) for k in range(d))) for xi in X])
        S = np.abs(Xf) @ (np.abs(Wf) @ np.abs(Xf[-1]))
        e = np.exp(s - s.max())
        alpha = e / e.sum()
        val = np.abs(Xf @ vf)
        V = np.abs(Xf) @ np.abs(vf)
        if scores_exact(X, W):
            D = 0.0
        else:
            D = 2 * gamma(2 * d + 3) * S.max()
            D += U * (s.max() - s.min() + D)
        rho = math.exp(D) * (1 + 8 * U) - 1
        k = (1 + rho) * (1 + U) / ((1 - rho) * (1 - gamma(N - 1))) - 1
        mag = float(alpha @ val)
        b = k * mag + gamma(N + d + 2) * (1 + k) * float(alpha @ V) + 2.0 ** -1070 * float(val.sum())
        total += b
        mags += mag + b
    return 1.01 * (total + gamma(H - 1) * mags)


def ulp(x):
    return math.ulp(x) if x != 0 else math.ulp(0.0)


# ---------------------------------------------------------------- the check
def check_file(path, impl, max_ulps, quiet, out):
    d, heads, digits, queries = load(path)
    heads_f = [(np.array([[float(x) for x in row] for row in W]), np.array([float(x) for x in v])) for W, v in heads]
    rows = []
    for i, X, decimal, ans in queries:
        Xf = np.array([[float(x) for x in row] for row in X])
        with np.errstate(all="ignore"):
            y = impl(Xf, heads_f)
        ref = float(ans)  # the correctly rounded float64 of the decimal
        u_ref = ulp(ref)
        if math.isfinite(y):
            err = abs(Fraction(y) - ans)
            err_ulps = float(err / Fraction(u_ref))
        else:
            err, err_ulps = None, math.inf
        dec_err = abs(ans) / 2 / 10 ** (digits - 1)  # the decimal's own rounding
        if max_ulps is not None:
            bound_ulps = max_ulps
            limit = Fraction(max_ulps) * Fraction(u_ref)
        else:
            B = a_priori_bound(X, heads)
            bound_ulps = B / u_ref
            limit = Fraction(B)
        ok = err is not None and err <= limit + dec_err
        rows.append({"index": i, "length": len(X), "answer": ref, "computed": y, "error_ulps": err_ulps,
                     "bound_ulps": bound_ulps, "correctly_rounded": y == ref, "ok": ok})
    header = f"{path}: d={d}, {len(heads)} head{'s' if len(heads) != 1 else ''}, {len(rows)} queries, answers to {digits} digits"
    return finish_file(path, rows, digits, header, max_ulps, quiet, out)


def finish_file(path, rows, digits, header, max_ulps, quiet, out):
    """Summarise one file's per-query rows: append them to `out` (--json) or
    print the header, the table and the worst case. True when every query is
    within its bound. Shared with check_transformer.py."""
    worst = max(rows, key=lambda r: (math.isnan(r["error_ulps"]) or r["error_ulps"] == math.inf, r["error_ulps"]))
    failed = [r for r in rows if not r["ok"]]
    summary = {"file": path, "queries": len(rows), "failed": len(failed), "worst_error_ulps": worst["error_ulps"],
               "worst_query": worst["index"], "max_bound_ulps": max(r["bound_ulps"] for r in rows),
               "correctly_rounded": sum(r["correctly_rounded"] for r in rows), "digits": digits}
    if out is not None:
        out.append({"summary": summary, "queries": rows})
        return not failed
    print(header)
    if not quiet:
        print(f"  {'query':>5} {'len':>4} {'exact answer (float64)':>24} {'computed':>24} {'error/ulp':>10} {'bound/ulp':>10}")
        for r in rows:
            print(f"  {r['index']:>5} {r['length']:>4} {r['answer']:>24.17g} {r['computed']:>24.17g} {r['error_ulps']:>10.3g} "
                  f"{r['bound_ulps']:>10.3g}  {'ok' if r['ok'] else 'FAIL'}")
    kind = f"fixed bound {max_ulps} ulps" if max_ulps is not None else "a-priori bound"
    print(f"  worst error {worst['error_ulps']:.3g} ulps (query {worst['index']}); "
          f"{summary['correctly_rounded']} of {len(rows)} correctly rounded; largest bound {summary['max_bound_ulps']:.3g} ulps; "
          + (f"every query within its {kind}" if not failed else f"{len(failed)} queries OUTSIDE the {kind}"))
    return not failed


def run_cli(argv, prog, description, files_help, variants, check_file):
    """The command line shared by the checkers: files, --variant, --max-ulps,
    --quiet, --json; exit 0 (pass), 10 (a query outside its bound), 3 (input)."""
    p = argparse.ArgumentParser(prog=prog, description=description)
    p.add_argument("files", nargs="+", help=files_help)
    p.add_argument("--variant", choices=sorted(variants), default="correct", help="implementation to check (default: correct)")
    p.add_argument("--max-ulps", type=float, default=None, help="fixed tolerance in ulps instead of the a-priori bound")
    p.add_argument("--quiet", action="store_true", help="summary lines only")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    a = p.parse_args(argv)
    impl = variants[a.variant]
    out = [] if a.json else None
    ok = True
    try:
        for f in a.files:
            ok = check_file(f, impl, a.max_ulps, a.quiet, out) and ok
    except InputError as e:
        print(f"{prog}: input error: {e}", file=sys.stderr)
        return 3
    except (KeyError, TypeError, ValueError, IndexError) as e:
        print(f"{prog}: input error: missing or malformed field: {e!r}", file=sys.stderr)
        return 3
    if out is not None:
        def finite(x):  # strict JSON: non-finite numbers (an overflowed result) become null
            if isinstance(x, float):
                return x if math.isfinite(x) else None
            if isinstance(x, dict):
                return {k: finite(v) for k, v in x.items()}
            if isinstance(x, list):
                return [finite(v) for v in x]
            return x
        print(json.dumps(finite({"variant": a.variant, "ok": ok, "files": out}), allow_nan=False))
    else:
        print(f"variant {a.variant}: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 10


def main(argv=None):
    return run_cli(argv, "check_attention", "Check a float64 attention implementation against mhaq golden vectors.",
                   "golden files (mhaq golden export)", VARIANTS, check_file)


if __name__ == "__main__":
    sys.exit(main())
