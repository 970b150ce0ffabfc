#!/usr/bin/env bash
# ctest docs_examples: the pages' command blocks run against the program and
# compared with what the pages show (tests/docs_examples.py), with its control.
#   usage: bash tests/docs_examples.sh MHAQ SOURCE_DIR
set -euo pipefail
py=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import numpy' 2>/dev/null; then py="$(command -v "$p")"; break; fi
done
[[ -n "$py" ]] || { echo "FAIL: no python3 with NumPy (Debian: python3-numpy)" >&2; exit 1; }
exec "$py" "$2/tests/docs_examples.py" "$1" "$2"
