#!/usr/bin/env bash
# Set up a fresh Debian 12 machine, build mhaq, then either run the demo or
# pass the test suite.   usage: bash tests/quickstart.sh demo|test|asan|fuzz
#   demo  build the mhaq program only (build/) and recover the built-in models
#   test  build (build/) and run the test suite through ctest
#   asan  build with AddressSanitizer and UBSan (build-san/) and run the test suite;
#         with clang (installed here if apt can) the same build is instrumented
#         for libFuzzer, so the fuzz run below reuses it; without clang, gcc
#   fuzz  where clang is present: build the libFuzzer harnesses (build-san/) and
#         run each for FUZZ_SECONDS (default 30) on a copy of the committed corpus
set -euo pipefail
what="${1:-test}"
cd "$(dirname "$0")/.."
SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
install_missing() {  # packages... : apt-get install those not installed
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [[ ${#missing[@]} -gt 0 ]]; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
  fi
}
install_missing build-essential cmake python3 libgmp-dev libmpfr-dev libboost-dev libflint-dev libflint-arb-dev \
      doctest-dev nlohmann-json3-dev libcli11-dev gnuplot-nox python3-numpy python3-torch python3-mpmath pkgconf ccache
# A compiler cache: the MPI build (tests/mpi_ci.sh) differs from build/ in one
# object, and CI builds both.
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
# Sanitizer runs: any report fails the run (UBSan halts instead of printing
# and going on); FLINT's caches are reachable at exit, so leak checking is on.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}"
# The sanitizer build: clang with libFuzzer's instrumentation (-DMHAQ_FUZZ=ON:
# ASan + UBSan on every target, fuzz_* programs too), else gcc with ASan + UBSan.
configure_san() {
  if command -v clang++ >/dev/null 2>&1; then
    CC=clang CXX=clang++ cmake -S . -B build-san -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMHAQ_FUZZ=ON \
          -DMHAQ_BENCHMARKS=OFF >/dev/null
  else
    local san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
    cmake -S . -B build-san -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="$san" -DCMAKE_CXX_FLAGS="$san" \
          -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DMHAQ_BENCHMARKS=OFF >/dev/null
  fi
}
case "$what" in
  demo|test)
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
    if [[ "$what" == demo ]]; then
      # The demo needs the program only: no test program, benchmark or example is built.
      cmake --build build -j2 --target mhaq
      ./build/mhaq demo
    else
      cmake --build build -j2
      ctest --test-dir build -j2 --output-on-failure
    fi
    ;;
  asan)
    # clang 14 and its fuzzer runtime, from Debian, where apt can install them
    install_missing clang libclang-rt-14-dev || echo "quickstart asan: clang not installed, using gcc"
    configure_san
    cmake --build build-san -j2
    # The suite's randomised counts at their smallest (MHAQ_TEST_MULTIPLIER=1); the benchmarks are not built.
    # The long suites run in part under the sanitizers: test_transformer's short
    # cases (its 30-model case repeats their code paths on more draws),
    # test_placed_ball's 53-bit case (its 24-bit case repeats the same
    # certification on coarser answers), test_transformer_blind but for its
    # random soak (its other cases run the same blind decisions on chosen
    # and random models), no 200-model float soak, no second
    # package build; the release run above
    # runs them all. Instrumented code is several times slower, so the CLI
    # time bounds scale (MHAQ_TIME_SCALE; the release run asserts them as stated).
    # The blind cases run beside ctest (they are the longest part), their output
    # shown when they end.
    ./build-san/test_transformer_blind -tce='blind soak*' >build-san/blind.log 2>&1 &
    blind=$!
    status=0
    MHAQ_TIME_SCALE=6 MHAQ_TEST_MULTIPLIER=1 ctest --test-dir build-san -j2 --output-on-failure \
      -E '^(test_transformer|test_transformer_blind|test_placed_ball|test_soak|package_consumer)$' || status=1
    wait "$blind" || status=1
    cat build-san/blind.log
    [[ $status -eq 0 ]] || { echo "quickstart asan: a test failed" >&2; exit 1; }
    ./build-san/test_transformer -tc='canonical*,violated*,a learner*'
    ./build-san/test_placed_ball -tc='pair system*,*relative radius*'
    ;;
  fuzz)
    if ! command -v clang++ >/dev/null 2>&1; then
      echo "quickstart fuzz: clang++ not found, skipping the fuzz run (the corpus is replayed by ctest in every build)"
      exit 0
    fi
    grep -q '^MHAQ_FUZZ:BOOL=ON' build-san/CMakeCache.txt 2>/dev/null || configure_san
    cmake --build build-san -j2 --target fuzz_model fuzz_certificate fuzz_golden fuzz_recover fuzz_recover_fast fuzz_safetensors
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    for h in model certificate golden recover recover_fast safetensors; do
      mkdir -p "$work/$h"
      cp tests/fuzz/corpus/$h/* "$work/$h/"
      # A finding (crash, sanitizer report, internal error, checker rejecting an ok certificate) exits non-zero.
      # Deterministic by default: a fixed seed and a fixed number of runs (about 30 s each
      # here); FUZZ_SECONDS=N runs for N seconds per harness instead (soak, not reproducible).
      case $h in model) runs=60000 ;; certificate) runs=40000 ;; golden) runs=30000 ;; recover) runs=2500 ;; recover_fast) runs=10000 ;; safetensors) runs=40000 ;; esac
      limit=(-runs="${FUZZ_RUNS:-$runs}" -seed=1)
      [[ -n ${FUZZ_SECONDS:-} ]] && limit=(-max_total_time="$FUZZ_SECONDS")
      # The recover harnesses allocate on every step of the learner: ASan keeps
      # one frame of each allocation's stack (a report still names the bad
      # access's full stack; replay an input with the defaults for the rest),
      # and libFuzzer's plain schedule (-entropic=0), whose bookkeeping costs
      # less per execution over their ~40,000 features (tests/bench/fuzz_rate.sh).
      asan=$ASAN_OPTIONS
      extra=()
      [[ $h == recover* ]] && { asan="$ASAN_OPTIONS:malloc_context_size=1"; extra=(-entropic=0); }
      ASAN_OPTIONS=$asan ./build-san/fuzz_$h "${limit[@]}" ${extra[@]+"${extra[@]}"} -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
        -dict=tests/fuzz/mhaq.dict -artifact_prefix="$work/$h-" -print_final_stats=1 "$work/$h" 2>"$work/$h.log" \
        || { tail -40 "$work/$h.log"; echo "quickstart fuzz: fuzz_$h found a problem"; exit 1; }
      echo "fuzz_$h: $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$h.log" | grep -o '[0-9]*$') executions (${limit[*]}), no findings"
    done
    ;;
  *) echo "usage: bash tests/quickstart.sh demo|test|asan|fuzz" >&2; exit 2 ;;
esac
