#!/usr/bin/env bash
# ctest oracle_examples: recover --oracle end to end (docs/oracle-protocol.md).
# (The 20-model transparency set and resume: ctest oracle_transparency.)
#  1. refusals: exact mode, ball without a stated bound, --max-queries, a
#     fault (exit 12);
#  2. NumPy and torch float64 attention, d = 8, H = 2: ok, and the balls
#     contain the exact canonical heads of the factored file; H = 4 never ends
#     ok and wrong; torch float32 at d = 4: H = 1 ok, H = 2 unable.
# usage: oracle_examples.sh MHAQ SOURCE_DIR
set -uo pipefail
M="$1"
src="$2"
E="$src/examples/oracles"
fail() { echo "FAIL: $*" >&2; exit 1; }
py=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import numpy, torch' 2>/dev/null; then py="$(command -v "$p")"; break; fi
done
[[ -n "$py" ]] || fail "no python3 with NumPy and torch (Debian: python3-numpy python3-torch)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
field() { "$py" -c "import json,sys; a=json.load(open(sys.argv[1])); print(a.get(sys.argv[2]))" "$1" "$2"; }

# models for the refusals (transparency and resume: ctest oracle_transparency)
"$M" generate --d 3 --heads 2 --seed 1 --for ball -o m.json >/dev/null || fail "generate"
"$M" generate --d 8 --heads 4 --seed 3 --for ball -o m8.json >/dev/null || fail "generate"

# 1. refusals
"$M" recover --oracle "$M oracle --model m.json" --model m.json >/dev/null 2>&1; [[ $? == 2 ]] || fail "exact mode must refuse --oracle (exit 2)"
"$M" recover --oracle "$M oracle --model m.json --arith double" --model m.json --arith ball >/dev/null 2>err; [[ $? == 2 ]] || fail "ball without a bound must refuse"
grep -q -- "--oracle-error" err || fail "the refusal should say what to state"
"$M" recover --oracle "$M oracle --model m8.json --arith ball" --d 8 --heads 4 --arith ball --max-queries 1000 --json > mq.json 2>/dev/null
[[ $? == 11 && "$(field mq.json queries)" == 0 ]] || fail "--max-queries 1000 below the plan's 1017 must refuse before asking (exit 11)"

# 2. NumPy and torch
"$py" "$E/torch_mha.py" --d 8 --heads 2 --seed 1 --write-model t82.json
for o in "$py $E/torch_mha.py --d 8 --heads 2 --seed 1" "$py $E/numpy_mha.py t82.json"; do
  "$M" recover --oracle "$o" --model t82.json --arith ball --bits 256 --seed 1 --design scaled --json > r.json 2>/dev/null
  [[ "$(field r.json status)" == ok && "$(field r.json contains_truth)" == True ]] || fail "$o: $(field r.json status), contains_truth $(field r.json contains_truth): $(field r.json message)"
  echo "$o: ok, max_radius $(field r.json max_radius_decimal)"
done
"$py" "$E/torch_mha.py" --d 8 --heads 4 --seed 1 --write-model t84.json
"$M" recover --oracle "$py $E/torch_mha.py --d 8 --heads 4 --seed 1" --model t84.json --arith ball --bits 256 --seed 1 --design scaled --json > r.json 2>/dev/null
s="$(field r.json status)"
[[ ( "$s" == ok && "$(field r.json contains_truth)" == True ) || "$s" == unable ]] || fail "torch d=8 H=4: $s"
echo "torch d=8 H=4: $s ($(field r.json message))"
for H in 1 2; do
  "$py" "$E/torch_mha.py" --d 4 --heads $H --seed 1 --dtype float32 --write-model f.json
  "$M" recover --oracle "$py $E/torch_mha.py --d 4 --heads $H --seed 1 --dtype float32" --model f.json --arith ball --bits 256 --seed 1 --design scaled --json > r.json 2>/dev/null
  want=ok; [[ $H == 2 ]] && want=unable
  [[ "$(field r.json status)" == "$want" ]] || fail "torch float32 d=4 H=$H: $(field r.json status), expected $want"
  [[ "$want" != ok || "$(field r.json contains_truth)" == True ]] || fail "torch float32 d=4 H=1: ok but the balls miss the truth"
done
echo "oracle_examples: all passed"
