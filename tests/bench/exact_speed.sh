#!/usr/bin/env bash
# Exact runs against their time targets, as ratios (run by hand, or by
# speed.sh; not a timed test): `mhaq recover --arith exact --heads 4` at
# d = 16 (target 5 s) and d = 24 (target 120 s), single-threaded, seeds 1, 2
# and 3; the median of the three seeds' processor time (user CPU) and wall
# time, each over the target. Every run must end ok.
#   usage: bash tests/bench/exact_speed.sh [BUILD_DIR] [DIMS...]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build}"
shift || true
dims=("$@")
[[ ${#dims[@]} -gt 0 ]] || dims=(16 24)
mhaq="$build/mhaq"
[[ -x $mhaq ]] || { echo "exact_speed.sh: no $mhaq" >&2; exit 2; }
target() { case "$1" in 16) echo 5 ;; 24) echo 120 ;; *) echo "" ;; esac; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
printf '%-34s %8s %8s %9s %9s %8s\n' "exact H=4, median of seeds 1-3" "user s" "wall s" "user/tgt" "wall/tgt" "target"
for d in "${dims[@]}"; do
  users=() walls=()
  for s in 1 2 3; do
    /usr/bin/time -f "%U %e" -o "$tmp/t" "$mhaq" recover --d "$d" --heads 4 --arith exact --seed "$s" --threads 1 --json >"$tmp/out.json"
    status=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$tmp/out.json")
    [[ $status == ok ]] || { echo "exact_speed.sh: d=$d seed $s ended $status" >&2; exit 1; }
    read -r u w <"$tmp/t"
    users+=("$u") walls+=("$w")
  done
  t=$(target "$d")
  python3 - "$d" "${t:-0}" "${users[*]}" "${walls[*]}" <<'PY'
import statistics, sys
d, t = sys.argv[1], float(sys.argv[2])
u = statistics.median(map(float, sys.argv[3].split()))
w = statistics.median(map(float, sys.argv[4].split()))
r = (lambda x: f"{x / t:9.2f}") if t > 0 else (lambda x: f"{'-':>9s}")
print(f"{'d=' + d + ' (seconds: ' + sys.argv[3] + ')':34s} {u:8.2f} {w:8.2f} {r(u)} {r(w)} {('<= ' + str(int(t)) + ' s') if t else '-':>8s}")
PY
done
echo "load average (1, 5, 15 min): $load_before before, $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?") after"
