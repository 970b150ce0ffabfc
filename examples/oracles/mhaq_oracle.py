"""Serve a Python function as an mhaq oracle (docs/oracle-protocol.md).

Five lines make a model an oracle that `mhaq recover --oracle CMD` can learn:

    import mhaq_oracle

    def f(X):                      # X: the sequence, a list of tokens (lists of floats)
        return my_model(X)         # the output at the last token, a float

    mhaq_oracle.serve(f, d=8, name="my model", accuracy={"rel": "1e-13"})

`serve` reads mhaq's requests on standard input and writes one reply line per
request on standard output; write logging to standard error only. Options:

  accuracy  your bound on |answer - f(X)|: {"abs": "1e-15", "rel": "1e-13"}
            (strings or numbers); mhaq --oracle-error overrides it.
  runs      True: f receives the runs [(token, count), ...] instead of the
            expanded sequence (a query [a x 1000, b] is then two entries).
  exact     True: tokens are fractions.Fraction (exact), not floats.

f may return a float, a decimal string, or a pair (value, radius) when it
certifies its own error (then pass radius=True). Only the standard library
is used.
"""
import json
import sys
from fractions import Fraction

PROTOCOL = 1


def _token(run, exact):
    if exact:
        return [Fraction(t) for t in run["token"]]
    return [float(x) for x in run["x"]]


def _query_input(runs, exact, as_runs):
    if as_runs:
        return [(_token(r, exact), int(r["count"])) for r in runs]
    seq = []
    for r in runs:
        t = _token(r, exact)
        seq.extend([t] * int(r["count"]))
    return seq


def _answer(qid, out):
    if isinstance(out, tuple):
        value, radius = out
        a = {"id": qid, "value": value if isinstance(value, str) else float(value)}
        a["radius"] = radius if isinstance(radius, str) else float(radius)
        return a
    return {"id": qid, "value": out if isinstance(out, str) else float(out)}


def serve(f, d, name, accuracy=None, radius=False, runs=False, exact=False, stdin=None, stdout=None):
    """Answers mhaq's requests with f until mhaq says bye or closes the input."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout

    def send(obj):
        # allow_nan=False would raise on NaN; mhaq is the one to judge an answer
        stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
        stdout.flush()

    for line in stdin:
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "bye":
            return
        if kind == "hello":
            if msg.get("protocol") != PROTOCOL:
                send({"type": "error", "message": "this oracle speaks protocol %d" % PROTOCOL})
                return
            hello = {"type": "hello", "protocol": PROTOCOL, "d": d, "name": name}
            if accuracy:
                hello["accuracy"] = {k: str(v) for k, v in accuracy.items()}
            if radius:
                hello["radius"] = True
            send(hello)
        elif kind == "batch":
            try:
                answers = [_answer(q["id"], f(_query_input(q["runs"], exact, runs))) for q in msg["queries"]]
            except Exception as e:  # report, then stop: mhaq ends the run with oracle_error
                send({"type": "error", "message": "%s: %s" % (type(e).__name__, e)})
                return
            send({"type": "answers", "batch": msg["batch"], "answers": answers})
        else:
            send({"type": "error", "message": "unknown request type %r" % kind})
            return


# A float attention's error grows with the sequence: its sums over n tokens
# (the softmax's normaliser, the weighted sum of values) round once per
# token. Measured for NumPy float64 against mhaq's exact model on the placed
# design's queries (d = 8, H = 4, tokens up to 16, runs up to 65,536 copies;
# docs/recover-your-own-model.md): |error| <= 3.7e-14 for n <= 17 tokens, and
# <= 2.7 n 2^-53 (1 + |answer|) beyond. The examples state their old short
# bound up to 17 tokens (the paper and scaled designs' queries, H <= 8) and
# 64 n u for both parts, abs and rel, beyond (u = 2^-53 for float64, 2^-24
# for float32): a margin of about 24 over the worst measured.
SHORT = 17


def stated_accuracy(max_length, short_abs="5e-14", unit=2.0**-53):
    """The accuracy a float attention states for sequences of at most max_length tokens."""
    if max_length <= SHORT:
        return {"abs": short_abs}
    a = "%.1e" % (64 * max_length * unit * 1.05)  # rounded up (2 digits)
    return {"abs": a, "rel": a}


def check_length(n, max_length):
    """Refuses (an exception: serve replies with an error) a sequence longer than the stated accuracy covers."""
    if n > max_length:
        raise ValueError("a sequence of %d tokens: this oracle's stated accuracy covers at most %d (start it with --max-length %d or more)" % (n, max_length, n))


def read_model(path):
    """A plain mhaq model file (format mhaq-model) as d and a list of heads (W, v), floats."""
    with open(path) as fh:
        m = json.load(fh)
    if m.get("format") != "mhaq-model":
        raise SystemExit("%s: expected a plain mhaq-model file (mhaq convert turns a factored one into it)" % path)
    heads = [([[float(Fraction(x)) for x in row] for row in h["W"]], [float(Fraction(x)) for x in h["v"]]) for h in m["heads"]]
    return m["d"], heads
