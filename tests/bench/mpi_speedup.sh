#!/usr/bin/env bash
# MPI speedup of `mhaq verify`: wall time of verify --trials T at
# mpirun -np 1 against -np 2 (one thread per rank, best of R runs each), the
# outputs compared byte for byte, and each rank's CPU seconds: the balance of
# the static i % N sharding, which a loaded machine does not distort.
#   usage: bash tests/bench/mpi_speedup.sh [MPI_MHAQ=build-mpi/mhaq] [TRIALS=200] [ARITH=mpfr] [REPEATS=3]
set -euo pipefail
M="${1:-build-mpi/mhaq}"
T="${2:-200}"
A="${3:-mpfr}"
REP="${4:-3}"
MR=(mpirun --oversubscribe --allow-run-as-root --bind-to none)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
calc() { awk "BEGIN { print ($*) }"; }
cmd=(verify --trials "$T" --seed 1 --arith "$A" --threads 1)
echo "mhaq ${cmd[*]}   ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
declare -A best cpumax
for np in 1 2; do
  for r in $(seq 1 "$REP"); do
    s=$(date +%s.%N)
    # bash's `times` prints each rank's children's (mhaq's) CPU time on its standard error
    "${MR[@]}" -np "$np" bash -c '"$0" "$@" >"'"$tmp"'/out_$OMPI_COMM_WORLD_RANK"; times >&2' "$M" "${cmd[@]}" 2>"$tmp/times"
    e=$(date +%s.%N)
    w=$(calc "$e - $s")
    cp "$tmp/out_0" "$tmp/np$np.out"
    cpu=$(awk 'NR % 2 == 0 { split($1, a, "m"); sub("s", "", a[2]); printf "%s%.2f", sep, a[1] * 60 + a[2]; sep = " " }' "$tmp/times")
    mx=$(tr ' ' '\n' <<<"$cpu" | sort -g | tail -1)
    printf "  -np %d run %d: %6.2f s wall, CPU seconds per rank: %s\n" "$np" "$r" "$w" "$cpu"
    if [[ -z "${best[$np]:-}" ]] || [[ $(calc "$w < ${best[$np]}") == 1 ]]; then best[$np]=$w; fi
    if [[ -z "${cpumax[$np]:-}" ]] || [[ $(calc "$mx < ${cpumax[$np]}") == 1 ]]; then cpumax[$np]=$mx; fi
  done
done
cmp "$tmp/np1.out" "$tmp/np2.out" >/dev/null || { echo "FAIL: -np 1 and -np 2 outputs differ"; exit 1; }
ratio=$(calc "${best[1]} / ${best[2]}")
printf "wall (best of %d): -np 1 %.2f s, -np 2 %.2f s: speedup %.2fx (target 1.7x: %s); outputs identical\n" "$REP" \
  "${best[1]}" "${best[2]}" "$ratio" "$([[ $(calc "$ratio >= 1.7") == 1 ]] && echo met || echo NOT met)"
printf "CPU: -np 1 %.2f s, busiest of 2 ranks %.2f s: %.2fx (the wall speedup to expect when nothing else competes for the 2 cores)\n" \
  "${cpumax[1]}" "${cpumax[2]}" "$(calc "${cpumax[1]} / ${cpumax[2]}")"
