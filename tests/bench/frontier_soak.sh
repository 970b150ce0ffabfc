#!/usr/bin/env bash
# The blind soak at the frontier's shapes (not part of ctest): many seeds of
# frontier rows, each run decided from the oracle's answers alone and only
# then compared with the truth. Seeds run outermost, so a soak stopped at any
# point covers every row about equally. The summary counts every status per
# row and, for the ok runs, those whose true max_rel_error exceeds the
# tolerance they were judged at ("ok and wrong": must be 0) or the certified
# error they reported ("bound broken": must be 0).
#   usage: bash tests/bench/frontier_soak.sh BUILD ROWS SEEDS [OUT.md]
#   e.g.   FRONTIER_RUNS=/tmp/soak bash tests/bench/frontier_soak.sh build 8x4:drawn53,8x2:torch32 6-65 soak.md
#   ROWS and the sources as for frontier.sh --rows (DxH:SOURCE:ball for
#   --arith ball, judged wrong also when an enclosure misses the truth); FRONTIER_RUNS keeps the
#   runs' JSON (and reuses them); FRONTIER_TIMEOUT (default 600 s here) stops
#   a run, counted as "timeout". SOAK_SUMMARY_ONLY=1 only summarises what
#   FRONTIER_RUNS already holds.
set -euo pipefail
build=$1
rows=$2
seeds=$3
out=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
: "${FRONTIER_RUNS:?set FRONTIER_RUNS=DIR: the soak keeps its runs there}"
export FRONTIER_RUNS FRONTIER_TIMEOUT=${FRONTIER_TIMEOUT:-600}
source "$here/frontier_common.sh"
if [[ -z "${SOAK_SUMMARY_ONLY:-}" ]]; then
  for S in $(expand "$seeds"); do
    bash "$here/frontier_rows.sh" "$build" "$rows" "$S" placed /dev/null > /dev/null
  done
fi
python3 - "$FRONTIER_RUNS" "$rows" "$(expand "$seeds")" > "$FRONTIER_RUNS/soak.md" <<'PY'
import json, math, os, sys
runs, rows, seeds = sys.argv[1], sys.argv[2].split(","), list(map(int, sys.argv[3].split()))
total = {"runs": 0, "ok": 0, "wrong": 0, "broken": 0}
lines = []
statuses = []
per = []
for R in rows:
    shape, src, *ball = R.split(":")
    sfx = "-ball" if ball else ""
    d, H = map(int, shape.split("x"))
    count, ok, wrong, broken, worst = {}, 0, 0, 0, None
    n = 0
    for S in seeds:
        f = f"{runs}/row-placed-{d}-{H}-{src}-{S}{sfx}.json"
        if not os.path.exists(f + ".t"):
            continue  # not run (or still running): neither counted nor decided
        n += 1
        try:
            r = json.load(open(f))
        except Exception:
            r = {"status": "no JSON"}
        st = r.get("status", "no status")
        count[st] = count.get(st, 0) + 1
        if st not in statuses:
            statuses.append(st)
        if st == "ok":
            ok += 1
            e, tol, cert = r.get("max_rel_error"), r.get("tolerance"), r.get("certified_error")
            if ball:  # balls: right when every enclosure holds the truth; the widest as the error
                e = 2.0 ** r["max_rel_radius_log2"] if isinstance(r.get("max_rel_radius_log2"), (int, float)) else None
                if r.get("contains_truth") is not True:
                    wrong += 1
            elif not isinstance(e, (int, float)) or not isinstance(tol, (int, float)) or e > tol:
                wrong += 1
            if isinstance(cert, (int, float)) and isinstance(e, (int, float)) and e > cert:
                broken += 1
            if isinstance(e, (int, float)) and e > 0:
                worst = e if worst is None else max(worst, e)
    per.append((d, H, src + (" (ball)" if ball else ""), n, count, ok, wrong, broken, worst))
    total["runs"] += n
    total["ok"] += ok
    total["wrong"] += wrong
    total["broken"] += broken
print("Blind soak: `mhaq recover --arith mpfr --bits 256 --design placed` (ball where a row says so), seeds %d-%d (those run), one row per (d, H, source)." % (min(seeds), max(seeds)))
print("Every status was decided from the oracle's answers alone; the truth only judged the ok runs afterwards.\n")
head = "| d | H | source | runs | " + " | ".join(statuses) + " | ok and wrong | bound broken | worst ok max_rel_error, balls their widest relative radius (log2) |"
print(head)
print("|" + "---|" * (head.count("|") - 1))
for d, H, src, n, count, ok, wrong, broken, worst in per:
    w = f"{math.log2(worst):.1f}" if worst else "-"
    print(f"| {d} | {H} | {src} | {n} | " + " | ".join(str(count.get(s, 0)) for s in statuses) + f" | {wrong} | {broken} | {w} |")
print(f"\nIn all: {total['runs']} runs, {total['ok']} ok, {total['wrong']} ok and wrong, {total['broken']} ok with the true error above the certified one.")
PY
if [[ -n "$out" ]]; then cp "$FRONTIER_RUNS/soak.md" "$out"; echo "wrote $out" >&2; else cat "$FRONTIER_RUNS/soak.md"; fi
