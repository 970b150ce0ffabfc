#!/usr/bin/env python3
"""Write one torch.nn.MultiheadAttention layer as a safetensors file, and the
map that tells `mhaq convert --safetensors` which tensor is which.

    python3 examples/python/write_safetensors.py OUT_DIR [--d 8] [--heads 2]
            [--dtype float64|float32|float16|bfloat16] [--seed 1] [--bias]

writes OUT_DIR/attention.safetensors (in_proj_weight, out_proj.weight and a
readout vector u, all in --dtype; float16 and bfloat16 are rounded from
float32 weights) and OUT_DIR/map.json. Without --bias the layer has no
biases (bias=False). With --bias it is torch's default bias=True layer whose
biases (which torch initialises to zero) are drawn normal with standard
deviation 0.1, as after training: in_proj_bias and out_proj.bias are written
and named in the map. torch computes, for a sequence x_1..x_N (query x_N),
q = W_q x_N + b_q, k_i = W_k x_i + b_k, v_i = W_v x_i + b_v per head, softmax
of q.k_i / sqrt(d_k), the heads concatenated, multiplied by W_out and b_out
added; mhaq's f(X) is that output dotted with u.

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


def make_layer(d, heads, dtype, seed, bias=False):
    """The layer and its readout u, in dtype (float16/bfloat16: rounded from float32).
    bias: torch's default layer, its biases drawn normal with standard deviation 0.1."""
    torch.manual_seed(seed)
    base = torch.float64 if dtype == torch.float64 else torch.float32
    mha = torch.nn.MultiheadAttention(d, heads, bias=bias, dtype=base)
    if bias:
        with torch.no_grad():
            mha.in_proj_bias.normal_(0.0, 0.1)
            mha.out_proj.bias.normal_(0.0, 0.1)
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
    p.add_argument("--bias", action="store_true", help="bias=True, the biases drawn normal with standard deviation 0.1")
    a = p.parse_args()
    if a.bias and a.ffn:
        p.error("--bias: the one-layer transformer (--ffn) is bias-free")
    mha, u = make_layer(a.d, a.heads, DTYPES[a.dtype][0], a.seed, a.bias)
    os.makedirs(a.out_dir, exist_ok=True)
    state = mha.state_dict()  # in_proj_weight (3d x d: q; k; v rows), out_proj.weight (d x d)
    tensors = {"in_proj_weight": state["in_proj_weight"], "out_proj.weight": state["out_proj.weight"], "readout": u}
    m = {"format": "mhaq-safetensors-map", "version": 1, "heads": a.heads, "layout": "out_in",
         "in_proj": "in_proj_weight", "in_proj_split": ["q", "k", "v"], "out": "out_proj.weight", "readout": "readout",
         "scale": "1/sqrt(d_k)"}
    if a.bias:  # in_proj_bias (3d: q; k; v, split as in_proj_split) and out_proj.bias (d)
        tensors["in_proj_bias"] = state["in_proj_bias"]
        tensors["out_proj.bias"] = state["out_proj.bias"]
        m["in_proj_bias"] = "in_proj_bias"
        m["out_bias"] = "out_proj.bias"
    if a.ffn:  # T(X) = sum_j u_j ReLU((ffn.weight @ attention(X))_j)
        ffn = torch.nn.Linear(a.d, a.ffn, bias=False, dtype=u.dtype)
        tensors["ffn.weight"] = ffn.weight
        tensors["readout"] = torch.randn(a.ffn, dtype=torch.float64).to(u.dtype)
        m["ffn"] = "ffn.weight"
    save_safetensors(os.path.join(a.out_dir, "attention.safetensors"), tensors)
    with open(os.path.join(a.out_dir, "map.json"), "w") as f:
        json.dump(m, f, indent=1)
        f.write("\n")
    print(f"wrote {a.out_dir}/attention.safetensors ({a.dtype}, d={a.d}, {a.heads} heads{', biases' if a.bias else ''}) and {a.out_dir}/map.json")


if __name__ == "__main__":
    main()
