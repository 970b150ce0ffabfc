#!/usr/bin/env python3
"""A protocol oracle that misbehaves on purpose (tests/test_oracle_protocol.cpp,
tests/oracle_lifecycle.py).

usage: oracle_faults.py MODE (--model FILE | --serve CMD) [--after N] [--child] [--log FILE]

Answers batches 0 .. N-1 correctly (float64 attention of a plain mhaq-model
file, or the replies of the oracle CMD it runs and relays, e.g. `mhaq oracle
--model T`), then at batch N injects the fault MODE:
  healthy       never (a correct oracle)
  close_output  closes its standard output and keeps running
  exit          exits with status 3 instead of answering
  hang          sleeps instead of answering
  garbage       a line that is not JSON
  nan           a value NaN (Python's json writes it, but it is not JSON)
  inf_string    a value "inf"
  wrong_count   one answer too few
  wrong_id      an id that is not in the batch
  duplicate_id  the first id twice (and the last one missing)
  wrong_batch   the wrong batch number
  long_line     a line of 2 MiB
  partial       half a line, then exit
  error         {"type": "error", ...}
  no_radius     promises radii in the hello, then sends an answer without one
  wrong_d       states d + 1 in the hello (the handshake)
Modes at the handshake ignore --after.

--child first starts a child (sleep) that holds the oracle's standard input,
output and error and would outlive it.
--log FILE appends what the oracle saw, a line each: "pgid G" and "parent P"
at its start (its process group and its parent), "child C" (--child),
"batch B N" (batch B of N queries), "bye", "eof" (the end of its input).
"""
import json
import math
import os
import shlex
import subprocess
import sys
import time
from fractions import Fraction


def attention(heads, seq):
    xN = seq[-1]
    total = 0.0
    for W, v in heads:
        Wx = [sum(W[i][j] * xN[j] for j in range(len(xN))) for i in range(len(xN))]
        s = [sum(x[i] * Wx[i] for i in range(len(x))) for x in seq]
        m = max(s)
        w = [math.exp(t - m) for t in s]
        total += sum(wi * sum(vi * xi for vi, xi in zip(v, x)) for wi, x in zip(w, seq)) / sum(w)
    return total


def option(args, name, default=None):
    return args[args.index(name) + 1] if name in args else default


def main():
    mode = sys.argv[1]
    args = sys.argv[2:]
    after = int(option(args, "--after", "1"))
    log_path = option(args, "--log")
    serve = option(args, "--serve")
    inner = None
    if serve:
        inner = subprocess.Popen(shlex.split(serve), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        d = None
    else:
        with open(option(args, "--model")) as fh:
            m = json.load(fh)
        d = m["d"]
        heads = [([[float(Fraction(x)) for x in r] for r in h["W"]], [float(Fraction(x)) for x in h["v"]]) for h in m["heads"]]
    out = sys.stdout

    def log(text):
        if log_path:
            with open(log_path, "a") as fh:
                fh.write(text + "\n")

    def send(obj):
        out.write(json.dumps(obj) + "\n")
        out.flush()

    def relay(line):
        inner.stdin.write(line)
        inner.stdin.flush()
        return json.loads(inner.stdout.readline())

    log("pgid %d" % os.getpgrp())
    log("parent %d" % os.getppid())
    if "--child" in args:
        child = subprocess.Popen(["sleep", "3600"])  # inherits standard input, output and error
        log("child %d" % child.pid)
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] == "bye":
            log("bye")
            continue
        if msg["type"] == "hello":
            if inner:
                hello = relay(line)
                d = msg["d"]
            elif msg["d"] != d:
                send({"type": "error", "message": "model has d = %d" % d})
                return 1
            else:
                hello = {"type": "hello", "protocol": 1, "d": d, "accuracy": {"rel": "1e-12"}}
            hello["d"] += 1 if mode == "wrong_d" else 0
            hello["name"] = "fault injector (%s)" % mode
            if mode == "no_radius":
                hello["radius"] = True
            send(hello)
            continue
        b = msg["batch"]
        log("batch %d %d" % (b, len(msg["queries"])))
        answers = []
        relayed = relay(line)["answers"] if inner else None
        for k, q in enumerate(msg["queries"]):
            if inner:
                a = relayed[k]
            else:
                seq = []
                for r in q["runs"]:
                    seq.extend([[float(x) for x in r["x"]]] * r["count"])
                a = {"id": q["id"], "value": attention(heads, seq)}
            if mode == "no_radius" and (b < after or len(answers) > 0):
                a["radius"] = "1e-15"
            answers.append(a)
        reply = {"type": "answers", "batch": b, "answers": answers}
        if b < after or mode in ("healthy", "wrong_d"):
            send(reply)
            continue
        if mode == "close_output":
            os.close(1)  # sys.stdout does not own descriptor 1
            time.sleep(3600)
        if mode == "exit":
            sys.stderr.write("oracle_faults: exiting on purpose\n")
            return 3
        if mode == "hang":
            time.sleep(3600)
        if mode == "garbage":
            out.write("this is not json\n")
        elif mode == "nan":
            answers[0]["value"] = float("nan")
            send(reply)
        elif mode == "inf_string":
            answers[0]["value"] = "inf"
            send(reply)
        elif mode == "wrong_count":
            reply["answers"] = answers[:-1]
            send(reply)
        elif mode == "wrong_id":
            answers[-1]["id"] = 10**9
            send(reply)
        elif mode == "duplicate_id":
            answers[-1]["id"] = answers[0]["id"]
            send(reply)
        elif mode == "wrong_batch":
            reply["batch"] = b + 7
            send(reply)
        elif mode == "long_line":
            out.write('{"type": "answers", "pad": "' + "x" * (2 << 20) + '"}\n')
        elif mode == "partial":
            out.write(json.dumps(reply)[:20])
            out.flush()
            return 0
        elif mode == "error":
            send({"type": "error", "message": "the model is on fire"})
        elif mode == "no_radius":
            send(reply)
        out.flush()
        time.sleep(3600)  # a faulty oracle may also linger; mhaq must kill it
    log("eof")
    return 0


if __name__ == "__main__":
    sys.exit(main())
