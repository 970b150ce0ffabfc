#!/usr/bin/env bash
# Side-by-side benchmark: golden check of certified golden files (the scalar
# f(X) = u . attention(X) at the last token) reads them as a stream. A float64
# layer nn.MultiheadAttention(8, 2, bias=False) with its readout, converted
# exactly; certified files of your own sequences (--no-learner, 20 digits) of
# about SMALL_MB and BIG_MB megabytes (sequences of 100 tokens); golden check
# of each: processor seconds and peak memory (maximum resident set size), and
# their ratios. The check holds the file's members but the queries (the
# answers are small) and one query at a time, so its peak should not follow
# the file's size.
#   usage: bash tests/bench/certified_golden_memory.sh [BUILD_DIR] [SMALL_MB] [BIG_MB]
# Needs python3 with torch (Debian python3-torch). Not run by ctest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build}"
small_mb="${2:-10}"
big_mb="${3:-105}"
M="$(cd "$build" && pwd)/mhaq"
py=/usr/bin/python3
[[ -x $py ]] || py=python3
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$py" "$here/../../examples/python/write_safetensors.py" "$tmp/layer" --d 8 --heads 2 --dtype float64 --seed 1 >/dev/null
"$M" convert --safetensors "$tmp/layer/attention.safetensors" --map "$tmp/layer/map.json" -o "$tmp/factored.json" >/dev/null
row() {  # label megabytes
  "$py" - "$tmp/in_$1.json" "$2" <<'PY'
import json, random, sys
path, mb = sys.argv[1], float(sys.argv[2])
rng = random.Random(4)
n = int(mb * 1e6 / 100 / 72) + 1  # about 72 bytes a token in the golden file
seqs = [[[f"{rng.randint(-24, 24)}/8" for _ in range(8)] for _ in range(100)] for _ in range(n)]
json.dump({"format": "mhaq-inputs", "version": 1, "d": 8, "sequences": seqs}, open(path, "w"))
PY
  "$M" golden export --certified --model "$tmp/factored.json" --no-learner --digits 20 --inputs "$tmp/in_$1.json" -o "$tmp/g_$1.json" >/dev/null
  /usr/bin/time -f "%U %S %M" -o "$tmp/time" "$M" golden check "$tmp/g_$1.json" >"$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
  read -r u s m <"$tmp/time"
  echo "$1 $(stat -c %s "$tmp/g_$1.json") $(awk "BEGIN {print $u + $s}") $m"
}
read -r _ bs ts ms < <(row small "$small_mb")
read -r _ bb tb mb < <(row big "$big_mb")
"$py" - "$bs" "$ts" "$ms" "$bb" "$tb" "$mb" <<'PY'
import sys
bs, ts, ms, bb, tb, mb = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
print(f"golden check of certified files (d = 8, H = 2, sequences of 100 tokens, 20 digits):")
print(f"  {bs / 1e6:6.1f} MB: {ts:6.1f} s, peak {ms / 1024:5.0f} MiB")
print(f"  {bb / 1e6:6.1f} MB: {tb:6.1f} s, peak {mb / 1024:5.0f} MiB")
print(f"  the big file: {bb / bs:.1f} x the bytes, {tb / ts:.1f} x the time, {mb / ms:.2f} x the peak memory")
PY
