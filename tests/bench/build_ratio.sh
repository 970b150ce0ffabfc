#!/usr/bin/env bash
# The demo's build time over a full build's, both from a fresh clone on the
# same machine, side by side in one run (run by hand; not a timed test).
# Each round builds, in an emptied build folder configured as
# tests/quickstart.sh configures it and with the compiler cache off
# (CCACHE_DISABLE=1):
#   demo  cmake --build build -j2 --target mhaq   (what quickstart.sh demo builds)
#   full  cmake --build build -j2                 (what quickstart.sh test builds)
# alternating which comes first from round to round, so a change of the
# machine's load during the run weighs on both. It prints each build's wall
# time and CPU time (user + system of the whole build command and its
# children) with the load average before and after, then the ratios of the
# sums over all rounds.
#   usage: bash tests/bench/build_ratio.sh [ROUNDS] [COMMIT] [FIRST]
#   (defaults: 1, HEAD, demo; FIRST=full starts the first round with the full build)
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
rounds="${1:-1}"
commit=$(git -C "$here" rev-parse "${2:-HEAD}")
offset=0
[[ ${3:-demo} == full ]] && offset=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q --no-local "$here" "$work/src"
git -C "$work/src" checkout -q "$commit"
export CCACHE_DISABLE=1
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
add() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a + b }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
one() {  # demo|full : prints "wall cpu"
  rm -rf "$work/src/build"
  cmake -S "$work/src" -B "$work/src/build" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
  local target=()
  [[ $1 == demo ]] && target=(--target mhaq)
  local before; before=$(load)
  /usr/bin/time -f '%e %U %S' -o "$work/time" cmake --build "$work/src/build" -j2 "${target[@]}" >"$work/$1.log" 2>&1 \
    || { tail -30 "$work/$1.log"; echo "build_ratio: the $1 build failed" >&2; exit 1; }
  read -r wall user sys <"$work/time"
  local cpu; cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  echo "$1 wall ${wall} s, CPU ${cpu} s, load ${before} -> $(load)" >&2
  echo "$wall $cpu"
}
dw=0; dc=0; fw=0; fc=0
for ((r = 1; r <= rounds; ++r)); do
  order=(demo full)
  (((r + ${offset}) % 2 == 0)) && order=(full demo)
  for what in "${order[@]}"; do
    read -r w c < <(one "$what")
    if [[ $what == demo ]]; then dw=$(add "$dw" "$w"); dc=$(add "$dc" "$c")
    else fw=$(add "$fw" "$w"); fc=$(add "$fc" "$c"); fi
  done
done
echo "commit $(git -C "$work/src" rev-parse --short HEAD), $rounds round(s), $(nproc) cores"
echo "demo: wall $dw s, CPU $dc s; full: wall $fw s, CPU $fc s"
echo "ratio demo/full: wall $(div "$dw" "$fw"), CPU $(div "$dc" "$fc")"
