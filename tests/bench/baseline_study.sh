#!/usr/bin/env bash
# The contrast study: mhaq (exact) against the prior-work
# baselines (MPFR, 256 bits) on three model families, and the plot of queries
# against d (H = 2, one line per method, counted from real runs).
# Usage: tests/bench/baseline_study.sh BUILD_DIR OUT_DIR   (e.g. build tests/data/baseline_study)
set -euo pipefail
mhaq="$1/mhaq"
out="$2"
mkdir -p "$out"
"$mhaq" compare --study --family single --trials 20 --seed 1 --arith exact --baseline-arith mpfr --json > "$out/single.json"
"$mhaq" compare --study --family orthogonal --trials 20 --seed 1 --arith exact --baseline-arith mpfr --json > "$out/orthogonal.json"
"$mhaq" compare --study --family general --trials 50 --seed 1 --arith exact --baseline-arith mpfr --json > "$out/general.json"
for f in single orthogonal general; do
  python3 - "$out/$f.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for fam in j["families"]:
    print(f"family {fam['family']} ({fam['trials']} models)")
    print("| method | arith | ok | wrong | off > 0.1 | failed (no parameters) | degenerate | median queries | median error |")
    print("|---|---|---|---|---|---|---|---|---|")
    for m in fam["methods"]:
        e = m["median_error"]
        es = "-" if e is None else e if isinstance(e, str) else ("0" if e == 0 else f"{e:.2e}")
        print(f"| {m['method']} | {m['arith']} | {m['ok']}/{m['runs']} | {m['wrong']} | {m['off_0_1']} | {m['failed']} | {m['degenerate']} | {m['median_queries']:g} | {es} |")
PY
done | tee "$out/table.md"
# queries against d, H = 2, orthogonal models (so every method applies), double precision
dat="$out/queries_vs_d.dat"
# mhaq rows: the queries sent; baseline rows: their planned count (query_bound, what a
# run that goes to the end sends; a baseline that fails stops early)
echo "# d mhaq-paper mhaq-lean single-head orthogonal-known" > "$dat"
for d in 2 3 4 5 6 7 8; do
  "$mhaq" compare --d "$d" --heads 2 --seed 1 --orthogonal --arith double --json |
    python3 -c 'import json,sys; j=json.load(sys.stdin); q={r["method"]: r.get("query_bound", r["queries"]) for r in j["rows"]}; print(j["d"], *[q[m] for m in ["mhaq-paper","mhaq-lean","single-head","orthogonal-known"]])' >> "$dat"
done
cat > "$out/queries_vs_d.gp" <<'GP'
reset
set terminal svg size 800,560 font 'sans,12' background rgb 'white'
set output 'queries_vs_d.svg'
set title 'queries against d (H = 2, orthogonal-subspace models)'
set xlabel 'd'
set ylabel 'queries'
set logscale y
set key inside top left
set grid
set xtics 1
plot 'queries_vs_d.dat' using 1:2 with linespoints pt 7 title 'mhaq paper (4Hd^2-2H+1)', \
     '' using 1:3 with linespoints pt 5 title 'mhaq lean (1+2H(d^2+d-1))', \
     '' using 1:4 with linespoints pt 9 title 'single-head baseline (d^2+d; wrong for H = 2)', \
     '' using 1:5 with linespoints pt 11 title 'orthogonal baseline, known bases (sum k^2+k)'
GP
(cd "$out" && gnuplot queries_vs_d.gp)
cat "$dat"
