#!/usr/bin/env bash
# ctest python_kernel_golden: kernel golden files end to end.
#  - layer A: torch.nn.MultiheadAttention(16, 2, bias=True) in float32 with
#    nonzero biases (d_k = 8: the scale 1/sqrt(8) is irrational); layer B: a
#    grouped-query layer (d = 16, H = 4, 2 key-value heads, d_k = 4) with q, k,
#    v and out biases and rotary embeddings (half pairing, theta 10000); both
#    written from torch as safetensors (B also as F16 and BF16);
#  - 20 sequences of 1 to 32 tokens, causal, some with key padding and one
#    with an additive mask; golden kernel --causal --digits 30 for both;
#  - every entry (outputs, and A's head outputs and attention weights) equals,
#    correctly rounded, an evaluation in mpmath at 60 digits written here from
#    the safetensors bytes, sharing no code with mhaq;
#  - golden check passes, and rejects a changed digit, a moved ball and a null row;
#  - torch's own MultiheadAttention forward (need_weights, attn_mask,
#    key_padding_mask) in float64 and float32 on A, and the hand-written NumPy
#    kernel on B in float32 and float64 (F16/BF16 layers in float32), lie within
#    the a-priori bound at every entry and position; every wrong variant fails.
# usage: python_kernel_golden.sh MHAQ SOURCE_DIR
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

# 1. The layers and the sequences.
"$py" - "$tmp" <<'PY'
import json, os, random, sys
import torch
sys.path.insert(0, os.environ["E"])
import write_safetensors as w
out = sys.argv[1]
torch.manual_seed(11)
mha = torch.nn.MultiheadAttention(16, 2, bias=True, dtype=torch.float32)
with torch.no_grad():
    mha.in_proj_bias.normal_(0, 0.5)
    mha.out_proj.bias.normal_(0, 0.5)
os.makedirs(f"{out}/A", exist_ok=True)
w.save_safetensors(f"{out}/A/model.safetensors", {"attn.in_proj_weight": mha.in_proj_weight, "attn.in_proj_bias": mha.in_proj_bias,
                                                  "attn.out_proj.weight": mha.out_proj.weight, "attn.out_proj.bias": mha.out_proj.bias})
json.dump({"format": "mhaq-safetensors-map", "version": 1, "heads": 2, "layout": "out_in", "in_proj": "attn.in_proj_weight",
           "in_proj_bias": "attn.in_proj_bias", "out": "attn.out_proj.weight", "out_bias": "attn.out_proj.bias", "scale": "1/sqrt(d_k)"},
          open(f"{out}/A/map.json", "w"))
B = {"q_proj.weight": torch.randn(16, 16) * 0.4, "k_proj.weight": torch.randn(8, 16) * 0.4, "v_proj.weight": torch.randn(8, 16) * 0.4,
     "o_proj.weight": torch.randn(16, 16) * 0.3, "q_proj.bias": torch.randn(16) * 0.2, "k_proj.bias": torch.randn(8) * 0.2,
     "v_proj.bias": torch.randn(8) * 0.2, "o_proj.bias": torch.randn(16) * 0.2}
mapB = {"format": "mhaq-safetensors-map", "version": 1, "heads": 4, "kv_heads": 2, "layout": "out_in", "q": "q_proj.weight", "k": "k_proj.weight",
        "v": "v_proj.weight", "out": "o_proj.weight", "q_bias": "q_proj.bias", "k_bias": "k_proj.bias", "v_bias": "v_proj.bias",
        "out_bias": "o_proj.bias", "scale": "1/sqrt(d_k)", "rope": {"theta": "10000", "pairing": "half"}}
for name, dt in (("B", torch.float32), ("B16", torch.float16), ("Bbf", torch.bfloat16)):
    os.makedirs(f"{out}/{name}", exist_ok=True)
    w.save_safetensors(f"{out}/{name}/model.safetensors", {k: v.to(dt) for k, v in B.items()})
    json.dump(mapB, open(f"{out}/{name}/map.json", "w"))
rng = random.Random(7)
lengths = [1, 32, 2, 3, 31] + [rng.randint(1, 32) for _ in range(15)]
seqs = []
for k, n in enumerate(lengths):
    toks = [[f"{rng.randint(-24, 24)}/8" for _ in range(16)] for _ in range(n)]
    if k % 4 == 1 and n > 2:  # left padding: the first keys are padding, row 0 has no key to attend
        seqs.append({"tokens": toks, "key_padding_mask": [i < 2 for i in range(n)]})
    elif k % 4 == 3 and n > 1:  # right padding
        seqs.append({"tokens": toks, "key_padding_mask": [i == n - 1 for i in range(n)]})
    elif k == 6:  # an additive mask: a penalty on the first key, one key hidden
        seqs.append({"tokens": toks, "attn_mask": [["-1/2" if i == 0 else ("-inf" if i == 1 and r > 1 else "0") for i in range(n)] for r in range(n)]})
    else:
        seqs.append(toks)
json.dump({"format": "mhaq-inputs", "version": 1, "d": 16, "sequences": seqs}, open(f"{out}/inputs.json", "w"))
PY

# 2. Export and check.
"$M" golden kernel --safetensors "$tmp/A/model.safetensors" --map "$tmp/A/map.json" --inputs "$tmp/inputs.json" --causal --digits 30 \
  --head-outputs --attention-weights -o "$tmp/A.json" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "golden kernel (A)"; }
cat "$tmp/out"
for L in B B16 Bbf; do
  "$M" golden kernel --safetensors "$tmp/$L/model.safetensors" --map "$tmp/$L/map.json" --inputs "$tmp/inputs.json" --causal --digits 30 \
    -o "$tmp/$L.json" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "golden kernel ($L)"; }
done
for L in A B; do
  "$M" golden check "$tmp/$L.json" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "golden check ($L)"; }
  cat "$tmp/out"
done

# 3. mpmath at 60 digits, from the safetensors bytes (its own reader here).
"$py" - "$tmp" <<'PY' || fail "60-digit comparison"
import json, struct, sys
from fractions import Fraction as F
import mpmath
mp = mpmath.mp
mp.dps = 60
out = sys.argv[1]

def tensors(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    h = json.loads(data[8:8 + n])
    t = {}
    for name, e in h.items():
        if name == "__metadata__":
            continue
        b, en = e["data_offsets"]
        raw = data[8 + n + b:8 + n + en]
        vals = [F(x) for x in struct.unpack(f"<{len(raw) // 4}f", raw)]
        shape = e["shape"]
        t[name] = [vals[r * shape[1]:(r + 1) * shape[1]] for r in range(shape[0])] if len(shape) == 2 else vals
    return t

def mpf(x):
    return mpmath.mpf(x.numerator) / x.denominator

def layer_A(t):
    W, b = t["attn.in_proj_weight"], t["attn.in_proj_bias"]
    return dict(H=2, G=2, dk=8, dv=8, q=W[:16], k=W[16:32], v=W[32:], o=t["attn.out_proj.weight"], bq=b[:16], bk=b[16:32], bv=b[32:],
                bo=t["attn.out_proj.bias"], rope=False)

def layer_B(t):
    return dict(H=4, G=2, dk=4, dv=4, q=t["q_proj.weight"], k=t["k_proj.weight"], v=t["v_proj.weight"], o=t["o_proj.weight"],
                bq=t["q_proj.bias"], bk=t["k_proj.bias"], bv=t["v_proj.bias"], bo=t["o_proj.bias"], rope=True)

def affine(Wm, bm, x):
    return [sum((mpf(w) * xi for w, xi in zip(row, x)), mpf(bb)) for row, bb in zip(Wm, bm)]

def evaluate(L, seq, causal):
    """rows -> (out, heads, weights) or None, in mpmath."""
    toks = seq["tokens"] if isinstance(seq, dict) else seq
    X = [[mpmath.mpf(F(x).numerator) / F(x).denominator for x in t] for t in toks]
    N = len(X)
    pad = seq.get("key_padding_mask") if isinstance(seq, dict) else None
    mask = seq.get("attn_mask") if isinstance(seq, dict) else None
    H, G, dk, dv = L["H"], L["G"], L["dk"], L["dv"]
    Q = [affine(L["q"], L["bq"], x) for x in X]
    K = [affine(L["k"], L["bk"], x) for x in X]
    V = [affine(L["v"], L["bv"], x) for x in X]
    if L["rope"]:
        def rot(vec, pos, heads):
            vec = list(vec)
            for h in range(heads):
                for j in range(dk // 2):
                    ang = pos * mpmath.power(10000, mpmath.mpf(-2 * j) / dk)
                    a, b = h * dk + j, h * dk + j + dk // 2
                    c, s = mpmath.cos(ang), mpmath.sin(ang)
                    vec[a], vec[b] = vec[a] * c - vec[b] * s, vec[b] * c + vec[a] * s
            return vec
        Q = [rot(q, p, H) for p, q in enumerate(Q)]
        K = [rot(k, p, G) for p, k in enumerate(K)]
    scale = 1 / mpmath.sqrt(dk)
    rows = []
    for n in range(N):
        keys = [i for i in range(N) if not (causal and i > n) and not (pad and pad[i]) and not (mask and mask[n][i] == "-inf")]
        if not keys:
            rows.append(None)
            continue
        heads, weights = [], []
        for h in range(H):
            g = h // (H // G)
            sc = {i: scale * mpmath.fsum(Q[n][h * dk + c] * K[i][g * dk + c] for c in range(dk)) + (mpf(F(mask[n][i])) if mask else 0) for i in keys}
            top = max(sc.values())
            e = {i: mpmath.exp(sc[i] - top) for i in keys}
            tot = mpmath.fsum(e.values())
            a = [e[i] / tot if i in e else mpmath.mpf(0) for i in range(N)]
            weights.append(a)
            heads.append([mpmath.fsum(a[i] * V[i][g * dv + c] for i in keys) for c in range(dv)])
        flat = [x for hh in heads for x in hh]
        o = [mpmath.fsum(mpf(w) * y for w, y in zip(row, flat)) + mpf(b) for row, b in zip(L["o"], L["bo"])]
        exact = None
        if len(keys) == 1:  # one key: every value is rational; exact, for the decimal ties a ball cannot decide
            i = keys[0]
            fr = lambda W, b, x: [sum((w * xi for w, xi in zip(row, x)), bb) for row, bb in zip(W, b)]
            xs = [F(x) for x in (seq["tokens"] if isinstance(seq, dict) else seq)[i]]
            v = fr(L["v"], L["bv"], xs)
            hx = [v[(h // (H // G)) * dv + c] for h in range(H) for c in range(dv)]
            exact = (fr(L["o"], L["bo"], hx), [hx[h * dv:(h + 1) * dv] for h in range(H)], [[F(int(j == i)) for j in range(N)] for _ in range(H)])
        rows.append((o, heads, weights, exact))
    return rows

def decimal(x, digits):
    """x (a Fraction) correctly rounded to `digits` significant digits, ties to even."""
    if x == 0:
        return "0." + "0" * (digits - 1) + "e+00"
    a = abs(x)
    E = len(str(a.numerator)) - len(str(a.denominator))
    while a >= F(10) ** (E + 1):
        E += 1
    while a < F(10) ** E:
        E -= 1
    y = a * F(10) ** (digits - 1 - E)
    q, r = divmod(y.numerator, y.denominator)
    if 2 * r > y.denominator or (2 * r == y.denominator and q % 2):
        q += 1
    if q == 10 ** digits:
        q, E = q // 10, E + 1
    m = str(q)
    return ("-" if x < 0 else "") + m[0] + "." + m[1:] + f"e{'-' if E < 0 else '+'}{abs(E):02d}"

def same(decimal, f, digits):
    mant, e = decimal.split("e")
    ds = mant.replace("-", "").replace(".", "")
    assert len(ds) == digits, decimal
    if abs(f) < mpmath.mpf(10) ** -50:
        return set(ds) == {"0"}
    y = abs(f) * mpmath.mpf(10) ** (digits - 1 - int(e))
    fl = mpmath.floor(y)
    assert abs(y - fl - mpmath.mpf(0.5)) > mpmath.mpf(10) ** -20, "too near a tie to decide at 60 digits"
    return str(int(fl) + (1 if y - fl > 0.5 else 0)) == ds and (f < 0) == mant.startswith("-")

inputs = json.load(open(f"{out}/inputs.json"))["sequences"]
for name, layer in (("A", layer_A(tensors(f"{out}/A/model.safetensors"))), ("B", layer_B(tensors(f"{out}/B/model.safetensors")))):
    g = json.load(open(f"{out}/{name}.json"))
    assert g["summary"]["sequences"] == 20 and len(g["sequences"]) == 20
    n_entries = n_null = n_exact = 0
    for s, seq in zip(g["sequences"], inputs):
        ref = evaluate(layer, seq, True)
        assert s["query_positions"] == list(range(len(ref)))
        for r, row in enumerate(s["output"]):
            if ref[r] is None:
                assert row is None, (name, s["index"], r)
                n_null += 1
                continue
            o, heads, weights, exact = ref[r]
            checks = [(row, o, exact and exact[0])]
            if "head_outputs" in s:
                checks += [(blk, heads[h], exact and exact[1][h]) for h, blk in enumerate(s["head_outputs"][r])]
                checks += [(blk, weights[h], exact and exact[2][h]) for h, blk in enumerate(s["attention_weights"][r])]
            for entries, vals, ex in checks:
                for k, (ent, f) in enumerate(zip(entries, vals)):
                    if ex:
                        assert ent[0] == decimal(ex[k], 30) and abs(f - mpf(ex[k])) < mpmath.mpf(10) ** -50, (name, s["index"], r, ent[0])
                        n_exact += 1
                    else:
                        assert same(ent[0], f, 30), (name, s["index"], r, ent[0], mpmath.nstr(f, 35))
                    n_entries += 1
    print(f"layer {name}: {n_entries} entries equal the 60-digit mpmath evaluation rounded to 30 digits ({n_exact} of them in rows of one key, "
          f"rational, equal to the exact value rounded; {n_null} rows with no key, null)")
PY

# 4. Tampering is rejected (exit 10) and named.
"$py" - "$tmp/A.json" "$tmp" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
s = next(s for s in g["sequences"] if len(s["tokens"]) > 3)
def dump(name):
    json.dump(g, open(f"{sys.argv[2]}/{name}.json", "w"), indent=0)
e = s["output"][2][3]
keep = list(e)
m, x = e[0].split("e")
e[0] = m[:-1] + str((int(m[-1]) + 1) % 10) + "e" + x
dump("t_digit")
e[:] = keep
p, q = e[1].split("/")
e[1] = f"{int(p) + int(p) // 1000 + 1}/{q}"  # the ball moved by a thousandth of the value
dump("t_ball")
e[:] = keep
s["output"][2] = None
dump("t_null")
PY
for t in t_digit t_ball t_null; do
  set +e
  "$M" golden check "$tmp/$t.json" >"$tmp/out" 2>&1
  rc=$?
  set -e
  [[ $rc == 10 ]] || { cat "$tmp/out"; fail "golden check of $t exited $rc, expected 10"; }
  grep -q "output\[2\]" "$tmp/out" || { cat "$tmp/out"; fail "$t: the mismatch does not name output[2]"; }
done

# 5. Kernels against the certified outputs, and the wrong variants.
C="$E/check_kernel.py"
run() {  # expected-exit file kernel dtype variant
  set +e
  "$py" "$C" "$tmp/$2.json" --kernel "$3" --dtype "$4" --variant "$5" --quiet >"$tmp/out" 2>&1
  local rc=$?
  set -e
  [[ $rc == "$1" ]] || { cat "$tmp/out"; fail "check_kernel $2 --kernel $3 --dtype $4 --variant $5 exited $rc, expected $1"; }
  if [[ $1 == 0 ]]; then echo "$2 $3 $4: $(grep -E 'worst error' "$tmp/out")"; fi
  # a failure names the worst entry's sequence, row and column and its error in ulps of the kernel's dtype
  if [[ $1 == 10 ]] && ! grep -qE "sequence [0-9]+: (output|attention weights): [0-9]+ of [0-9]+ entries outside the bound; worst at row [0-9]+, (column|head) [0-9]+.* ulps of $4" "$tmp/out"; then
    cat "$tmp/out"
    fail "the failure of $2 --variant $5 does not name the worst entry and its ulps"
  fi
}
for dt in float64 float32; do
  run 0 A torch $dt none
  run 0 A numpy $dt none
  run 0 B numpy $dt none
done
for L in B16 Bbf; do run 0 $L numpy float32 none; done
for v in no-scale mask-off-by-one bias-dropped transposed; do
  for dt in float64 float32; do run 10 A torch $dt $v; done
done
for v in rope-pairing no-scale mask-off-by-one bias-dropped; do run 10 B numpy float32 $v; done
echo "python_kernel_golden: ok"
