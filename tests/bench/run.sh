#!/usr/bin/env bash
# Side-by-side benchmark: mhaq (in-process recover) against the mpmath
# baseline at equal work (same d, H, schedule, precision => same queries).
#   usage: bash tests/bench/run.sh [BUILD_DIR] [SEED]
# Needs python3 with mpmath (Debian: python3-mpmath). Not run by ctest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build}"
seed="${2:-1}"
shared="${MHAQ_SHARED:-$here/../../../shared}"
py=/usr/bin/python3
[[ -x $py ]] || py=python3
mhaq_json=$("$build/bench_recover" "$seed" 3)
echo "$mhaq_json"
base_json=$("$py" "$shared/baselines/mpmath_reference.py" 12 4 256 "$seed" paper)
echo "$base_json"
"$py" - "$mhaq_json" "$base_json" <<'PY'
import json, sys
rows = [json.loads(l) for l in sys.argv[1].splitlines()]
base = json.loads(sys.argv[2])
m = next(r for r in rows if r["case"] == "mpfr_d12_H4_256")
assert m["queries"] == base["queries"] and m["max_length"] == base["max_length"], "unequal work"
print(f"equal work: {m['queries']} queries, max length {m['max_length']}, 256 bits, paper schedule")
print(f"mpfr d=12 H=4: mhaq {m['seconds']:.4f} s, mpmath {base['seconds']:.4f} s, speedup x{base['seconds']/m['seconds']:.1f} (target >= 20)")
print(f"  max_rel_error: mhaq {m.get('max_rel_error')}, mpmath {base['max_rel_error']}")
e = next(r for r in rows if r["case"] == "exact_d4_H3")
print(f"exact d=4 H=3: {e['seconds']:.3f} s, status {e['status']}, exact_match {e.get('exact_match')}, {e['queries']} queries")
b = next(r for r in rows if r["case"] == "ball_d12_H4_256")
print(f"ball d=12 H=4 256 bits: {b['seconds']:.4f} s, contains_truth {b.get('contains_truth')}, max_radius {b.get('max_radius')}")
PY
# --target-error: precision used vs the smallest certifying precision, d=8, H=6, 1e-30
"$build/bench_autoprec" 8 6 1e-30 3
