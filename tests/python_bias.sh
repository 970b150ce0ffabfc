#!/usr/bin/env bash
# ctest python_bias: torch layers with biases and any scale, end to end.
# 1. torch.nn.MultiheadAttention(d, H) with its default initialisation and
#    biases drawn normal (sd 0.1), F32, at (d, H) = (8, 2), (8, 4) (d_k = 2:
#    scale 1/sqrt(2), irrational) and (16, 4), written by
#    examples/python/write_safetensors.py --bias and converted by mhaq convert
#    --safetensors; mhaq oracle serves the converted file (certified balls at
#    512 bits) and recover --oracle --bias --arith ball learns it knowing only
#    d and H; tests/bias_truth_check.py derives the canonical (W_h, c_h, v_h)
#    and beta from the tensors' bytes and requires every ball to contain them.
#    A float run (torch_mha.py --bias in float64, learned in double) ends ok
#    with a certified bound at least its true max_rel_error.
# 2. A default torch layer with d = 16, H = 2 (d_k = 8, scale 1/(2 sqrt 2)),
#    biases, F32: golden export --certified, golden check, and
#    examples/python/check_torch_attention.py passing in float64 and float32;
#    its no-scale, transposed and no-bias variants fail.
# usage: python_bias.sh MHAQ SOURCE_DIR
set -euo pipefail
M="$1"
src="$2"
fail() { echo "FAIL: $*" >&2; exit 1; }
py=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import torch, mpmath' 2>/dev/null; then py="$p"; break; fi
done
[[ -n "$py" ]] || fail "no python3 with torch and mpmath (Debian: python3-torch python3-mpmath)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
E="$src/examples/python"

# 1. recovery in balls through the oracle, against the truth from the tensors
for shape in "8 2 1" "8 4 2" "16 4 3"; do
  read -r d H seed <<<"$shape"
  L="$tmp/layer_${d}_${H}"
  "$py" "$E/write_safetensors.py" "$L" --d "$d" --heads "$H" --dtype float32 --seed "$seed" --bias >/dev/null
  "$M" convert --safetensors "$L/attention.safetensors" --map "$L/map.json" -o "$L/factored.json" >/dev/null || fail "convert --safetensors (d=$d, H=$H)"
  "$M" recover --oracle "$M oracle --model $L/factored.json --arith ball --bits 512" --d "$d" --heads "$H" --bias \
    --arith ball --bits 256 --seed 1 --quiet --json >"$L/recover.json" 2>"$L/recover.err" || true
  "$py" "$src/tests/bias_truth_check.py" "$L" "$L/recover.json" || { cat "$L/recover.err" >&2; fail "d=$d, H=$H: the balls do not contain the truth"; }
done

# 1b. a float run: torch_mha.py --bias answering in float64, learned in double
# with the scaled design; the float judge's certified bound (the replay in
# balls over the answers within their stated error) holds [W c], v and beta,
# and must be at least the true max_rel_error against the layer's own file
T="$tmp/torch_float"
mkdir -p "$T"
O="$py $src/examples/oracles/torch_mha.py --d 4 --heads 2 --seed 5 --bias"
$O --write-model "$T/model.json" >/dev/null 2>&1 </dev/null || fail "torch_mha.py --write-model"
"$M" recover --model "$T/model.json" --oracle "$O" --arith double --design scaled --seed 1 --quiet --json >"$T/r.json" 2>"$T/r.err" || true
"$py" - "$T/r.json" <<'PY' || { cat "$T/r.err" >&2; fail "the float run with biases"; }
import json, sys
r = json.load(open(sys.argv[1]))
ok = r.get("status") == "ok" and r.get("bias") is True and r.get("beta") is not None
ok = ok and r.get("certified_error") is not None and r["max_rel_error"] <= r["certified_error"] <= r["tolerance"]
print(f"float run: {r.get('status')}, certified {r.get('certified_error')}, true {r.get('max_rel_error')}")
sys.exit(0 if ok else 1)
PY

# 2. golden files for a default layer with d_k = 8 (scale 1/(2 sqrt 2)) and biases
G="$tmp/golden"
"$py" "$E/write_safetensors.py" "$G" --d 16 --heads 2 --dtype float32 --seed 4 --bias >/dev/null
"$M" convert --safetensors "$G/attention.safetensors" --map "$G/map.json" -o "$G/factored.json" >/dev/null || fail "convert (d = 16, H = 2)"
grep -q '"sqrt(2)/4"' "$G/factored.json" || fail "the converted scale is not sqrt(2)/4"
"$py" - "$G/inputs.json" <<'PY'
import json, random, sys
rng = random.Random(7)
seqs = [[[str(rng.randint(-8, 8) / 8) for _ in range(16)] for _ in range(rng.randint(1, 9))] for _ in range(20)]
json.dump({"format": "mhaq-inputs", "version": 1, "d": 16, "sequences": seqs}, open(sys.argv[1], "w"))
PY
"$M" golden export --certified --model "$G/factored.json" --inputs "$G/inputs.json" --seed 1 --digits 30 --no-learner -o "$G/golden.json" >/dev/null \
  || fail "golden export --certified"
"$M" golden check "$G/golden.json" >/dev/null || fail "golden check"
for dt in float64 float32; do
  "$py" "$E/check_torch_attention.py" "$G/golden.json" --layer "$G" --dtype "$dt" --quiet >/dev/null || fail "check_torch_attention ($dt)"
done
for v in no-scale transposed no-bias; do
  if "$py" "$E/check_torch_attention.py" "$G/golden.json" --layer "$G" --dtype float64 --variant "$v" --quiet >/dev/null; then
    fail "the $v variant passed"
  fi
done
echo "python_bias: 3 torch layers with biases learned in balls, every ball containing the truth from the tensors; a float run ok with its certified bound above its true error; golden files with scale sqrt(2)/4 and biases checked, torch float64 and float32 within the bound, the no-scale, transposed and no-bias variants failing"
