#!/usr/bin/env bash
# The certificate checker shares no code with the learner: its library
# (mhaq_check) must define every mhaq symbol it uses, all of them in the
# mhaq::check namespace, and its sources include no mhaq_lib header.
# Usage: check_separation.sh LIBMHAQ_CHECK.a LIBMHAQ.a SOURCE_DIR
set -u
check_lib="$1" main_lib="$2" src="$3"
fail=0
# Mangled names of every external symbol mentioning namespace mhaq; prints
# those outside mhaq::check and the undefined ones the library does not define.
analyse() {
  local lib="$1"
  local undef def
  undef=$(nm -g --undefined-only "$lib" 2>/dev/null | awk 'NF {print $NF}' | grep '4mhaq' | sort -u)
  def=$(nm -g --defined-only "$lib" 2>/dev/null | awk 'NF>=3 {print $NF}' | grep '4mhaq' | sort -u)
  { echo "$undef"; echo "$def"; } | grep -v '^$' | sed 's/4mhaq5check//g' | grep '4mhaq' | sed 's/^/outside mhaq::check: /' | head -5
  comm -23 <(echo "$undef" | grep -v '^$') <(echo "$def") | sed 's/^/undefined here: /' | head -5
}
out=$(analyse "$check_lib")
if [[ -n "$out" ]]; then echo "FAIL: the checker library uses mhaq symbols it does not define:"; echo "$out"; fail=1; fi
ndef=$(nm -g --defined-only "$check_lib" | grep -c '4mhaq5check')
nundef=$(nm -g --undefined-only "$check_lib" | grep -c '4mhaq5check')
if [[ $ndef -lt 5 || $nundef -lt 1 ]]; then echo "FAIL: expected mhaq::check symbols defined and used across objects ($ndef defined, $nundef cross-references)"; fail=1; fi
# The same analysis must flag the learner library (proof that it can fail).
if [[ -z "$(analyse "$main_lib")" ]]; then echo "FAIL: the analysis does not flag mhaq_lib, so it proves nothing"; fail=1; fi
bad_inc=$(grep -rn '#include *"mhaq/' "$src/src/check" "$src/include/mhaq/check" | grep -v '"mhaq/check/')
if [[ -n "$bad_inc" ]]; then echo "FAIL: checker sources include mhaq_lib headers:"; echo "$bad_inc"; fail=1; fi
[[ $fail -eq 0 ]] && echo "ok: mhaq_check defines all $nundef cross-object mhaq symbols it uses ($ndef defined, all in mhaq::check)"
exit $fail
