#!/usr/bin/env bash
# The number type is chosen in one place.
#
# 1. The learner's stages (and the prior-work baselines, written the same way)
#    contain no branch on the number type and never reach the tau-structure of
#    exact answers: no `if constexpr`, no type traits, no number type named, no
#    field traits read, no QTauAccess, no raw(). The instantiation lists live
#    in arith/all_fields.hpp.
# 2. Every layer above the stages (baselines, model, oracle, analysis, run,
#    evidence, cli, and
#    their include/mhaq mirrors) has no `if constexpr`, no is_same or other
#    std::is_ trait, and no switch on the arithmetic (`case Arith::`): an Arith
#    becomes its type only in the one dispatch, include/mhaq/run/arith_policy.hpp
#    (with_arith and ArithPolicy<T>), and per-type arithmetic lives in arith/.
#    src/evidence/prove/ is not scanned: the lemma checks compute over their
#    own rings (Z and Q, prove_common.hpp's OverZ/OverQ), chosen per lemma,
#    not over the arithmetic of a run.
# 3. Nowhere in src/ or include/ is an Arith compared with a value (`== Arith::`,
#    `Arith::ball !=`, or a switch on it) but in the two places that say what
#    differs between the arithmetics: the facts table (include/mhaq/arith/
#    field.hpp, ArithFacts and arith_facts, with arith_name and parse_arith in
#    src/arith/field.cpp) and the dispatch (run/arith_policy.hpp). Other code
#    reads arith_facts(a) or ArithPolicy<T>'s steps.
# Each scan has a control: a copy of a real file with one injected branch
# must be flagged, so the check can fail.
# Usage: stage_purity.sh SOURCE_DIR
set -u
src="$1"
stage_pattern='if[[:space:]]+constexpr|std::is_|is_same|\b(QTau|Ball|Mpfr|Jet)\b|Arith::|\b(is_exact|is_rigorous|least_squares)\b|::tag\b|qtau_access|QTauAccess|\.raw\('
upper_pattern='if[[:space:]]+constexpr|std::is_|is_same|case[[:space:]]+Arith::'
dispatch="$src/include/mhaq/run/arith_policy.hpp"
scan() {  # pattern files... -> offending code lines (comments stripped)
  local pattern="$1"
  shift
  for f in "$@"; do
    sed -e 's://.*$::' "$f" | grep -nE "$pattern" | sed "s|^|$f:|"
  done
}
list() {  # dirs... -> the C++ files under those that exist
  local dirs=()
  for d in "$@"; do [[ -d "$d" ]] && dirs+=("$d"); done
  [[ ${#dirs[@]} -gt 0 ]] && find "${dirs[@]}" \( -name '*.cpp' -o -name '*.hpp' \) | sort
}
fail=0
stages=$(list "$src/src/stages" "$src/include/mhaq/stages" "$src/src/baselines" "$src/include/mhaq/baselines")
[[ -n "$stages" ]] || { echo "FAIL: no stage files found under $src"; exit 1; }
bad=$(scan "$stage_pattern" $stages)
if [[ -n "$bad" ]]; then echo "FAIL: the stages branch on the number type or reach its representation:"; echo "$bad"; fail=1; fi

upper=$(list "$src/src/baselines" "$src/include/mhaq/baselines" "$src/src/model" "$src/include/mhaq/model" "$src/src/oracle" "$src/include/mhaq/oracle" "$src/src/analysis" "$src/include/mhaq/analysis" "$src/src/run" "$src/include/mhaq/run" \
  "$src/src/evidence" "$src/include/mhaq/evidence" "$src/src/cli" "$src/include/mhaq/cli" | grep -vxF "$dispatch" | grep -v '/evidence/prove/')
[[ -n "$upper" ]] || { echo "FAIL: no files found above the stages under $src"; exit 1; }
[[ -f "$dispatch" ]] || { echo "FAIL: the one dispatch $dispatch is missing"; fail=1; }
bad=$(scan "$upper_pattern" $upper)
if [[ -n "$bad" ]]; then
  echo "FAIL: a layer above the stages branches on the number type or switches on the arithmetic (use with_arith / ArithPolicy<T>):"
  echo "$bad"
  fail=1
fi

compare_pattern='(==|!=)[[:space:]]*Arith::|Arith::[a-z_]+[[:space:]]*(==|!=)|case[[:space:]]+Arith::'
facts="$src/include/mhaq/arith/field.hpp"
facts_src="$src/src/arith/field.cpp"
everywhere=$(list "$src/src" "$src/include" | grep -vxF -e "$dispatch" -e "$facts" -e "$facts_src")
bad=$(scan "$compare_pattern" $everywhere)
if [[ -n "$bad" ]]; then
  echo "FAIL: an Arith compared with a value outside the facts table and the dispatch (read arith_facts(a) or ArithPolicy<T>):"
  echo "$bad"
  fail=1
fi

# controls: each scan must flag a real file with one injected branch
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$src/src/stages/3-fit/pair_fit.cpp" "$tmp/broken_stage.cpp"
printf '\nint broken() { if constexpr (std::is_same_v<int, int>) return 1; return 0; }\n' >>"$tmp/broken_stage.cpp"
[[ -n "$(scan "$stage_pattern" "$tmp/broken_stage.cpp")" ]] || { echo "FAIL: the stage scan does not flag an injected type branch, so it proves nothing"; fail=1; }
cp "$src/src/run/recover.cpp" "$tmp/broken_constexpr.cpp"
printf '\ntemplate <class T> int broken() { if constexpr (std::is_same_v<T, Ball>) return 1; return 0; }\n' >>"$tmp/broken_constexpr.cpp"
[[ -n "$(scan "$upper_pattern" "$tmp/broken_constexpr.cpp")" ]] || { echo "FAIL: the upper scan does not flag an injected type branch"; fail=1; }
cp "$src/src/evidence/verify.cpp" "$tmp/broken_switch.cpp"
printf '\nint broken(Arith a) { switch (a) { case Arith::exact: return 1; default: return 0; } }\n' >>"$tmp/broken_switch.cpp"
[[ -n "$(scan "$upper_pattern" "$tmp/broken_switch.cpp")" ]] || { echo "FAIL: the upper scan does not flag an injected switch on the arithmetic"; fail=1; }
[[ -z "$(scan "$upper_pattern" "$src/src/run/recover.cpp")" ]] || { echo "FAIL: the control's base file is not clean"; fail=1; }
for inject in 'bool broken(Arith a) { return a == Arith::exact; }' 'long broken(Arith a, long b) { return Arith::ieee != a ? b : 53; }' \
              'int broken(Arith a) { switch (a) { case Arith::ball: return 1; default: return 0; } }'; do
  cp "$src/src/cli/cmd_basic.cpp" "$tmp/broken_compare.cpp"
  printf '\n%s\n' "$inject" >>"$tmp/broken_compare.cpp"
  [[ -n "$(scan "$compare_pattern" "$tmp/broken_compare.cpp")" ]] || { echo "FAIL: the comparison scan does not flag an injected comparison ($inject)"; fail=1; }
done
[[ -z "$(scan "$compare_pattern" "$src/src/cli/cmd_basic.cpp")" ]] || { echo "FAIL: the comparison control's base file is not clean"; fail=1; }
[[ $fail -eq 0 ]] && echo "ok: $(echo "$stages" | wc -l) stage files and $(echo "$upper" | wc -l) files above the stages, no branch on the number type outside arith/ and $(basename "$dispatch"); $(echo "$everywhere" | wc -l) files compare no Arith with a value"
exit $fail
