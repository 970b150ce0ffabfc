#!/usr/bin/env bash
# Small units: prints the five longest files and functions under src/ and
# include/, and fails on a file over 800 lines, a function over 120 lines, or a
# run of more than 10 lines repeated outside tests/duplicates_allow.txt.
# Usage: units.sh SOURCE_DIR [PATH ...]   (PATHs limit the check to those files or folders)
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec python3 "$here/units.py" "$@"
