#!/usr/bin/env bash
# No string API between the tools: a run's outcome passes from tool to tool as
# a typed value (run/run_result.hpp: RecoverResult), never as a JSON object
# read back by key.
#
# The scan covers the tool layers src/run, src/evidence, src/analysis and
# src/cli (comments stripped) and flags reads by key: `.value("...`,
# `.at("...` and `["status"]` other than an assignment to it.
#
# Allowed, by location:
#  * typed_result (src/run/run_result.cpp): the one reader of a run's record;
#  * functions named *_report or *_exit_code: the edge where a tool turns its
#    own record into text or an exit code;
#  * compare_study (src/evidence/baseline.cpp): tallies the rows that
#    compare_methods wrote in the same module;
#  * readers of input files, which parse documents rather than results:
#    golden files (src/evidence/golden*.cpp), model files
#    (src/cli/cmd_convert.cpp), and the certificate checker (src/check, not
#    scanned).
# A control injects a read by key into a copy of a real file; it must fail.
# Usage: string_api.sh SOURCE_DIR
set -u
src="$1"
allowed_functions='^(typed_result|[A-Za-z0-9_]+_report|[A-Za-z0-9_]+_exit_code|compare_study)$'
input_readers='/src/evidence/golden[^/]*\.cpp$|/src/cli/cmd_convert\.cpp$'
scan() {  # files... -> FILE:LINE:FUNCTION: TEXT of each read by key outside the allowed functions
  awk -v allowed="$allowed_functions" '
    FNR == 1 { fn = "" }
    /^[A-Za-z].*\(/ && !/;[[:space:]]*$/ {  # a definition at the top level names the enclosing function
      fn = $0; sub(/\(.*/, "", fn); n = split(fn, parts, /[ *&]+/); fn = parts[n]; sub(/.*::/, "", fn)
    }
    {
      line = $0; sub(/\/\/.*$/, "", line)
      read = line ~ /\.value\("|\.at\("/ || (line ~ /\["status"\]/ && line !~ /\["status"\][[:space:]]*=[^=]/)
      if (read && fn !~ allowed) print FILENAME ":" FNR ":" fn ": " $0
    }' "$@"
}
dirs=()
for d in src/run src/evidence src/analysis src/cli; do [[ -d "$src/$d" ]] && dirs+=("$src/$d"); done
files=$(find "${dirs[@]}" -name '*.cpp' | grep -vE "$input_readers" | sort)
[[ -n "$files" ]] || { echo "FAIL: no tool sources found under $src"; exit 1; }
fail=0
bad=$(scan $files)
if [[ -n "$bad" ]]; then
  echo "FAIL: a tool reads a result object by key (pass a typed result, run/run_result.hpp):"
  echo "$bad"
  fail=1
fi
# control: reads by key injected into a real tool file must be flagged
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for inject in 'const bool ok = r.value("status", "") == "ok";' 'const bool ok = r["status"] == "ok";' 'const long q = r.at("queries").get<long>();'; do
  cp "$src/src/evidence/sweep.cpp" "$tmp/broken.cpp"
  printf '\nbool broken_tally(const nlohmann::json& r) {\n  %s\n  return ok;\n}\n' "$inject" >>"$tmp/broken.cpp"
  [[ -n "$(scan "$tmp/broken.cpp")" ]] || { echo "FAIL: the scan does not flag an injected read by key ($inject), so it proves nothing"; fail=1; }
done
# and an assignment or an allowed report is not a read
printf 'void f(nlohmann::json& r) {\n  r["status"] = "ok";\n}\nstd::string x_report(const nlohmann::json& r) {\n  return r.value("status", "");\n}\n' >"$tmp/fine.cpp"
[[ -z "$(scan "$tmp/fine.cpp")" ]] || { echo "FAIL: the scan flags an assignment or a report function"; fail=1; }
[[ $fail -eq 0 ]] && echo "ok: $(echo "$files" | wc -l) tool files, no result read by key outside typed_result and the reports"
exit $fail
