#!/usr/bin/env bash
# Side-by-side benchmark: kernel golden files at scale. A torch layer
# nn.MultiheadAttention(64, 8, bias=True) in float32 (d_k = 8: the scale is
# irrational) written as safetensors; 50 sequences of 64 tokens, every
# position, causal, 20 digits:
#   - `golden kernel` (one thread): wall time (target: at most 60 s) and peak memory;
#   - `golden check` of that file (one thread): wall time, its ratio to the
#     export's (target: at most 2) and peak memory;
#   - a file of more than 100 MB (BIG_MB, default 105) (the same layer, more sequences; exported
#     with two threads) checked: peak memory next to the small file's, which
#     shows that the check's memory does not grow with the file (one sequence
#     at a time).
# Times are processor seconds (user + system; on a busy shared machine the
# wall time says more about the other jobs), with the wall time beside them;
# peak memory is the maximum resident set size that /usr/bin/time reports.
#   usage: bash tests/bench/kernel_golden.sh [BUILD_DIR] [BIG_MB]
# Needs python3 with torch (Debian python3-torch). Not run by ctest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build}"
big_mb="${2:-105}"
M="$(cd "$build" && pwd)/mhaq"
py=/usr/bin/python3
[[ -x $py ]] || py=python3
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
E="$here/../../examples/python" "$py" - "$tmp" <<'PY'
import json, os, random, sys
import torch
sys.path.insert(0, os.environ["E"])
import write_safetensors as w
out = sys.argv[1]
torch.manual_seed(5)
mha = torch.nn.MultiheadAttention(64, 8, bias=True, dtype=torch.float32)
with torch.no_grad():
    mha.in_proj_bias.normal_(0, 0.1)
    mha.out_proj.bias.normal_(0, 0.1)
w.save_safetensors(f"{out}/layer.safetensors", {"in_proj_weight": mha.in_proj_weight, "in_proj_bias": mha.in_proj_bias,
                                                "out_proj.weight": mha.out_proj.weight, "out_proj.bias": mha.out_proj.bias})
json.dump({"format": "mhaq-safetensors-map", "version": 1, "heads": 8, "layout": "out_in", "in_proj": "in_proj_weight", "in_proj_bias": "in_proj_bias",
           "out": "out_proj.weight", "out_bias": "out_proj.bias", "scale": "1/sqrt(d_k)"}, open(f"{out}/map.json", "w"))
rng = random.Random(9)
def inputs(n, path):
    seqs = [[[f"{rng.randint(-32, 32)}/16" for _ in range(64)] for _ in range(64)] for _ in range(n)]
    json.dump({"format": "mhaq-inputs", "version": 1, "d": 64, "sequences": seqs}, open(path, "w"))
inputs(50, f"{out}/in50.json")
PY
measure() {  # label, command...: prints "label cpu_seconds peak_kib wall_seconds"
  local label="$1"
  shift
  /usr/bin/time -f "%U %S %M %e" -o "$tmp/time" "$@" >"$tmp/out" 2>&1 || { cat "$tmp/out"; exit 1; }
  read -r u s m e <"$tmp/time"
  echo "$label $(awk "BEGIN {print $u + $s}") $m $e"
}
K=("$M" golden kernel --safetensors "$tmp/layer.safetensors" --map "$tmp/map.json" --causal --digits 20)
read -r _ te me we < <(measure export "${K[@]}" --inputs "$tmp/in50.json" --threads 1 -o "$tmp/g50.json")
read -r _ tc mc wc < <(measure check "$M" golden check "$tmp/g50.json" --threads 1)
grep -E "ok|mismatch" "$tmp/out"
bytes=$(stat -c %s "$tmp/g50.json")
"$py" - "$te" "$me" "$we" "$tc" "$mc" "$wc" "$bytes" <<'PY'
import sys
te, me, we, tc, mc, wc, b = float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])
print(f"d = 64, H = 8, 50 sequences x 64 tokens, every position (204800 entries, {b / 1e6:.1f} MB):")
print(f"  export {te:.1f} s (wall {we:.1f} s; target <= 60), peak {me / 1024:.0f} MiB")
print(f"  check  {tc:.1f} s (wall {wc:.1f} s), peak {mc / 1024:.0f} MiB; check / export = {tc / te:.2f} (target <= 2)")
PY
# The big file: enough sequences for BIG_MB megabytes at the small file's bytes per sequence.
n=$(( (big_mb * 1000000) / (bytes / 50) + 1 ))
"$py" - "$tmp" "$n" <<'PY'
import json, random, sys
out, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(10)
seqs = [[[f"{rng.randint(-32, 32)}/16" for _ in range(64)] for _ in range(64)] for _ in range(n)]
json.dump({"format": "mhaq-inputs", "version": 1, "d": 64, "sequences": seqs}, open(f"{out}/inbig.json", "w"))
PY
read -r _ tb mb wb < <(measure export-big "${K[@]}" --inputs "$tmp/inbig.json" --threads 2 -o "$tmp/gbig.json")
read -r _ tcb mcb wcb < <(measure check-big "$M" golden check "$tmp/gbig.json" --threads 1)
grep -E "ok|mismatch" "$tmp/out"
bbytes=$(stat -c %s "$tmp/gbig.json")
"$py" - "$n" "$bbytes" "$tb" "$tcb" "$mcb" "$mc" <<'PY'
import sys
n, b, tb, tcb, mcb, mc = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
print(f"{n} sequences, {b / 1e6:.1f} MB: export {tb:.1f} s (two threads), check {tcb:.1f} s (one thread), "
      f"check peak {mcb / 1024:.0f} MiB, {mcb / mc:.2f} x the 50-sequence file's check")
PY
