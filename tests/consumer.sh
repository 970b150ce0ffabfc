#!/usr/bin/env bash
# ctest package_consumer: install the build into a temporary prefix,
# then build examples/cmake-consumer from a copy outside the source tree with
# find_package(mhaq) and nothing else, run it, and build the same program once
# more through mhaq.pc.   usage: consumer.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
src="$(cd "$2" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"
P="$tmp/prefix"
for f in include/mhaq/mhaq.hpp include/mhaq/stages/learner.hpp lib/libmhaq.a lib/libmhaq_check.a bin/mhaq \
         lib/cmake/mhaq/mhaqConfig.cmake lib/cmake/mhaq/mhaqConfigVersion.cmake lib/cmake/mhaq/mhaqTargets.cmake \
         lib/cmake/mhaq/modules/FindGMPMPFR.cmake lib/cmake/mhaq/modules/FindFLINT.cmake lib/cmake/mhaq/modules/FindArb.cmake \
         lib/pkgconfig/mhaq.pc; do
  [[ -f "$P/$f" ]] || fail "the install has no $f"
done
# The package must not point back into the source or build tree.
if grep -rlF -e "$src/" -e "$build/" "$P/lib/cmake" "$P/lib/pkgconfig"; then fail "installed package files name the source or build tree"; fi
"$P/bin/mhaq" --version | grep -q "^mhaq " || fail "installed mhaq --version"

# The installed library holds no lemma checks: they are the program's own
# (mhaq_evidence, not installed), and so is their header. The control: the
# same scan finds their symbols in their own archive.
lemma_symbols='mhaq::proof::|run_proof_check|proof_lemma_ids'
# (nm's output goes to files: under pipefail, grep -q ending nm early would fail the pipe)
nm -C "$build/libmhaq_evidence.a" >"$tmp/evidence.nm" && nm -C "$P/lib/libmhaq.a" >"$tmp/installed.nm" || fail "nm"
grep -qE "$lemma_symbols" "$tmp/evidence.nm" || fail "control: no lemma-check symbol found in libmhaq_evidence.a, so the scan proves nothing"
if grep -E "$lemma_symbols" "$tmp/installed.nm" >"$tmp/found.nm"; then head -3 "$tmp/found.nm"; fail "the installed libmhaq.a holds lemma-check symbols"; fi
[[ ! -e "$P/include/mhaq/evidence/prove.hpp" ]] || fail "the install has the lemma checks' header"
echo "installed libmhaq.a: $(stat -c %s "$P/lib/libmhaq.a") bytes, no lemma-check symbol (libmhaq_evidence.a, not installed: $(stat -c %s "$build/libmhaq_evidence.a") bytes)"

# A sanitizer build (tests/quickstart.sh asan) installs instrumented libraries:
# the consumer is built with the same compiler flags, or it cannot link them.
cxxflags="$(sed -n 's/^CMAKE_CXX_FLAGS:STRING=//p' "$build/CMakeCache.txt")"
cp -r "$src/examples/cmake-consumer" "$tmp/consumer-src"
cmake -S "$tmp/consumer-src" -B "$tmp/consumer" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$P" \
      -DCMAKE_CXX_FLAGS="$cxxflags" -DCMAKE_EXE_LINKER_FLAGS="$cxxflags" \
      -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON >"$tmp/configure.log" || { cat "$tmp/configure.log"; fail "configure"; }
dir="$(sed -n 's/^mhaq_DIR:PATH=//p' "$tmp/consumer/CMakeCache.txt")"
[[ "$dir" == "$P/lib/cmake/mhaq" ]] || fail "find_package(mhaq) found \"$dir\", not the temporary prefix"
cmake --build "$tmp/consumer" -j2 >"$tmp/build.log" || { cat "$tmp/build.log"; fail "build"; }
out="$("$tmp/consumer/recover_example")" || { echo "$out"; fail "recover_example exited non-zero"; }
echo "$out"
grep -qxF "29 queries (4Hd^2-2H+1 = 29), longest 5" <<<"$out" || fail "query count line"
grep -qxF "exact match: yes" <<<"$out" || fail "exact match"
[[ "$(grep -c '^head: ' <<<"$out")" == 2 ]] || fail "two heads"

# mhaq.pc: the same program with plain g++ and pkg-config.
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
flags="$(pkg-config --cflags --libs mhaq)" || fail "pkg-config mhaq"
g++ -std=c++20 -O0 $cxxflags "$tmp/consumer-src/recover_example.cpp" $flags -o "$tmp/pc_example" || fail "g++ with pkg-config flags: $flags"
[[ "$("$tmp/pc_example")" == "$out" ]] || fail "the pkg-config build prints something else"
echo "package_consumer: ok (find_package and pkg-config)"
