#!/usr/bin/env python3
"""Writes tests/fuzz/corpus/safetensors: well-formed layers (seeds for the
fuzzer) and malformed files (each one an input error of the reader or the
map conversion; tests/test_safetensors.cpp builds the same kinds itself).
Usage: python3 tests/fuzz/make_safetensors_corpus.py [DIR]"""
import json
import os
import struct
import sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "safetensors")
os.makedirs(out, exist_ok=True)
PACK = {"F64": "<d", "F32": "<f", "F16": "<e", "I64": "<q", "BOOL": "<?"}
SIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2}


def pack(dtype, values):
    if dtype == "BF16":  # the top half of the float32 (these values are exact in bfloat16)
        return b"".join(struct.pack("<f", v)[2:] for v in values)
    return b"".join(struct.pack(PACK[dtype], v) for v in values)


def safetensors(tensors, metadata=None):
    """tensors: list of (name, dtype, shape, values); returns the file's bytes."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, values in tensors:
        raw = pack(dtype, values)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(h)) + h + data


def raw(header_text, data=b""):
    h = header_text if isinstance(header_text, bytes) else header_text.encode()
    return struct.pack("<Q", len(h)) + h + data


def write(name, b):
    with open(os.path.join(out, name), "wb") as f:
        f.write(b)


# ---- seeds: layers the harness's maps convert
for dtype in ("F64", "F32", "F16", "BF16"):
    write(f"seed_qkvo_{dtype}.safetensors", safetensors([
        ("q", dtype, [2, 2], [1, 2, 3, 4]), ("k", dtype, [2, 2], [0.5, -1, 2, 0.25]),
        ("v", dtype, [2, 2], [1, 0, 0, 1]), ("o", dtype, [2, 2], [1, 2, -1, 0.5]), ("u", dtype, [2], [1, -0.5])]))
write("seed_fused_f32.safetensors", safetensors([
    ("in_proj_weight", "F32", [6, 2], [1, 2, 3, 4, 0.5, -1, 2, 0.25, 1, 0, 0, 1]),
    ("out_proj.weight", "F32", [2, 2], [1, 2, -1, 0.5])], metadata={"format": "pt"}))
write("seed_fused_d1.safetensors", safetensors([
    ("in_proj_weight", "F64", [3, 1], [0.1, -2.5, 3]), ("out_proj.weight", "F64", [1, 1], [0.75])]))
write("seed_empty.safetensors", raw("{}"))
# a whole checkpoint: the layer next to integer and boolean tensors and a bias the maps do not name
ckpt = safetensors([
    ("q", "F32", [2, 2], [1, 2, 3, 4]), ("k", "F32", [2, 2], [0.5, -1, 2, 0.25]), ("v", "F32", [2, 2], [1, 0, 0, 1]),
    ("o", "F32", [2, 2], [1, 2, -1, 0.5]), ("o.bias", "F32", [2], [0, 0]), ("u", "F32", [2], [1, -0.5]),
    ("embeddings.position_ids", "I64", [1, 3], [0, 1, 2]), ("mask", "BOOL", [3], [1, 0, 1]), ("num_batches_tracked", "I64", [], [7])])
write("seed_checkpoint.safetensors", ckpt)
# all-zero biases next to the layer that the maps do not name: they change nothing (convert reports them as not used)
write("seed_bias_unnamed.safetensors", safetensors([
    ("q", "F32", [2, 2], [1, 2, 3, 4]), ("k", "F32", [2, 2], [1, 0, 0, 1]), ("v", "F32", [2, 2], [1, 0, 0, 1]),
    ("o", "F32", [2, 2], [1, 0, 0, 1]), ("o.bias", "F32", [2], [0, 0]), ("u", "F32", [2], [1, 1])]))
write("seed_fused_bias_unnamed.safetensors", safetensors([
    ("in_proj_weight", "F32", [3, 1], [1, 2, 3]), ("in_proj_bias", "F32", [3], [0, 0, 0]), ("out_proj.weight", "F32", [1, 1], [1])]))
write("seed_zero_size.safetensors", safetensors([("z", "F32", [0, 3], []), ("q", "F16", [1], [1])]))

# ---- malformed: one file per kind of defect
ok = '"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}'
f1 = struct.pack("<f", 1.0)
cases = {
    "short_file": b"\x05\x00\x00",
    "header_past_eof": struct.pack("<Q", 100) + b"{}",
    "header_over_limit": struct.pack("<Q", (1 << 24) + 1) + b"{}",
    "header_huge_u64": b"\xff" * 8 + b"{}",
    "header_not_json": raw('{"x": [1,'),
    "header_not_object": raw("[1, 2]"),
    "header_invalid_utf8": raw(b'{"\xff":1}'),
    "entry_not_object": raw('{"x": 3}'),
    "entry_unknown_field": raw('{"x":{"dtype":"F32","shape":[0],"data_offsets":[0,0],"strides":[1]}}'),
    "entry_missing_offsets": raw('{"x":{"dtype":"F32","shape":[0]}}'),
    "dtype_unknown": raw('{"x":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}}', b"\0" * 16),
    "dtype_unsupported": raw('{"x":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}}', f1),
    "dtype_not_string": raw('{"x":{"dtype":32,"shape":[1],"data_offsets":[0,4]}}', f1),
    "shape_negative": raw('{"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}', f1),
    "shape_float": raw('{"x":{"dtype":"F32","shape":[1.0],"data_offsets":[0,4]}}', f1),
    "shape_rank9": raw('{"x":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,4]}}', f1),
    "shape_overflow": raw('{"x":{"dtype":"F32","shape":[4611686018427387904,4611686018427387904],"data_offsets":[0,4]}}', f1),
    "shape_bytes_mismatch": raw('{"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', f1 + f1),
    "range_past_eof": raw("{" + ok + "}", f1),
    "range_reversed": raw('{"x":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}}', f1),
    "range_u64_max": raw('{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,18446744073709551615]}}', f1),
    "ranges_overlap": raw('{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', f1 + f1),
    "range_hole": raw('{"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', f1 + f1),
    "trailing_bytes": raw("{" + ok + "}", f1 * 3),
    "duplicate_name": raw("{" + ok + "," + ok + "}", f1 + f1),
    "metadata_not_string": raw('{"__metadata__":{"a":1}}'),
    "nan_f32": raw('{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', f1 + b"\x00\x00\xc0\x7f"),
    "inf_f16": raw('{"x":{"dtype":"F16","shape":[1,2],"data_offsets":[0,4]}}', b"\x00\x3c\x00\x7c"),
    "inf_bf16": raw('{"x":{"dtype":"BF16","shape":[1],"data_offsets":[0,2]}}', b"\x80\xff"),
    "nan_f64": raw('{"x":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}', b"\x01\x00\x00\x00\x00\x00\xf0\x7f"),
    "wrong_rank": safetensors([("q", "F32", [4], [1, 2, 3, 4]), ("k", "F32", [2, 2], [1, 0, 0, 1]), ("v", "F32", [2, 2], [1, 0, 0, 1]),
                               ("o", "F32", [2, 2], [1, 0, 0, 1]), ("u", "F32", [2], [1, 1])]),
    "qk_shape_mismatch": safetensors([("q", "F32", [2, 2], [1, 2, 3, 4]), ("k", "F32", [1, 2], [1, 0]), ("v", "F32", [2, 2], [1, 0, 0, 1]),
                                      ("o", "F32", [2, 2], [1, 0, 0, 1]), ("u", "F32", [2], [1, 1])]),
    "missing_v": safetensors([("q", "F32", [2, 2], [1, 2, 3, 4]), ("k", "F32", [2, 2], [1, 0, 0, 1]),
                              ("o", "F32", [2, 2], [1, 0, 0, 1]), ("u", "F32", [2], [1, 1])]),
    "fused_not_three_blocks": safetensors([("in_proj_weight", "F32", [4, 1], [1, 2, 3, 4]), ("out_proj.weight", "F32", [1, 1], [1])]),
    "byte_count_past_2_64": raw('{"x":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}}', f1 + f1),
    "padding_nul": raw(("{" + ok + "}").encode() + b"\0\0\0", f1 + f1),
    "padding_newline": raw(("{" + ok + "}").encode() + b"  \n", f1 + f1),
    "bom": raw(b"\xef\xbb\xbf" + ("{" + ok + "}").encode(), f1 + f1),
    "leading_space": raw((" {" + ok + "}").encode(), f1 + f1),
    "empty_header": struct.pack("<Q", 0),
    "i64_bytes_mismatch": raw('{"p":{"dtype":"I64","shape":[3],"data_offsets":[0,8]}}', b"\0" * 8),
    "f4_partial_byte": raw('{"p":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}', b"\0" * 2),
    "bias_unnamed_nonzero": safetensors([("q", "F32", [2, 2], [1, 2, 3, 4]), ("k", "F32", [2, 2], [1, 0, 0, 1]), ("v", "F32", [2, 2], [1, 0, 0, 1]),
                                         ("o", "F32", [2, 2], [1, 0, 0, 1]), ("o.bias", "F32", [2], [0, 0.5]), ("u", "F32", [2], [1, 1])]),
    "readout_wrong_length": safetensors([("q", "F32", [2, 2], [1, 2, 3, 4]), ("k", "F32", [2, 2], [1, 0, 0, 1]), ("v", "F32", [2, 2], [1, 0, 0, 1]),
                                         ("o", "F32", [2, 2], [1, 0, 0, 1]), ("u", "F32", [3], [1, 1, 1])]),
}
for name, b in cases.items():
    write(f"defect_{name}.safetensors", b)
print(f"wrote {len(cases)} malformed files and seeds to {out}")
