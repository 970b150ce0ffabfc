#!/usr/bin/env bash
# CLI contract: subcommands, --json prints exactly one JSON object, exit codes.
set -u
M="$1"
fail=0
pass=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() {  # name, expected exit code, command...
  local name="$1" want="$2"; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [[ $got -ne $want ]]; then
    echo "FAIL $name: exit $got, want $want"; cat "$tmp/err"; fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
}
one_json() {  # the output is exactly one JSON object
  python3 -c 'import json,sys; t=sys.stdin.read(); o=json.loads(t); assert isinstance(o, dict)' <"$tmp/out" \
    || { echo "FAIL $1: stdout is not one JSON object"; fail=$((fail + 1)); }
}
check "demo" 0 "$M" demo
grep -q "exact match      yes" "$tmp/out" || { echo "FAIL demo: no exact match line"; fail=$((fail + 1)); }
grep -q "functional check T - T' = 0 on 20 of 20" "$tmp/out" || { echo "FAIL demo: no transformer functional check"; fail=$((fail + 1)); }
grep -q "unknown (the heads reproduce" "$tmp/out" && { echo "FAIL demo: a self-check line contradicts itself"; fail=$((fail + 1)); }
check "demo --json" 0 "$M" demo --json; one_json "demo --json"
# The showcase attention runs are unrepaired draws that send exactly the paper's
# 4Hd^2-2H+1 queries (claim 2), none longer than 2H+1.
python3 - "$tmp/out" <<'PY' || { echo "FAIL demo: the showcase run is not an unrepaired draw with 4Hd^2-2H+1 queries"; fail=$((fail + 1)); }
import json, sys
j = json.load(open(sys.argv[1]))
for arith in ("exact", "ball"):
    r = j[arith]
    d, H = r["d"], r["H"]
    assert r["status"] == "ok", (arith, r["status"])
    assert r.get("repair_queries", 0) == 0 and "repaired_pairs" not in r, (arith, "repaired")
    assert r["queries"] == 4 * H * d * d - 2 * H + 1 == 69, (arith, r["queries"])
    assert r["max_length"] == 2 * H + 1, (arith, r["max_length"])
PY
check "generate" 0 "$M" generate --d 3 --heads 2 --seed 4 -o "$tmp/m.json"
check "generate same seed same bytes" 0 "$M" generate --d 3 --heads 2 --seed 4 -o "$tmp/m2.json"
cmp -s "$tmp/m.json" "$tmp/m2.json" || { echo "FAIL generate not deterministic"; fail=$((fail + 1)); }
check "recover file --json" 0 "$M" recover --model "$tmp/m.json" --seed 3 --json; one_json "recover --json"
cp "$tmp/out" "$tmp/r1"
check "recover again" 0 "$M" recover --model "$tmp/m.json" --seed 3 --json
cmp -s "$tmp/out" "$tmp/r1" || { echo "FAIL recover not deterministic"; fail=$((fail + 1)); }
check "recover ball" 0 "$M" recover --d 3 --heads 2 --seed 2 --arith ball --bits 128 --json; one_json "recover ball"
check "recover mpfr" 0 "$M" recover --d 3 --heads 2 --seed 2 --arith mpfr --bits 128
check "usage: unknown arith" 2 "$M" recover --d 3 --heads 2 --arith quad
check "usage: no model" 2 "$M" recover --seed 1
check "usage: both model and d" 2 "$M" recover --model "$tmp/m.json" --d 3
check "usage: json on usage error" 2 "$M" recover --arith quad --json; one_json "usage error --json"
check "usage: no subcommand" 2 "$M"
echo '{"format":"mhaq-model","version":1,"d":2}' >"$tmp/bad.json"
check "input: malformed model" 3 "$M" recover --model "$tmp/bad.json"
check "input: malformed model --json" 3 "$M" recover --model "$tmp/bad.json" --json; one_json "input error --json"
check "unable: low precision" 5 "$M" recover --d 8 --heads 6 --seed 2 --arith ball --bits 48
check "recover --certificate" 0 "$M" recover --d 2 --heads 1 --seed 1 --arith mpfr --bits 96 --certificate "$tmp/cert.json"
check "check-certificate" 0 "$M" check-certificate "$tmp/cert.json"
check "check-certificate --json" 0 "$M" check-certificate "$tmp/cert.json" --json; one_json "check-certificate --json"
sed 's/"heads_recovered": 1/"heads_recovered": 2/' "$tmp/cert.json" >"$tmp/cert_bad.json"
check "checker_rejected: tampered certificate" 10 "$M" check-certificate "$tmp/cert_bad.json" --json; one_json "check-certificate failure --json"
head -c 300 "$tmp/cert.json" >"$tmp/cert_cut.json"
check "input: truncated certificate" 3 "$M" check-certificate "$tmp/cert_cut.json"
check "usage: check-certificate without a file" 2 "$M" check-certificate
check "golden export --arith ball" 0 "$M" golden export --d 2 --heads 1 --seed 1 --arith ball --bits 96 -o "$tmp/g.json"
check "golden check ball" 0 "$M" golden check "$tmp/g.json"
has_keys() {  # name, keys...: the JSON object on stdout has every key
  local name="$1"; shift
  python3 -c 'import json,sys; o=json.load(open(sys.argv[1])); missing=[k for k in sys.argv[2:] if k not in o]; sys.exit(1 if missing else 0)' "$tmp/out" "$@" \
    || { echo "FAIL $name: missing one of $*"; fail=$((fail + 1)); }
}
check "recover --noise" 0 "$M" recover --d 3 --heads 2 --seed 2 --arith mpfr --bits 256 --noise 1e-30 --json
one_json "recover --noise --json"; has_keys "recover --noise" kappa certified_bound observed_error
check "recover --noise-pattern worst" 0 "$M" recover --d 3 --heads 2 --seed 2 --arith mpfr --bits 256 --noise 1e-30 --noise-pattern worst
check "usage: --noise-pattern without --noise" 2 "$M" recover --d 3 --heads 2 --seed 2 --arith mpfr --noise-pattern worst
check "usage: --target-error with mpfr" 2 "$M" recover --d 3 --heads 2 --seed 2 --arith mpfr --target-error 1e-20
check "recover --target-error" 0 "$M" recover --d 3 --heads 2 --seed 2 --arith ball --target-error 1e-20 --json
one_json "recover --target-error --json"; has_keys "recover --target-error" bits_used bits_start kappa_estimate attempts
check "recover --samples-per-pair" 0 "$M" recover --d 2 --heads 1 --seed 2 --arith mpfr --samples-per-pair 6 --json; has_keys "oversampling" samples_per_pair
check "usage: --samples-per-pair too small" 2 "$M" recover --d 2 --heads 1 --seed 2 --arith mpfr --samples-per-pair 3
check "sweep --json" 0 "$M" sweep --d 2 --heads 1-2 --bits 64,128 --trials 1 -o "$tmp/s.csv" --json --quiet
one_json "sweep --json"; has_keys "sweep" summary rows csv
check "usage: sweep over an existing CSV" 2 "$M" sweep --d 2 --heads 1-2 --bits 64,128 --trials 1 -o "$tmp/s.csv" --quiet
check "sweep --resume (complete)" 0 "$M" sweep --d 2 --heads 1-2 --bits 64,128 --trials 1 -o "$tmp/s.csv" --resume --quiet
check "usage: sweep bad list" 2 "$M" sweep --heads 3-1 -o "$tmp/s2.csv"
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
