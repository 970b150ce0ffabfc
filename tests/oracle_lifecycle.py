#!/usr/bin/env python3
"""ctest oracle_lifecycle: how a run with an external oracle ends
(docs/oracle-protocol.md#the-oracles-lifecycle).

Every case runs `mhaq recover --oracle ...` with its standard output and
error on pipes, as a caller reading them would, and asserts that the caller
gets them back within a bound (no leftover process holds them), that no
process of the oracle's group is left, and what the oracle saw (its log from
tests/oracle_faults.py):
  1. an oracle that starts a background child holding its standard input,
     output and error: the run ends ok, bye and the end of input reach the
     oracle, and `mhaq ... 2>&1 | cat` returns;
  2. SIGTERM, SIGINT and SIGHUP sent to mhaq while it awaits a reply: mhaq
     ends with the shell's status 128 + signal, the oracle and its child gone;
  3. an oracle that closes its output and keeps running: the fault `exited`,
     long before --oracle-timeout; a command that does not exist: `exited`
     with status 127;
  4. bye and the end of input at the ends that are not ok (unable, a usage
     error after the start, over_budget);
  5. --max-queries on an attention run (refused before asking; stopped at the
     cap when the lean schedule's fallback needs more), a transformer run
     (refused; stopped at exactly the cap) and a placed run (refused; rounds
     kept within the cap).
usage: oracle_lifecycle.py MHAQ SOURCE_DIR
"""
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time

M, SRC = sys.argv[1], sys.argv[2]
FAULTS = "python3 " + shlex.quote(os.path.join(SRC, "tests", "oracle_faults.py"))
# MHAQ_TIME_SCALE (default 1) multiplies every time bound (instrumented builds are slower)
SCALE = int(os.environ.get("MHAQ_TIME_SCALE", "1"))
RETURN_WITHIN = 60 * SCALE  # seconds: every run here takes one or two
failures = []
cases = 0


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)


def read_log(path):
    try:
        with open(path) as fh:
            return [line.split() for line in fh.read().splitlines()]
    except FileNotFoundError:
        return []


def group_left(pgid):
    """The processes of group pgid that are not zombies (a zombie holds no pipe and no work)."""
    left = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # state ppid pgrp ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            left.append(int(pid))
    return left


def no_group_left(log, what):
    """The oracle's group is empty: at once, or within 2 s (scaled) of SIGKILL landing."""
    groups = [int(f[1]) for f in log if f and f[0] == "pgid"]
    check(len(groups) == 1, what + ": the oracle logged its process group")
    for g in groups:
        deadline = time.time() + 2 * SCALE
        while group_left(g) and time.time() < deadline:
            time.sleep(0.02)
        left = group_left(g)
        check(not left, what + ": processes of the oracle's group %d are left: %s" % (g, left))
        if left:
            os.killpg(g, signal.SIGKILL)  # the test leaves nothing behind either


def queries_seen(log):
    return sum(int(f[2]) for f in log if f and f[0] == "batch")


def finish(p, what):
    """The caller's view: p's output once its pipes close, or None after RETURN_WITHIN (p killed, the pipes abandoned)."""
    try:
        return p.communicate(timeout=RETURN_WITHIN)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # p leads its own session (below)
        p.wait()
        p.stdout.close()
        p.stderr.close()
        check(False, what + ": the caller did not get its pipes back within %d s" % RETURN_WITHIN)
        return None, None


def recover(args, what, shell_pipe=False):
    """Runs recover --json with the caller's pipes; returns (exit code, JSON or None, stderr)."""
    global cases
    cases += 1
    cmd = [M, "recover"] + args + ["--json"]
    if shell_pipe:  # a caller that reads standard error through a pipe
        cmd = ["sh", "-c", " ".join(shlex.quote(c) for c in cmd) + " 2>&1 | cat; exit 0"]
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    out, err = finish(p, what)
    if out is None:
        return None, None, ""
    first = out.splitlines()[0] if out else ""
    try:
        j = json.loads(first)
    except ValueError:
        j = None
    print("%s: exit %d, %.1f s, %s" % (what, p.returncode, time.time() - t0, j.get("status") if j else "no JSON"))
    return p.returncode, j, err


def main():
    tmp = tempfile.mkdtemp(prefix="mhaq_lifecycle_")
    os.chdir(tmp)
    for g in (["--d", "2", "--heads", "2", "--seed", "1", "--for", "ball", "-o", "a.json"],
              ["--d", "2", "--heads", "2", "--seed", "4", "--for", "double", "-o", "l4.json"],
              ["--d", "2", "--heads", "2", "--seed", "2", "--for", "mpfr", "-o", "q28.json"],
              ["--d", "2", "--heads", "1", "--ffn", "2", "--seed", "1", "--for", "ball", "-o", "t.json"]):
        subprocess.run([M, "generate"] + g, check=True, capture_output=True)
    # an oracle that states no accuracy (mhaq oracle states one): the placed
    # design refuses it after the handshake, a usage error
    with open("nobound.py", "w") as f:
        f.write("import sys\nsys.path.insert(0, %r)\nimport mhaq_oracle\n"
                "mhaq_oracle.serve(lambda X: 0.0, d=2, name='states no accuracy')\n" % os.path.join(SRC, "examples", "oracles"))
    serve = lambda model, arith="double", bits="": "--serve " + shlex.quote("%s oracle --model %s --arith %s%s" % (M, model, arith, bits))

    # 1. a background child holding the oracle's pipes
    for pipe in (False, True):
        what = "background child" + (", 2>&1 | cat" if pipe else "")
        log = "bg%d.log" % pipe
        code, j, _ = recover(["--oracle", "%s healthy --child --model a.json --log %s" % (FAULTS, log), "--model", "a.json", "--arith", "double"], what, pipe)
        check(j is not None and j["status"] == "ok", what + ": status ok")
        seen = read_log(log)
        check(["bye"] in seen and ["eof"] in seen, what + ": the oracle saw bye and the end of its input: %s" % seen)
        check(any(f[0] == "child" for f in seen), what + ": the oracle started its child")
        no_group_left(seen, what)

    # 2. signals mid-run: the oracle awaits batch 0's reply forever
    for name in ("SIGTERM", "SIGINT", "SIGHUP"):
        global cases
        cases += 1
        sig = getattr(signal, name)
        log = name + ".log"
        cmd = [M, "recover", "--oracle", "%s hang --after 0 --child --model a.json --log %s" % (FAULTS, log), "--model", "a.json", "--arith", "double"]
        # through a shell, which reports the status the way callers see it
        p = subprocess.Popen(["sh", "-c", '"$@"; echo "status $?"', "sh"] + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.time() + RETURN_WITHIN
        while not any(f[0] == "batch" for f in read_log(log)) and time.time() < deadline and p.poll() is None:
            time.sleep(0.02)
        mhaq = [int(f[1]) for f in read_log(log) if f[0] == "parent"]
        check(len(mhaq) == 1, name + ": the oracle logged mhaq's pid")
        for pid in mhaq:
            os.kill(pid, sig)
        out, _ = finish(p, name)
        out = out or ""
        print("%s: %s" % (name, out.strip().splitlines()[-1:] if out else "no output"))
        check(out.strip().endswith("status %d" % (128 + sig)), name + ": mhaq should end with status %d, got %r" % (128 + sig, out[-40:]))
        no_group_left(read_log(log), name)

    # 3. an oracle that closes its output; a command that does not exist
    t0 = time.time()
    code, j, _ = recover(["--oracle", "%s close_output --after 0 --model a.json --log close.log" % FAULTS, "--model", "a.json", "--arith", "double",
                          "--oracle-timeout", str(50 * SCALE)], "closes its output")
    check(code == 12 and j is not None and j["message"].startswith("oracle fault exited: the oracle closed its output"),
          "closes its output: the fault exited (exit 12): %s" % (j and j.get("message")))
    check(time.time() - t0 < 20 * SCALE, "closes its output: reported long before --oracle-timeout %d" % (50 * SCALE))
    no_group_left(read_log("close.log"), "closes its output")
    code, j, err = recover(["--oracle", "./no-such-oracle --x", "--d", "2", "--heads", "2", "--arith", "double"], "no such command")
    check(code == 12 and j is not None and "oracle fault exited" in j["message"] and "status 127" in j["message"],
          "no such command: exited with status 127: %s" % (j and j.get("message")))

    # 4. bye and the end of input at ends that are not ok
    ends = [("unable", 5, ["--d", "2", "--heads", "3", "--arith", "double"], "a.json", "--model a.json"),
            ("usage error after the start", 2, ["--d", "2", "--heads", "2", "--arith", "mpfr", "--design", "placed"], "a.json",
             "--serve " + shlex.quote("%s nobound.py" % sys.executable)),
            ("over_budget", 11, ["--model", "t.json", "--arith", "double", "--max-queries", "100"], "t.json", serve("t.json"))]
    for what, want, args, model, source in ends:
        log = "end%d.log" % want
        code, j, _ = recover(["--oracle", "%s healthy %s --log %s" % (FAULTS, source, log)] + args, what)
        seen = read_log(log)
        check(code == want, "%s: exit %s, expected %d" % (what, code, want))
        check(["bye"] in seen and ["eof"] in seen, what + ": the oracle saw bye and the end of its input: %s" % seen[-3:])
        no_group_left(seen, what)

    # 5. --max-queries
    lean = ["--model", "l4.json", "--arith", "double", "--schedule", "lean", "--seed", "4"]
    capped = [("attention, plan 21 over the cap", lean, "l4.json", "double", "", 20, 11, 0),
              ("attention, lean fallback stopped at the cap", lean, "l4.json", "double", "", 22, 11, 22),
              ("attention, within the cap", lean, "l4.json", "double", "", 25, 0, 25),
              ("transformer, attention part over the cap", ["--model", "t.json", "--arith", "double"], "t.json", "double", "", 20, 11, 0),
              ("transformer, stopped at the cap", ["--model", "t.json", "--arith", "double"], "t.json", "double", "", 100, 11, 100),
              ("placed, pilot and first round over the cap", ["--model", "q28.json", "--arith", "mpfr", "--design", "placed", "--oracle-error", "rel:3.8e-9"],
               "q28.json", "mpfr", " --bits 28", 146, 11, 0),
              ("placed, rounds within the cap", ["--model", "q28.json", "--arith", "mpfr", "--design", "placed", "--oracle-error", "rel:3.8e-9"],
               "q28.json", "mpfr", " --bits 28", 180, 0, 147)]
    for k, (what, args, model, arith, bits, cap, want, asked) in enumerate(capped):
        log = "cap%d.log" % k
        code, j, _ = recover(["--oracle", "%s healthy %s --log %s" % (FAULTS, serve(model, arith, bits), log)] + args + ["--max-queries", str(cap)], what)
        seen = read_log(log)
        check(code == want and j is not None and j["queries"] == asked, "%s: exit %s and %s queries, expected %d and %d" %
              (what, code, j and j.get("queries"), want, asked))
        check(queries_seen(seen) == asked, "%s: the oracle was sent %d queries, expected %d" % (what, queries_seen(seen), asked))
        if want == 11:
            check(j is not None and "--max-queries" in j.get("message", "") and "--max-queries" in j.get("remedy", ""),
                  what + ": the message and the remedy name the cap")
        if asked == 0:
            check(seen == [], what + ": refused before the oracle was started: %s" % seen)
        else:
            check(["bye"] in seen and ["eof"] in seen, what + ": the oracle saw bye and the end of its input")
            no_group_left(seen, what)
    # the placed run within the cap: one round fewer than without it, and still its own verdict
    code, j, _ = recover(["--oracle", "%s healthy %s" % (FAULTS, serve("q28.json", "mpfr", " --bits 28"))] +
                         ["--model", "q28.json", "--arith", "mpfr", "--design", "placed", "--oracle-error", "rel:3.8e-9"], "placed, no cap")
    check(j is not None and j["queries"] > 180 and j.get("placed_rounds", 0) >= 2, "placed, no cap: more than 180 queries in two rounds or more")

    print("oracle_lifecycle: %d cases, %d failures" % (cases, len(failures)))
    subprocess.run(["rm", "-rf", tmp])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
