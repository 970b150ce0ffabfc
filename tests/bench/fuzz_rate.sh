#!/usr/bin/env bash
# Executions per CPU second of the recover harnesses, side by side in one run
# on the same sanitizer build (tests/fuzz/README.md):
#   before  fuzz_recover as CI ran it: libFuzzer's default (entropic) schedule,
#           ASan keeping 30 frames of every allocation's stack;
#   full    fuzz_recover as CI runs it now: -entropic=0, malloc_context_size=1;
#   fast    fuzz_recover_fast, the same way.
# Each starts from a copy of the committed recover corpus with -seed=1 and the
# same -runs. The rate is runs over user CPU seconds (wall time follows the
# machine's load); the ratios are over `before`.
# Usage: tests/bench/fuzz_rate.sh [BUILD_DIR (build-san)] [RUNS (2500)]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-san}
runs=${2:-2500}
for h in fuzz_recover fuzz_recover_fast; do
  [[ -x $build/$h ]] || { echo "fuzz_rate: $build/$h not found (configure with -DMHAQ_FUZZ=ON, tests/fuzz/README.md)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
base="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
run() {  # name harness asan_options libfuzzer_flags...
  local name=$1 h=$2 asan=$3
  shift 3
  mkdir -p "$work/$name"
  cp tests/fuzz/corpus/recover/* "$work/$name/"
  ASAN_OPTIONS="$asan" /usr/bin/time -f "%U" -o "$work/$name.cpu" "$build/$h" "$@" -runs="$runs" -seed=1 -max_len=16384 -timeout=10 \
    -rss_limit_mb=2048 -dict=tests/fuzz/mhaq.dict -print_final_stats=1 "$work/$name" 2>"$work/$name.log" \
    || { tail -20 "$work/$name.log"; echo "fuzz_rate: $h found a problem" >&2; exit 1; }
}
run before fuzz_recover "$base" & p1=$!
run full fuzz_recover "$base:malloc_context_size=1" -entropic=0 & p2=$!
run fast fuzz_recover_fast "$base:malloc_context_size=1" -entropic=0 & p3=$!
wait $p1 && wait $p2 && wait $p3
rate() { python3 -c "import sys; print('%.1f' % ($(grep -o 'number_of_executed_units: *[0-9]*' "$work/$1.log" | grep -o '[0-9]*$') / float(sys.argv[1])))" "$(tail -1 "$work/$1.cpu")"; }
b=$(rate before)
printf '%-7s %10s %9s %8s\n' run execs cpu_s exec/s
for n in before full fast; do
  r=$(rate "$n")
  printf '%-7s %10s %9s %8s   x%s\n' "$n" "$(grep -o 'number_of_executed_units: *[0-9]*' "$work/$n.log" | grep -o '[0-9]*$')" \
    "$(tail -1 "$work/$n.cpu")" "$r" "$(python3 -c "print('%.2f' % ($r / $b))")"
done
