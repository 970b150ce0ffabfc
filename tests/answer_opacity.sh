#!/usr/bin/env bash
# Exact answers are opaque to the learner (docs/architecture.md, "Exact answers are opaque"):
# each forbidden access in tests/compile/answer_opaque.cpp fails to compile,
# and the control variant compiles (so the failures are about the access).
# Usage: answer_opacity.sh CXX SOURCE_DIR INCLUDE_FLAGS...
set -u
cxx="$1" src="$2"
shift 2
fail=0
compile() { "$cxx" -std=c++20 -fsyntax-only "$@" -DMHAQ_VARIANT="$v" "$src/tests/compile/answer_opaque.cpp" >/dev/null 2>&1; }
v=0
if ! compile -I"$src/include" "$@"; then echo "FAIL: the control variant does not compile:"; "$cxx" -std=c++20 -fsyntax-only -I"$src/include" "$@" -DMHAQ_VARIANT=0 "$src/tests/compile/answer_opaque.cpp" 2>&1 | head -5; fail=1; fi
for v in 1 2 3 4 5; do
  if compile -I"$src/include" "$@"; then echo "FAIL: forbidden access variant $v compiles"; fail=1; fi
done
[[ $fail -eq 0 ]] && echo "ok: the control compiles; all 5 forbidden accesses to an exact answer fail to compile"
exit $fail
