#!/usr/bin/env bash
# One home for the oracles and one builder for oracle stacks.
#
# 1. Home: the oracles that answer (from a hidden model or transformer, from
#    an external process) and the views of another oracle's answers (jets,
#    the pilot's) live in the oracle layer, include/mhaq/oracle and
#    src/oracle. The interface Oracle<T> and the learner's own wrappers
#    (recording, keeping, replay, odd part) sit in stages/1-oracle, below the
#    learner. No class derives from Oracle anywhere else but inside the
#    learner's own files (src/stages) and in tests.
# 2. Builder: a source oracle (ModelOracle, TransformerOracle, ExternalOracle)
#    or a record over one (RecordingOracle) is constructed only by
#    include/mhaq/oracle/oracle_stack.hpp (OracleStack<T>), in src/ and in the
#    tests alike: no declaration with constructor arguments, no temporary, no
#    make_unique of those types. The learner's own files (src/stages) are not
#    scanned: their wrappers are below the builder's layer.
# Each scan has a control: a copy of a real file with one injected
# construction (or an oracle class defined outside its home) must be flagged.
# Usage: oracle_stacks.sh SOURCE_DIR
set -u
src="$1"
types='(ModelOracle|TransformerOracle|ExternalOracle|RecordingOracle)'
builder='/include/mhaq/oracle/oracle_stack\.hpp$'
build_scan() {  # files... -> FILE:LINE: TEXT of each construction outside the builder
  local f
  for f in "$@"; do
    [[ "$f" =~ $builder ]] && continue
    awk -v types="$types" '
      {
        line = $0; sub(/\/\/.*$/, "", line)
        decl = types "<[^<>]*(<[^<>]*>)?[^<>]*>[[:space:]]+[A-Za-z_][A-Za-z0-9_]*[[:space:]]*[({]"
        temp = "(^|[^A-Za-z0-9_:])" types "<[^<>]*(<[^<>]*>)?[^<>]*>[[:space:]]*[({]"
        made = "make_(unique|shared)<" types "<"
        if (line ~ decl || line ~ temp || line ~ made) print FILENAME ":" FNR ": " $0
      }' "$f"
  done
}
home_scan() {  # files... -> FILE:LINE: TEXT of each Oracle class defined outside the oracle layer and stages/1-oracle
  local f
  for f in "$@"; do
    [[ "$f" =~ /(include/mhaq|src)/oracle/ || "$f" =~ /(include/mhaq|src)/stages/ || "$f" =~ /tests/ ]] && continue
    sed -e 's://.*$::' "$f" | grep -nE '(class|struct)[[:space:]]+[A-Za-z_][A-Za-z0-9_]*[^;{]*:[[:space:]]*public[[:space:]]+Oracle[[:space:]]*<' | sed "s|^|$f:|"
  done
}
fail=0
files=$( (find "$src/src" "$src/include" -name '*.cpp' -o -name '*.hpp'; find "$src/tests" -name '*.cpp') | grep -v '/src/stages/' | grep -v '/src/check/' | sort)
[[ -f "$src/include/mhaq/oracle/oracle_stack.hpp" ]] || { echo "FAIL: the builder include/mhaq/oracle/oracle_stack.hpp is missing"; exit 1; }
bad=$(build_scan $files)
if [[ -n "$bad" ]]; then
  echo "FAIL: an oracle stack built by hand (build it with OracleStack<T>, include/mhaq/oracle/oracle_stack.hpp):"
  echo "$bad"
  fail=1
fi
bad=$(home_scan $(find "$src/src" "$src/include" -name '*.cpp' -o -name '*.hpp' | sort))
if [[ -n "$bad" ]]; then
  echo "FAIL: an oracle defined outside its home (include/mhaq/oracle, src/oracle; the learner's wrappers in stages/1-oracle):"
  echo "$bad"
  fail=1
fi
# controls
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for inject in 'ModelOracle<T> oracle(truth, lo.tokens.den);' 'RecordingOracle<Ball> rec(inner);' 'auto o = std::make_unique<ModelOracle<T>>(truth, 1);' \
              'ExternalOracle<Jet<Ball, Ball>> e{s, stated};' 'learn(TransformerOracle<QTau>(m, 16), lo);'; do
  cp "$src/src/evidence/sweep.cpp" "$tmp/broken.cpp"
  printf '\nvoid broken() {\n  %s\n}\n' "$inject" >>"$tmp/broken.cpp"
  [[ -n "$(build_scan "$tmp/broken.cpp")" ]] || { echo "FAIL: the scan does not flag an oracle built by hand ($inject), so it proves nothing"; fail=1; }
done
printf 'void fine(OracleStack<Ball>& s) {\n  const RecordingOracle<Ball>& rec = s.record();\n  ModelOracle<Ball>* p = nullptr;\n}\n' >"$tmp/fine.cpp"
[[ -z "$(build_scan "$tmp/fine.cpp")" ]] || { echo "FAIL: the scan flags a reference or a pointer, which builds nothing"; fail=1; }
mkdir -p "$tmp/src/analysis"
cp "$src/src/analysis/sensitivity.cpp" "$tmp/src/analysis/sensitivity.cpp"
printf '\ntemplate <class T>\nclass Stray final : public Oracle<T> {};\n' >>"$tmp/src/analysis/sensitivity.cpp"
[[ -n "$(home_scan "$tmp/src/analysis/sensitivity.cpp")" ]] || { echo "FAIL: the scan does not flag an oracle defined outside its home"; fail=1; }
[[ $fail -eq 0 ]] && echo "ok: $(echo "$files" | wc -l) files, every oracle stack built by OracleStack<T>, every oracle in its home"
exit $fail
