#!/usr/bin/env bash
# The learner's stages contain no branch on the number type and never reach
# the tau-structure of exact answers (issue 11): no `if constexpr`, no type
# traits, no number type named, no field traits read, no QTauAccess, no raw().
# The instantiation lists live in arith/all_fields.hpp. A broken copy with
# one injected branch must be flagged, so the check can fail.
# Usage: stage_purity.sh SOURCE_DIR
set -u
src="$1"
pattern='if[[:space:]]+constexpr|std::is_|is_same|\b(QTau|Ball|Mpfr|Jet)\b|Arith::|\b(is_exact|is_rigorous|least_squares)\b|::tag\b|qtau_access|QTauAccess|\.raw\('
scan() {  # files... -> offending code lines (comments stripped)
  for f in "$@"; do
    sed -e 's://.*$::' "$f" | grep -nE "$pattern" | sed "s|^|$f:|"
  done
}
files=$(find "$src/src/stages" "$src/include/mhaq/stages" -name '*.cpp' -o -name '*.hpp' | sort)
[[ -n "$files" ]] || { echo "FAIL: no stage files found under $src"; exit 1; }
bad=$(scan $files)
fail=0
if [[ -n "$bad" ]]; then echo "FAIL: the stages branch on the number type or reach its representation:"; echo "$bad"; fail=1; fi
# control: the same scan must flag a stage file with one injected branch
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$src/src/stages/3-fit/pair_fit.cpp" "$tmp/broken.cpp"
printf '\nint broken() { if constexpr (std::is_same_v<int, int>) return 1; return 0; }\n' >> "$tmp/broken.cpp"
[[ -n "$(scan "$tmp/broken.cpp")" ]] || { echo "FAIL: the scan does not flag an injected type branch, so it proves nothing"; fail=1; }
[[ $fail -eq 0 ]] && echo "ok: $(echo "$files" | wc -l) stage files, no branch on the number type"
exit $fail
