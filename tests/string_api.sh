#!/usr/bin/env bash
# No string API between the tools: a run's outcome passes from tool to tool as
# a typed value (run/run_result.hpp: RecoverResult), never as a JSON object
# read back by key.
#
# The scan covers the tool layers src/run, src/evidence, src/analysis and
# src/cli (comments stripped) and flags reads by key: `.value("...`,
# `.at("...`, `.contains("...`, `.find("...`, `["key"]` followed by
# .get/.is_*/.value/.size/.dump or compared with == or !=, and `["status"]`
# other than an assignment to it.
#
# Allowed, by location:
#  * typed_result (src/run/run_result.cpp): the one reader of a run's record;
#  * functions named *_report or *_exit_code: the edge where a tool turns its
#    own record into text or an exit code;
#  * compare_study (src/evidence/baseline.cpp): tallies the rows that
#    compare_methods wrote in the same module;
#  * readers of input documents, which parse documents rather than results:
#    functions named *_from_json*, golden files (src/evidence/golden*.cpp),
#    model files (src/cli/cmd_convert.cpp), and the certificate checker
#    (src/check, not scanned).
# Not yet under the stricter patterns (only `.value("`, `.at("` and
# `["status"]` are checked there): src/evidence/verify*.cpp, which reads back
# its own trial records by key.
# A control injects a read by key into a copy of a real file; it must fail.
# Usage: string_api.sh SOURCE_DIR
set -u
src="$1"
allowed_functions='^(typed_result|[A-Za-z0-9_]+_report|[A-Za-z0-9_]+_exit_code|compare_study|[A-Za-z0-9_]+_from_json[A-Za-z0-9_]*)$'
input_readers='/src/evidence/golden[^/]*\.cpp$|/src/cli/cmd_convert\.cpp$'
basic_only='/src/evidence/verify[^/]*\.cpp$'
scan() {  # [--basic] files... -> FILE:LINE:FUNCTION: TEXT of each read by key outside the allowed functions
  local strict=1
  [[ "${1:-}" == --basic ]] && { strict=0; shift; }
  awk -v allowed="$allowed_functions" -v strict="$strict" '
    FNR == 1 { fn = "" }
    /^[A-Za-z].*\(/ && !/;[[:space:]]*$/ {  # a definition at the top level names the enclosing function
      fn = $0; sub(/\(.*/, "", fn); n = split(fn, parts, /[ *&]+/); fn = parts[n]; sub(/.*::/, "", fn)
    }
    {
      line = $0; sub(/\/\/.*$/, "", line)
      read = line ~ /\.value\("|\.at\("/ || (line ~ /\["status"\]/ && line !~ /\["status"\][[:space:]]*=[^=]/)
      if (strict) read = read || line ~ /\.contains\("|\.find\("|\["[A-Za-z0-9_]+"\]\.(get|is_|value|size|dump)|\["[A-Za-z0-9_]+"\][[:space:]]*[=!]=/
      if (read && fn !~ allowed) print FILENAME ":" FNR ":" fn ": " $0
    }' "$@"
}
dirs=()
for d in src/run src/evidence src/analysis src/cli; do [[ -d "$src/$d" ]] && dirs+=("$src/$d"); done
files=$(find "${dirs[@]}" -name '*.cpp' | grep -vE "$input_readers" | sort)
[[ -n "$files" ]] || { echo "FAIL: no tool sources found under $src"; exit 1; }
strict_files=$(echo "$files" | grep -vE "$basic_only")
basic_files=$(echo "$files" | grep -E "$basic_only")
fail=0
bad=$(scan $strict_files; [[ -z "$basic_files" ]] || scan --basic $basic_files)
if [[ -n "$bad" ]]; then
  echo "FAIL: a tool reads a result object by key (pass a typed result, run/run_result.hpp):"
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
# and an assignment or an allowed report is not a read
printf 'void f(nlohmann::json& r) {\n  r["status"] = "ok";\n  r["queries"] = 0;\n}\nstd::string x_report(const nlohmann::json& r) {\n  return r.value("status", "");\n}\n' >"$tmp/fine.cpp"
[[ -z "$(scan "$tmp/fine.cpp")" ]] || { echo "FAIL: the scan flags an assignment or a report function"; fail=1; }
[[ $fail -eq 0 ]] && echo "ok: $(echo "$files" | wc -l) tool files, no result read by key outside typed_result and the reports"
exit $fail
