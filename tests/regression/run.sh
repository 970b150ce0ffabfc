#!/usr/bin/env bash
# Behaviour lock: every command line in commands.txt is run and its standard
# output and exit code are compared byte for byte with expected/NAME.out.
#   usage: bash tests/regression/run.sh MHAQ_BINARY [--update] [NAME...]
# A line is "NAME | shell command"; $M is the mhaq program. Each line runs in a
# fresh temporary folder, so the file names it writes are relative and the
# same from run to run (files a command writes are printed with cat so that
# they are compared too). --update rewrites the expected files: use it
# only in a commit whose purpose is to change those outputs.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
M="$1"; shift
update=0
if [[ "${1:-}" == --update ]]; then update=1; shift; fi
only=("$@")
fail=0; n=0
while IFS= read -r line; do
  [[ -z "$line" || "$line" == \#* ]] && continue
  name="${line%% | *}"; cmd="${line#* | }"
  if [[ ${#only[@]} -gt 0 ]] && [[ ! " ${only[*]} " == *" $name "* ]]; then continue; fi
  n=$((n + 1))
  T=$(mktemp -d)
  got=$(cd "$T" && M="$M" bash -c "$cmd" 2>/dev/null; echo "exit $?")
  rm -rf "$T"
  exp="$here/expected/$name.out"
  if [[ $update -eq 1 ]]; then
    printf '%s\n' "$got" >"$exp"
  elif [[ ! -f "$exp" ]]; then
    echo "regression: $name: no expected output ($exp)"; fail=$((fail + 1))
  elif ! diff -q <(printf '%s\n' "$got") "$exp" >/dev/null; then
    echo "regression: $name: output differs from expected/$name.out:"
    diff <(printf '%s\n' "$got") "$exp" | head -20
    fail=$((fail + 1))
  fi
done <"$here/commands.txt"
echo "regression: $n command lines, $((n - fail)) identical, $fail differ"
[[ $fail -eq 0 ]]
