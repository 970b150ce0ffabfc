#!/usr/bin/env bash
# The cost model's precision factor (docs/studies/cost-model.md), checked on
# this machine (not part of ctest): a drawn (32, 4) model in balls, seed 1,
# one thread, at 256 to 4096 bits; per precision the processor time (user +
# system) over the time at 1024 bits, beside the factor the program predicts
# (its --dry-run at that precision over its --dry-run at 1024 bits).
#   usage: bash tests/bench/cost_bits.sh [BUILD_DIR] [D] [H]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-$here/../../build}/mhaq"
d="${2:-32}" H="${3:-4}"
[[ -x $bin ]] || { echo "cost_bits.sh: no $bin" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for b in 256 512 1024 2048 4096; do
  /usr/bin/time -f "%U %S" -o "$tmp/$b.time" "$bin" recover --d "$d" --heads "$H" --arith ball --bits "$b" --threads 1 --seed 1 --json >"$tmp/$b.json" 2>"$tmp/$b.err"
  "$bin" recover --d "$d" --heads "$H" --arith ball --bits "$b" --threads 1 --dry-run --json >"$tmp/$b.dry" || true
done
python3 - "$tmp" <<'PY'
import json, sys
t = sys.argv[1]
cpu = {b: sum(map(float, open(f"{t}/{b}.time").read().split()[:2])) for b in (256, 512, 1024, 2048, 4096)}
dry = {b: json.load(open(f"{t}/{b}.dry"))["predicted_seconds"] for b in cpu}
print(f"{'bits':>6} {'status':>7} {'cpu s':>8} {'measured':>9} {'model':>7} {'model/measured':>15}")
for b in cpu:
    st = json.load(open(f"{t}/{b}.json"))["status"]
    m, p = cpu[b] / cpu[1024], dry[b] / dry[1024]
    print(f"{b:6d} {st:>7} {cpu[b]:8.2f} {m:9.2f} {p:7.2f} {p / m:15.2f}")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
