#!/usr/bin/env bash
# The compact schedule's figures, in one run (not part of ctest):
#  1. the ratio table (queries against the floor H(d^2+d)) for d in {4,8,12,16}
#     and H in {1,2,4,8}, counted on the plans make_plan emits;
#  2. mhaq verify --schedule compact --arith exact --trials 200 (d <= 4, H <= 3);
#  3. kappa beside the paper and lean schedules: mhaq sweep over the three
#     schedules (MPFR, d=4, H=1..4), the median bits lost per (schedule, H).
#   usage: bash tests/bench/compact.sh [build dir] [trials for verify] [trials for sweep]
set -euo pipefail
build=${1:-build}
trials=${2:-200}
sweep_trials=${3:-8}
bin="$build/mhaq"
[[ -x "$build/compact_ratio" ]] || { echo "build $build/compact_ratio first (cmake --build $build --target compact_ratio)"; exit 2; }
echo "== 1. query counts"
"$build/compact_ratio"
echo
echo "== 2. mhaq verify --schedule compact --arith exact --trials $trials --seed 1"
start=$(date +%s)
"$bin" verify --schedule compact --arith exact --trials "$trials" --seed 1 --threads 0
echo "(verify: $(( $(date +%s) - start )) s)"
echo
echo "== 3. kappa and bits lost beside the paper and lean schedules (mhaq sweep, MPFR)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" sweep --d 4 --heads 1-4 --bits 53,64,128,256 --schedule paper,lean,compact --trials "$sweep_trials" -o "$tmp/sweep.csv" --threads 0 --quiet
python3 - "$tmp/sweep.csv" <<'PY'
import csv, sys
from collections import defaultdict
rows = list(csv.DictReader(open(sys.argv[1])))
st = defaultdict(lambda: defaultdict(int))
for r in rows:
    st[(r["schedule"], int(r["H"]))][(int(r["bits"]), r["status"])] += 1
bits = sorted({int(r["bits"]) for r in rows})
print("\nok runs per precision (of the sweep's trials):")
print("  schedule   H  " + "  ".join(f"{b:>4} bits" for b in bits))
for key in sorted(st, key=lambda k: (["paper", "lean", "compact"].index(k[0]), k[1])):
    cells = []
    for b in bits:
        tot = sum(v for (bb, s), v in st[key].items() if bb == b)
        ok = st[key].get((b, "ok"), 0)
        cells.append(f"{ok:>4}/{tot:<4}")
    print(f"  {key[0]:<8} {key[1]:>2}  " + "  ".join(cells))
PY
