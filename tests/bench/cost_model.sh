#!/usr/bin/env bash
# Calibrates recover's cost model (include/mhaq/run/cost_model.hpp, the study
# docs/studies/cost-model.md) on this machine (not part of ctest). Ball runs
# at 1024 bits over a grid of (d, H), drawn models, the paper schedule, on one
# thread and (for some) on two; per run the time (one thread: processor
# seconds, user + system; two: wall seconds) and the peak resident memory
# (/usr/bin/time). Then fits, by least squares on relative errors with
# non-negative constants:
#   peak bytes   = base + a Q + b P d + c H d^2
#   seconds (1t) = base + a Q d + b Q H^2 + c Q H d^2
# (Q the plan's queries, P its pairs), the serial fraction s of a run on two
# threads (T_2 = T_1 (s + (1 - s)/2)), prints the constants as C++ and every
# run's prediction over its measurement.
#   usage: bash tests/bench/cost_model.sh [BUILD_DIR] [quick]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build}"
bin="$build/mhaq"
[[ -x "$bin" ]] || { echo "cost_model.sh: build $bin first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
# d:H:R (R = 0: the paper schedule; R > 0: --rank R); one thread fitted, two threads checked
shapes="8:2:0 16:2:0 16:4:0 24:4:0 32:2:0 32:4:0 32:8:0 48:4:0 48:8:0 64:4:0 64:8:0 64:8:8"
two="32:8:0 48:8:0 64:8:0 128:8:16"
[[ "${2:-}" == quick ]] && shapes="8:2:0 16:4:0 32:4:0 32:8:0" && two="32:8:0"
for t in 1 2; do
  list=$shapes
  [[ $t == 2 ]] && list=$two
  for s in $list; do
    IFS=: read -r d H R <<<"$s"
    rank=()
    [[ $R != 0 ]] && rank=(--rank "$R")
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/$d.$H.$R.$t.time" "$bin" recover --d "$d" --heads "$H" "${rank[@]}" --seed 1 --arith ball --bits 1024 --threads "$t" \
      --quiet --json >"$tmp/$d.$H.$R.$t.json" || true
    echo "  d=$d H=$H R=$R threads=$t: $(cat "$tmp/$d.$H.$R.$t.time") (wall s, user s, system s, KiB)"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
# the program's own prediction for each shape (its constants as built)
for f in "$tmp"/*.time; do
  IFS=. read -r d H R t <<<"$(basename "$f" .time)"
  rank=()
  [[ $R != 0 ]] && rank=(--rank "$R")
  "$bin" recover --d "$d" --heads "$H" "${rank[@]}" --seed 1 --arith ball --bits 1024 --threads "$t" --dry-run --json >"${f%.time}.dry" || true
done
python3 - "$tmp" <<'PY'
import glob, json, os, sys
import numpy as np
tmp = sys.argv[1]
rows = []
for f in sorted(glob.glob(f"{tmp}/*.time")):
    d, H, R, t = (int(x) for x in os.path.basename(f)[:-5].split("."))
    wall, user, system, kib = open(f).read().split()[-4:]
    r = json.load(open(f[:-5] + ".json"))
    if r.get("status") != "ok":
        print(f"d={d} H={H} R={R} threads={t}: status {r.get('status')}, left out")
        continue
    P = 2 * d * R - R * R + 2 * d - R - 1 if R else 2 * d * d - 1
    Q = 1 + 2 * H * P if R else 4 * H * d * d - 2 * H + 1
    # one thread: the processor time (user + system), less disturbed by other load than the wall time
    rows.append((d, H, R, t, Q, P, float(wall) if t > 1 else float(user) + float(system), float(kib) * 1024))

def fit(X, y):
    """least squares on relative errors, constants kept non-negative (drop the most negative, refit)"""
    keep = list(range(X.shape[1]))
    while True:
        A = X[:, keep] / y[:, None]
        c, *_ = np.linalg.lstsq(A, np.ones(len(y)), rcond=None)
        if (c >= 0).all():
            out = np.zeros(X.shape[1]); out[keep] = c
            return out
        keep.pop(int(np.argmin(c)))

one = [r for r in rows if r[3] == 1]
X = np.array([[1, Q, P * d, H * d * d] for d, H, R, t, Q, P, w, m in one], float)
mem = fit(X, np.array([m for *_, m in one]))
Xt = np.array([[1, Q * d, Q * H * H, Q * H * d * d] for d, H, R, t, Q, P, w, m in one], float)
tim = fit(Xt, np.array([w for d, H, R, t, Q, P, w, m in one]))
ser = []
for d, H, R, t, Q, P, w, m in rows:
    if t == 2 and R == 0:
        w1 = [r[6] for r in one if r[0] == d and r[1] == H]
        if w1: ser.append(min(1.0, max(0.0, 2 * w / w1[0] - 1)))
s = float(np.mean(ser)) if ser else 1.0
print("\nfitted constants (include/mhaq/run/cost_model.hpp):")
print(f"constexpr double kMemBase = {mem[0]:.6g}, kMemQuery = {mem[1]:.6g}, kMemPairD = {mem[2]:.6g}, kMemHeadD2 = {mem[3]:.6g};")
print(f"constexpr double kTimeBase = {tim[0]:.6g}, kTimeQueryD = {tim[1]:.6g}, kTimeQueryH2 = {tim[2]:.6g}, kTimeQueryHD2 = {tim[3]:.6g}, kSerial = {s:.4g};")
print("\nprediction / measurement (two threads: not fitted, only checked)")
print(f"{'d':>4} {'H':>3} {'R':>3} {'thr':>3} {'queries':>8} {'s':>8} {'pred s':>8} {'ratio':>6} {'MiB':>8} {'pred MiB':>9} {'ratio':>6}")
for d, H, R, t, Q, P, w, m in rows:
    pt = (tim @ np.array([1, Q * d, Q * H * H, Q * H * d * d], float)) * (s + (1 - s) / t)
    pm = mem @ np.array([1, Q, P * d, H * d * d], float)
    print(f"{d:>4} {H:>3} {R:>3} {t:>3} {Q:>8} {w:>8.2f} {pt:>8.2f} {pt / w:>6.2f} {m / 2**20:>8.1f} {pm / 2**20:>9.1f} {pm / m:>6.2f}")
dry = []
for d, H, R, t, Q, P, w, m in rows:
    j = json.load(open(f"{tmp}/{d}.{H}.{R}.{t}.dry"))
    dry.append((d, H, R, t, w, m, j["predicted_seconds"], j["predicted_peak_bytes"]))
print("\nthe program's recover --dry-run (its built-in constants) / measurement")
print(f"{'d':>4} {'H':>3} {'R':>3} {'thr':>3} {'s':>8} {'dry s':>8} {'ratio':>6} {'MiB':>8} {'dry MiB':>9} {'ratio':>6}")
for d, H, R, t, w, m, ps, pm in dry:
    print(f"{d:>4} {H:>3} {R:>3} {t:>3} {w:>8.2f} {ps:>8.2f} {ps / w:>6.2f} {m / 2**20:>8.1f} {pm / 2**20:>9.1f} {pm / m:>6.2f}")
PY
