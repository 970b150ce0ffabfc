#!/usr/bin/env bash
# ctest python_safetensors: real weights end to end. torch.nn.MultiheadAttention
# layers (d = 8, H = 2; F64, F32, and F16/BF16 rounded from F32) are written as
# safetensors files by examples/python/write_safetensors.py and converted by
# mhaq convert --safetensors; every entry must equal the tensor's exact value
# (fractions.Fraction) and the canonical heads must equal scale K_h Q_h^T and
# V_h O_h u in exact rationals. The float64 layer's certified golden file (the
# learner's queries and 50 sequences of our own, 30 digits) is checked against
# an independent 100-digit mpmath evaluation, passes golden check, and a
# tampered last digit is rejected; torch's float64 and float32 outputs pass
# examples/python/check_torch_attention.py within its bound, the no-scale and
# transposed variants fail.   usage: python_safetensors.sh MHAQ SOURCE_DIR
set -euo pipefail
M="$1"
src="$2"
fail() { echo "FAIL: $*" >&2; exit 1; }
py=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import torch, mpmath, numpy' 2>/dev/null; then py="$p"; break; fi
done
[[ -n "$py" ]] || fail "no python3 with torch, mpmath and NumPy (Debian: python3-torch python3-mpmath python3-numpy)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
E="$src/examples/python"
export E

# 1. Exact weights, every dtype.
for dt in float64 float32 float16 bfloat16; do
  "$py" "$E/write_safetensors.py" "$tmp/$dt" --d 8 --heads 2 --dtype "$dt" --seed 1 >/dev/null
  "$M" convert --safetensors "$tmp/$dt/attention.safetensors" --map "$tmp/$dt/map.json" -o "$tmp/$dt/factored.json" >/dev/null \
    || fail "convert --safetensors ($dt)"
  "$M" convert --model "$tmp/$dt/factored.json" -o "$tmp/$dt/plain.json" >/dev/null || fail "convert of the factored file ($dt)"
  PYTHONPATH="$E" "$py" - "$tmp/$dt" "$dt" <<'PY' || fail "exact values ($dt)"
import json, sys
from fractions import Fraction as F
import write_safetensors as w
d, H = 8, 2
out, dt = sys.argv[1], sys.argv[2]
mha, u = w.make_layer(d, H, w.DTYPES[dt][0], 1)
ex = lambda t: [[F(float(x)) for x in row] for row in t.tolist()]  # float() widens exactly
Win, Wo, uu = ex(mha.in_proj_weight), ex(mha.out_proj.weight), [F(float(x)) for x in u.tolist()]
Wq, Wk, Wv = Win[:d], Win[d:2 * d], Win[2 * d:]
fac = json.load(open(f"{out}/factored.json"))
dk = d // H
assert (fac["d"], fac["d_k"], fac["d_v"], fac["d_out"], fac["scale"]) == (8, 4, 4, 8, "1/2"), fac["scale"]
n = 0
for h in range(H):
    for i in range(d):
        for c in range(dk):
            assert F(fac["heads"][h]["Q"][i][c]) == Wq[h * dk + c][i]
            assert F(fac["heads"][h]["K"][i][c]) == Wk[h * dk + c][i]
            assert F(fac["heads"][h]["V"][i][c]) == Wv[h * dk + c][i]
            n += 3
for r in range(H * dk):
    for c in range(d):
        assert F(fac["O"][r][c]) == Wo[c][r]
        n += 1
assert [F(x) for x in fac["readout"]] == uu
# canonical heads from torch's tensors, exactly: W_h = scale Wk_h^T Wq_h, v_h = Wv_h^T Wo_h^T u
plain = json.load(open(f"{out}/plain.json"))
assert len(plain["heads"]) == H
scale = F(1, 2)
for h in range(H):
    rows = range(h * dk, (h + 1) * dk)
    Ou = [sum(Wo[o][r] * uu[o] for o in range(d)) for r in rows]
    for a in range(d):
        for b in range(d):
            assert F(plain["heads"][h]["W"][a][b]) == scale * sum(Wk[r][a] * Wq[r][b] for r in rows)
        assert F(plain["heads"][h]["v"][a]) == sum(Wv[r][a] * Ou[k] for k, r in enumerate(rows))
dens = max(F(x).denominator for row in plain["heads"][0]["W"] for x in row)
print(f"{dt}: {n + d} entries equal their tensors exactly; canonical W_h, v_h exact (largest W denominator 2^{dens.bit_length() - 1})")
PY
done

# 2. Certified golden file of the float64 layer: the learner's queries and 50 of our own.
"$py" - "$tmp/inputs.json" <<'PY'
import json, random, sys
rng = random.Random(5)
seqs = []
for k in range(50):
    n = rng.randint(1, 12)
    scale = [8, 8, 64, 1][k % 4]  # ordinary, ordinary, tiny scores, large scores
    toks = [[f"{rng.randint(-24, 24)}/{scale}" for _ in range(8)] for _ in range(n)]
    if k % 5 == 4 and n > 1:
        toks[0] = toks[-1]  # a repeated token: two equal scores
    seqs.append(toks)
json.dump({"format": "mhaq-inputs", "version": 1, "d": 8, "sequences": seqs}, open(sys.argv[1], "w"))
PY
"$M" golden export --certified --model "$tmp/float64/factored.json" --seed 1 --digits 30 --inputs "$tmp/inputs.json" -o "$tmp/g64.json" >/dev/null \
  || fail "golden export --certified (float64)"
"$M" golden check "$tmp/g64.json" >/dev/null || fail "golden check of the certified float64 file"
"$py" - "$tmp/g64.json" <<'PY' || fail "100-digit comparison"
import json, sys
from fractions import Fraction as F
import mpmath
mpmath.mp.dps = 110
g = json.load(open(sys.argv[1]))
m = g["model"]
d = m["d"]
heads = [([[F(x) for x in row] for row in h["W"]], [F(x) for x in h["v"]]) for h in m["heads"]]
src = [q["source"] for q in g["queries"]]
assert src.count("user") == 50 and src.count("learner") == g["summary"]["learner_queries"] > 0, g["summary"]
assert g["summary"]["ball_contains_canonical_heads"] is True
checked = 0
for q, a in zip(g["queries"], g["answers"]):
    X = [([F(x) for x in r["token"]], r["count"]) for r in q["runs"]]
    xN = X[-1][0]
    f = mpmath.mpf(0)
    for W, v in heads:
        Wx = [sum(W[i][j] * xN[j] for j in range(d)) for i in range(d)]
        s = [sum(x[i] * Wx[i] for i in range(d)) for x, _ in X]
        smax = max(s)
        num = den = mpmath.mpf(0)
        for (x, cnt), si in zip(X, s):
            e = cnt * mpmath.exp(mpmath.mpf(si.numerator) / si.denominator - mpmath.mpf(smax.numerator) / smax.denominator)
            c = sum(v[i] * x[i] for i in range(d))
            num += e * mpmath.mpf(c.numerator) / c.denominator
            den += e
        f += num / den
    mant, exp_ = a["decimal"].split("e")
    digits = mant.replace("-", "").replace(".", "")
    assert len(digits) == 30
    E = int(exp_)
    y = abs(f) * mpmath.mpf(10) ** (29 - E)  # the 30-digit mantissa, unrounded
    fl = mpmath.floor(y)
    frac = y - fl
    assert abs(frac - mpmath.mpf(0.5)) > mpmath.mpf(10) ** -60, "too close to a tie to decide at 100 digits"
    M = int(fl) + (1 if frac > 0.5 else 0)
    assert str(M) == digits and (f < 0) == mant.startswith("-"), (q["index"], a["decimal"], mpmath.nstr(f, 40))
    checked += 1
print(f"{checked} certified answers equal the 100-digit evaluation rounded to 30 digits; largest working precision {g['summary']['max_answer_bits']} bits")
PY
# A tampered last digit is rejected (exit 10).
"$py" - "$tmp/g64.json" "$tmp/tampered.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
a = g["answers"][-1]
mant, e = a["decimal"].split("e")
a["decimal"] = mant[:-1] + str((int(mant[-1]) + 1) % 10) + "e" + e
json.dump(g, open(sys.argv[2], "w"))
PY
set +e
"$M" golden check "$tmp/tampered.json" >"$tmp/out" 2>&1
rc=$?
set -e
[[ $rc == 10 ]] || { cat "$tmp/out"; fail "golden check of a tampered digit exited $rc, expected 10"; }
grep -q "checker's evaluator gives" "$tmp/out" || fail "the checker's own evaluator did not flag the tampered digit"

# 3. torch's kernels against certified answers: float64 and float32 layers.
"$M" golden export --certified --model "$tmp/float32/factored.json" --no-learner --digits 30 --inputs "$tmp/inputs.json" -o "$tmp/g32.json" >/dev/null \
  || fail "golden export --certified (float32)"
"$M" golden check "$tmp/g32.json" >/dev/null || fail "golden check of the certified float32 file"
C="$E/check_torch_attention.py"
for pair in "g64.json float64" "g32.json float32"; do
  set -- $pair
  "$py" "$C" "$tmp/$1" --layer "$tmp/$2" --quiet >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "torch $2 outside its bound"; }
  grep -E "worst error" "$tmp/out"
  for v in no-scale transposed; do
    set +e
    "$py" "$C" "$tmp/$1" --layer "$tmp/$2" --variant "$v" --quiet >"$tmp/out" 2>&1
    rc=$?
    set -e
    [[ $rc == 10 ]] || { cat "$tmp/out"; fail "variant $v on $2 exited $rc, expected 10"; }
  done
done
# 3b. The checker on what it used to refuse or misjudge: large integer
# tokens (scores in the millions; its bound once went negative there), tokens
# float32 cannot hold (rounded, and said), F16 and BF16 layers (run in
# float32), and the float32 layer stored as separate q, k, v in the in_out layout.
"$py" - "$tmp" <<'PY'
import json, os, random, struct, sys
import torch
sys.path.insert(0, os.environ["E"])
import write_safetensors as w
out = sys.argv[1]
rng = random.Random(8)
big = [[[str(rng.choice([-1, 1]) * rng.randint(3000, 4000)) for _ in range(8)] for _ in range(rng.randint(1, 6))] for _ in range(8)]
big += [[[str(rng.choice([-1, 1]) * 3 * 2 ** 20) for _ in range(8)] for _ in range(3)]]
thirds = [[[f"{rng.randint(-9, 9)}/3" for _ in range(8)] for _ in range(rng.randint(1, 6))] for _ in range(6)]
for name, seqs in (("big", big), ("thirds", thirds)):
    json.dump({"format": "mhaq-inputs", "version": 1, "d": 8, "sequences": seqs}, open(f"{out}/{name}.json", "w"))
# the float32 layer again, as separate q, k, v and out, each stored transposed (in_out)
mha, u = w.make_layer(8, 2, torch.float32, 1)
W = mha.in_proj_weight.detach()
os.makedirs(f"{out}/split", exist_ok=True)
w.save_safetensors(f"{out}/split/attention.safetensors", {"wq": W[:8].T.contiguous(), "wk": W[8:16].T.contiguous(), "wv": W[16:].T.contiguous(),
                                                          "wo": mha.out_proj.weight.detach().T.contiguous(), "readout": u})
json.dump({"format": "mhaq-safetensors-map", "version": 1, "heads": 2, "layout": "in_out", "q": "wq", "k": "wk", "v": "wv", "out": "wo",
           "readout": "readout", "scale": "1/sqrt(d_k)"}, open(f"{out}/split/map.json", "w"))
PY
"$M" convert --safetensors "$tmp/split/attention.safetensors" --map "$tmp/split/map.json" -o "$tmp/split/factored.json" >/dev/null || fail "convert of the split in_out layer"
cmp <("$M" convert --model "$tmp/split/factored.json" 2>/dev/null) <("$M" convert --model "$tmp/float32/factored.json" 2>/dev/null) \
  || fail "the split in_out layer is not the fused out_in one"
for case in "float32 big" "float32 thirds" "float16 inputs" "bfloat16 inputs" "split inputs"; do
  set -- $case
  model="$tmp/$1/factored.json"
  "$M" golden export --certified --model "$model" --no-learner --digits 30 --inputs "$tmp/$2.json" -o "$tmp/g_$1_$2.json" >/dev/null \
    || fail "golden export --certified ($1, $2)"
  "$py" "$C" "$tmp/g_$1_$2.json" --layer "$tmp/$1" --quiet >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "torch $1 on $2 outside its bound"; }
  echo "$1 $2: $(grep -E 'worst error' "$tmp/out")"
done
grep -q "token entries are not float32 values and were rounded" <("$py" "$C" "$tmp/g_float32_thirds.json" --layer "$tmp/float32" 2>&1) \
  || fail "the rounded tokens are not said"
for v in no-scale transposed; do
  set +e
  "$py" "$C" "$tmp/g_float16_inputs.json" --layer "$tmp/float16" --variant "$v" --quiet >/dev/null 2>&1
  rc=$?
  set -e
  [[ $rc == 10 ]] || fail "variant $v on the float16 layer exited $rc, expected 10"
done

# 4. A whole checkpoint: two attention layers, an I64 position_ids buffer, a
# LayerNorm and a bare "bias" tensor; the map names layer 1 only.
"$py" - "$tmp/ckpt" <<'PY'
import json, os, sys
import torch
sys.path.insert(0, os.environ["E"])
import write_safetensors as w
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(3)
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.MultiheadAttention(8, 2, bias=False, dtype=torch.float32) for _ in range(2)])
        self.norm = torch.nn.LayerNorm(8)
        self.register_buffer("position_ids", torch.arange(16).unsqueeze(0))
        self.bias = torch.nn.Parameter(torch.randn(8))
sd = Net().state_dict()
assert sd["position_ids"].dtype == torch.int64
w.save_safetensors(f"{out}/model.safetensors", sd)
json.dump({"format": "mhaq-safetensors-map", "version": 1, "heads": 2, "layout": "out_in",
           "in_proj": "layers.1.in_proj_weight", "out": "layers.1.out_proj.weight",
           "readout": ["1", "-1/2", "0", "2", "0", "0", "1/4", "-1"], "scale": "1/sqrt(d_k)"}, open(f"{out}/map.json", "w"))
torch.save(sd, f"{out}/state.pt")
print("checkpoint tensors:", ", ".join(f"{k} {str(v.dtype).replace('torch.', '')}" for k, v in sd.items()))
PY
"$M" convert --safetensors "$tmp/ckpt/model.safetensors" --map "$tmp/ckpt/map.json" -o "$tmp/ckpt/factored.json" >"$tmp/out" 2>&1 \
  || { cat "$tmp/out"; fail "convert of a two-layer checkpoint with an I64 tensor and unrelated biases"; }
"$py" - "$tmp/ckpt" <<'PY' || fail "the converted checkpoint layer is not layer 1"
import json, sys
from fractions import Fraction as F
import torch
out = sys.argv[1]
sd = torch.load(f"{out}/state.pt")
fac = json.load(open(f"{out}/factored.json"))
ex = lambda t: [[F(float(x)) for x in row] for row in t.tolist()]
for layer, want in ((1, True), (0, False)):
    Wq = ex(sd[f"layers.{layer}.in_proj_weight"])[:8]
    same = all(F(fac["heads"][h]["Q"][i][c]) == Wq[h * 4 + c][i] for h in range(2) for i in range(8) for c in range(4))
    assert same == want, (layer, same)
print("checkpoint: layer 1 converted exactly; layer 0, position_ids (I64), norm.bias and bias skipped")
PY
echo "python_safetensors: ok"
