#!/usr/bin/env python3
"""A one-layer transformer from torch modules, as an mhaq oracle.

usage: torch_transformer.py --d D --heads H --neurons M --seed S [--d-k K] [--dtype float64|float32] [--write-model FILE]

Attention with H heads built from torch.nn.Linear(bias=False) projections
(query, key, value of width d_k per head, an output projection to d), then a
bias-free ReLU feed-forward layer torch.nn.Linear(d, M, bias=False), then a
readout u: T(X) = u . ReLU(ffn(attention(X)[last token])), in the dtype
(float64 unless --dtype float32; the weights are the dtype's numbers).
(torch.nn.MultiheadAttention would need d divisible by H; d = 3, H = 2 is not.)

--write-model FILE writes the factored transformer file of these weights
(format mhaq-transformer-factored, every weight exactly) and exits.

Stated error: abs 5e-14 in float64 (docs/recover-your-own-model.md), abs 3e-5
in float32.
"""
import argparse
import json
import math

import torch

import mhaq_oracle
from torch_mha import exact


class Transformer(torch.nn.Module):
    def __init__(self, d, H, dk, M, dtype=torch.float64):
        super().__init__()
        self.H, self.dk = H, dk
        self.q = torch.nn.Linear(d, H * dk, bias=False, dtype=dtype)
        self.k = torch.nn.Linear(d, H * dk, bias=False, dtype=dtype)
        self.v = torch.nn.Linear(d, H * dk, bias=False, dtype=dtype)
        self.o = torch.nn.Linear(H * dk, d, bias=False, dtype=dtype)
        self.ffn = torch.nn.Linear(d, M, bias=False, dtype=dtype)
        self.u = torch.nn.Parameter(torch.rand(M, dtype=dtype) * 2 - 1)
        # the scale as the dtype holds it (the factored file states that number)
        self.scale = float(torch.tensor(1.0 / math.sqrt(dk), dtype=dtype))

    def forward(self, X):  # X: (N, d); the output at the last token
        N = X.shape[0]
        q = self.q(X[-1:]).view(self.H, self.dk)
        k = self.k(X).view(N, self.H, self.dk)
        v = self.v(X).view(N, self.H, self.dk)
        scores = torch.einsum("hc,nhc->hn", q, k) * self.scale
        alpha = torch.softmax(scores, dim=1)
        z = torch.einsum("hn,nhc->hc", alpha, v).reshape(-1)
        return torch.relu(self.ffn(self.o(z))) @ self.u


def answer(t, runs, dtype):
    """t's answer on runs [(token, count), ...]: the whole sequence in the dtype, each run expanded to its copies."""
    tokens = torch.tensor([x for x, _ in runs], dtype=dtype)
    X = torch.repeat_interleave(tokens, torch.tensor([c for _, c in runs]), dim=0)
    with torch.no_grad():
        return float(t(X))


def factored_file(t, d, H, dk):
    heads = []
    for h in range(H):
        rows = slice(h * dk, (h + 1) * dk)
        heads.append({n: [[exact(x) for x in r] for r in lin.weight.detach()[rows].T.tolist()] for n, lin in (("Q", t.q), ("K", t.k), ("V", t.v))})
    return {"format": "mhaq-transformer-factored", "version": 1, "d": d, "d_k": dk, "d_v": dk, "d_out": d, "scale": exact(t.scale),
            "heads": heads, "O": [[exact(x) for x in r] for r in t.o.weight.detach().T.tolist()],
            "ffn": [[exact(x) for x in r] for r in t.ffn.weight.detach().T.tolist()], "readout": [exact(x) for x in t.u.detach().tolist()]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--d", type=int, required=True)
    ap.add_argument("--heads", type=int, required=True)
    ap.add_argument("--neurons", type=int, required=True)
    ap.add_argument("--d-k", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    ap.add_argument("--write-model")
    a = ap.parse_args()
    dtype = getattr(torch, a.dtype)
    torch.manual_seed(a.seed)
    t = Transformer(a.d, a.heads, a.d_k, a.neurons, dtype)
    t.eval()
    if a.write_model:
        with open(a.write_model, "w") as fh:
            json.dump(factored_file(t, a.d, a.heads, a.d_k), fh)
            fh.write("\n")
        return

    @torch.no_grad()
    def f(X):
        return float(t(torch.tensor(X, dtype=dtype)))

    name = "torch transformer d=%d H=%d d_k=%d m=%d %s seed %d, torch %s" % (a.d, a.heads, a.d_k, a.neurons, a.dtype, a.seed, torch.__version__)
    mhaq_oracle.serve(f, d=a.d, name=name, accuracy={"abs": "5e-14" if a.dtype == "float64" else "3e-5"})


if __name__ == "__main__":
    main()
