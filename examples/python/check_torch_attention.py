#!/usr/bin/env python3
"""Check torch.nn.MultiheadAttention against a certified mhaq golden file.

    python3 examples/python/check_torch_attention.py GOLDEN.json --layer DIR
            [--variant torch|no-scale|transposed|no-bias] [--dtype float64|float32]
            [--max-ulps X] [--quiet] [--json]

DIR holds attention.safetensors and map.json (examples/python/write_safetensors.py
writes them; any map of docs/formats.md: a fused in_proj with its split, or
separate q, k and v, in the out_in or in_out layout, a readout tensor or
inline entries, and the biases the map names: in_proj_bias or q_bias, k_bias,
v_bias, and out_bias). F64 layers run in float64; F32, F16 and BF16 layers run in
float32, as CPU torch computes half-precision weights, or in --dtype (float64
holds every narrower weight exactly). GOLDEN.json is
`mhaq golden export --certified` of the model `mhaq convert --safetensors`
made from them. For every query of the file (the learner's and your own
sequences) this script runs the layer -- torch's kernels, query x_N
attending over x_1..x_N -- dots the output with u and compares the result
with the certified answer, within the a-priori bound below. A token entry
the layer's dtype cannot hold is rounded to it (the kernel reads it so); the
script says how many, and the bound counts that rounding. Replace
`torch_layer` with your kernel to check it instead.

The bound. With u the unit roundoff of the arithmetic (2^-53, 2^-24), g(n) = nu/(1-nu),
r = 1 when tokens were rounded (else 0), per head h the exact blocks
Wq_h, Wk_h (d_k x d), Wv_h (d_v x d), Wo_h (d_out x d_v) and the biases
b_q,h, b_k,h, b_v,h, b_out (zero without biases), e = 0 for a layer without
biases whose scale is exact (d_k a perfect square) and e = 1 otherwise:

    n_s     = 2d + d_k + 2 + 2r + 6e,  n_v = d + N + H d_v + d_out + r + 2e
    S_i     = scale sum_c (|Wq_h| |x_N| + |b_q,h|)_c (|Wk_h| |x_i| + |b_k,h|)_c   (magnitude of score i)
    D_h     = 2 g(n_s) max_i S_i + u (spread_h + 2 g(n_s) max_i S_i)     (error of s_i - max s)
    rho_h   = exp(2 D_h)(1 + 8u)^2 (1 + u) / (1 - g(N-1)) - 1            (relative error of each alpha_i; exp within 4 ulps)
    delta   = (1 + u) / (1 - g(N-1)) - 1                                  (error of sum_i alpha_i)
    A_i     = |u|^T |Wo_h| (|Wv_h| |x_i| + |b_v,h|),  c_i = u^T Wo_h (Wv_h x_i + b_v,h)   (exact)
    B_h     = min(rho_h sum_i alpha_i |c_i|, (1 + delta)(max c - min c) + delta max |c|)
              + g(n_v) min((1 + rho_h) sum_i alpha_i A_i, (1 + delta) max_i A_i) + tiny sum_i A_i
    B       = 1.01 (sum_h B_h + g(d_out + 1) |u|^T |b_out|)

Relative terms on the softmax inputs: rho_h is finite and positive for any
score, and when it is large the min takes the spread form (any convex
combination of the c_i lies within their spread), so B never goes negative.
(tiny = 2^-1070 for float64, 2^-120 for float32: exp results that underflow).
q, k and v are products of d terms, each score a dot of d_k terms, the value
path (v_i, the alpha-weighted sum, the output projection over the H d_v
concatenated entries, the readout over d_out) a chain of at most
d + N + H d_v + d_out roundings; any summation order or FMA stays within
these g(n). e counts one more term in each of q, k, v and the output, and
the scale 1/sqrt(d_k) rounded to the dtype (sqrt and the conversion within u
each, the product or quotient within u): mhaq keeps the scale exact (an
irrational one as the algebraic factor sqrt(m)), and the golden answers are
those of the exact scale. A query passes when
|computed - answer| <= B + |answer| 10^(1-digits)/2.

Variants (the test suite shows that they fail): `no-scale` leaves out
1/sqrt(d_k); `transposed` uses every projection transposed (W^T x instead of
W x); `no-bias` leaves out every bias (a kernel that drops them).
Exit status: 0 every query passes, 10 some query does not, 3 input error, 2 usage.
"""
import argparse
import json
import math
import os
import struct
import sys
from fractions import Fraction

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_attention import InputError, finish_file, rational  # noqa: E402

TORCH = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def read_safetensors(path, names):
    """{name: tensor} for the named tensors (F64, F32, F16, BF16; the layout: 8-byte length, JSON header, little-endian data)."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name in names:
        if name not in header:
            raise InputError(f"{path}: no tensor {name!r} (named in the map)")
        e = header[name]
        if e["dtype"] not in TORCH:
            raise InputError(f"{path}: tensor {name}: dtype {e['dtype']}; this checker runs F64, F32, F16 and BF16 layers")
        b, en = e["data_offsets"]
        raw = bytearray(data[8 + n + b:8 + n + en])
        out[name] = torch.frombuffer(raw, dtype=TORCH[e["dtype"]]).reshape(e["shape"]).clone() if raw else torch.zeros(e["shape"], dtype=TORCH[e["dtype"]])
    return out


BIASES = ("in_proj_bias", "q_bias", "k_bias", "v_bias", "out_bias")


def load_layer(layer_dir, dtype=None):
    """(module, u, H): torch's layer (float64 for F64 weights, float32 for F32, F16 and BF16, or `dtype`), the readout, the heads.
    Biases named in the map make it a bias=True layer."""
    with open(os.path.join(layer_dir, "map.json")) as f:
        m = json.load(f)
    if any(k in m for k in ("kv_heads", "rope", "ffn")):
        raise InputError("this checker runs layers of f(X) = u . attention(X); for grouped heads or rotary embeddings "
                         "use mhaq golden kernel and examples/python/check_kernel.py")
    names = [m[k] for k in ("in_proj", "q", "k", "v", "out") + BIASES if k in m]
    inline = isinstance(m["readout"], list)
    t = read_safetensors(os.path.join(layer_dir, "attention.safetensors"), names + ([] if inline else [m["readout"]]))
    out_in = m["layout"] == "out_in"
    lin = lambda w: w if out_in else w.T  # noqa: E731  (every matrix as out x in)
    if "in_proj" in m:
        W = lin(t[m["in_proj"]])
        d3 = W.shape[0] // 3
        blocks = dict(zip(m.get("in_proj_split", ["q", "k", "v"]), (W[:d3], W[d3:2 * d3], W[2 * d3:])))
        Wq, Wk, Wv = blocks["q"], blocks["k"], blocks["v"]
    else:
        Wq, Wk, Wv = lin(t[m["q"]]), lin(t[m["k"]]), lin(t[m["v"]])
    b = {k: t[m[k]].reshape(-1) for k in BIASES if k in m}
    if "in_proj_bias" in b:
        d3 = b["in_proj_bias"].shape[0] // 3
        parts = (b["in_proj_bias"][:d3], b["in_proj_bias"][d3:2 * d3], b["in_proj_bias"][2 * d3:])
        b.update({n + "_bias": x for n, x in zip(m.get("in_proj_split", ["q", "k", "v"]), parts)})
    Wo = lin(t[m["out"]])
    H = int(m["heads"])
    d = Wq.shape[1]
    if not (Wq.shape == Wk.shape == Wv.shape == (d, d) and Wo.shape == (d, d)):
        raise InputError(f"torch.nn.MultiheadAttention needs q, k, v and out of {d} x {d}; this layer has {tuple(Wq.shape)}, {tuple(Wk.shape)}, "
                         f"{tuple(Wv.shape)}, {tuple(Wo.shape)}")
    work = dtype or (torch.float64 if Wq.dtype == torch.float64 else torch.float32)
    if work == torch.float32 and Wq.dtype == torch.float64:
        raise InputError(f"{layer_dir}: float64 weights do not narrow to float32 exactly")
    u = torch.tensor([float(Fraction(x)) for x in m["readout"]], dtype=torch.float64) if inline else t[m["readout"]]
    bias = bool(b)
    mha = torch.nn.MultiheadAttention(d, H, bias=bias, dtype=work)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([Wq, Wk, Wv]).to(work))
        mha.out_proj.weight.copy_(Wo.to(work))
        if bias:
            z = torch.zeros(d, dtype=work)
            mha.in_proj_bias.copy_(torch.cat([b[n + "_bias"].to(work) if n + "_bias" in b else z for n in ("q", "k", "v")]))
            mha.out_proj.bias.copy_(b["out_bias"].to(work) if "out_bias" in b else z)
    mha.eval()
    return mha, u.to(work), H


def biases(mha, d):
    """(b_q, b_k, b_v, b_out) of the layer, zeros without biases."""
    if mha.in_proj_bias is None:
        z = torch.zeros(d, dtype=mha.in_proj_weight.dtype)
        return z, z, z, z
    b = mha.in_proj_bias
    return b[:d], b[d:2 * d], b[2 * d:], mha.out_proj.bias


# ---------------------------------------------------------------- the implementations under test
# X: (N, d) tensor in the layer's dtype, X[-1] the query token; returns f as a Python float.
def torch_layer(X, mha, u, H):
    with torch.no_grad():
        out, _ = mha(X[-1:].unsqueeze(1), X.unsqueeze(1), X.unsqueeze(1), need_weights=False)
        return float(out[0, 0] @ u)


def by_hand(X, mha, u, H, scaled=True, transposed=False, biased=True):
    with torch.no_grad():
        d = X.shape[1]
        Wq, Wk, Wv = mha.in_proj_weight[:d], mha.in_proj_weight[d:2 * d], mha.in_proj_weight[2 * d:]
        Wo = mha.out_proj.weight
        bq, bk, bv, bo = biases(mha, d)
        if not biased:
            bq, bk, bv, bo = (torch.zeros_like(b) for b in (bq, bk, bv, bo))
        if transposed:
            Wq, Wk, Wv, Wo = Wq.T, Wk.T, Wv.T, Wo.T
        dk = d // H
        q, k, v = Wq @ X[-1] + bq, X @ Wk.T + bk, X @ Wv.T + bv
        ys = []
        for h in range(H):
            sl = slice(h * dk, (h + 1) * dk)
            s = k[:, sl] @ q[sl]
            if scaled:
                s = s / math.sqrt(dk)
            ys.append(torch.softmax(s, dim=0) @ v[:, sl])
        return float((Wo @ torch.cat(ys) + bo) @ u)


VARIANTS = {
    "torch": torch_layer,
    "no-scale": lambda X, mha, u, H: by_hand(X, mha, u, H, scaled=False),
    "transposed": lambda X, mha, u, H: by_hand(X, mha, u, H, transposed=True),
    "no-bias": lambda X, mha, u, H: by_hand(X, mha, u, H, biased=False),
}


# ---------------------------------------------------------------- the bound
def gamma(n, U):
    return n * U / (1 - n * U)


def a_priori_bound(X, mha, u, H, U, tiny, r=0):
    """B of the module docstring, from the exact weights (Fractions) and the exact query X; r = 1 when the tokens were rounded."""
    d = len(X[0])
    dk = d // H
    ex = lambda t: [[Fraction(float(x)) for x in row] for row in t.tolist()]  # noqa: E731
    exv = lambda t: [Fraction(float(x)) for x in t.tolist()]  # noqa: E731
    W = ex(mha.in_proj_weight)
    Wq, Wk, Wv = W[:d], W[d:2 * d], W[2 * d:]
    Wo = ex(mha.out_proj.weight)
    bq, bk, bv, bo = (exv(b) for b in biases(mha, d))
    uu = [Fraction(float(x)) for x in u.tolist()]
    exact_scale = math.isqrt(dk) ** 2 == dk
    scale = 1 / Fraction(math.isqrt(dk)) if exact_scale else Fraction(1 / math.sqrt(dk))  # for magnitudes only
    extra = 0 if exact_scale and mha.in_proj_bias is None else 1
    N, dout = len(X), len(uu)
    g = gamma(2 * d + dk + 2 + 2 * r + 6 * extra, U)
    delta = (1 + U) / (1 - gamma(N - 1, U)) - 1
    total = 0.0
    for h in range(H):
        rows = range(h * dk, (h + 1) * dk)
        q = [sum(Wq[r_][j] * X[-1][j] for j in range(d)) + bq[r_] for r_ in rows]
        k = [[sum(Wk[r_][j] * x[j] for j in range(d)) + bk[r_] for r_ in rows] for x in X]
        s = [scale * sum(q[c] * k[i][c] for c in range(dk)) for i in range(N)]
        qa = [sum(abs(float(Wq[r_][j])) * abs(float(X[-1][j])) for j in range(d)) + abs(float(bq[r_])) for r_ in rows]
        S = [float(scale) * sum(qa[c] * (sum(abs(float(Wk[r_][j])) * abs(float(x[j])) for j in range(d)) + abs(float(bk[r_])))
                                for c, r_ in enumerate(rows)) for x in X]
        smax = max(s)
        e = [math.exp(float(si - smax)) for si in s]
        alpha = [x / sum(e) for x in e]
        D = 2 * g * max(S) + U * (float(smax - min(s)) + 2 * g * max(S))
        rho = math.exp(min(2 * D, 700.0)) * (1 + 8 * U) ** 2 * (1 + U) / (1 - gamma(N - 1, U)) - 1
        # c_i = u^T Wo_h (Wv_h x_i + b_v,h) exactly, A_i with absolute values
        ow = [sum(uu[o] * Wo[o][h * dk + c] for o in range(dout)) for c in range(dk)]          # (Wo_h^T u)_c
        owa = [sum(abs(float(uu[o])) * abs(float(Wo[o][h * dk + c])) for o in range(dout)) for c in range(dk)]
        c_ = [float(sum(ow[c] * (sum(Wv[h * dk + c][j] * x[j] for j in range(d)) + bv[h * dk + c]) for c in range(dk))) for x in X]
        A = [sum(owa[c] * (sum(abs(float(Wv[h * dk + c][j])) * abs(float(x[j])) for j in range(d)) + abs(float(bv[h * dk + c])))
                 for c in range(dk)) for x in X]
        soft = min(rho * sum(a * abs(ci) for a, ci in zip(alpha, c_)), (1 + delta) * (max(c_) - min(c_)) + delta * max(abs(ci) for ci in c_))
        path = min((1 + rho) * sum(a * Ai for a, Ai in zip(alpha, A)), (1 + delta) * max(A))
        total += soft + gamma(d + N + H * dk + dout + r + 2 * extra, U) * path + tiny * sum(A)
    total += gamma(dout + 1, U) * sum(abs(float(a)) * abs(float(b)) for a, b in zip(uu, bo))
    return 1.01 * total


def load_golden(path):
    with open(path, encoding="utf-8") as fh:
        g = json.load(fh)
    if g.get("format") != "mhaq-golden" or g.get("arith") != "certified":
        raise InputError(f"{path}: not a certified mhaq golden file (mhaq golden export --certified)")
    digits = int(g["digits"])
    answers = {int(a["index"]): a["decimal"] for a in g["answers"]}
    queries = []
    for q in g["queries"]:
        i = int(q["index"])
        X = []
        for r, run in enumerate(q["runs"]):
            X.extend([[rational(x, f"queries[{i}].runs[{r}].token") for x in run["token"]]] * int(run["count"]))
        queries.append((i, X, rational(answers[i], f"answers[{i}].decimal")))
    return digits, queries


def main(argv=None):
    p = argparse.ArgumentParser(prog="check_torch_attention", description=__doc__.splitlines()[0])
    p.add_argument("golden")
    p.add_argument("--layer", required=True, help="directory with attention.safetensors and map.json")
    p.add_argument("--variant", choices=sorted(VARIANTS), default="torch")
    p.add_argument("--dtype", choices=["float64", "float32"], default=None, help="run the layer in this dtype (default: its own)")
    p.add_argument("--max-ulps", type=float, default=None, help="fixed tolerance in ulps instead of the a-priori bound")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    try:
        mha, u, H = load_layer(a.layer, {"float64": torch.float64, "float32": torch.float32}.get(a.dtype))
        digits, queries = load_golden(a.golden)
    except (InputError, OSError, KeyError, ValueError) as e:
        print(f"check_torch_attention: input error: {e}", file=sys.stderr)
        return 3
    dtype = mha.in_proj_weight.dtype
    U, tiny = (2.0 ** -53, 2.0 ** -1070) if dtype == torch.float64 else (2.0 ** -24, 2.0 ** -120)
    impl = VARIANTS[a.variant]
    rows = []
    rounded = 0
    for i, X, ans in queries:
        Xt = torch.tensor([[float(x) for x in row] for row in X], dtype=torch.float64).to(dtype)  # nearest float64, then the dtype
        changed = sum(Fraction(v) != x for row, trow in zip(Xt.tolist(), X) for v, x in zip(row, trow))
        rounded += changed
        y = impl(Xt, mha, u, H)
        ref = float(ans)
        ulp = math.ulp(ref) if dtype == torch.float64 else math.ulp(ref) * 2.0 ** 29  # float32 ulp of ref (normal range)
        err = abs(Fraction(y) - ans) if math.isfinite(y) else None
        dec_err = abs(ans) / 2 / 10 ** (digits - 1)
        if a.max_ulps is not None:
            limit, bound_ulps = Fraction(a.max_ulps * ulp), a.max_ulps
        else:
            B = a_priori_bound(X, mha, u, H, U, tiny, 1 if changed else 0)
            limit, bound_ulps = Fraction(B), B / ulp
        ok = err is not None and err <= limit + dec_err
        rows.append({"index": i, "length": len(X), "answer": ref, "computed": y, "error_ulps": float(err / Fraction(ulp)) if err is not None else math.inf,
                     "bound_ulps": bound_ulps, "correctly_rounded": y == (float(torch.tensor(ref, dtype=dtype))), "ok": ok})
    out = [] if a.json else None
    header = f"{a.golden}: torch {str(dtype).replace('torch.', '')} layer from {a.layer}, {H} heads, {len(rows)} queries (variant {a.variant})"
    if rounded:
        header += (f"; {rounded} token entries are not {str(dtype).replace('torch.', '')} values and were rounded to it "
                   "(the answers are for the exact tokens; the bound counts the rounding)")
    ok = finish_file(a.golden, rows, digits, header, a.max_ulps, a.quiet, out)
    if out is not None:
        print(json.dumps({"variant": a.variant, "dtype": str(dtype), "ok": ok, "files": out}, default=lambda x: None))
    else:
        print(f"variant {a.variant}: " + ("PASS" if ok else "FAIL"))
    return 0 if ok else 10


if __name__ == "__main__":
    sys.exit(main())
