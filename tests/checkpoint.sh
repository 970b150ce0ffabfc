#!/usr/bin/env bash
# ctest checkpoint: recover --checkpoint and --resume-checkpoint
# (docs/formats.md#checkpoint), on small shapes, killed by SIGKILL at a known
# point (MHAQ_CHECKPOINT_KILL_AFTER=K: the run kills itself once its journal
# holds K answers; MHAQ_CHECKPOINT_KILL_AFTER_FITS=K: once it holds K pair
# fits):
#  1. in-process, every arithmetic (d = 4, H = 2): killed, resumed, the JSON
#     is the bytes of an uninterrupted run's; ball (d = 6, H = 3), human
#     output and certificate the same bytes too, killed a second time while
#     resuming, then resumed again from a journal whose last line was cut
#     mid-way; ball (d = 24, H = 2) answered on 2 threads, killed after its
#     first batch of 4,096, resumed on one thread;
#     every arithmetic (d = 4, H = 2) and ball (d = 12, H = 3, 2 threads)
#     killed after some pair fits: the resumed run is served every fit the
#     file holds and prints the same bytes; a version 1 file (answers only)
#     still resumes;
#  2. against an external oracle (d = 8, H = 3, mhaq oracle): killed after
#     its second batch, resumed: the same bytes, and the first run's
#     transcript and the resumed run's hold every query of an uninterrupted
#     run's transcript, none twice; killed after 30 pair fits, resumed with
#     no query asked again and the fits served;
#  3. bad files and options: another run's checkpoint, a newer format, an
#     altered line, a line out of order, a query hash that is not the run's,
#     an altered or malformed fit line, a forged one (valid checksum, an
#     image mhaq would not write),
#     not a checkpoint, an empty file, a missing file (each exit 3 with its
#     own message, the file unchanged); an existing file for --checkpoint,
#     both options, --noise, a transformer (exit 2).
# usage: checkpoint.sh MHAQ
set -uo pipefail
M="$1"
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

# killed K CK ARGS...: recover ARGS --checkpoint CK killed at K answers (exit
# 137 expected); killed_fits: at K pair fits
kill_by() {
  local var="$1" k="$2" ck="$3"
  shift 3
  env "$var=$k" "$M" recover "$@" --checkpoint "$ck" >/dev/null 2>&1
  local rc=$?
  [[ $rc == 137 ]] || fail "recover $* --checkpoint $ck with $var=$k: exit $rc, expected 137 (killed)"
}
killed() { kill_by MHAQ_CHECKPOINT_KILL_AFTER "$@"; }
killed_fits() { kill_by MHAQ_CHECKPOINT_KILL_AFTER_FITS "$@"; }

# 1. in-process
for a in exact ball mpfr double; do
  args=(--d 4 --heads 2 --seed 3 --arith "$a" --json)
  "$M" recover "${args[@]}" > full.json 2>/dev/null || fail "$a: the uninterrupted run"
  rm -f c.ck
  killed 40 c.ck "${args[@]}"
  n=$(($(wc -l < c.ck) - 1))
  [[ $n -ge 40 && $n -lt 100 ]] || fail "$a: the checkpoint holds $n answers, expected 40 to 99"
  "$M" recover "${args[@]}" --resume-checkpoint c.ck > res.json 2>err || fail "$a: the resumed run"
  cmp -s full.json res.json || fail "$a: the resumed run's JSON differs from the uninterrupted run's"
  grep -q "answers served from the checkpoint" err || fail "$a: no count of served answers on standard error"
done

args=(--d 6 --heads 3 --seed 4 --arith ball --bits 128)
"$M" recover "${args[@]}" --certificate run.cert > full.txt 2>/dev/null || fail "ball d=6: the uninterrupted run"
mv run.cert full.cert  # the human output names the file: both runs write run.cert
rm -f c.ck
killed 100 c.ck "${args[@]}"
MHAQ_CHECKPOINT_KILL_AFTER=300 "$M" recover "${args[@]}" --resume-checkpoint c.ck >/dev/null 2>&1
[[ $? == 137 ]] || fail "ball d=6: the first resume was not killed at 300 answers"
# a kill in the middle of a line: its unfinished last line is dropped
cp c.ck whole.ck
head -c -7 whole.ck > c.ck
"$M" recover "${args[@]}" --resume-checkpoint c.ck --certificate run.cert > res.txt 2>err || fail "ball d=6: the second resume: $(cat err)"
cmp -s full.txt res.txt || fail "ball d=6: the resumed run's human output differs"
cmp -s full.cert run.cert || fail "ball d=6: the resumed run's certificate differs"
total=$(grep -o '"queries": *[0-9]*' <("$M" recover "${args[@]}" --json 2>/dev/null) | grep -o '[0-9]*$')
lines=$(($(grep -vc '^fit' c.ck) - 1))
[[ "$lines" == "$total" ]] || fail "ball d=6: the journal holds $lines answers after the resume, the run asks $total"

# killed after K pair fits: resumed, every fit of the file is served again
# (their keys match) and the bytes are the uninterrupted run's
for a in exact ball mpfr double; do
  args=(--d 4 --heads 2 --seed 3 --arith "$a" --json)
  "$M" recover "${args[@]}" > full.json 2>/dev/null || fail "$a: the uninterrupted run"
  rm -f f.ck
  killed_fits 5 f.ck "${args[@]}"
  nf=$(grep -c '^fit' f.ck)
  [[ $nf -ge 5 ]] || fail "$a: the checkpoint holds $nf pair fits, expected 5 or more"
  "$M" recover "${args[@]}" --resume-checkpoint f.ck > res.json 2>err || fail "$a: the run resumed after fits: $(cat err)"
  cmp -s full.json res.json || fail "$a: the run resumed after fits differs from the uninterrupted run"
  grep -q "served from the checkpoint f.ck, and $nf pair fits" err || fail "$a: expected all $nf fits of the file served: $(cat err)"
done
# a version 1 checkpoint (answers only, before fit lines) resumes
args=(--d 4 --heads 2 --seed 3 --arith ball --json)
"$M" recover "${args[@]}" > full.json 2>/dev/null || fail "ball d=4: the uninterrupted run"
rm -f v1.ck
killed 40 v1.ck "${args[@]}"
sed -i '1s/"version":2/"version":1/' v1.ck
grep -q '"version":1' v1.ck || fail "the test did not write a version 1 header"
"$M" recover "${args[@]}" --resume-checkpoint v1.ck > res.json 2>err || fail "a version 1 checkpoint: $(cat err)"
cmp -s full.json res.json || fail "the run resumed from a version 1 checkpoint differs"
# fitted on 2 threads, killed, resumed on one
args=(--d 12 --heads 3 --seed 2 --arith ball --bits 256 --json)
"$M" recover "${args[@]}" --threads 2 > full.json 2>/dev/null || fail "ball d=12: the uninterrupted run"
rm -f f.ck
killed_fits 100 f.ck "${args[@]}" --threads 2
nf=$(grep -c '^fit' f.ck)
"$M" recover "${args[@]}" --threads 1 --resume-checkpoint f.ck > res.json 2>err || fail "ball d=12: the resumed run: $(cat err)"
cmp -s full.json res.json || fail "ball d=12: the run resumed after fits (one thread) differs from the uninterrupted run (two)"
grep -q "and $nf pair fits" err || fail "ball d=12: expected all $nf fits served: $(cat err)"

# answered 4,096 at a time on 2 threads, killed after the first batch, resumed on one thread
args=(--d 24 --heads 2 --seed 4 --arith ball --bits 128 --json)
"$M" recover "${args[@]}" --threads 2 > full.json 2>/dev/null || fail "ball d=24: the uninterrupted run"
rm -f c.ck
killed 100 c.ck "${args[@]}" --threads 2
[[ $(wc -l < c.ck) == 4097 ]] || fail "ball d=24: the checkpoint holds $(($(wc -l < c.ck) - 1)) answers, expected the first batch's 4096"
"$M" recover "${args[@]}" --threads 1 --resume-checkpoint c.ck > res.json 2>/dev/null || fail "ball d=24: the resumed run"
cmp -s full.json res.json || fail "ball d=24: the resumed run (one thread) differs from the uninterrupted run (two)"

# 2. an external oracle
"$M" generate --d 8 --heads 3 --seed 5 -o m.json >/dev/null || fail "generate"
OR="$M oracle --model m.json --arith ball --bits 512"
ext=(--model m.json --arith ball --seed 2 --oracle "$OR" --json)
"$M" recover "${ext[@]}" --transcript full.t > full.json 2>/dev/null || fail "external: the uninterrupted run"
rm -f x.ck x.ck.oracle
killed 300 x.ck "${ext[@]}" --transcript t1
"$M" recover "${ext[@]}" --transcript t2 --resume-checkpoint x.ck > res.json 2>err || fail "external: the resumed run: $(cat err)"
cmp -s full.json res.json || fail "external: the resumed run's JSON differs"
python3 - full.t t1 t2 <<'EOF' || fail "external: the transcripts"
import json, sys
def queries(f):
    return [json.dumps(j["runs"], sort_keys=True) for j in map(json.loads, open(f)) if "runs" in j]
full, a, b = (queries(f) for f in sys.argv[1:])
both = a + b
assert a and b, "both runs asked the oracle"
assert len(both) == len(set(both)), f"{len(both) - len(set(both))} queries asked twice"
assert sorted(both) == sorted(full), "the two transcripts hold other queries than an uninterrupted run's"
EOF
# killed after 30 pair fits (every answer journaled): the resumed run asks nothing again
rm -f y.ck y.ck.oracle
MHAQ_CHECKPOINT_KILL_AFTER_FITS=30 "$M" recover "${ext[@]}" --transcript t3 --checkpoint y.ck >/dev/null 2>&1
[[ $? == 137 ]] || fail "external: the run was not killed after 30 fits"
"$M" recover "${ext[@]}" --transcript t4 --resume-checkpoint y.ck > res.json 2>err || fail "external, fits: the resumed run: $(cat err)"
cmp -s full.json res.json || fail "external, fits: the resumed run's JSON differs"
grep -q "the oracle was asked 0 queries" err || fail "external, fits: the resumed run asked the oracle again: $(cat err)"
grep -q "30 pair fits served from the checkpoint y.ck" err || fail "external, fits: the 30 fits were not served: $(cat err)"

# 3. bad files: exit 3, each with its own message, the file unchanged
bad() {
  local what="$1" want="$2" file="$3"
  shift 3
  cp "$file" before
  "$M" recover "$@" --resume-checkpoint "$file" >/dev/null 2>err
  local rc=$?
  [[ $rc == 3 ]] || fail "$what: exit $rc, expected 3 ($(cat err))"
  grep -q -- "$want" err || fail "$what: the message does not say \"$want\": $(cat err)"
  cmp -s before "$file" || fail "$what: the file was changed"
}
args=(--d 4 --heads 2 --seed 3 --arith ball)
rm -f c.ck
killed 30 c.ck "${args[@]}"
cp c.ck torn.ck
printf '0\t12' >> torn.ck  # an unfinished last line, kept until a resume of this run
bad "another seed" "another run's checkpoint" torn.ck --d 4 --heads 2 --seed 4 --arith ball
bad "another arithmetic" "another run's checkpoint" c.ck --d 4 --heads 2 --seed 3 --arith mpfr
sed '1s/"version":2/"version":3/' c.ck > newer.ck
bad "a newer format" "by a newer mhaq" newer.ck "${args[@]}"
awk 'NR == 5 { sub(/\t[0-9a-f]/, "\t0") } { print }' c.ck > altered.ck
cmp -s c.ck altered.ck && fail "the test did not alter a line"
bad "an altered line" "checksum mismatch" altered.ck "${args[@]}"
awk 'NR != 5' c.ck > gap.ck
bad "a missing line" "where answer 3 belongs" gap.ck "${args[@]}"
# reseal FILE LINE FIELD VALUE: line LINE (0-based; "fit": the first fit line)
# with field FIELD set to VALUE (flip: its last hex digit's low bit flipped)
# and its checksum made valid again, to standard output
reseal() {
  python3 - "$@" <<'EOF'
import sys
path, which, field, value = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
def fnv(s):
    h = 1469598103934665603
    for c in s.encode():
        h = ((h ^ c) * 1099511628211) % 2**64
    return h
lines = open(path).read().split("\n")
i = next(k for k, l in enumerate(lines) if l.startswith("fit\t")) if which == "fit" else int(which)
f = lines[i].split("\t")
f[field] = "%016x" % (int(f[field], 16) ^ 1) if value == "flip" else value
f[-1] = "%016x" % fnv("\t".join(f[:-1]))
lines[i] = "\t".join(f)
sys.stdout.write("\n".join(lines))
EOF
}
reseal c.ck 3 1 flip > otherq.ck
bad "another query's answer" "recorded for another query" otherq.ck "${args[@]}"
rm -f g.ck
killed_fits 3 g.ck "${args[@]}"
awk '/^fit/ && !done { sub(/\t[0-9a-f][0-9a-f]/, "\t00"); done = 1 } { print }' g.ck > fitalt.ck
cmp -s g.ck fitalt.ck && fail "the test did not alter a fit line"
bad "an altered fit line" "checksum mismatch" fitalt.ck "${args[@]}"
awk '/^fit/ && !done { $0 = "fit\tzz"; done = 1 } { print }' g.ck > fitbad.ck
bad "a malformed fit line" "not a fit line" fitbad.ck "${args[@]}"
# a fit line rewritten with a valid checksum and an image mhaq would not write
reseal g.ck fit 2 00ff > fitforged.ck
bad "a forged fit line" "is not a fit as mhaq writes it" fitforged.ck "${args[@]}"
echo '{"format": "mhaq-model"}' > notck.ck
bad "not a checkpoint" "not an mhaq checkpoint" notck.ck "${args[@]}"
: > empty.ck
bad "an empty file" "holds no complete line" empty.ck "${args[@]}"
"$M" recover "${args[@]}" --resume-checkpoint missing.ck >/dev/null 2>err
[[ $? == 3 ]] && grep -q "no checkpoint" err || fail "a missing checkpoint: exit 3 naming it"

# options: exit 2
usage() {
  local what="$1"
  shift
  "$M" recover "$@" >/dev/null 2>err
  local rc=$?
  [[ $rc == 2 ]] || fail "$what: exit $rc, expected 2 ($(cat err))"
}
cp c.ck before
usage "an existing checkpoint for --checkpoint" "${args[@]}" --checkpoint c.ck
cmp -s before c.ck || fail "--checkpoint changed an existing file"
usage "both options" "${args[@]}" --checkpoint n.ck --resume-checkpoint c.ck
usage "--noise" "${args[@]}" --noise 1e-20 --checkpoint n2.ck
usage "a transformer" --d 2 --heads 1 --ffn 2 --seed 1 --arith ball --checkpoint n3.ck
[[ ! -e n.ck && ! -e n2.ck && ! -e n3.ck ]] || fail "a refused run left a checkpoint"
echo "checkpoint: all passed"
