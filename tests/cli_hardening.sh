#!/usr/bin/env bash
# Hardening: every defect found by fuzzing or by hand gives its
# documented exit code (2 usage, 3 input, 10 checker_rejected, or 0 where the
# input is valid) within 5 s, with no signal, no exit 7, and (with --json)
# exactly one JSON object with a short message.
# usage: cli_hardening.sh MHAQ SOURCE_DIR
# MHAQ_TIME_SCALE (default 1) multiplies the 5 s bound; only the sanitizer run
# sets it (tests/quickstart.sh asan: instrumented code runs several times
# slower). The bound itself is asserted by the release build's run.
set -u
M="$1"
SRC="$2"
C="$SRC/tests/fuzz/corpus"
fail=0
pass=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run NAME WANT CMD...: exit code WANT within 5 s, no signal, a message of at most 1000 characters
run() {
  local name="$1" want="$2"; shift 2
  timeout -s KILL $((5 * ${MHAQ_TIME_SCALE:-1})) "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [[ $got -eq 137 ]]; then
    echo "FAIL $name: still running after $((5 * ${MHAQ_TIME_SCALE:-1})) s"; fail=$((fail + 1)); return
  fi
  if [[ $got -ne $want ]]; then
    echo "FAIL $name: exit $got, want $want"; head -c 600 "$tmp/err"; echo; fail=$((fail + 1)); return
  fi
  if [[ $(wc -c <"$tmp/err") -gt 1000 ]]; then
    echo "FAIL $name: message of $(wc -c <"$tmp/err") bytes"; fail=$((fail + 1)); return
  fi
  pass=$((pass + 1))
}
# json_error NAME KIND: stdout is one JSON object {"status": "error", "error": KIND, "message": <short>}
json_error() {
  python3 - "$tmp/out" "$2" <<'EOF' || { echo "FAIL $1: stdout is not one JSON error object of kind $2"; head -c 300 "$tmp/out"; echo; fail=$((fail + 1)); }
import json, sys
o = json.loads(open(sys.argv[1], encoding="utf-8").read())
assert o["status"] == "error" and o["error"] == sys.argv[2] and len(o["message"]) <= 1000, o
EOF
}
# says NAME TEXT: stderr or stdout contains TEXT
says() {
  grep -qF -- "$2" "$tmp/err" "$tmp/out" || { echo "FAIL $1: message lacks \"$2\":"; head -c 400 "$tmp/err"; echo; fail=$((fail + 1)); }
}

"$M" generate --d 2 --heads 2 --seed 7 -o "$tmp/m.json" >/dev/null
"$M" golden export --d 2 --heads 1 --seed 1 --digits 12 -o "$tmp/g.json" >/dev/null
"$M" recover --d 2 --heads 1 --seed 1 --arith ball --bits 64 --certificate "$tmp/c.json" >/dev/null

# ---- exit 7 on bad input: a number beyond a double, in every reader
O="$C/model/defect_overflow_d_1e400.json"
run "1e400: recover --model" 3 "$M" recover --model "$O"; says "1e400 names the field" "d: number out of range"
run "1e400 in an entry: recover --model" 3 "$M" recover --model "$C/model/defect_overflow_entry_1e400.json"; says "1e400 entry path" "heads[0].W[0][0]"
run "1e400: convert" 3 "$M" convert --model "$O" -o "$tmp/conv.json"
run "1e400: golden export --model" 3 "$M" golden export --model "$O" -o "$tmp/gx.json"
run "1e400: golden check" 3 "$M" golden check "$C/golden/defect_overflow_seed.json"; says "1e400 golden path" "inputs.generate.seed"
run "1e400: check-certificate" 3 "$M" check-certificate "$C/certificate/defect_overflow_bits.json"; says "1e400 certificate path" "bits"
# W entries too large for the exact oracle: an input error naming the file
run "W entry 1e30: recover" 3 "$M" recover --model "$C/model/defect_w_entry_1e30.json"; says "1e30 names the file" "defect_w_entry_1e30.json"
run "W entry of 401 digits: recover" 3 "$M" recover --model "$C/model/defect_w_entry_401_digits.json"
run "W entry 1e30: golden export" 3 "$M" golden export --model "$C/model/defect_w_entry_1e30.json" -o "$tmp/gx.json"
run "W entry 1e30 in a golden file" 3 "$M" golden check "$C/golden/defect_w_entry_1e30.json"
run "W entry 1e30, ball: a status, not an error" 5 "$M" recover --model "$C/model/defect_w_entry_1e30.json" --arith ball --bits 64
# golden tokens off the grid, or huge
run "golden token 1/3" 3 "$M" golden check "$C/golden/defect_token_off_grid_1_3.json"; says "1/3 path" "queries[4].runs[0].token[1]"
run "golden huge token" 3 "$M" golden check "$C/golden/defect_huge_token.json"
run "golden token 10^6" 3 "$M" golden check "$C/golden/defect_token_1e6.json"
run "golden token_range 10^9" 3 "$M" golden check "$C/golden/defect_token_range_1e9.json"
run "golden generate options that generate refuses" 3 "$M" golden check "$C/golden/defect_generate_cancel_v_one_head.json"

# ---- crashes: --json with invalid UTF-8 (every subcommand that reads a file)
U="$C/model/defect_invalid_utf8.json"
run "utf8: recover --json" 3 "$M" recover --model "$U" --json; json_error "utf8: recover --json" input
run "utf8 key: recover --json" 3 "$M" recover --model "$C/model/defect_invalid_utf8_key.json" --json; json_error "utf8 key" input
run "utf8: convert --json" 3 "$M" convert --model "$U" --json; json_error "utf8: convert --json" input
run "utf8: golden export --json" 3 "$M" golden export --model "$U" -o "$tmp/gx.json" --json; json_error "utf8: golden export" input
run "utf8: golden check --json" 3 "$M" golden check "$C/golden/defect_invalid_utf8.json" --json; json_error "utf8: golden check" input
run "utf8: check-certificate --json" 3 "$M" check-certificate "$C/certificate/defect_invalid_utf8.json" --json; json_error "utf8: check-certificate" input
bad_name="$tmp/$(printf 'bad\xff\xfe name.json')"
run "utf8 in a file name: recover --json" 3 "$M" recover --model "$bad_name" --json; json_error "utf8 file name" input
run "utf8 in an option: recover --json" 2 "$M" recover --d 2 --heads 1 --arith "$(printf 'ex\xffact')" --json; json_error "utf8 option" usage
run "utf8 subcommand --json" 2 "$M" "$(printf 'b\xffgus')" --json; json_error "utf8 subcommand" usage
# huge allocations from small options
run "--token-range 10^9 (exact)" 2 "$M" recover --d 2 --heads 1 --token-range 1000000000; says "token range" "token range 1000000000"
run "--token-range 2^30+1" 2 "$M" recover --d 2 --heads 1 --arith mpfr --token-range 1073741825
run "--samples-per-pair 10^9" 2 "$M" recover --d 2 --heads 1 --arith mpfr --samples-per-pair 1000000000
run "--samples-per-pair past the plan limit" 2 "$M" recover --d 1024 --heads 1 --arith mpfr --samples-per-pair 4096; says "plan limit" "more than the limit of 268435456"

# ---- exit 0 with silently wrong values
run "u64 d wraps" 3 "$M" recover --model "$C/model/defect_u64_wraps_d.json"; says "u64 not -1" "18446744073709551615"
run "u64 entry read exactly" 0 "$M" convert --model "$C/model/defect_u64_entry.json" -o "$tmp/u64.json"
grep -q '"18446744073709551615"' "$tmp/u64.json" || { echo "FAIL u64 entry: not read as 2^64-1"; fail=$((fail + 1)); }
run "u64 certificate bits" 3 "$M" check-certificate "$C/certificate/defect_u64_wraps_bits.json"
run "u64 golden heads" 3 "$M" golden check "$C/golden/defect_u64_wraps_heads.json"
run "duplicate key: model" 3 "$M" recover --model "$C/model/defect_duplicate_key.json"; says "duplicate named" 'duplicate key "d"'
run "duplicate key in a head" 3 "$M" convert --model "$C/model/defect_duplicate_key_in_head.json"; says "duplicate path" "heads[0].v"
run "duplicate key: golden" 3 "$M" golden check "$C/golden/defect_duplicate_key.json"
run "duplicate key: certificate" 3 "$M" check-certificate "$C/certificate/defect_duplicate_key.json"
rm -f "$tmp/conv.json"
run "convert: entry of 5002 characters" 3 "$M" convert --model "$C/model/defect_convert_5002_chars.json" -o "$tmp/conv.json"; says "5002 named" "5002 characters"
[[ -e "$tmp/conv.json" ]] && { echo "FAIL convert 5002: an unreadable file was written"; fail=$((fail + 1)); }
run "sweep --d 4294967297" 2 "$M" sweep --d 4294967297 --heads 1 --bits 64 --trials 1 -o "$tmp/s.csv" --quiet
run "sweep --heads 1-4294967297" 2 "$M" sweep --d 2 --heads 1-4294967297 --bits 64 --trials 1 -o "$tmp/s.csv" --quiet
run "sweep --bits 9223372036854775808" 2 "$M" sweep --d 2 --heads 1 --bits 9223372036854775808 --trials 1 -o "$tmp/s.csv" --quiet
for s in -1 18446744073709551616 0x10 010 1e3 " 5"; do
  run "recover --seed $s" 2 "$M" recover --d 2 --heads 1 --seed "$s"
done
run "--seed 2^64-1 is valid" 0 "$M" generate --d 1 --heads 1 --seed 18446744073709551615
for cmd in "generate --d 2 --heads 1" "golden export --d 1 --heads 1" "verify --trials 1" "demo" "prove --lemma 01"; do
  run "$cmd --seed -1" 2 "$M" $cmd --seed -1
done
run "recover --noise-seed -1" 2 "$M" recover --d 2 --heads 1 --arith mpfr --noise 1e-9 --noise-seed -1
run "--token-den 0" 2 "$M" recover --d 2 --heads 1 --token-den 0
run "--token-range 0" 2 "$M" recover --d 2 --heads 1 --token-range 0
run "--max-heads 0" 2 "$M" recover --d 2 --heads 1 --max-heads 0
run "--learner-heads 0" 2 "$M" recover --d 2 --heads 1 --learner-heads 0
run "--target-error 0" 2 "$M" recover --d 2 --heads 1 --arith ball --target-error 0
run "--samples-per-pair 0" 2 "$M" recover --d 2 --heads 1 --arith mpfr --samples-per-pair 0
run "--oracle-bits 0" 2 "$M" recover --d 2 --heads 1 --arith mpfr --oracle-bits 0
run "--bits 0" 2 "$M" recover --d 2 --heads 1 --arith mpfr --bits 0
run "--bits -5" 2 "$M" recover --d 2 --heads 1 --arith ball --bits -5
run "--noise -1" 2 "$M" recover --d 2 --heads 1 --arith mpfr --noise -1
run "--threads -1" 2 "$M" recover --d 2 --heads 1 --threads -1
run "--d 9223372036854775808" 2 "$M" generate --d 9223372036854775808 --heads 1 --seed 1
run "golden --max-heads 0" 2 "$M" golden export --d 1 --heads 1 --max-heads 0
run "verify --tol 0" 2 "$M" verify --trials 1 --seed 1 --arith mpfr --tol 0
run "verify --tol 1e400" 2 "$M" verify --trials 1 --seed 1 --arith mpfr --tol 1e400
run "verify --trials 0" 2 "$M" verify --trials 0 --seed 1
run "verify --max-h 63 --h0-extra 2" 2 "$M" verify --trials 1 --seed 1 --max-h 63

# ---- transformer files: the same strict-reader rules (exit 3 naming the field)
T="$C/model"
run "transformer 1e400" 3 "$M" recover --model "$T/defect_transformer_overflow_d_1e400.json"; says "transformer 1e400" "d: number out of range"
run "transformer u64 d" 3 "$M" recover --model "$T/defect_transformer_u64_wraps_d.json"; says "transformer u64" "18446744073709551615"
run "transformer d 2.0" 3 "$M" recover --model "$T/defect_transformer_d_float_2.0.json"; says "transformer 2.0" "got the floating-point number 2.0"
run "transformer duplicate key" 3 "$M" recover --model "$T/defect_transformer_duplicate_key.json"; says "transformer dup" 'duplicate key "d"'
run "transformer duplicate key in a neuron" 3 "$M" recover --model "$T/defect_transformer_duplicate_key_in_neuron.json"; says "transformer dup path" "neurons[0].u"
run "transformer utf8 --json" 3 "$M" recover --model "$T/defect_transformer_invalid_utf8.json" --json; json_error "transformer utf8" input
run "transformer entry of 5000 characters" 3 "$M" recover --model "$T/defect_transformer_long_entry.json"; says "transformer long" "neurons[0].u"
run "transformer W entry 1e30" 3 "$M" recover --model "$T/defect_transformer_w_entry_1e30.json"; says "transformer 1e30" "powers of tau"
run "transformer 257 neurons" 3 "$M" recover --model "$T/defect_transformer_257_neurons.json"; says "transformer 257" "more than the limit of 256"
run "transformer 65 heads" 3 "$M" recover --model "$T/defect_transformer_65_heads.json"; says "transformer 65" "more than the limit of 64"
# a transformer whose canonical form is empty (every readout zero): the file is the fault, exit 3
python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
for n in m["neurons"]:
    n["u"] = "0"
json.dump(m, open(sys.argv[2], "w"))' "$T/seed_transformer_d2_h2_m2.json" "$tmp/empty_t.json"
run "empty canonical transformer: recover" 3 "$M" recover --model "$tmp/empty_t.json"; says "empty transformer" "canonical form is empty"
run "empty canonical transformer: golden export" 3 "$M" golden export --model "$tmp/empty_t.json" -o "$tmp/gx_empty.json"; says "empty transformer golden" "canonical form is empty"
[[ ! -e "$tmp/gx_empty.json" ]] || { echo "FAIL empty transformer golden: a file was written"; fail=$((fail + 1)); }
run "transformer seed file" 0 "$M" recover --model "$T/seed_transformer_d2_h2_m2.json"
run "factored transformer seed file" 0 "$M" recover --model "$T/seed_transformer_factored.json"
run "--ffn 0" 2 "$M" generate --d 2 --heads 1 --seed 1 --ffn 0
run "--ffn 10^6" 2 "$M" recover --d 2 --heads 1 --ffn 1000000
run "--learner-neurons 0" 2 "$M" recover --d 2 --heads 1 --ffn 1 --learner-neurons 0
run "transformer --tolerance 0" 2 "$M" recover --d 2 --heads 1 --ffn 1 --arith mpfr --tolerance 0
run "transformer --token-den ignored before: refused" 2 "$M" recover --d 2 --heads 1 --ffn 1 --token-den 32

# ---- unbounded work from small inputs
run "--learner-heads 10^6" 2 "$M" recover --d 2 --heads 1 --learner-heads 1000000
run "--max-heads 10^6" 2 "$M" recover --d 2 --heads 1 --max-heads 1000000
run "--model F --heads 10^6" 2 "$M" recover --model "$tmp/m.json" --heads 1000000
run "--d 1024 --heads 64: over the memory bound before any work" 11 "$M" recover --d 1024 --heads 64 --arith mpfr --max-memory 64G; says "memory bound" "predicted peak memory"
run "certificate d=64, H=64, no queries" 3 "$M" check-certificate "$C/certificate/defect_d64_h64_no_queries.json"; says "plan limit" "more than the limit of 131072"
run "certificate d=8, H=8, no queries: fails fast" 10 "$M" check-certificate "$C/certificate/defect_d8_h8_no_queries.json"
run "ball certificate bits 2^24" 3 "$M" check-certificate "$C/certificate/defect_ball_bits_16777216.json"
run "ball certificate bits 2^16 (the limit) on 64-bit values" 0 "$M" check-certificate "$C/certificate/limit_ball_bits_65536.json"
run "ball certificate claiming 16 bits for 64-bit values" 10 "$M" check-certificate "$C/certificate/defect_ball_bits_16_too_few.json"; says "bits verified" "significant bits"
run "mpfr tolerance 1/3" 10 "$M" check-certificate "$C/certificate/defect_tolerance_one_third.json"; says "tolerance" "tolerances.pairs: 1/3 is not a power of two"
run "ball certificate with tolerances" 3 "$M" check-certificate "$C/certificate/defect_ball_with_tolerances.json"
run "certificate: a wild token" 10 "$M" check-certificate "$C/certificate/defect_wild_token.json"
run "certificate: a wild pole" 10 "$M" check-certificate "$C/certificate/defect_wild_pole.json"
run "certificate: witness range 2^30" 10 "$M" check-certificate "$C/certificate/defect_witness_range_2p30.json"; says "witness range" "inputs.witness_range"
run "certificate: 4096 witness queries claimed, 50 recorded" 10 "$M" check-certificate "$C/certificate/defect_witness_count_4096.json"; says "witness count" "claims.grid_witness_queries"
run "certificate: model of 1025 heads" 3 "$M" check-certificate "$C/certificate/defect_model_1025_heads.json"
python3 -c "
import json
print(json.dumps({'format': 'mhaq-model', 'version': 1, 'd': 1, 'heads': [{'W': [[str(h)]], 'v': ['1']} for h in range(100000)]}))" >"$tmp/heads1e5.json"
run "convert 10^5 heads" 3 "$M" convert --model "$tmp/heads1e5.json" -o "$tmp/conv.json"; says "heads limit" "more than the limit of 1024"
run "convert 1024 heads (the limit)" 0 "$M" convert --model "$C/model/limit_1024_heads.json" -o "$tmp/conv.json"
run "recover a 1024-head file (canonical H over the learner's limit)" 3 "$M" recover --model "$C/model/limit_1024_heads.json"
run "model nested 100000 levels" 3 "$M" recover --model "$C/model/defect_deep_nesting.json"; says "depth" "nested deeper than 64 levels"

# ---- usability
run "mhaq bogus" 2 "$M" bogus; says "unknown subcommand named" 'unknown subcommand "bogus"'
run "mhaq golden bogus" 2 "$M" golden bogus; says "unknown golden subcommand named" 'unknown subcommand "bogus"'
mkdir -p "$tmp/dir.json"
run "a directory as the model file" 3 "$M" recover --model "$tmp/dir.json"; says "directory" "it is a directory"
run "a directory as the certificate" 3 "$M" check-certificate "$tmp/dir.json"
run "a directory as the golden file" 3 "$M" golden check "$tmp/dir.json"
run "d: 2.0" 3 "$M" recover --model "$C/model/defect_d_float_2.0.json"; says "2.0 named" "got the floating-point number 2.0"
python3 -c "
import json
m = json.load(open('$tmp/m.json')); m['heads'][0]['v'][0] = '1' * 50000000
open('$tmp/big.json', 'w').write(json.dumps(m))"
run "a numeric string of 50 MB" 3 "$M" recover --model "$tmp/big.json" --json; json_error "50 MB string" input
run "a model file of 200 MB" 3 bash -c "head -c 200000000 /dev/zero | '$M' recover --model /dev/stdin"; says "file limit" "more than the limit of 134217728 bytes"

# ---- safetensors: every malformed file of the corpus is an input error, with maps for its tensor names
echo '{"format":"mhaq-safetensors-map","heads":1,"layout":"out_in","q":"q","k":"k","v":"v","out":"o","readout":"u","scale":"1"}' >"$tmp/map_qkvo.json"
echo '{"format":"mhaq-safetensors-map","heads":1,"layout":"out_in","in_proj":"in_proj_weight","out":"out_proj.weight","readout":["1"],"scale":"1"}' >"$tmp/map_fused.json"
echo '{"format":"mhaq-safetensors-map","heads":1,"layout":"out_in","q":"x","k":"x","v":"x","out":"x","readout":["1"],"scale":"1"}' >"$tmp/map_x.json"
for f in "$C"/safetensors/defect_*.safetensors; do
  for map in qkvo fused x; do
    run "safetensors $(basename "$f") ($map)" 3 "$M" convert --safetensors "$f" --map "$tmp/map_$map.json" --json; json_error "$(basename "$f")" input
  done
done
run "certified golden check" 0 "$M" golden check "$C/golden/seed_certified.json"
run "certified golden check (no learner)" 0 "$M" golden check "$C/golden/seed_certified_no_learner.json"
run "safetensors seed converts" 0 "$M" convert --safetensors "$C/safetensors/seed_qkvo_F64.safetensors" --map "$tmp/map_qkvo.json" -o "$tmp/st.json"
run "a checkpoint with I64 and BOOL tensors and an unnamed bias converts" 0 "$M" convert --safetensors "$C/safetensors/seed_checkpoint.safetensors" --map "$tmp/map_qkvo.json" -o "$tmp/st2.json"
run "an unnamed bias next to the fused layer is reported" 0 "$M" convert --safetensors "$C/safetensors/seed_fused_bias_unnamed.safetensors" --map "$tmp/map_fused.json" -o "$tmp/st3.json"; says "unnamed bias reported" "not used         in_proj_bias"

# ---- valid inputs stay valid
run "recover a generated model" 0 "$M" recover --model "$tmp/m.json" --seed 3
run "golden check" 0 "$M" golden check "$tmp/g.json"
run "check-certificate" 0 "$M" check-certificate "$tmp/c.json"
run "convert the factored example" 0 "$M" convert --model "$SRC/tests/data/factored_example.json" -o "$tmp/conv.json"
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
