#!/usr/bin/env bash
# Side-by-side benchmark: the cost of the oracle protocol. The same recovery
# (d = 8, H = 4, ball at 256 bits, the same seed, so the same 1017 queries)
# runs in-process and through `recover --oracle "mhaq oracle ..."`, which
# serves the model over JSON lines from a child process. Prints the median
# wall time and CPU time (learner and oracle together) of each, and their
# ratios. The target is a wall ratio of at most 1.3.
#   usage: bash tests/bench/oracle_overhead.sh [BUILD_DIR] [REPEATS] [ORACLE_BITS]
# ORACLE_BITS (default 256) is the precision the oracle answers at.
# Not run by ctest: timings on a shared machine are noisy; the median of
# REPEATS (default 9) alternating runs damps that.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build}"
reps="${2:-9}"
obits="${3:-256}"
M="$(cd "$build" && pwd)/mhaq"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$M" generate --d 8 --heads 4 --seed 3 --for ball -o "$tmp/m.json" >/dev/null
python3 - "$M" "$tmp/m.json" "$reps" "$obits" <<'PY'
import json, resource, statistics, subprocess, sys, time
M, model, reps, obits = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
common = ["--model", model, "--arith", "ball", "--bits", "256", "--seed", "1", "--json"]
runs = {
    "in-process": [M, "recover"] + common,
    "mhaq oracle": [M, "recover", "--oracle", f"{M} oracle --model {model} --arith ball --bits {obits}"] + common,
}
wall = {k: [] for k in runs}
cpu = {k: [] for k in runs}
out = {}
def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
for i in range(reps + 1):
    for k, cmd in runs.items():
        c0, t0 = child_cpu(), time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
        t1, c1 = time.perf_counter(), child_cpu()
        if i == 0:  # warm-up: the page cache, the dynamic loader
            out[k] = json.loads(p.stdout)
            continue
        wall[k].append(t1 - t0)
        cpu[k].append(c1 - c0)
a, b = out["in-process"], out["mhaq oracle"]
print(f"d=8 H=4 ball 256 bits, oracle answers at {obits} bits, {a.get('queries')} queries, median of {reps}")
for k in runs:
    r = out[k]
    print(f"  {k:12s} wall {statistics.median(wall[k]):.4f} s  cpu {statistics.median(cpu[k]):.4f} s  status {r.get('status')}  contains_truth {r.get('contains_truth')}")
rw = statistics.median(wall["mhaq oracle"]) / statistics.median(wall["in-process"])
rc = statistics.median(cpu["mhaq oracle"]) / statistics.median(cpu["in-process"])
print(f"  ratio through mhaq oracle / in-process: wall x{rw:.2f}, cpu x{rc:.2f} (target wall <= 1.3)")
if a.get("status") != b.get("status"):
    sys.exit("the two runs end differently")
PY
