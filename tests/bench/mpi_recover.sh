#!/usr/bin/env bash
# One recover shared out among MPI ranks against one process, side by side:
# rounds of three runs, interleaved so that a change in the machine's load
# falls on all three alike:
#   one   the plain build, one process, --threads 1
#   np2   the MPI build under mpirun -np 2, --threads 1 on each rank
#   thr2  the plain build, one process, --threads 2
# Round 1 compares the human output, later rounds the --json object, each
# byte for byte with `one`'s of the same round. Prints each run's wall time,
# the load average before it, each rank's CPU seconds, and the ratios of the
# medians (one / np2 and thr2 / np2).
#   usage: bash tests/bench/mpi_recover.sh [PLAIN=build/mhaq] [MPI=build-mpi/mhaq] [D=64] [H=8] [ROUNDS=3]
set -euo pipefail
P="${1:-build/mhaq}"
M="${2:-build-mpi/mhaq}"
D="${3:-64}"
H="${4:-8}"
ROUNDS="${5:-3}"
MR=(mpirun --oversubscribe --allow-run-as-root --bind-to none)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
calc() { awk "BEGIN { print ($*) }"; }
base=(recover --d "$D" --heads "$H" --seed 1 --arith ball --bits 1024 --quiet)
echo "mhaq ${base[*]}   ($(nproc) cores)"
declare -A walls
for r in $(seq 1 "$ROUNDS"); do
  fmt=(); [[ $r -gt 1 ]] && fmt=(--json)
  for cfg in one np2 thr2; do
    load=$(cut -d' ' -f1 /proc/loadavg)
    s=$(date +%s.%N)
    rm -f "$tmp"/times_*
    # bash's `times` writes each process's children's (mhaq's) CPU time to a file of its own
    run='"$0" "$@" >"'"$tmp"'/out_${OMPI_COMM_WORLD_RANK:-0}"; times >"'"$tmp"'/times_${OMPI_COMM_WORLD_RANK:-0}"'
    case $cfg in
      one) bash -c "$run" "$P" "${base[@]}" --threads 1 "${fmt[@]}" || true ;;
      np2) "${MR[@]}" -np 2 bash -c "$run" "$M" "${base[@]}" --threads 1 "${fmt[@]}" || true ;;
      thr2) bash -c "$run" "$P" "${base[@]}" --threads 2 "${fmt[@]}" || true ;;
    esac
    e=$(date +%s.%N)
    w=$(calc "$e - $s")
    cp "$tmp/out_0" "$tmp/$cfg.out"
    cpu=$(for f in "$tmp"/times_*; do awk 'NR == 2 { split($1, a, "m"); sub("s", "", a[2]); printf "%.1f ", a[1] * 60 + a[2] }' "$f"; done)
    printf "  round %d %-4s %7.2f s wall (load average %s before), CPU seconds per process: %s\n" "$r" "$cfg" "$w" "$load" "$cpu"
    walls[$cfg]="${walls[$cfg]:-} $w"
  done
  for cfg in np2 thr2; do
    cmp "$tmp/one.out" "$tmp/$cfg.out" >/dev/null || { echo "FAIL: round $r: $cfg's output differs from one process's"; exit 1; }
  done
  echo "  round $r: outputs identical ($([[ $r -gt 1 ]] && echo "--json" || echo "human"))"
done
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
m1=$(median "${walls[one]}"); m2=$(median "${walls[np2]}"); mt=$(median "${walls[thr2]}")
printf "medians: one %.2f s, np2 %.2f s, thr2 %.2f s; one / np2 = %.2f (target 1.6: %s), thr2 / np2 = %.2f\n" "$m1" "$m2" "$mt" \
  "$(calc "$m1 / $m2")" "$([[ $(calc "$m1 / $m2 >= 1.6") == 1 ]] && echo met || echo NOT met)" "$(calc "$mt / $m2")"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
