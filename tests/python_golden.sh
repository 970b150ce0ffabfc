#!/usr/bin/env bash
# ctest python_golden (issue 17): examples/python/check_attention.py on every
# committed golden fixture. The float64 NumPy attention passes within its
# a-priori bound on all of them; the variant without max-subtraction fails on
# the large-score fixture (exp overflows), the transposed-W variant fails on
# every fixture. The large-score fixture is regenerated and compared byte for
# byte, and re-checked by mhaq golden check.   usage: python_golden.sh MHAQ SOURCE_DIR
set -euo pipefail
M="$1"
src="$2"
fail() { echo "FAIL: $*" >&2; exit 1; }
py=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import numpy' 2>/dev/null; then py="$p"; break; fi
done
[[ -n "$py" ]] || fail "no python3 with NumPy (Debian: python3-numpy)"
C="$src/examples/python/check_attention.py"
G="$src/tests/golden"
small=("$G/d2_h1_seed1.json" "$G/d2_h2_sharew_seed1.json" "$G/d2_h1_h0max2_seed1.json")
large="$G/d2_h2_large_scores_seed6.json"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The large-score fixture is what SCHEMA.md says it is.
"$M" golden export --model "$src/tests/data/large_scores_model.json" --seed 6 -o "$tmp/large.json" >/dev/null
cmp "$tmp/large.json" "$large" || fail "d2_h2_large_scores_seed6.json is not reproduced byte for byte"
"$M" golden check "$large" >/dev/null || fail "mhaq golden check on the large-score fixture"

# Expect an exit code from the checker; keep its output for the asserts below.
expect() {
  local want="$1"; shift
  set +e
  "$py" "$C" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  set -e
  [[ "$got" == "$want" ]] || { cat "$tmp/out" "$tmp/err"; fail "check_attention.py $* exited $got, expected $want"; }
}

# 1. The correct implementation passes on every fixture, each query within its bound.
expect 0 "${small[@]}" "$large"
cat "$tmp/out" | grep -E "worst error|variant"
[[ "$(grep -c 'every query within its a-priori bound' "$tmp/out")" == 4 ]] || fail "not every fixture reported within bound"
expect 0 --json "${small[@]}" "$large"
"$py" - "$tmp/out" <<'PY' || fail "JSON summary of the correct variant"
import json, math, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] and len(r["files"]) == 4, r
for f in r["files"]:
    s = f["summary"]
    assert s["failed"] == 0 and s["queries"] == len(f["queries"]) > 0, s
    for q in f["queries"]:
        assert math.isfinite(q["error_ulps"]) and q["error_ulps"] <= q["bound_ulps"], q
    # the fixtures' scores are exact in float64, so the bound stays within 100 ulps
    assert s["max_bound_ulps"] < 100, s
big = r["files"][3]
assert any(abs(q["answer"]) > 0 for q in big["queries"])
PY

# 2. No max-subtraction: harmless at small scores, fails where exp overflows.
expect 0 --quiet --variant no-max-subtraction "${small[@]}"
expect 10 --variant no-max-subtraction "$large"
grep -q "OUTSIDE the a-priori bound" "$tmp/out" || fail "no-max-subtraction: no query reported outside"
grep -q " inf .*FAIL" "$tmp/out" || fail "no-max-subtraction: expected a non-finite result (overflow)"
expect 0 --quiet "$large" --max-ulps 4  # the correct one, for contrast, even within 4 ulps

# 3. Transposed W fails on every fixture.
for f in "${small[@]}" "$large"; do
  expect 10 --quiet --variant transposed-W "$f"
  grep -q "variant transposed-W: FAIL" "$tmp/out" || fail "transposed-W on $f"
done

# 4. A file that is not a golden file is an input error.
echo '{"format": "mhaq-model", "version": 1}' >"$tmp/not_golden.json"
expect 3 "$tmp/not_golden.json"
echo "python_golden: ok"
