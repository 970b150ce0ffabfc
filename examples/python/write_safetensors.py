#!/usr/bin/env python3
"""Write one torch.nn.MultiheadAttention layer as a safetensors file, and the
map that tells `mhaq convert --safetensors` which tensor is which.

    python3 examples/python/write_safetensors.py OUT_DIR [--d 8] [--heads 2]
            [--dtype float64|float32|float16|bfloat16] [--seed 1]

writes OUT_DIR/attention.safetensors (in_proj_weight, out_proj.weight and a
readout vector u, all in --dtype; float16 and bfloat16 are rounded from
float32 weights) and OUT_DIR/map.json. The layer has no biases (bias=False):
mhaq's model is bias-free. torch computes, for a sequence x_1..x_N (query
x_N), q = W_q x_N, k_i = W_k x_i, v_i = W_v x_i per head, softmax of
q.k_i / sqrt(d_k), the heads concatenated and multiplied by W_out; mhaq's
f(X) is that output dotted with u.

The safetensors format is an 8-byte little-endian header length, a JSON
header {name: {dtype, shape, data_offsets}} and the raw little-endian bytes;
`save_safetensors` below writes it without the safetensors package.
"""
import argparse
import json
import os
import struct

import torch

DTYPES = {"float64": (torch.float64, "F64"), "float32": (torch.float32, "F32"),
          "float16": (torch.float16, "F16"), "bfloat16": (torch.bfloat16, "BF16")}


def save_safetensors(path, tensors):
    """tensors: {name: torch tensor}; writes the safetensors layout, nothing else."""
    names = {dt: code for dt, code in DTYPES.values()}
    names.update({torch.int64: "I64", torch.int32: "I32", torch.bool: "BOOL", torch.uint8: "U8"})  # other tensors of a checkpoint
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous().cpu()
        raw = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # the data buffer starts 8-byte aligned (spaces are JSON whitespace)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def make_layer(d, heads, dtype, seed):
    """The layer and its readout u, in dtype (float16/bfloat16: rounded from float32)."""
    torch.manual_seed(seed)
    base = torch.float64 if dtype == torch.float64 else torch.float32
    mha = torch.nn.MultiheadAttention(d, heads, bias=False, dtype=base)
    u = torch.randn(d, dtype=base)
    if dtype != base:
        mha = mha.to(dtype)
        u = u.to(dtype)
    return mha, u


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir")
    p.add_argument("--d", type=int, default=8)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--dtype", choices=sorted(DTYPES), default="float64")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--ffn", type=int, default=0, help="also an FFN first layer torch.nn.Linear(d, M, bias=False); u then has M entries")
    a = p.parse_args()
    mha, u = make_layer(a.d, a.heads, DTYPES[a.dtype][0], a.seed)
    os.makedirs(a.out_dir, exist_ok=True)
    state = mha.state_dict()  # in_proj_weight (3d x d: q; k; v rows), out_proj.weight (d x d)
    tensors = {"in_proj_weight": state["in_proj_weight"], "out_proj.weight": state["out_proj.weight"], "readout": u}
    m = {"format": "mhaq-safetensors-map", "version": 1, "heads": a.heads, "layout": "out_in",
         "in_proj": "in_proj_weight", "in_proj_split": ["q", "k", "v"], "out": "out_proj.weight", "readout": "readout",
         "scale": "1/sqrt(d_k)"}
    if a.ffn:  # T(X) = sum_j u_j ReLU((ffn.weight @ attention(X))_j)
        ffn = torch.nn.Linear(a.d, a.ffn, bias=False, dtype=u.dtype)
        tensors["ffn.weight"] = ffn.weight
        tensors["readout"] = torch.randn(a.ffn, dtype=torch.float64).to(u.dtype)
        m["ffn"] = "ffn.weight"
    save_safetensors(os.path.join(a.out_dir, "attention.safetensors"), tensors)
    with open(os.path.join(a.out_dir, "map.json"), "w") as f:
        json.dump(m, f, indent=1)
        f.write("\n")
    print(f"wrote {a.out_dir}/attention.safetensors ({a.dtype}, d={a.d}, {a.heads} heads) and {a.out_dir}/map.json")


if __name__ == "__main__":
    main()
