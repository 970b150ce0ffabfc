#!/usr/bin/env bash
# The library's layers, bottom to top. A file may include headers of its own
# layer and of the layers below it, never of a layer above:
#
#   check       the certificate checker, its own library (mhaq::check); it
#               includes nothing else of mhaq, and the layers above may use it
#   base        errors, limits, text, files, threads, working precision
#   arith       the number types and their fields
#   stages      the learner: 1-oracle < 2-schedule < ... < 7-neurons, then the
#               learners themselves (stages/*.hpp, stages/*.cpp)
#   baselines   the prior-work learners, written like the stages
#   model       hidden models, model files, their direct evaluation
#   oracle      every oracle that answers (from a model, a transformer, an
#               external process: its protocol, transcripts, the reference
#               server), the jet and pilot views, the stack builder
#   analysis    sensitivity, the design search
#   run         the recover drivers, limits, the judge, reports, certificates, JSON
#   evidence    verify, sweep, the baseline drivers, golden files, prove
#   cli         the mhaq program
#   (umbrella)  include/mhaq/mhaq.hpp, on top of the library
#
# Includes are read in both forms, "mhaq/..." and <mhaq/...>. Each top-level
# folder under src/ and include/mhaq/ is one layer; a folder
# missing from the list fails the check, so a new folder has to be placed.
# Inside stages/, a numbered folder N-name includes only folders numbered at
# most N (the numbers follow the dependency order), and the unnumbered
# learner files sit above every numbered folder.
#
# Usage: layers.sh SOURCE_DIR            check the tree
#        layers.sh --control SOURCE_DIR  the same check run on copies of the
#                                        tree with one injected upward include
#                                        each; every copy must fail
set -u
order=(check base arith stages baselines model oracle analysis run evidence cli)

rank_of() {  # layer name -> rank, or nothing when the layer is not listed
  local i
  for i in "${!order[@]}"; do
    [[ "${order[$i]}" == "$1" ]] && { echo "$i"; return; }
  done
}

# The stage rank of a path inside stages/: the folder's number, or 99 for the
# unnumbered learner files.
stage_rank() {
  local rest="${1#*stages/}"
  if [[ "$rest" =~ ^([0-9]+)- ]]; then echo "${BASH_REMATCH[1]}"; else echo 99; fi
}

check_tree() {  # SOURCE_DIR -> prints violations, returns 1 when any
  local src="$1" bad=0 n_files=0 n_inc=0 f rel layer r line target tlayer tr
  while IFS= read -r f; do
    n_files=$((n_files + 1))
    rel="${f#"$src"/}"
    case "$rel" in
      src/*/*) layer="${rel#src/}"; layer="${layer%%/*}" ;;
      include/mhaq/*/*) layer="${rel#include/mhaq/}"; layer="${layer%%/*}" ;;
      include/mhaq/*) layer=umbrella ;;
      *) echo "outside the layers: $rel"; bad=1; continue ;;
    esac
    if [[ "$layer" == umbrella ]]; then r=${#order[@]}; else r=$(rank_of "$layer"); fi
    if [[ -z "$r" ]]; then echo "$rel: folder '$layer' is not in the layer order"; bad=1; continue; fi
    while IFS= read -r line; do
      [[ -z "$line" ]] && continue
      if [[ "$line" == *'"../'* || "$line" == *'/../'* ]]; then
        echo "$rel: relative include out of its folder: $line"; bad=1; continue
      fi
      [[ "$line" =~ [\"\<]mhaq/([^\"\>]+)[\"\>] ]] || continue
      n_inc=$((n_inc + 1))
      target="${BASH_REMATCH[1]}"
      case "$target" in
        */*) tlayer="${target%%/*}" ;;
        *) tlayer=umbrella ;;
      esac
      if [[ "$tlayer" == umbrella ]]; then tr=${#order[@]}; else tr=$(rank_of "$tlayer"); fi
      if [[ -z "$tr" ]]; then echo "$rel: includes a folder not in the layer order: $target"; bad=1; continue; fi
      if ((tr > r)); then
        echo "$rel ($layer) includes $target ($tlayer, a layer above)"; bad=1; continue
      fi
      if [[ "$layer" == stages && "$tlayer" == stages ]]; then
        local sr ts
        sr=$(stage_rank "$rel")
        ts=$(stage_rank "$target")
        if ((ts > sr)); then echo "$rel (stage $sr) includes $target (stage $ts, a later stage)"; bad=1; fi
      fi
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*\(["<].*[">]\).*/\1/p' "$f")
  done < <(find "$src/src" "$src/include/mhaq" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) | sort)
  if ((n_files < 50 || n_inc < 200)); then
    echo "only $n_files files and $n_inc mhaq includes found under $src: the scan looked at the wrong tree"; bad=1
  fi
  [[ $bad -eq 0 ]] && echo "ok: $n_files files, $n_inc mhaq includes, every one pointing down (${order[*]})"
  return $bad
}

if [[ "${1:-}" == --control ]]; then
  src="$2"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  fail=0
  # each entry: file to edit | line to inject
  controls=(
    'src/base/error.cpp|#include "mhaq/run/recover.hpp"'
    'include/mhaq/arith/numbers.hpp|#include "mhaq/stages/learner.hpp"'
    'src/stages/3-fit/pair_fit.cpp|#include "mhaq/stages/5-solve/solve.hpp"'
    'src/check/evaluate.cpp|#include "mhaq/base/error.hpp"'
    'src/run/judge.cpp|#include <mhaq/evidence/golden.hpp>'
  )
  k=0
  for c in "${controls[@]}"; do
    k=$((k + 1))
    file="${c%%|*}" inc="${c#*|}"
    copy="$tmp/copy$k"
    mkdir -p "$copy"
    cp -r "$src/src" "$src/include" "$copy/"
    [[ -f "$copy/$file" ]] || { echo "FAIL: control file $file is missing"; fail=1; continue; }
    printf '%s\n' "$inc" >> "$copy/$file"
    if out=$(bash "$0" "$copy" 2>&1); then
      echo "FAIL: the check passes a tree where $file has '$inc', so it proves nothing"; fail=1
    elif ! grep -q "${file}" <<<"$out"; then
      echo "FAIL: the check fails on the copy with '$inc' in $file, but does not name that file:"; echo "$out"; fail=1
    else
      echo "ok: control $k fails as it must: $(grep "${file}" <<<"$out" | head -1)"
    fi
  done
  exit $fail
fi

check_tree "$1"
