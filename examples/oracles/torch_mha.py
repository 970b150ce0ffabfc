#!/usr/bin/env python3
"""torch.nn.MultiheadAttention (bias=False, or with --bias bias=True) with a readout, as an mhaq oracle.

usage: torch_mha.py --d D --heads H --seed S [--dtype float64|float32] [--bias] [--max-length N] [--max-entry M] [--write-model FILE]

The weights come from torch's own initialisation under torch.manual_seed(S);
with --bias the layer has torch's default biases, which torch initialises to
zero, drawn normal with standard deviation 0.1 (as after training); the
readout u is uniform in [-1, 1] from the same generator. The oracle answers
f(X) = MHA(X, X, X)[last token] . u, computed by torch in the dtype. Learn
it with `mhaq recover --oracle ... --bias` (docs/math/biases.md).

--write-model FILE writes the factored model file of these weights and
exits: every float64 or float32 weight is a dyadic rational, written exactly,
so the file is the exact truth of what torch evaluates approximately
(W_h = scale K_h Q_h^T, v_h = V_h O_h u; scale = the dtype's 1/sqrt(d_k),
exact for d_k = 1, 4, 16, ...; with --bias also q_bias, k_bias, v_bias per
head and out_bias, from in_proj_bias and out_proj.bias).

Stated error (docs/recover-your-own-model.md), for sequences of at most N
tokens (--max-length, default 17; a longer one is refused): float64 abs
5e-14 up to 17 tokens; beyond, abs and rel 64 N 2^-53 each, since the sums
over the sequence round once per token. float32: abs and rel 64 (N + M)
2^-24 each, for entries of at most M in magnitude (--max-entry, default and
at most 128; a larger entry is refused), since a score also rounds relative
to the size of its tokens: measured on torch's own layers against float64
with the same weights (tests/bench/float32_error.py: d = 8, H = 2, seeds
1-5, n up to 65,537 tokens, entries up to 128), |error| <= 8.6 (n + M)
2^-24 (1 + |answer|), a margin of 7.5 (the earlier abs 3e-5 up to 17 tokens
failed on large entries: 7.7e-5 measured). The hello also states N as
"max_length" and, for float32, M as "max_entry", so that a learner can keep
within them (docs/oracle-protocol.md).
"""
import argparse
import json
import math
import sys
from fractions import Fraction

import torch

import mhaq_oracle

# float64's stated error up to 17 tokens, and the unit roundoff that sets it
# beyond (and, in float32, at every length: mhaq_oracle.stated_accuracy)
ACCURACY = {"float64": ("5e-14", 2.0**-53), "float32": (None, 2.0**-24)}


def exact(x):
    f = Fraction(float(x))  # a float32 or float64 value, exactly
    return str(f.numerator) if f.denominator == 1 else "%d/%d" % (f.numerator, f.denominator)


def build(d, H, seed, dtype, bias=False):
    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(d, H, bias=bias, dtype=dtype)
    if bias:
        with torch.no_grad():
            mha.in_proj_bias.normal_(0.0, 0.1)
            mha.out_proj.bias.normal_(0.0, 0.1)
    mha.eval()
    u = (torch.rand(d, dtype=dtype) * 2 - 1)
    return mha, u


def factored_file(mha, u, d, H, dtype):
    dk = d // H
    Wq, Wk, Wv = mha.in_proj_weight.detach().chunk(3, dim=0)  # rows: output features
    scale = torch.tensor(1.0, dtype=dtype) / torch.sqrt(torch.tensor(float(dk), dtype=dtype))
    heads = []
    for h in range(H):
        rows = slice(h * dk, (h + 1) * dk)
        # x^T Q_h is head h's query: Q_h = Wq[rows]^T (d x d_k)
        heads.append({n: [[exact(x) for x in r] for r in W[rows].T.tolist()] for n, W in (("Q", Wq), ("K", Wk), ("V", Wv))})
        if mha.in_proj_bias is not None:  # q, k, v biases: rows of in_proj_bias in the order q, k, v
            bq, bk, bv = mha.in_proj_bias.detach().chunk(3)
            heads[-1].update({n: [exact(x) for x in b[rows].tolist()] for n, b in (("q_bias", bq), ("k_bias", bk), ("v_bias", bv))})
    O = mha.out_proj.weight.detach().T  # (H d_v) x d_out
    out = {"format": "mhaq-model-factored", "version": 1, "d": d, "d_k": dk, "d_v": dk, "d_out": d, "scale": exact(scale.item()),
           "heads": heads, "O": [[exact(x) for x in r] for r in O.tolist()], "readout": [exact(x) for x in u.tolist()]}
    if mha.out_proj.bias is not None:
        out["out_bias"] = [exact(x) for x in mha.out_proj.bias.detach().tolist()]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--d", type=int, required=True)
    ap.add_argument("--heads", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    ap.add_argument("--bias", action="store_true", help="bias=True, the biases drawn normal with standard deviation 0.1")
    ap.add_argument("--write-model")
    ap.add_argument("--max-length", type=int, default=mhaq_oracle.SHORT, help="the longest sequence answered (the stated accuracy covers it)")
    ap.add_argument("--max-entry", type=float, default=None,
                    help="float32: the largest token entry answered, in magnitude (default and at most %d; the stated accuracy covers it)" % mhaq_oracle.FLOAT32_MAX_ENTRY)
    a = ap.parse_args()
    if a.dtype == "float32":
        if a.max_entry is None:
            a.max_entry = float(mhaq_oracle.FLOAT32_MAX_ENTRY)
        if not 0 < a.max_entry <= mhaq_oracle.FLOAT32_MAX_ENTRY:
            raise SystemExit("--max-entry: float32's error was measured for entries of at most %d" % mhaq_oracle.FLOAT32_MAX_ENTRY)
    elif a.max_entry is not None:
        raise SystemExit("--max-entry is for float32 (float64's statement covers the placed design's tokens: docs/recover-your-own-model.md)")
    if a.d % a.heads:
        raise SystemExit("torch.nn.MultiheadAttention needs d divisible by the head count")
    dtype = getattr(torch, a.dtype)
    mha, u = build(a.d, a.heads, a.seed, dtype, a.bias)
    if a.write_model:
        with open(a.write_model, "w") as fh:
            json.dump(factored_file(mha, u, a.d, a.heads, dtype), fh)
            fh.write("\n")
        return

    @torch.no_grad()
    def f(runs):
        mhaq_oracle.check_length(sum(c for _, c in runs), a.max_length)
        if a.max_entry is not None:
            mhaq_oracle.check_entries([t for t, _ in runs], a.max_entry)
        # the whole sequence, each run expanded to its copies: (N, batch 1, d)
        tokens = torch.tensor([t for t, _ in runs], dtype=dtype)
        x = torch.repeat_interleave(tokens, torch.tensor([c for _, c in runs]), dim=0).unsqueeze(1)
        # the output at the last token only (as decoding with a key-value
        # cache computes it): the last token's query against every key and
        # value, O(N d) rather than the N x N attention of every token
        out, _ = mha(x[-1:], x, x, need_weights=False)
        return float(out[-1, 0] @ u)

    name = "torch.nn.MultiheadAttention(%d, %d, bias=%s) %s seed %d, torch %s" % (a.d, a.heads, a.bias, a.dtype, a.seed, torch.__version__)
    short, unit = ACCURACY[a.dtype]
    mhaq_oracle.serve(f, d=a.d, name=name, accuracy=mhaq_oracle.stated_accuracy(a.max_length, short, unit, a.max_entry), runs=True, max_length=a.max_length,
                      max_entry=a.max_entry)


if __name__ == "__main__":
    main()
