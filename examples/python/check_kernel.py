#!/usr/bin/env python3
"""Check an attention kernel against a kernel golden file (`mhaq golden kernel`).

    python3 examples/python/check_kernel.py GOLDEN.json --kernel torch|numpy [--dtype float64|float32]
            [--variant none|no-scale|mask-off-by-one|bias-dropped|transposed|rope-pairing] [--quiet] [--json]

Kernels (replace one with yours):
  torch  torch.nn.MultiheadAttention(d, H, bias=True) built from the file's
         layer and run through its own forward, with need_weights=True
         (per-head weights) and an attn_mask (the causal mask and the file's
         additive mask as a float mask) and the key_padding_mask. It needs
         kv_heads = H, no rotary embeddings and d_out = d = H d_k.
  numpy  a hand-written kernel in NumPy in the chosen dtype: grouped heads,
         rotary embeddings, masks, a two-pass softmax.
--dtype is the arithmetic: float64, or float32 (F16 and BF16 layers are
computed in float32, as CPU torch computes them).

Every output entry at every query position, and the attention weights torch
returns, must lie within the a-priori bound of kernel_golden.attention_bound
(relative terms on the softmax inputs; positive and finite for any score).
Tokens or weights the dtype cannot hold are rounded to it first, and the bound
then counts one more rounding; the script says so.

The variants are deliberately wrong kernels that must fail: no-scale leaves
out the scale, mask-off-by-one lets row n see key n + 1, bias-dropped leaves
out every bias, transposed applies every projection transposed, and
rope-pairing rotates the other pairs of entries (numpy only).
Exit status: 0 every entry within its bound, 10 some entry outside, 3 input
error, 2 usage.
"""
import argparse
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_golden as kg  # noqa: E402

UNIT = {"float64": 2.0 ** -53, "float32": 2.0 ** -24}
TINY = {"float64": 2.0 ** -1021, "float32": 2.0 ** -125}
WIDTH = {"F64": 64, "F32": 32, "F16": 16, "BF16": 16, "mixed": 64}


def weights(layer, variant):
    """(Wq, Wk, Wv, Wo, bq, bk, bv, bo) as the variant uses them (float64, exact)."""
    W = [layer.q, layer.k, layer.v, layer.out]
    b = [layer.q_bias, layer.k_bias, layer.v_bias, layer.out_bias]
    if variant == "transposed":
        if any(w.shape[0] != w.shape[1] for w in W):
            raise kg.GoldenError("--variant transposed needs square projections (d = H d_k = d_out)")
        W = [w.T for w in W]
    if variant == "bias-dropped":
        b = [None] * 4
    return W + b


def numpy_kernel(layer, seq, causal, dtype, variant):
    """(output (R, d_out), weights (R, H, N)) of the hand-written kernel, every operation in dtype."""
    f = lambda a: None if a is None else np.asarray(a, dtype=dtype)  # noqa: E731
    Wq, Wk, Wv, Wo, bq, bk, bv, bo = (f(a) for a in weights(layer, variant))
    X = f(seq.tokens)
    N = X.shape[0]
    H, G, dk, dv = layer.heads, layer.kv_heads, layer.d_k, layer.d_v
    lin = lambda W, b: X @ W.T if b is None else X @ W.T + b  # noqa: E731
    q, k, v = lin(Wq, bq).reshape(N, H, dk), lin(Wk, bk).reshape(N, G, dk), lin(Wv, bv).reshape(N, G, dv)
    if layer.rope_theta is not None:
        half = dk // 2
        j = np.arange(half, dtype=dtype)
        inv = np.asarray(layer.rope_theta, dtype=dtype) ** (np.asarray(-2, dtype=dtype) * j / np.asarray(dk, dtype=dtype))
        ang = seq.position_ids.astype(dtype)[:, None] * inv[None, :]
        cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
        interleaved = (layer.pairing == "interleaved") != (variant == "rope-pairing")
        ia, ib = (2 * np.arange(half), 2 * np.arange(half) + 1) if interleaved else (np.arange(half), np.arange(half) + half)

        def rot(x):
            a, b = x[..., ia], x[..., ib]
            y = x.copy()
            y[..., ia], y[..., ib] = a * cos - b * sin, b * cos + a * sin
            return y

        q, k = rot(q), rot(k)
    grp = np.arange(H) // (H // G)
    k, v = k[:, grp, :], v[:, grp, :]
    rows = seq.rows
    allowed = seq.allowed(False)
    if causal:
        reach = 1 if variant == "mask-off-by-one" else 0
        allowed &= np.arange(N)[None, :] <= rows[:, None] + reach
    scale = np.asarray(1.0 if variant == "no-scale" else layer.scale, dtype=dtype)
    s = np.einsum("rhc,nhc->rhn", q[rows], k) * scale
    if seq.attn_mask is not None:
        s = s + np.where(allowed, seq.attn_mask[rows], 0).astype(dtype)[:, None, :]
    s = np.where(allowed[:, None, :], s, np.asarray(-np.inf, dtype=dtype))
    with np.errstate(invalid="ignore"):
        m = np.max(s, axis=2, keepdims=True)
        e = np.exp(s - m)
        alpha = e / np.sum(e, axis=2, keepdims=True)
    y = np.einsum("rhn,nhc->rhc", alpha, v).reshape(len(rows), H * dv)
    out = y @ Wo.T if bo is None else y @ Wo.T + bo
    return out.astype(np.float64), alpha.astype(np.float64)


def torch_kernel(layer, seq, causal, dtype, variant):
    """(output (R, d_out), weights (R, H, N)) of torch.nn.MultiheadAttention's own forward."""
    import torch
    H, d = layer.heads, layer.d
    if layer.kv_heads != H or layer.rope_theta is not None or layer.d_out != d or H * layer.d_k != d or layer.d_v != layer.d_k:
        raise kg.GoldenError("torch.nn.MultiheadAttention computes neither grouped heads nor rotary embeddings, and has d_out = d = H d_k: use --kernel numpy")
    if variant == "rope-pairing":
        raise kg.GoldenError("--variant rope-pairing goes with --kernel numpy (torch's layer has no rotary embeddings)")
    tdt = {"float64": torch.float64, "float32": torch.float32}[dtype]
    Wq, Wk, Wv, Wo, bq, bk, bv, bo = weights(layer, variant)
    if variant == "no-scale":  # torch divides q by sqrt(d_k): undo it in the weights, so no scale is left
        Wq, bq = Wq * math.sqrt(layer.d_k), None if bq is None else bq * math.sqrt(layer.d_k)
    mha = torch.nn.MultiheadAttention(d, H, bias=True, dtype=tdt)
    zero = np.zeros(d)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.tensor(np.concatenate([Wq, Wk, Wv]), dtype=tdt))
        mha.in_proj_bias.copy_(torch.tensor(np.concatenate([zero if b is None else b for b in (bq, bk, bv)]), dtype=tdt))
        mha.out_proj.weight.copy_(torch.tensor(Wo, dtype=tdt))
        mha.out_proj.bias.copy_(torch.tensor(zero if bo is None else bo, dtype=tdt))
    mha.eval()
    N = len(seq.tokens)
    add = np.zeros((N, N)) if seq.attn_mask is None else seq.attn_mask.copy()
    if causal:
        reach = 1 if variant == "mask-off-by-one" else 0
        add[np.arange(N)[None, :] > np.arange(N)[:, None] + reach] = -np.inf
    X = torch.tensor(seq.tokens, dtype=tdt).unsqueeze(1)  # (N, batch 1, d)
    pad = None if seq.key_padding_mask is None else torch.tensor(seq.key_padding_mask).unsqueeze(0)
    with torch.no_grad():
        out, w = mha(X, X, X, attn_mask=torch.tensor(add, dtype=tdt), key_padding_mask=pad, need_weights=True, average_attn_weights=False)
    rows = seq.rows
    return out[:, 0, :].double().numpy()[rows], w[0].double().numpy().transpose(1, 0, 2)[rows]


KERNELS = {"torch": torch_kernel, "numpy": numpy_kernel}


def check(g, kernel, dtype, variant):
    """(passed, report lines): every sequence's outputs (and weights) against their bounds."""
    u, tiny = UNIT[dtype], TINY[dtype]
    notes = []
    rounded_weights = WIDTH[g.layer.weights_dtype] > (64 if dtype == "float64" else 32)
    bad_tokens = g.tokens_exact_in(np.float64 if dtype == "float64" else np.float32)
    if bad_tokens:
        notes.append(f"{bad_tokens} token entries are not {dtype} values: the kernel reads them rounded, and the bound counts that rounding")
    if rounded_weights:
        notes.append(f"the {g.layer.weights_dtype} weights are rounded to {dtype}, and the bound counts that rounding")
    worst = (0.0, None, 0.0)
    for s in g.sequences:
        out, alpha = KERNELS[kernel](g.layer, s, g.causal, dtype, variant)
        b_out, _, b_alpha = kg.attention_bound(g.layer, s, g.causal, u, tiny=tiny, rounded_inputs=bool(bad_tokens) or rounded_weights)
        try:
            e, at = kg.assert_close(out, s.output, dtype=dtype, bound=b_out, lo=s.output_lo, hi=s.output_hi,
                                    label=f"sequence {s.index}: output", names=("row", "column"))
            if s.attention_weights is not None:
                kg.assert_close(alpha, s.attention_weights, dtype=dtype, bound=b_alpha, lo=s.attention_weights_lo, hi=s.attention_weights_hi,
                                label=f"sequence {s.index}: attention weights", names=("row", "head", "key"))
        except AssertionError as err:
            return False, notes + [str(err)]
        if e >= worst[0]:
            r, c = at
            worst = (e, (s.index, int(s.rows[r]), c), float(b_out[at] / kg.ulp(s.output[at], dtype)))
    e, at, b = worst
    where = f"sequence {at[0]}, position {at[1]}, column {at[2]}" if at else "-"
    return True, notes + [f"worst error {e:.3g} ulps of {dtype} ({where}; its bound {b:.3g} ulps); every entry within its a-priori bound"]


def main(argv=None):
    p = argparse.ArgumentParser(prog="check_kernel", description=__doc__.splitlines()[0])
    p.add_argument("golden")
    p.add_argument("--kernel", choices=sorted(KERNELS), default="numpy")
    p.add_argument("--dtype", choices=sorted(UNIT), default="float32")
    p.add_argument("--variant", choices=["none", "no-scale", "mask-off-by-one", "bias-dropped", "transposed", "rope-pairing"], default="none")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    try:
        g = kg.load(a.golden)
        ok, lines = check(g, a.kernel, a.dtype, a.variant)
    except (kg.GoldenError, OSError, KeyError, ValueError, json.JSONDecodeError) as e:
        print(f"check_kernel: input error: {e}", file=sys.stderr)
        return 3
    if a.json:
        print(json.dumps({"status": "ok" if ok else "outside_bound", "kernel": a.kernel, "dtype": a.dtype, "variant": a.variant, "report": lines}))
    else:
        for line in lines:
            print(("  " if a.quiet else f"check_kernel {a.kernel} {a.dtype}: ") + line)
    return 0 if ok else 10


if __name__ == "__main__":
    sys.exit(main())
