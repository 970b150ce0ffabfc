#!/usr/bin/env bash
# MPI checks: `mpirun -np N mhaq verify` and `mhaq sweep` write the
# same bytes as the single-process build for N = 1, 2, 3 and with threads
# inside ranks; one `mhaq recover` shared out among N = 1, 2, 4 ranks too,
# also against an external oracle (rank 0 asks, the transcript the same); an
# interrupted MPI sweep resumes from its journal (at another N) without losing
# finished rows; errors keep their exit codes.
#   usage: mpi_check.sh PLAIN_MHAQ MPI_MHAQ     (run by tests/mpi_ci.sh)
set -euo pipefail
ref="$1"
mpi="$2"
MR=(mpirun --oversubscribe --allow-run-as-root --bind-to none)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
same() { cmp "$1" "$2" >/dev/null || { diff "$1" "$2" | head -20; fail "$3: bytes differ"; }; }

# ---- verify: 60 exact trials (d <= 3, H <= 2), human report and JSON
V=(verify --trials 60 --seed 1 --max-d 3 --max-h 2)
"$ref" "${V[@]}" >"$tmp/v.txt"
"$ref" "${V[@]}" --json >"$tmp/v.json"
grep -q "all claims hold" "$tmp/v.txt" || fail "reference verify did not pass"
"$mpi" "${V[@]}" >"$tmp/v_plain.txt"   # the MPI build without mpirun: one process
same "$tmp/v.txt" "$tmp/v_plain.txt" "verify, MPI build without mpirun"
for np in 1 2 3; do
  "${MR[@]}" -np $np "$mpi" "${V[@]}" >"$tmp/v$np.txt"
  "${MR[@]}" -np $np "$mpi" "${V[@]}" --json >"$tmp/v$np.json"
  same "$tmp/v.txt" "$tmp/v$np.txt" "verify at -np $np"
  same "$tmp/v.json" "$tmp/v$np.json" "verify --json at -np $np"
  echo "verify --trials 60: -np $np identical to the single-process run"
done
"${MR[@]}" -np 2 "$mpi" "${V[@]}" --threads 2 --json >"$tmp/vt.json"
same "$tmp/v.json" "$tmp/vt.json" "verify at -np 2 --threads 2"
"$ref" "${V[@]}" --threads 2 --json >"$tmp/vt0.json"
same "$tmp/v.json" "$tmp/vt0.json" "verify --threads 2 (no MPI)"
echo "verify: -np 2 --threads 2 and --threads 2 identical"
R=(verify --rates --trials 15 --seed 3 --max-d 3 --max-h 2 --ranges 1,4)
"$ref" "${R[@]}" >"$tmp/r.txt"
"${MR[@]}" -np 3 "$mpi" "${R[@]}" >"$tmp/r3.txt"
same "$tmp/r.txt" "$tmp/r3.txt" "verify --rates at -np 3"
echo "verify --rates: -np 3 identical"

# ---- sweep: CSV and report
S=(sweep --d 2,3 --heads 1-3 --bits 64,128,256 --trials 3 --seed 2 --quiet)
"$ref" "${S[@]}" -o "$tmp/s.csv" >"$tmp/s.txt"
sed -i "s#$tmp/s.csv#CSV#" "$tmp/s.txt"
for run in "1" "2" "3" "2 --threads 2"; do
  np="${run%% *}"
  extra=""; [[ "$run" == *threads* ]] && extra="--threads 2"
  out="$tmp/s_${run// /_}.csv"
  "${MR[@]}" -np "$np" "$mpi" "${S[@]}" $extra -o "$out" >"$tmp/s_out.txt"
  sed -i "s#$out#CSV#" "$tmp/s_out.txt"
  same "$tmp/s.csv" "$out" "sweep CSV at -np $run"
  same "$tmp/s.txt" "$tmp/s_out.txt" "sweep report at -np $run"
  echo "sweep: -np $run identical CSV and report"
done

# ---- an interrupted MPI sweep resumes without losing finished rows
I=(sweep --d 4 --heads 3-6 --bits 128,1024 --trials 5 --seed 2)
"$ref" "${I[@]}" --quiet -o "$tmp/i.csv" >/dev/null
total=$(($(wc -l <"$tmp/i.csv") - 1))
"${MR[@]}" -np 2 "$mpi" "${I[@]}" --quiet -o "$tmp/j.csv" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 3000); do  # until rank 0 has journaled two units (4 rows)
  [[ -f "$tmp/j.csv" && $(grep -c '' "$tmp/j.csv") -ge 5 ]] && break
  sleep 0.02
done
# SIGKILL the ranks themselves (mpirun's children): an abrupt stop, as on a node failure
for child in $(ps -o pid= --ppid "$pid"); do kill -KILL "$child" 2>/dev/null || true; done
wait "$pid" 2>/dev/null || true
rows=$(($(grep -c '' "$tmp/j.csv") - 1))
(( rows >= 4 && rows < total )) || fail "the sweep was not interrupted midway ($rows of $total rows)"
head -n -1 "$tmp/j.csv" | tail -n +2 >"$tmp/kept.txt"  # complete lines (the last may be cut short)
units=$(( $(grep -c '' "$tmp/kept.txt") / 2 ))
"${MR[@]}" -np 3 "$mpi" "${I[@]}" --resume -o "$tmp/j.csv" >/dev/null 2>"$tmp/resume.err"
same "$tmp/i.csv" "$tmp/j.csv" "interrupted (-np 2) and resumed (-np 3) sweep"
while IFS= read -r line; do grep -qxF "$line" "$tmp/j.csv" || fail "a journaled row changed or was lost: $line"; done <"$tmp/kept.txt"
first="$(head -1 "$tmp/resume.err")"
[[ "$first" =~ ^sweep:\ ([0-9]+)/([0-9]+)\ units ]] || fail "no progress line from the resumed sweep: $first"
(( BASH_REMATCH[1] >= units )) || fail "the resumed sweep started from ${BASH_REMATCH[1]} units, the journal had $units"
echo "sweep: interrupted at $rows of $total rows (-np 2), resumed from ${BASH_REMATCH[1]} of ${BASH_REMATCH[2]} units (-np 3): identical CSV"

# ---- one recover across ranks: answers, pair fits and the self-check shared out
C=(recover --d 16 --heads 4 --seed 1 --arith ball --bits 256)
"$ref" "${C[@]}" >"$tmp/c.txt" 2>/dev/null
"$ref" "${C[@]}" --json >"$tmp/c.json" 2>/dev/null
grep -q '"status":"ok"' "$tmp/c.json" || fail "reference recover did not end ok"
for run in "1" "2" "4" "2 --threads 2"; do
  np="${run%% *}"
  threads=1; [[ "$run" == *threads* ]] && threads=2
  "${MR[@]}" -np "$np" "$mpi" "${C[@]}" --threads $threads >"$tmp/c_out.txt" 2>/dev/null
  "${MR[@]}" -np "$np" "$mpi" "${C[@]}" --threads $threads --json >"$tmp/c_out.json" 2>/dev/null
  same "$tmp/c.txt" "$tmp/c_out.txt" "recover at -np $run"
  same "$tmp/c.json" "$tmp/c_out.json" "recover --json at -np $run"
  echo "recover (16, 4) ball: -np $run identical to the single-process run (text and --json)"
done
M=(recover --d 8 --heads 3 --seed 2 --arith mpfr --bits 256 --json)
"$ref" "${M[@]}" >"$tmp/m.json" 2>/dev/null
"${MR[@]}" -np 3 "$mpi" "${M[@]}" >"$tmp/m3.json" 2>/dev/null
same "$tmp/m.json" "$tmp/m3.json" "recover --arith mpfr at -np 3"
echo "recover (8, 3) mpfr: -np 3 identical"
# a certificate is written by rank 0 alone, and is the single process's
"$ref" "${C[@]}" --certificate "$tmp/cert1.json" >/dev/null 2>&1
"${MR[@]}" -np 2 "$mpi" "${C[@]}" --certificate "$tmp/cert2.json" >/dev/null 2>&1
same "$tmp/cert1.json" "$tmp/cert2.json" "recover --certificate at -np 2"
# errors end every rank with the single process's exit code, reported once:
# a pair fit that cannot decide (unable, raised on the rank that fitted it),
# a certificate rank 0 alone cannot write (input)
set +e
U=(recover --d 16 --heads 4 --seed 1 --arith ball --bits 32)
"$ref" "${U[@]}" >"$tmp/u.txt" 2>/dev/null; u0=$?
"${MR[@]}" -np 2 "$mpi" "${U[@]}" >"$tmp/u2.txt" 2>/dev/null; u2=$?
"${MR[@]}" -np 2 "$mpi" "${C[@]}" --certificate "$tmp/no/such/dir/cert.json" >/dev/null 2>"$tmp/w.err"; w2=$?
set -e
[[ $u0 == 5 && $u2 == 5 ]] || fail "an unable pair fit exited $u0 alone and $u2 at -np 2, expected 5 5"
same "$tmp/u.txt" "$tmp/u2.txt" "an unable recover at -np 2"
[[ $w2 == 3 ]] || fail "an unwritable certificate at -np 2 exited $w2, expected 3"
[[ "$(grep -c 'mhaq: input error' "$tmp/w.err")" == 1 ]] || fail "the certificate's error should be printed once (rank 0)"
echo "recover across ranks: unable (5) and an unwritable certificate (3) end every rank with the same code"

# ---- an external oracle: rank 0 alone runs it and asks every query (one
# transcript, no query asked twice); every rank reads its answers
"$ref" generate --d 8 --heads 3 --seed 5 -o "$tmp/xm.json" >/dev/null
# the MPI build's own oracle: started by rank 0 without the launcher's variables, it is no rank
OR="$mpi oracle --model $tmp/xm.json --arith ball --bits 512"
X=(recover --model "$tmp/xm.json" --arith ball --bits 256 --seed 2 --oracle "$OR")
"$ref" "${X[@]}" --transcript "$tmp/x.t" >"$tmp/x.txt" 2>/dev/null
"$ref" "${X[@]}" --json >"$tmp/x.json" 2>/dev/null
grep -q '"status":"ok"' "$tmp/x.json" || fail "reference recover --oracle did not end ok"
for np in 2 4; do
  "${MR[@]}" -np $np "$mpi" "${X[@]}" --transcript "$tmp/x$np.t" >"$tmp/x_out.txt" 2>/dev/null
  "${MR[@]}" -np $np "$mpi" "${X[@]}" --json >"$tmp/x_out.json" 2>/dev/null
  same "$tmp/x.txt" "$tmp/x_out.txt" "recover --oracle at -np $np"
  same "$tmp/x.json" "$tmp/x_out.json" "recover --oracle --json at -np $np"
  same "$tmp/x.t" "$tmp/x$np.t" "recover --oracle's transcript at -np $np"
  echo "recover --oracle (8, 3) ball: -np $np identical output, --json and transcript"
done
# an oracle that fails ends every rank as it ends one process (oracle_failed,
# 12): at the handshake, by exiting mid-run (after two batches), by hanging
# past --oracle-timeout. The one at the handshake reads the hello line (and
# drops it) before it exits, so that the fault is always "closed its output";
# one that exits at once may or may not be gone before mhaq writes ("stopped
# reading its input"), a race between the two runs compared.
faults="$(cd "$(dirname "$0")" && pwd)/oracle_faults.py"
for how in "head -n 1 >/dev/null" "python3 $faults exit --after 2 --serve '$OR'" "python3 $faults hang --after 1 --serve '$OR'"; do
  F=(recover --model "$tmp/xm.json" --arith ball --bits 256 --seed 2 --oracle "$how" --oracle-timeout 1 --json)
  set +e
  "$ref" "${F[@]}" >"$tmp/f.json" 2>/dev/null; f1=$?
  "${MR[@]}" -np 2 "$mpi" "${F[@]}" >"$tmp/f2.json" 2>"$tmp/f2.err"; f2=$?
  set -e
  [[ $f1 == 12 && $f2 == 12 ]] || fail "a failing oracle ($how) exited $f1 alone and $f2 at -np 2, expected 12 12"
  same "$tmp/f.json" "$tmp/f2.json" "a failing oracle ($how) at -np 2"
  grep -q '"status":"oracle_failed"' "$tmp/f2.json" || fail "a failing oracle ($how) at -np 2: no oracle_failed status"
done
echo "recover --oracle: an oracle failing at the handshake, exiting mid-run or hanging ends every rank with exit 12, as one process"

# ---- exit codes and silence of ranks > 0 under mpirun
set +e
"${MR[@]}" -np 2 "$mpi" verify --trials -1 --seed 1 >"$tmp/e.out" 2>"$tmp/e.err"; c1=$?
"${MR[@]}" -np 2 "$mpi" "${S[@]}" -o "$tmp/s.csv" >/dev/null 2>&1; c2=$?   # exists, no --resume
"${MR[@]}" -np 3 "$mpi" verify --trials 1 --seed 1 --arith bogus >/dev/null 2>&1; c3=$?
"${MR[@]}" -np 2 "$mpi" golden export --d 2 --heads 1 --seed 1 -o "$tmp/g.json" >/dev/null 2>&1; c4=$?  # not distributed: refused
set -e
[[ $c1 == 2 && $c2 == 2 && $c3 == 2 && $c4 == 2 ]] || fail "usage errors under mpirun exited $c1 $c2 $c3 $c4, expected 2 2 2 2"
[[ ! -e "$tmp/g.json" ]] || fail "a refused command wrote its output"
"${MR[@]}" -np 1 "$mpi" golden export --d 2 --heads 1 --seed 1 -o "$tmp/g.json" >/dev/null || fail "one rank may run any command"
[[ "$(grep -c 'mhaq: usage error' "$tmp/e.err")" == 1 ]] || fail "the usage error should be printed once (rank 0)"
echo "mpirun: usage errors exit 2, reported once"
echo "mpi_check: ok"
