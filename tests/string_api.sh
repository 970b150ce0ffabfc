#!/usr/bin/env bash
# No string API between the tools: a run's outcome passes from tool to tool as
# a typed value (run/run_result.hpp: RecoverResult), never as a JSON object
# read back by key, and the run record becomes JSON in one module,
# src/run/record_json.cpp.
#
# Part 1, reads by key.
# The scan covers the tool layers src/run, src/evidence, src/analysis and
# src/cli (comments stripped) and flags reads by key: `.value("...`,
# `.at("...`, `.contains("...`, `.find("...`, `["key"]` followed by
# .get/.is_*/.value/.size/.dump or compared with == or !=, and `["status"]`
# other than an assignment to it. No function and no file is exempt: reports
# read the typed records' fields.
#
# The codec is where JSON is written and read: the files named *_json.cpp
# (src/run/record_json.cpp for the run record, src/evidence/verify_json.cpp
# and baseline_json.cpp for the studies' documents and verify's messages
# between threads and ranks); they are not scanned. The documents a tool
# checks (golden files) are read through the strict reader of
# base/json_in.hpp (need_*, json_find), which checks each field's type and
# names its path; the certificate checker (src/check) is not scanned.
# A control injects each kind of read by key into a copy of a real file; each
# must fail, and so must one in a report function.
#
# Part 2, the record's JSON is built in one module.
#  * In the run layer (src/run, include/mhaq/run) no file builds JSON but
#    record_json.cpp and the document writers json_out.cpp and certificate*.cpp
#    (certificates are documents, not run records): no JSON variable,
#    json::array/object, object literal {{"key", ...}} or write ["key"] = .
#  * Anywhere in src/ and include/, the keys only a run record has (status's
#    remedy, self_check, heads_known, ...) appear in record_json.cpp alone, and
#    no tool stores record_json's value in a variable (where it could be
#    changed): it is passed on whole.
# Controls inject each kind of violation into a copy of a real file; each must
# fail, and the module itself must pass.
# Usage: string_api.sh SOURCE_DIR
set -u
src="$1"
codec='_json\.cpp$'
scan() {  # files... -> FILE:LINE: TEXT of each read by key
  awk '
    {
      line = $0; sub(/\/\/.*$/, "", line)
      read = line ~ /\.value\("|\.at\("|\.contains\("|\.find\("|\["[A-Za-z0-9_]+"\]\.(get|is_|value|size|dump)|\["[A-Za-z0-9_]+"\][[:space:]]*[=!]=/ ||
             (line ~ /\["status"\]/ && line !~ /\["status"\][[:space:]]*=[^=]/)
      if (read) print FILENAME ":" FNR ": " $0
    }' "$@"
}
dirs=()
for d in src/run src/evidence src/analysis src/cli; do [[ -d "$src/$d" ]] && dirs+=("$src/$d"); done
files=$(find "${dirs[@]}" -name '*.cpp' | grep -vE "$codec" | sort)
[[ -n "$files" ]] || { echo "FAIL: no tool sources found under $src"; exit 1; }
[[ $(find "${dirs[@]}" -name '*.cpp' | grep -cE "$codec") -ge 3 ]] || { echo "FAIL: the codec files (*_json.cpp) are not where this scan expects them"; exit 1; }
fail=0
bad=$(scan $files)
if [[ -n "$bad" ]]; then
  echo "FAIL: a tool reads a result object by key (pass a typed result, run/run_result.hpp; JSON is read in the codec, *_json.cpp):"
  echo "$bad"
  fail=1
fi
# control: reads by key injected into a real tool file must be flagged
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for inject in 'const bool ok = r.value("status", "") == "ok";' 'const bool ok = r["status"] == "ok";' 'const long q = r.at("queries").get<long>();' \
              'const bool ok = r.contains("exact_match");' 'const long q = r["queries"].get<long>();' 'const bool ok = r["schedule"] != "paper";'; do
  cp "$src/src/evidence/sweep.cpp" "$tmp/broken.cpp"
  printf '\nbool broken_tally(const nlohmann::json& r) {\n  %s\n  return ok;\n}\n' "$inject" >>"$tmp/broken.cpp"
  [[ -n "$(scan "$tmp/broken.cpp")" ]] || { echo "FAIL: the scan does not flag an injected read by key ($inject), so it proves nothing"; fail=1; }
done
# a report function is no exemption, and an assignment is not a read
printf 'std::string x_report(const nlohmann::json& r) {\n  return r.value("status", "");\n}\n' >"$tmp/report.cpp"
[[ -n "$(scan "$tmp/report.cpp")" ]] || { echo "FAIL: the scan does not flag a read by key in a report function"; fail=1; }
printf 'void f(nlohmann::json& r) {\n  r["status"] = "ok";\n  r["queries"] = 0;\n}\n' >"$tmp/fine.cpp"
[[ -z "$(scan "$tmp/fine.cpp")" ]] || { echo "FAIL: the scan flags an assignment"; fail=1; }

# ---- part 2: the run record's JSON is built in record_json.cpp alone
record_keys='"(remedy|self_check|heads_known|max_length_bound|repair_queries|fallback_queries|heads_found|blind_status|queries_by_phase|decision_tolerance|tolerance_decimal|error_estimate_decimal|max_radius_decimal|max_rel_error_decimal)"'
json_writers='/src/run/(record_json|json_out|certificate[a-z_]*)\.cpp$|/include/mhaq/run/(record_json|json_out)\.hpp$'
build_scan() {  # ROOT files... -> FILE:LINE: TEXT of each place that builds run-record JSON outside the module
  local root="$1"; shift
  local f
  for f in "$@"; do
    [[ "$f" =~ $json_writers ]] && continue
    awk -v run_layer="$([[ "$f" == "$root"/src/run/* || "$f" == "$root"/include/mhaq/run/* ]] && echo 1 || echo 0)" -v keys="$record_keys" '
      {
        line = $0; sub(/\/\/.*$/, "", line)
        bad = line ~ keys || line ~ /[A-Za-z_][A-Za-z0-9_]*[[:space:]]*=[[:space:]]*record_json\(/
        if (run_layer) bad = bad || line ~ /json::(array|object)|\{\{"[A-Za-z0-9_]+",|\["[A-Za-z0-9_]+"\][[:space:]]*=[^=]/ ||
                             line ~ /(^|[^A-Za-z0-9_>])(nlohmann::)?(json|ordered_json|ojson)[[:space:]&]+[A-Za-z_][A-Za-z0-9_]*[[:space:]]*[;={]/
        if (bad) print FILENAME ":" FNR ": " $0
      }' "$f"
  done
}
all_files=$(find "$src/src" "$src/include" -name '*.cpp' -o -name '*.hpp' | grep -v '/src/check/' | sort)
bad=$(build_scan "$src" $all_files)
if [[ -n "$bad" ]]; then
  echo "FAIL: run-record JSON built outside src/run/record_json.cpp (fill the typed record, run/run_result.hpp):"
  echo "$bad"
  fail=1
fi
# controls: each violation injected into a copy of a real file (at its own path) must be flagged
mkdir -p "$tmp/src/run" "$tmp/src/cli" "$tmp/src/evidence"
for inject in 'nlohmann::json r;' 'r["queries"] = 0;' 'attempts.push_back({{"bits", p}});' 'auto list = json::array();' \
              'doc["remedy"] = "more --bits";'; do
  cp "$src/src/run/recover.cpp" "$tmp/src/run/recover.cpp"
  printf '\nvoid broken(RecoverResult& r) {\n  %s\n}\n' "$inject" >>"$tmp/src/run/recover.cpp"
  [[ -n "$(build_scan "$tmp" "$tmp/src/run/recover.cpp")" ]] || { echo "FAIL: the scan does not flag run-record JSON built in the driver ($inject)"; fail=1; }
done
cp "$src/src/cli/cmd_basic.cpp" "$tmp/src/cli/cmd_basic.cpp"
printf '\nvoid broken(const RecoverResult& r) {\n  nlohmann::json j = record_json(r);\n  emit(true, j, "");\n}\n' >>"$tmp/src/cli/cmd_basic.cpp"
[[ -n "$(build_scan "$tmp" "$tmp/src/cli/cmd_basic.cpp")" ]] || { echo "FAIL: the scan does not flag a record's JSON kept in a variable by a tool"; fail=1; }
cp "$src/src/evidence/baseline.cpp" "$tmp/src/evidence/baseline.cpp"
printf '\nvoid broken(nlohmann::json& r) {\n  r["self_check"] = "none";\n}\n' >>"$tmp/src/evidence/baseline.cpp"
[[ -n "$(build_scan "$tmp" "$tmp/src/evidence/baseline.cpp")" ]] || { echo "FAIL: the scan does not flag a run-record key written outside the module"; fail=1; }
# and the module itself, at its path, is not flagged
cp "$src/src/run/record_json.cpp" "$tmp/src/run/record_json.cpp"
[[ -z "$(build_scan "$tmp" "$tmp/src/run/record_json.cpp")" ]] || { echo "FAIL: the scan flags the record's own module"; fail=1; }
[[ $fail -eq 0 ]] && echo "ok: $(echo "$files" | wc -l) tool files, no read by key outside the codec (*_json.cpp); run-record JSON built only in src/run/record_json.cpp"
exit $fail
