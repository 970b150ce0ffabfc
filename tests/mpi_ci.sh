#!/usr/bin/env bash
# CI step for -DMHAQ_MPI=ON, run by .ci/run after the test suite
# (which builds build/): install OpenMPI if missing, build only the mhaq
# program in build-mpi, and compare its mpirun output byte for byte with
# build/mhaq's (tests/mpi_check.sh: verify and sweep at 1, 2, 3 ranks, threads
# within ranks, an interrupted sweep resumed, exit codes).
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(libopenmpi-dev openmpi-bin)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [[ ${#missing[@]} -gt 0 ]]; then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
[[ -x build/mhaq ]] || { echo "mpi_ci: build/mhaq is missing: run 'bash tests/quickstart.sh test' first" >&2; exit 2; }
# With the compiler cache filled by build/ (tests/quickstart.sh test), only
# src/base/distribute.cpp, the library's one MPI file, is compiled again.
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B build-mpi -DCMAKE_BUILD_TYPE=Release -DMHAQ_MPI=ON "${launcher[@]}" >/dev/null
cmake --build build-mpi -j2 --target mhaq
bash tests/mpi_check.sh build/mhaq build-mpi/mhaq
