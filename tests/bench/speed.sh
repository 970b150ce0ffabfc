#!/usr/bin/env bash
# The speed figures as ratios, side by side in one run (run by hand; not a
# timed test):
#   1. MPFR d=12, H=4, 256 bits, paper schedule: the mpmath + gmpy2 reference
#      over mhaq at equal work (same queries, same lengths), estimate included;
#   2. the share of that run spent on the first-order error estimate (with
#      and without it);
#   3. ball at 256 bits, H=4: time at d=24 over time at d=8 (target 9.06,
#      the paper schedule's own growth in pairs and queries);
#   4. the same ball ratio with both runs on 2 threads, and the 2-thread
#      speedup at d=24 (wall, 1 thread over 2 threads);
#   5. with MHAQ_BENCH_D64=1 (about a minute of processor time per run):
#      ball d=64, H=8, 1024 bits through the program, 1 thread then 2
#      threads: the speedup, the 2-thread wall time, peak memory
#      (/usr/bin/time %M) and whether the two outputs are byte-identical;
#   6. exact, H=4, d=16 and d=24: the median over seeds 1-3 of each run's
#      time over its target (5 s, 120 s), by tests/bench/exact_speed.sh
#      (skipped with MHAQ_SKIP_EXACT=1);
# each in wall time and in processor time (the reference's own timed
# region, read with process_time), and the load average around the run.
#   usage: bash tests/bench/speed.sh [BUILD_DIR] [SEED] [REPEATS]
# Needs Debian's python3-mpmath and python3-gmpy2 for the reference.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build}"
seed="${2:-1}"
reps="${3:-3}"
shared="${MHAQ_SHARED:-$here/../../../shared}"
py=/usr/bin/python3
[[ -x $py ]] || py=python3
"$py" -c 'import gmpy2, mpmath; assert mpmath.libmp.BACKEND == "gmpy"' || { echo "speed.sh: needs python3-mpmath with the gmpy2 backend" >&2; exit 2; }
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
mhaq_json=$("$build/bench_speed" "$seed" "$reps")
echo "$mhaq_json"
# The reference as it is, with the processor time of its own timed region
# added: its two perf_counter calls also read process_time.
ref_cpu='
import io, json, runpy, sys, time
marks, wall = [], time.perf_counter
def both():
    marks.append(time.process_time())
    return wall()
time.perf_counter = both
script, sys.argv = sys.argv[1], sys.argv[1:]
out, sys.stdout = sys.stdout, io.StringIO()
runpy.run_path(script, run_name="__main__")
line, sys.stdout = sys.stdout.getvalue().strip().splitlines()[-1], out
r = json.loads(line)
r["cpu_seconds"] = round(marks[-1] - marks[-2], 4)
print(json.dumps(r))
'
ref=()
for ((i = 0; i < reps; ++i)); do ref+=("$("$py" -c "$ref_cpu" "$shared/baselines/mpmath_reference.py" 12 4 256 "$seed" paper)"); done
load_after=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
printf '%s\n' "${ref[@]}"
"$py" - "$mhaq_json" "$(printf '%s\n' "${ref[@]}")" "$load_before" "$load_after" <<'PY'
import json, statistics, sys
rows = {r["case"]: r for r in map(json.loads, sys.argv[1].splitlines())}
refs = [json.loads(l) for l in sys.argv[2].splitlines()]
m, n = rows["mpfr_d12_H4_256"], rows["mpfr_d12_H4_256_no_est"]
assert all(r["queries"] == m["queries"] and r["max_length"] == m["max_length"] for r in refs), "unequal work"
ref = statistics.median(r["seconds"] for r in refs)
b8, b24 = rows["ball_d8_H4_256"], rows["ball_d24_H4_256"]
print(f"equal work: {m['queries']} queries, longest {m['max_length']}, 256 bits, paper schedule (medians)")
print(f"{'figure':58s} {'ratio':>8s} {'target':>10s}")
print(f"{'mpmath+gmpy2 reference / mhaq mpfr d=12 H=4 (with estimate)':58s} {ref / m['seconds']:8.1f} {'>= 100':>10s}")
print(f"{'estimate share of the mpfr run: 1 - without/with':58s} {1 - n['seconds'] / m['seconds']:8.2f} {'<= 0.15':>10s}")
print(f"{'ball 256 bits H=4: d=24 / d=8':58s} {b24['seconds'] / b8['seconds']:8.2f} {'<= 9.06':>10s}")
ref_cpu = statistics.median(r["cpu_seconds"] for r in refs)
print(f"{'the same in processor time (cpu_seconds):':58s}")
print(f"{'  reference / mhaq mpfr d=12 H=4 (with estimate)':58s} {ref_cpu / m['cpu_seconds']:8.1f} {'>= 100':>10s}")
print(f"{'  estimate share: 1 - without/with':58s} {1 - n['cpu_seconds'] / m['cpu_seconds']:8.2f} {'<= 0.15':>10s}")
print(f"{'  ball d=24 / d=8':58s} {b24['cpu_seconds'] / b8['cpu_seconds']:8.2f} {'<= 9.06':>10s}")
t8, t24 = rows["ball_d8_H4_256_t2"], rows["ball_d24_H4_256_t2"]
print(f"{'4. ball d=24 / d=8, both on 2 threads (wall)':58s} {t24['seconds'] / t8['seconds']:8.2f} {'<= 9.06':>10s}")
print(f"{'   ball d=24 on 2 threads / d=8 on 1 thread (wall)':58s} {t24['seconds'] / b8['seconds']:8.2f} {'<= 9.06':>10s}")
print(f"{'   ball d=24: 1 thread / 2 threads (wall)':58s} {b24['seconds'] / t24['seconds']:8.2f} {'>= 1.7':>10s}")
print(f"status: mpfr {m['status']} (no estimate: {n['status']}), ball d=8 {b8['status']}, d=24 {b24['status']}, on 2 threads {t8['status']}, {t24['status']}")
print(f"load average (1, 5, 15 min): {sys.argv[3]} before, {sys.argv[4]} after")
PY

# 5. d = 64, H = 8 through the program (optional: minutes on a busy machine).
if [[ "${MHAQ_BENCH_D64:-0}" == 1 ]]; then
  tmp=$(mktemp -d)
  for t in 1 2; do
    /usr/bin/time -f "%e %U %M" -o "$tmp/time$t" "$build/mhaq" recover --arith ball --bits 1024 --d 64 --heads 8 --seed "$seed" --threads "$t" --json --quiet >"$tmp/out$t" || true
  done
  "$py" - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
w = {}
for t in (1, 2):
    e, u, m = open(f"{d}/time{t}").read().split()[-3:]
    w[t] = (float(e), float(u), int(m))
r = json.load(open(f"{d}/out2"))
same = open(f"{d}/out1", "rb").read() == open(f"{d}/out2", "rb").read()
print(f"{'5. ball d=64 H=8 1024 bits: 1 thread / 2 threads (wall)':58s} {w[1][0] / w[2][0]:8.2f} {'>= 1.7':>10s}")
print(f"{'   wall seconds on 2 threads':58s} {w[2][0]:8.1f} {'<= 600':>10s}")
print(f"{'   peak memory on 2 threads (MiB)':58s} {w[2][2] / 1024:8.0f} {'<= 4096':>10s}")
print(f"   status {r['status']}, contains truth {r.get('contains_truth')}, outputs at 1 and 2 threads byte-identical: {same}; processor seconds {w[1][1]:.1f} and {w[2][1]:.1f}")
PY
  rm -rf "$tmp"
  echo "load average after d=64: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
fi
# 6. exact scale
[[ "${MHAQ_SKIP_EXACT:-0}" == 1 ]] || bash "$here/exact_speed.sh" "$build"
