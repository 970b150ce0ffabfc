#!/usr/bin/env bash
# ctest oracle_transparency: the protocol changes nothing (docs/oracle-protocol.md).
#  1. 20 models (plain attention d = 2..6, shared W, cancelling v, orthogonal
#     heads, coarse weights, transformers with zero and parallel neurons),
#     each recovered in ball mode at 256 bits in-process and through
#     `recover --oracle "mhaq oracle --model M --arith ball --bits 512"` with
#     the oracle's stated radius: the same status, the same numbers of heads
#     (and neurons), and on ok balls that contain the truth, both ways; and
#     through the oracle without --model (--model-kind, --d, --heads and the
#     neuron count stated) the same status and parameters, with no truth
#     reported; a learner of the wrong kind is refused at the handshake;
#  2. a run interrupted after half its batches (2 of 4) and resumed prints the
#     same bytes as one that ran through, asking exactly the missing queries.
# usage: oracle_transparency.sh MHAQ SOURCE_DIR
set -uo pipefail
M="$1"
src="$2"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 >/dev/null || fail "no python3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
field() { python3 -c "import json,sys; a=json.load(open(sys.argv[1])); print(a.get(sys.argv[2]))" "$1" "$2"; }

# 1. the model set: generate options, one model a line
models=(
  "--d 2 --heads 1 --seed 1"
  "--d 2 --heads 2 --seed 2"
  "--d 3 --heads 1 --seed 3"
  "--d 3 --heads 2 --seed 1"
  "--d 3 --heads 3 --seed 4"
  "--d 4 --heads 2 --seed 5"
  "--d 4 --heads 3 --seed 6"
  "--d 4 --heads 4 --seed 7"
  "--d 5 --heads 3 --seed 8"
  "--d 6 --heads 2 --seed 9"
  "--d 3 --heads 3 --seed 2 --share-w"
  "--d 4 --heads 3 --seed 10 --share-w"
  "--d 4 --heads 3 --seed 3 --cancel-v"
  "--d 5 --heads 4 --seed 11 --cancel-v"
  "--d 3 --heads 2 --seed 12 --orthogonal"
  "--d 4 --heads 2 --seed 13 --w-range 3 --w-den 4"
  "--d 3 --heads 1 --seed 1 --ffn 2"
  "--d 3 --heads 2 --seed 2 --ffn 3"
  "--d 3 --heads 2 --seed 3 --ffn 2 --zero-neuron"
  "--d 3 --heads 1 --seed 4 --ffn 1 --parallel-neurons"
)
[[ ${#models[@]} == 20 ]] || fail "the set should hold 20 models, it holds ${#models[@]}"
n_ok=0
for spec in "${models[@]}"; do
  "$M" generate $spec --for ball -o m.json >/dev/null || fail "generate $spec"
  "$M" recover --model m.json --arith ball --bits 256 --seed 1 --json > in.json
  "$M" recover --oracle "$M oracle --model m.json --arith ball --bits 512" --model m.json --arith ball --bits 256 --seed 1 --json > ext.json 2>/dev/null
  python3 - "$spec" <<'PY' || exit 1
import json, sys
spec = sys.argv[1]
a, b = json.load(open("in.json")), json.load(open("ext.json"))
def fail(m):
    sys.exit(f"FAIL: {spec}: {m}")
if a["status"] != b["status"]:
    fail(f"in-process {a['status']}, through mhaq oracle {b['status']}: {b.get('message')}")
for k in ("queries", "heads_recovered", "neurons_recovered"):
    if a.get(k) != b.get(k):
        fail(f"{k}: in-process {a.get(k)}, through mhaq oracle {b.get(k)}")
if a["status"] == "ok" and not (a.get("contains_truth") is True and b.get("contains_truth") is True):
    fail(f"ok but the balls miss the truth (in-process {a.get('contains_truth')}, through mhaq oracle {b.get('contains_truth')})")
print(f"{spec}: {a['status']} both ways, {a['queries']} queries, max radius {a.get('max_radius_decimal')} in-process, {b.get('max_radius_decimal')} through mhaq oracle")
PY
  [[ "$(field in.json status)" == ok ]] && n_ok=$((n_ok + 1))
  # the same oracle without --model: the status is the run's own and the
  # learned parameters are those of the run that had the truth beside it
  H=$(field in.json heads_true) N=$(field in.json neurons_true) d=$(field in.json d)
  if [[ "$N" != None ]]; then
    blind=(--model-kind transformer --d "$d" --heads "$H" --learner-neurons "$N")
  else
    blind=(--d "$d" --heads "$H")
  fi
  "$M" recover --oracle "$M oracle --model m.json --arith ball --bits 512" "${blind[@]}" --arith ball --bits 256 --seed 1 --json > blind.json 2>/dev/null
  python3 - "$spec" <<'PY' || exit 1
import json, sys
spec = sys.argv[1]
b, c = json.load(open("ext.json")), json.load(open("blind.json"))
def fail(m):
    sys.exit(f"FAIL: {spec} without --model: {m}")
if b["status"] != c["status"]:
    fail(f"{c['status']} ({c.get('message')}), with --model {b['status']}")
for k in ("queries", "heads_recovered", "neurons_recovered", "model", "heads"):
    if b.get(k) != c.get(k):
        fail(f"{k} differs from the run with --model")
for k in ("contains_truth", "heads_true", "neurons_true", "max_rel_error"):
    if k in c:
        fail(f"reports {k} without a truth")
if c["status"] == "ok" and "neurons_recovered" in c and c.get("max_radius_decimal") != b.get("max_radius_decimal"):
    fail(f"max_radius {c.get('max_radius_decimal')}, with --model {b.get('max_radius_decimal')}")
PY
done
# the set is meant to end ok: a regression to unable both ways must not pass unnoticed
[[ $n_ok == 20 ]] || fail "$n_ok of 20 models ended ok"

# a learner that expects the other kind of model is refused at the handshake
"$M" recover --oracle "$M oracle --model m.json --arith ball --bits 512" --d 3 --heads 1 --arith ball --json > kind.json 2>/dev/null
code=$?
[[ $code == 12 && "$(field kind.json message)" == *"serves a transformer"* ]] || fail "an attention learner against a transformer oracle: exit $code, $(field kind.json message)"

# 2. interrupted after half its batches, resumed
F="python3 $src/tests/oracle_faults.py"
"$M" generate --d 8 --heads 4 --seed 3 --for ball -o m8.json >/dev/null
"$M" recover --oracle "$F healthy --model m8.json" --model m8.json --arith ball --bits 256 --seed 1 --json > full.json 2>/dev/null
"$M" recover --oracle "$F exit --after 2 --model m8.json" --model m8.json --arith ball --bits 256 --seed 1 --transcript t.jsonl --json > cut.json 2>/dev/null
code=$?
[[ $code == 12 && "$(field cut.json status)" == oracle_failed ]] || fail "interrupted run: exit $code, status $(field cut.json status)"
[[ "$(grep -c '"answer"' t.jsonl)" == 512 ]] || fail "the transcript should hold the 512 answers of batches 0 and 1 (of 4)"
"$M" recover --oracle "$F healthy --model m8.json" --model m8.json --arith ball --bits 256 --seed 1 --resume t.jsonl --json > resumed.json 2> resumed.err
cmp -s full.json resumed.json || fail "a resumed run's output differs from an uninterrupted one's"
grep -q "asked 505 queries, 512 answered from t.jsonl" resumed.err || fail "resume should ask exactly the 1017 - 512 missing queries: $(cat resumed.err)"
echo "oracle_transparency: all passed"
