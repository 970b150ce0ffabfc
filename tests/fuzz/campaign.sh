#!/usr/bin/env bash
# One job of a recover fuzzing campaign (tests/fuzz/README.md): one harness of
# one fuzz build, a fixed seed and number of runs, on a corpus folder that the
# job grows (seeded from the committed corpus when it is empty). Options as CI
# uses them for the recover harnesses: -entropic=0, malloc_context_size=1 when
# the build has ASan, the dictionary, -max_len=16384 -timeout=10
# -rss_limit_mb=2048. Appends one tab-separated line to LOG_DIR/jobs.tsv:
#   harness build seed runs executions wall_s user_s sys_s peak_rss_kb
#   corpus_start corpus_end exit findings
# and keeps libFuzzer's output in LOG_DIR/<harness>-<build>-<seed>.log. A
# finding's input is saved under LOG_DIR/artifacts/ and the script exits 1.
# A job stopped early with SIGINT (kill -INT on the harness) keeps its figures
# so far: libFuzzer prints them and exits 72, recorded as "stopped".
# libFuzzer's -timeout counts wall seconds, so on a machine busy with other
# work a niced job can report a timeout for a unit that needs a fraction of a
# second of CPU: FUZZ_TIMEOUT=N (10) sets it; replay a timeout's input under
# /usr/bin/time before calling it a hang.
# Usage: tests/fuzz/campaign.sh BUILD_DIR HARNESS SEED RUNS CORPUS_DIR LOG_DIR
set -euo pipefail
[[ $# -eq 6 ]] || { echo "usage: campaign.sh BUILD_DIR HARNESS SEED RUNS CORPUS_DIR LOG_DIR" >&2; exit 2; }
build=$1 h=$2 seed=$3 runs=$4 corpus=$5 logs=$6
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$build/$h
[[ -x $bin ]] || { echo "campaign: $bin not found (configure with -DMHAQ_FUZZ=ON, tests/fuzz/README.md)" >&2; exit 2; }
name=$(basename "$build")
mkdir -p "$corpus" "$logs/artifacts"
if [[ -z $(ls -A "$corpus") ]]; then cp "$root/tests/fuzz/corpus/${h#fuzz_}"/* "$corpus/"; fi
start=$(ls "$corpus" | wc -l)
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0:malloc_context_size=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0"
log=$logs/$h-$name-$seed.log
rc=0
/usr/bin/time -f "%e %U %S %M" -o "$log.time" "$bin" -runs="$runs" -seed="$seed" -entropic=0 -max_len=16384 \
  -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -dict="$root/tests/fuzz/mhaq.dict" -print_final_stats=1 \
  -artifact_prefix="$logs/artifacts/$h-$name-$seed-" "$corpus" >"$log" 2>&1 || rc=$?
read -r wall user sys rss < <(tail -1 "$log.time")
execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
findings=$(grep -c 'FUZZ FINDING\|ERROR: libFuzzer\|ERROR: AddressSanitizer\|runtime error:' "$log" || true)
end=$(ls "$corpus" | wc -l)
if [[ $rc -eq 72 && $findings -eq 0 ]] && grep -q 'run interrupted' "$log"; then rc=stopped; fi
printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$h" "$name" "$seed" "$runs" "$execs" "$wall" "$user" "$sys" \
  "$rss" "$start" "$end" "$rc" "$findings" >>"$logs/jobs.tsv"
if [[ $rc != 0 && $rc != stopped || $findings -ne 0 ]]; then
  echo "campaign: $h ($name, seed $seed) ended with exit $rc and $findings finding lines; see $log" >&2
  exit 1
fi
