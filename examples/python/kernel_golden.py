#!/usr/bin/env python3
"""Read a kernel golden file (`mhaq golden kernel`) into NumPy arrays, and
assert that a kernel's outputs agree with it. Standard library and NumPy only.

    import kernel_golden as kg
    g = kg.load("golden.json")
    s = g.sequences[0]
    s.tokens            # (N, d) float64 (exact: g.tokens_exact_in(np.float32) says whether your dtype holds them)
    s.rows              # (R,) the query positions, s.defined (R,) False where no key may be attended
    s.output            # (R, d_out) float64, each entry the value correctly rounded (NaN where not defined)
    s.output_lo, s.output_hi   # float64 bounds of each entry's certified ball (rounded outwards)
    s.head_outputs      # (R, H, d_v) and s.attention_weights (R, H, N), when the file has them
    kg.assert_close(my_output, s.output, dtype=np.float32, max_ulps=4, label="sequence 0")

The file's layer: g.layer.q (H d_k x d), .k, .v (G d_k x d, G d_v x d), .out
(d_out x H d_v), biases .q_bias ... (None when absent), as float64 arrays (exact:
every weight the file holds came from F64, F32, F16 or BF16 values), and
.scale (a float), .rope_theta, .pairing.

Entries are [decimal, mid, rad]: the value lies in [mid - rad, mid + rad]
(exact rationals, q a power of two), and every point of that ball rounds to
the decimal and to one double, so float(mid) is the correctly rounded
float64 of the value (docs/formats.md, "Kernel golden files"). rad "0": the
value is the rational mid exactly.
"""
import json
import math
import sys
from fractions import Fraction

import numpy as np


class GoldenError(Exception):
    """The file is not a kernel golden file mhaq wrote."""


def _ratio(text):
    p, _, q = text.partition("/")
    return int(p), int(q) if q else 1


def _float(text):
    """The correctly rounded float64 of an exact rational "p/q" (Python's int division rounds correctly)."""
    p, q = _ratio(text)
    return p / q


def _down(x):
    """The largest float64 <= the Fraction x."""
    f = float(x)
    return f if Fraction(f) <= x else math.nextafter(f, -math.inf)


def _up(x):
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def _entries(rows, shape, bounds):
    """(values, lo, hi) arrays of the given shape per row; rows that are null become NaN."""
    R = len(rows)
    val = np.full((R,) + shape, np.nan)
    lo = np.full((R,) + shape, np.nan) if bounds else None
    hi = np.full((R,) + shape, np.nan) if bounds else None
    for r, row in enumerate(rows):
        if row is None:
            continue
        flat = row if len(shape) == 1 else [e for block in row for e in block]
        v = val[r].reshape(-1)
        for k, (_, mid, rad) in enumerate(flat):
            v[k] = _float(mid)
            if bounds:
                m, w = Fraction(*_ratio(mid)), Fraction(*_ratio(rad))
                lo[r].reshape(-1)[k] = _down(m - w)
                hi[r].reshape(-1)[k] = _up(m + w)
    return val, lo, hi


class Layer:
    def __init__(self, j):
        self.d, self.heads, self.kv_heads = j["d"], j["heads"], j["kv_heads"]
        self.d_k, self.d_v, self.d_out = j["d_k"], j["d_v"], j["d_out"]
        mat = lambda m: np.array([[_float(x) for x in row] for row in m], dtype=np.float64)  # noqa: E731
        vec = lambda b: None if b is None else np.array([_float(x) for x in b], dtype=np.float64)  # noqa: E731
        self.q, self.k, self.v, self.out = mat(j["q"]), mat(j["k"]), mat(j["v"]), mat(j["out"])
        self.q_bias, self.k_bias, self.v_bias, self.out_bias = vec(j["q_bias"]), vec(j["k_bias"]), vec(j["v_bias"]), vec(j["out_bias"])
        sc = j["scale"]
        self.scale_text = sc["text"]
        self.scale_exact = (Fraction(sc["q"]), Fraction(sc["sqrt"]))  # scale = q sqrt(m)
        self.scale = float(self.scale_exact[0]) * math.sqrt(float(self.scale_exact[1]))
        rope = j["rope"]
        self.rope_theta = None if rope is None else float(Fraction(rope["theta"]))
        self.pairing = None if rope is None else rope["pairing"]
        self.weights_dtype = j["weights_dtype"]


class Sequence:
    def __init__(self, j, options, bounds):
        self.index = j["index"]
        self.tokens_exact = [[Fraction(x) for x in t] for t in j["tokens"]]
        self.tokens = np.array([[_float(x) for x in t] for t in j["tokens"]], dtype=np.float64)
        N = len(self.tokens)
        self.key_padding_mask = np.array(j["key_padding_mask"], dtype=bool) if "key_padding_mask" in j else None
        self.attn_mask = None
        if "attn_mask" in j:
            self.attn_mask = np.array([[-math.inf if x == "-inf" else float(Fraction(x)) for x in row] for row in j["attn_mask"]])
        self.position_ids = np.array(j["position_ids"], dtype=np.int64) if "position_ids" in j else np.arange(N)
        self.rows = np.array(j["query_positions"], dtype=np.int64)
        self.bits = j["bits"]
        self.defined = np.array([row is not None for row in j["output"]], dtype=bool)
        d_out = len(next((row for row in j["output"] if row is not None), []))
        self.output, self.output_lo, self.output_hi = _entries(j["output"], (d_out,), bounds)
        self.head_outputs = self.attention_weights = None
        if options["head_outputs"]:
            first = next((row for row in j["head_outputs"] if row is not None), [[]])
            self.head_outputs, self.head_outputs_lo, self.head_outputs_hi = _entries(j["head_outputs"], (len(first), len(first[0])), bounds)
        if options["attention_weights"]:
            first = next((row for row in j["attention_weights"] if row is not None), [[]])
            self.attention_weights, self.attention_weights_lo, self.attention_weights_hi = _entries(j["attention_weights"], (len(first), N), bounds)

    def allowed(self, causal):
        """(R, N) bool: key i may be attended at each query row (the file's masks and the causal option)."""
        N = len(self.tokens)
        a = np.ones((len(self.rows), N), dtype=bool)
        if causal:
            a &= np.arange(N)[None, :] <= self.rows[:, None]
        if self.key_padding_mask is not None:
            a &= ~self.key_padding_mask[None, :]
        if self.attn_mask is not None:
            a &= np.isfinite(self.attn_mask[self.rows])
        return a


class Golden:
    def __init__(self, j, bounds=True):
        if j.get("format") != "mhaq-golden-kernel" or j.get("version") != 1:
            raise GoldenError("not a kernel golden file (format mhaq-golden-kernel, version 1)")
        self.digits = j["digits"]
        self.options = j["options"]
        self.causal = self.options["causal"]
        self.layer = Layer(j["layer"])
        self.sequences = [Sequence(s, self.options, bounds) for s in j["sequences"]]
        self.summary = j["summary"]

    def tokens_exact_in(self, dtype):
        """How many token entries the dtype (np.float32, np.float16, np.float64) cannot hold exactly.

        The golden values are for the file's exact tokens: a kernel that reads
        rounded tokens computes something else (export with --round-tokens)."""
        bad = 0
        for s in self.sequences:
            for row in s.tokens_exact:
                for x in row:
                    bad += Fraction(float(np.array(float(x), dtype=dtype))) != x
        return bad


def load(path, bounds=True):
    """The file as NumPy arrays; bounds=False skips the balls' float64 bounds (faster)."""
    with open(path, encoding="utf-8") as f:
        return Golden(json.load(f), bounds)


def ulp(x, dtype):
    """The spacing of dtype at |x| (the gap above the dtype value nearest x), as float64."""
    return np.spacing(np.abs(np.asarray(x, dtype=np.float64)).astype(dtype)).astype(np.float64)


def assert_close(actual, expected, *, dtype, max_ulps=None, bound=None, lo=None, hi=None, label="", names=("row", "column")):
    """Fails with the worst entry's position and its error in ulps of dtype.

    actual: the kernel's result (any shape); expected: the golden values
    (same shape; NaN entries, rows with no key, are skipped). The error of an
    entry is |actual - expected|, or with the balls' bounds lo and hi the
    certified upper bound max(|actual - lo|, |actual - hi|). It must be at
    most `bound` (absolute, broadcastable) or `max_ulps` ulps of dtype at the
    expected value. Returns (worst error in ulps, its index) when it passes.
    """
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    if a.shape != e.shape:
        raise AssertionError(f"{label}: the kernel gave shape {a.shape}, the golden file has {e.shape}")
    live = ~np.isnan(e)
    if np.any(np.isnan(a) & live):
        idx = tuple(int(i) for i in np.argwhere(np.isnan(a) & live)[0])
        raise AssertionError(f"{label}: the kernel gave NaN at {_where(idx, names)}, where the golden value is {e[idx]!r}")
    err = np.abs(a - e) if lo is None else np.maximum(np.abs(a - lo), np.abs(a - hi))
    err = np.where(live, err, 0.0)
    u = ulp(np.where(live, e, 1.0), dtype)
    ulps = err / u
    if bound is None and max_ulps is None:
        raise ValueError("give max_ulps or bound")
    limit = np.broadcast_to(bound if bound is not None else max_ulps * u, e.shape)
    over = live & (err > limit)
    worst = np.unravel_index(int(np.argmax(np.where(live, ulps, -1.0))), e.shape)
    if np.any(over):
        bad = np.unravel_index(int(np.argmax(np.where(over, ulps, -1.0))), e.shape)
        raise AssertionError(
            f"{label}: {int(over.sum())} of {int(live.sum())} entries outside the bound; worst at {_where(bad, names)}: "
            f"kernel {a[bad]!r}, golden {e[bad]!r}, error {ulps[bad]:.3g} ulps of {np.dtype(dtype).name} "
            f"(bound {limit[bad] / u[bad]:.3g} ulps)")
    return float(ulps[worst]), tuple(int(i) for i in worst)


def attention_bound(layer, seq, causal, u, *, tiny=0.0, exp_ulps=4, rounded_inputs=False):
    """(R, d_out, and R x H x d_v, R x H x N) a-priori bounds on |computed - exact| for the outputs,
    head outputs and attention weights of a kernel that computes the layer in
    a binary floating-point type of unit roundoff u (2^-53 float64, 2^-24
    float32: F16 and BF16 layers computed in float32 included), in any
    summation order, with or without FMA, with a two-pass softmax (max,
    exp(s - max), sum, divide) whose exp is within `exp_ulps` ulps.

    With g(n) = n u / (1 - n u), magnitudes |W| |x| + |b| written m(.):
      projections   |dq| <= g(d + 1 + r) m(q)   (r = 1 when weights or tokens are rounded to the dtype first)
      rotary        q'_a = q_a cos - q_b sin: m(q'_a) = m(q_a) + m(q_b), |dq'_a| <= |dq_a| + |dq_b| + m(q'_a) (8 u pos/theta^(2j/d_k) + 4 u)
      scores        s_i = scale q' . k'_i + M_i:  S_i = |scale| m(q') . m(k'_i) + |M_i|,
                    E_i = |scale| (|dq'| . m(k') + m(q') . |dk'| + |dq'| . |dk'|) + g(d_k + 4) S_i
      softmax       each exp term is perturbed by a factor e^eta_i, eta_i <= E_i + u (|s_i - max s| + 2 max E) + exp_ulps u,
                    relative terms on the softmax inputs: they stay finite for any score, so the bound stays positive;
                    rho = e^(2 max eta) (1 + u) / (1 - g(N)) - 1 bounds every |alpha'_i / alpha_i - 1|, and
                    delta = (1 + u) / (1 - g(N)) - 1 bounds |sum alpha' - 1|
      head output   |dy| <= min(rho sum alpha |v|, (1 + delta) spread(v) + delta max|v|)
                             + min((1 + rho) sum alpha |dv|, (1 + delta) max |dv|) + g(N) min((1 + rho) sum alpha m'(v), (1 + delta) max m'(v))
                             + tiny N max m(v)     (exp results below the normal range)
      output        |dout| <= |Wo| |dy| + g(H d_v + 1 + r) (|Wo| m(y) + |bo|)
      weights       |dalpha_i| <= min(rho alpha_i, 1 + delta) + tiny
    For a large score spread the relative form rho grows and the min takes the
    spread form, which bounds any convex combination: the bound never goes
    negative or infinite. Exact values are taken in float64 from the file's
    exact weights and tokens; the result is widened by 1% for that.
    """
    L = layer
    g = lambda n: n * u / (1 - n * u)  # noqa: E731
    r = 1 if rounded_inputs else 0
    X = seq.tokens
    N, d = X.shape
    H, G, dk, dv = L.heads, L.kv_heads, L.d_k, L.d_v

    def proj(W, b):
        val = X @ W.T + (0 if b is None else b)
        mag = np.abs(X) @ np.abs(W).T + (0 if b is None else np.abs(b))
        return val, mag, g(d + 1 + r) * mag

    q, qm, qe = proj(L.q, L.q_bias)
    k, km, ke = proj(L.k, L.k_bias)
    v, vm, ve = proj(L.v, L.v_bias)
    q, qm, qe = (a.reshape(N, H, dk) for a in (q, qm, qe))
    k, km, ke = (a.reshape(N, G, dk) for a in (k, km, ke))
    v, vm, ve = (a.reshape(N, G, dv) for a in (v, vm, ve))
    if L.rope_theta is not None:
        half = dk // 2
        j = np.arange(half)
        inv = L.rope_theta ** (-2.0 * j / dk)
        ang = seq.position_ids[:, None].astype(np.float64) * inv[None, :]
        cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
        dth = 8 * u * np.abs(ang)[:, None, :] + 4 * u
        ia, ib = (2 * j, 2 * j + 1) if L.pairing == "interleaved" else (j, j + half)

        def rot(val, mag, err):
            a, b = val[..., ia], val[..., ib]
            out = val.copy()
            out[..., ia], out[..., ib] = a * cos - b * sin, b * cos + a * sin
            m = mag[..., ia] + mag[..., ib]
            e = err[..., ia] + err[..., ib] + m * dth
            mo, eo = mag.copy(), err.copy()
            mo[..., ia], mo[..., ib], eo[..., ia], eo[..., ib] = m, m, e, e
            return out, mo, eo

        q, qm, qe = rot(q, qm, qe)
        k, km, ke = rot(k, km, ke)
    grp = np.arange(H) // (H // G)
    k, km, ke, v, vm, ve = (a[:, grp, :] for a in (k, km, ke, v, vm, ve))  # (N, H, .)
    rows = seq.rows
    allowed = seq.allowed(causal)  # (R, N)
    mask = np.zeros((len(rows), N)) if seq.attn_mask is None else np.where(allowed, seq.attn_mask[rows], 0.0)
    sc = abs(L.scale)
    s = L.scale * np.einsum("rhc,nhc->rhn", q[rows], k) + mask[:, None, :]
    S = sc * np.einsum("rhc,nhc->rhn", qm[rows], km) + np.abs(mask)[:, None, :]
    E = sc * (np.einsum("rhc,nhc->rhn", qe[rows], km) + np.einsum("rhc,nhc->rhn", qm[rows], ke) + np.einsum("rhc,nhc->rhn", qe[rows], ke)) + g(dk + 4) * S
    al = allowed[:, None, :]
    smax = np.max(np.where(al, s, -np.inf), axis=2, keepdims=True)
    smax = np.where(np.isfinite(smax), smax, 0.0)
    w = np.where(al, np.exp(np.minimum(s - smax, 0.0)), 0.0)
    alpha = w / np.maximum(w.sum(axis=2, keepdims=True), 1e-300)
    Emax = np.max(np.where(al, E, 0.0), axis=2, keepdims=True)
    eta = np.where(al, E + u * (np.abs(s - smax) + 2 * Emax) + exp_ulps * u, 0.0)
    rho = np.exp(2 * np.max(eta, axis=2)) * (1 + u) / (1 - g(N)) - 1  # (R, H)
    delta = (1 + u) / (1 - g(N)) - 1

    def mix(x):  # (R, H, c): min((1 + rho) sum alpha x, (1 + delta) max over allowed x), x >= 0 of shape (N, H, c)
        rel = (1 + rho)[..., None] * np.einsum("rhn,nhc->rhc", alpha, x)
        top = np.max(np.where(allowed[:, :, None, None], x[None], 0.0), axis=1)
        return np.minimum(rel, (1 + delta) * top)

    al4 = allowed[:, :, None, None]
    vmax = np.max(np.where(al4, v[None], -np.inf), axis=1)
    vmin = np.min(np.where(al4, v[None], np.inf), axis=1)
    spread = np.where(np.isfinite(vmax - vmin), vmax - vmin, 0.0)
    vabs = np.max(np.where(al4, np.abs(v)[None], 0.0), axis=1)
    soft = np.minimum(rho[..., None] * np.einsum("rhn,nhc->rhc", alpha, np.abs(v)), (1 + delta) * spread + delta * vabs)
    dy = soft + mix(ve) + g(N) * mix(vm + ve) + tiny * N * np.max(vm)
    ym = mix(vm) + dy
    R = len(rows)
    Wo = np.abs(L.out)
    bo = 0 if L.out_bias is None else np.abs(L.out_bias)
    dout = dy.reshape(R, H * dv) @ Wo.T + g(H * dv + 1 + r) * (ym.reshape(R, H * dv) @ Wo.T + bo)
    dalpha = np.minimum(rho[..., None] * alpha, 1 + delta) + tiny
    return 1.01 * dout, 1.01 * dy, 1.01 * dalpha


def _where(idx, names):
    return ", ".join(f"{names[k] if k < len(names) else 'index'} {i}" for k, i in enumerate(idx))


def main(argv=None):
    """python3 kernel_golden.py FILE: prints the file's shape and its summary."""
    argv = sys.argv[1:] if argv is None else argv
    g = load(argv[0], bounds=False)
    L = g.layer
    print(f"layer d={L.d}, H={L.heads}, kv_heads={L.kv_heads}, d_k={L.d_k}, d_v={L.d_v}, d_out={L.d_out}, scale {L.scale_text}, "
          f"rope {L.pairing or 'none'}, weights {L.weights_dtype}")
    print(f"{len(g.sequences)} sequences, {g.summary['entries']} entries at {g.digits} digits; causal {g.causal}")


if __name__ == "__main__":
    main()
