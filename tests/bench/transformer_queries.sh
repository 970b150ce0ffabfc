#!/usr/bin/env bash
# Claim 5's query counts: queries by phase of the
# exact transformer learner for the four sizes of the exact-recovery test and
# d=4, H=3, m=5, next to the attention-only paper count 4Hd^2-2H+1.
#   usage: bash tests/bench/transformer_queries.sh [path/to/mhaq] [seeds]
set -euo pipefail
bin=${1:-./build/mhaq}
seeds=${2:-5}
printf '%-10s %5s %9s %9s %8s %8s %7s %8s %9s\n' "d,H,m" "seed" "attention" "regions" "verify" "total" "longest" "4Hd2-2H+1" "ratio"
for size in "2 1 2" "2 2 3" "3 2 3" "3 2 4" "4 3 5"; do
  read -r d H m <<<"$size"
  for s in $(seq 1 "$seeds"); do
    out=$("$bin" recover --d "$d" --heads "$H" --ffn "$m" --seed "$s" --json 2>/dev/null || true)
    python3 - "$d,$H,$m" "$s" "$out" <<'PY'
import json, sys
size, seed, text = sys.argv[1], sys.argv[2], sys.argv[3]
r = json.loads(text)
if r.get("status") != "ok":
    print(f"{size:<10} {seed:>5}  {r.get('status')}: {r.get('message', '')[:70]}")
else:
    q = r["queries_by_phase"]; b = r["attention_paper_bound"]
    print(f"{size:<10} {seed:>5} {q['attention']:>9} {q['regions']:>9} {q['verification']:>8} {r['queries']:>8} {r['max_length']:>7} {b:>8} {r['queries']/b:>9.2f}")
PY
  done
done
