#!/usr/bin/env bash
# The rank schedule's figures (docs/studies/rank.md), in one run (not part of
# ctest): for each shape (d, H, R), heads of rank R drawn by recover --rank R
# and learned in balls twice, side by side on one thread: with --rank R and
# with the paper schedule. Per run: status, whether the balls contain the
# truth, queries (and the small-grid witnesses among them), queries over the
# floor H(2dR - R^2 + d), processor seconds (user + system) and peak memory;
# then the rank run's queries and processor time over the paper run's.
# Then the exact count by equality at (8, 2, 2) and (12, 3, 4), seeds 1-3.
#   usage: bash tests/bench/rank.sh [BUILD_DIR] [SEED]
# The (64, 8, 8) pair runs at 1024 bits (the paper run takes about a minute).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build}"
seed="${2:-1}"
bin="$build/mhaq"
[[ -x "$bin" ]] || { echo "rank.sh: build $bin first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
run() {  # name, then the recover options; writes $tmp/name.json and $tmp/name.time
  local name=$1
  shift
  /usr/bin/time -f "%U %S %M" -o "$tmp/$name.time" "$bin" recover "$@" --threads 1 --quiet --json >"$tmp/$name.json" || true
}
for shape in "16 4 4 256" "32 4 8 256" "64 8 8 1024"; do
  set -- $shape
  run "r_$1" --d "$1" --heads "$2" --rank "$3" --seed "$seed" --arith ball --bits "$4"
  # the same model (drawn by --rank), learned by the paper schedule: --model with the drawn file
  "$bin" generate --d "$1" --heads "$2" --rank "$3" --seed "$seed" --for ball -o "$tmp/m_$1.json" >/dev/null
  run "p_$1" --model "$tmp/m_$1.json" --seed "$seed" --arith ball --bits "$4"
  run "rm_$1" --model "$tmp/m_$1.json" --rank "$3" --seed "$seed" --arith ball --bits "$4"
done
echo "load average after the ball runs: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
def load(name):
    r = json.load(open(f"{tmp}/{name}.json"))
    u, s, m = open(f"{tmp}/{name}.time").read().split()[-3:]
    return r, float(u) + float(s), int(m) / 1024
print("\nballs, one thread: the rank schedule against the paper schedule on the same model")
print(f"{'(d, H, R) bits':<18} {'schedule':<8} {'status':<8} {'truth':<6} {'queries':>8} {'witn.':>6} {'/floor':>7} {'CPU s':>8} {'MiB':>6}")
for d, H, R, bits in [(16, 4, 4, 256), (32, 4, 8, 256), (64, 8, 8, 1024)]:
    floor = H * (2 * d * R - R * R + d)
    rows = {}
    for tag, name in [("rank", f"r_{d}"), ("paper", f"p_{d}"), ("rank*", f"rm_{d}")]:
        r, cpu, mib = load(name)
        rows[tag] = (r, cpu)
        q = r.get("queries", 0)
        print(f"{str((d, H, R)) + ' ' + str(bits):<18} {tag:<8} {r['status']:<8} {str(r.get('contains_truth')):<6} {q:>8} "
              f"{r.get('grid_witness_queries', 0):>6} {q / floor:>7.2f} {cpu:>8.2f} {mib:>6.0f}")
    (rr, rc), (pr, pc) = rows["rank"], rows["paper"]
    print(f"{'':<18} rank/paper: queries {rr['queries'] / pr['queries']:.3f}, processor time {rc / pc:.3f}; "
          f"the paper's formula {pr['paper_bound']}, 0.3 of it {0.3 * pr['paper_bound']:.0f}")
print("(rank: recover --d --heads --rank draws the model; rank*: the same run from the model file, which must agree)")
PY
echo
echo "exact: the plan's queries against 1 + 2H(2dR - R^2 + 2d - R - 1), by equality"
for shape in "8 2 2" "12 3 4"; do
  set -- $shape
  for s in 1 2 3; do
    "$bin" recover --d "$1" --heads "$2" --rank "$3" --seed "$s" --json --quiet >"$tmp/e.json" || true
    python3 - "$tmp/e.json" "$1" "$2" "$3" "$s" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
d, H, R, s = map(int, sys.argv[2:])
want = 1 + 2 * H * (2 * d * R - R * R + 2 * d - R - 1)
plan = r.get("queries", 0) - r.get("grid_witness_queries", 0) - r.get("fallback_queries", 0)
print(f"  (d, H, R) = ({d}, {H}, {R}) seed {s}: {r['status']}, exact_match {r.get('exact_match')}, ranks {r.get('ranks')}, "
      f"plan {plan} {'==' if plan == want else '!='} {want}, witnesses {r.get('grid_witness_queries', 0)}")
PY
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
