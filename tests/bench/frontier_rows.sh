#!/usr/bin/env bash
# The frontier at real shapes: rows of (d, H, source of answers),
# each over seeds and designs; called by frontier.sh --rows (its header gives
# the usage and the sources). Not part of ctest.
#   usage: bash tests/bench/frontier_rows.sh BUILD ROWS SEEDS DESIGNS [OUT.md]
#   ROWS: comma-separated DxH:SOURCE[:ball], e.g. 16x4:drawn53,8x2:torch32:ball
#   (":ball" runs --arith ball instead of mpfr; its runs' files end in -ball)
set -euo pipefail
build=$1
rows=$2
seeds=$3
designs=$4
out=${5:-}
source "$(dirname "$0")/frontier_common.sh"
here=$(cd "$(dirname "$0")" && pwd)
torch_oracle="$here/../../examples/oracles/torch_mha.py"
py=${PYTHON:-/usr/bin/python3}
# the answers' source as recover's options for (d, H, seed); torch writes the
# exact model of its weights first, which only judges the run afterwards
source_args() {
  local src=$1 d=$2 H=$3 S=$4
  case "$src" in
    drawn53) echo "--d $d --heads $H --seed $S --oracle-bits 53" ;;
    drawn24) echo "--d $d --heads $H --seed $S --oracle-bits 24" ;;
    torch64 | torch32 | torch32s | torch64b)
      local dtype=float64 bias="" tag="" N=65537 entry=""
      # float32's stated error grows with the tokens' count: 1.5e-3 at 257
      # tokens (0.25 at 65537); its hello's max_length keeps the placed
      # design's runs within it
      [[ $src == torch32 ]] && dtype=float32 N=257
      # torch32s: short and small, 17 tokens with entries of at most 16,
      # where the statement is 64 (17 + 16) 2^-24 = 1.3e-4
      [[ $src == torch32s ]] && dtype=float32 N=17 entry="--max-entry 16"
      # torch64b: bias=True (the model file has biases, so recover learns them)
      [[ $src == torch64b ]] && bias="--bias" tag="-bias"
      local m="$tmp/torch-$dtype$tag-$d-$H-$S.model.json"
      [[ -s "$m" ]] || "$py" "$torch_oracle" --d "$d" --heads "$H" --seed "$S" --dtype "$dtype" $bias --write-model "$m" > /dev/null
      echo "--model $m --seed $S --oracle '$py $torch_oracle --d $d --heads $H --seed $S --dtype $dtype $bias --max-length $N $entry'" ;;
    *) echo "unknown source $src (drawn53, drawn24, torch64, torch64b, torch32, torch32s)" >&2; return 2 ;;
  esac
}
for R in ${rows//,/ }; do
  shape=${R%%:*} src=${R#*:} arith=mpfr sfx=""
  [[ $src == *:ball ]] && src=${src%:ball} arith=ball sfx=-ball
  d=${shape%x*} H=${shape#*x}
  for D in ${designs//,/ }; do
    for S in $(expand "$seeds"); do
      f="$tmp/row-$D-$d-$H-$src-$S$sfx.json"
      [[ -s "$f" && -s "$f.t" ]] && continue
      args=$(source_args "$src" "$d" "$H" "$S")
      start=$(date +%s)
      eval timeout "${FRONTIER_TIMEOUT:-0}" "$bin" recover $args --arith $arith --bits 256 --design "$D" --threads 1 --json > "$f" 2>/dev/null || true
      [[ -s "$f" ]] || echo '{"status": "timeout"}' > "$f"
      echo "{\"seconds\": $(( $(date +%s) - start ))}" > "$f.t"
      echo "  $D d=$d H=$H $src seed=$S: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("status","?"))' "$f" 2>/dev/null || echo none)" >&2
    done
  done
done
python3 - "$tmp" "$rows" "$designs" "$(expand "$seeds")" > "$tmp/rows.md" <<'PY'
import json, math, sys
tmp, rows, designs, seeds = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(","), list(map(int, sys.argv[4].split()))
def load(D, d, H, src, S, sfx=""):
    f = f"{tmp}/row-{D}-{d}-{H}-{src}-{S}{sfx}.json"
    try:
        r = json.load(open(f))
    except Exception:
        r = {"status": "none"}
    try:
        r["seconds"] = json.load(open(f + ".t"))["seconds"]
    except Exception:
        r["seconds"] = None
    return r
fmt = lambda x: f"{x:.2e}" if isinstance(x, (int, float)) else "-"
print("The frontier at real shapes: `mhaq recover --arith mpfr --bits 256 --design D` (ball where a row says so) per (d, H, source), seeds %s." % ",".join(map(str, seeds)))
print("Bits lost per head: (p + log2 max_rel_error) / H for ok runs, p = 53 or 24 the answers' bits.\n")
print("| design | d | H | source | seed | status | max_rel_error | estimate | queries | budget | bits lost per head | s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
summary = []
for R in rows:
    shape, src, *ball = R.split(":")
    sfx = "-ball" if ball else ""
    label = src + (" (ball)" if ball else "")
    d, H = map(int, shape.split("x"))
    bits = 24 if src.endswith("24") or src.startswith("torch32") else 53
    # with biases ten times the count of the paper schedule with them
    budget = 10 * (4 * H * d * d + (4 * H * d if src == "torch64b" else 0) - 2 * H + 1)
    for D in designs:
        ok = wrong = 0
        worst = 0.0
        most_q, most_s = 0, 0
        for S in seeds:
            r = load(D, d, H, src, S, sfx)
            st, e = r.get("status", "none"), r.get("max_rel_error")
            if ball and isinstance(r.get("max_rel_radius_log2"), (int, float)):
                e = 2.0 ** r["max_rel_radius_log2"]  # balls: the widest relative radius
            lost = "-"
            if st == "ok" and isinstance(e, (int, float)) and e > 0:
                lost = f"{(bits + math.log2(e)) / H:.2f}"
            q = r.get("queries")
            most_q = max(most_q, q if isinstance(q, int) else 0)
            most_s = max(most_s, r["seconds"] or 0)
            print(f"| {D} | {d} | {H} | {label} | {S} | {st} | {fmt(e)} | {fmt(r.get('error_estimate'))} | {q if q is not None else '-'} | {budget} | {lost} | {r['seconds']} |")
            if st == "ok":
                ok += 1
                worst = max(worst, e if isinstance(e, (int, float)) else float("inf"))
                tol = r.get("tolerance")
                if ball:  # balls: right when every enclosure holds the truth
                    wrong += r.get("contains_truth") is not True
                elif not isinstance(e, (int, float)) or (isinstance(tol, (int, float)) and e > tol):
                    wrong += 1
        summary.append((D, d, H, label, ok, worst, wrong, most_q, budget, most_s))
print("\n| design | d | H | source | ok of %d | worst max_rel_error of the ok runs (log2) | ok and wrong | most queries / budget | longest run (s) |" % len(seeds))
print("|---|---|---|---|---|---|---|---|---|")
for D, d, H, src, ok, worst, wrong, q, budget, sec in summary:
    w = f"{math.log2(worst):.1f}" if ok and 0 < worst < float("inf") else "-"
    print(f"| {D} | {d} | {H} | {src} | {ok} | {w} | {wrong} | {q:,} / {budget:,} | {sec} |")
PY
if [[ -n "$out" ]]; then
  [[ "$tmp/rows.md" -ef "$out" ]] || cp "$tmp/rows.md" "$out"
  echo "wrote $out" >&2
else
  cat "$tmp/rows.md"
fi
