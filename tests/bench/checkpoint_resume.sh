#!/usr/bin/env bash
# The checkpoint must-show at full size (docs/formats.md#checkpoint): a
# (d, H) = (64, 8) ball run killed by SIGKILL about halfway through its wall
# time and resumed from its checkpoint prints the bytes of the uninterrupted
# run, in-process (--json) and against an external oracle (mhaq oracle, human
# output), where the first run's transcript and the resumed run's hold every
# query of the uninterrupted run's once. Prints the counts (answers and pair
# fits kept) and the resumed run's wall time as a ratio of the uninterrupted
# run's: what a resume still does (the fits not yet made, labels, solves,
# the self-check and the judge).
# usage: checkpoint_resume.sh [BUILD_DIR] [D] [H]   (defaults: build 64 8)
set -uo pipefail
B="$(cd "${1:-build}" && pwd)"
D="${2:-64}"
H="${3:-8}"
M="$B/mhaq"
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
now() { date +%s.%N; }
ratio() { python3 -c "import sys; print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }

# runs "$@" and kills it by SIGKILL after $1 seconds; $2 its output file
kill_after() {
  local secs="$1" out="$2"
  shift 2
  "$@" > "$out" 2>/dev/null &
  local pid=$!
  sleep "$secs"
  kill -KILL "$pid" 2>/dev/null || fail "the run ended before the kill at $secs s: choose a larger shape"
  wait "$pid" 2>/dev/null
}

echo "checkpoint_resume: (d, H) = ($D, $H), ball, 1024 bits (256 leave (64, 8) unable), 2 threads"
args=(--d "$D" --heads "$H" --seed 1 --arith ball --bits 1024 --threads 2 --quiet)

# in-process
t0=$(now); "$M" recover "${args[@]}" --json > full.json || fail "the uninterrupted run"; t1=$(now)
wall=$(python3 -c "print($t1 - $t0)")
half=$(python3 -c "print(round($wall / 2, 1))")
kill_after "$half" part.json "$M" recover "${args[@]}" --json --checkpoint c.ck
kept=$(($(grep -vc '^fit' c.ck) - 1))
fits=$(grep -c '^fit' c.ck)
t2=$(now); "$M" recover "${args[@]}" --json --resume-checkpoint c.ck > res.json 2>err || fail "the resumed run: $(cat err)"; t3=$(now)
cmp -s full.json res.json || fail "in-process: the resumed run's output differs from the uninterrupted run's"
total=$(python3 -c "import json; print(json.load(open('full.json'))['queries'])")
echo "in-process: uninterrupted $(printf %.1f "$wall") s; killed at $half s with $kept of $total answers and $fits pair fits in the checkpoint;" \
     "resumed: identical bytes, wall ratio resumed/uninterrupted $(ratio "$(python3 -c "print($t3 - $t2)")" "$wall")"

# external oracle
"$M" generate --d "$D" --heads "$H" --seed 1 --for ball -o m.json >/dev/null || fail "generate"
OR="$M oracle --model m.json --arith ball --bits 2048"
ext=(--model m.json --arith ball --bits 1024 --seed 1 --threads 2 --quiet --oracle "$OR")
t0=$(now); "$M" recover "${ext[@]}" --transcript full.t > full.txt 2>/dev/null || fail "external: the uninterrupted run"; t1=$(now)
wall=$(python3 -c "print($t1 - $t0)")
half=$(python3 -c "print(round($wall / 2, 1))")
kill_after "$half" part.txt "$M" recover "${ext[@]}" --transcript t1 --checkpoint x.ck
sleep 1  # the oracle ends at the end of its input
"$M" recover "${ext[@]}" --transcript t2 --resume-checkpoint x.ck > res.txt 2>err || fail "external: the resumed run: $(cat err)"
cmp -s full.txt res.txt || fail "external: the resumed run's output differs from the uninterrupted run's"
python3 - full.t t1 t2 "$half" <<'EOF' || fail "external: the transcripts"
import json, sys
def queries(f):
    return [json.dumps(j["runs"], sort_keys=True) for j in map(json.loads, open(f)) if "runs" in j]
full, a, b = (queries(f) for f in sys.argv[1:4])
both = a + b
twice = len(both) - len(set(both))
assert twice == 0, f"{twice} queries asked twice"
assert sorted(both) == sorted(full), "the two transcripts hold other queries than the uninterrupted run's"
print(f"external: killed at {sys.argv[4]} s after {len(a)} of {len(full)} queries answered; resumed: {len(b)} asked,"
      " identical bytes, no query asked twice")
EOF
echo "checkpoint_resume: all passed"
