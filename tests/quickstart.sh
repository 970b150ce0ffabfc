#!/usr/bin/env bash
# Set up a fresh Debian 12 machine, build mhaq, then either run the demo or
# pass the test suite.   usage: bash tests/quickstart.sh demo|test
set -euo pipefail
what="${1:-test}"
cd "$(dirname "$0")/.."
pkgs=(build-essential cmake python3 libgmp-dev libmpfr-dev libboost-dev libflint-dev libflint-arb-dev
      doctest-dev nlohmann-json3-dev libcli11-dev gnuplot-nox python3-numpy pkgconf)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [[ ${#missing[@]} -gt 0 ]]; then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2
case "$what" in
  demo) ./build/mhaq demo ;;
  test) ctest --test-dir build -j2 --output-on-failure ;;
  *) echo "usage: bash tests/quickstart.sh demo|test" >&2; exit 2 ;;
esac
