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
  max_length  the longest sequence f answers (its stated accuracy covers no
            more): sent in the hello, so that mhaq's placed design keeps its
            runs of copies within it; f itself refuses longer ones
            (check_length).
  max_entry  the largest magnitude of a token entry f's stated accuracy
            covers (a number, or a decimal string read exactly): sent in
            the hello, so that mhaq refuses a schedule beyond it before any
            query and its placed design keeps its tokens within it; f
            itself refuses larger ones (check_entries).

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


def serve(f, d, name, accuracy=None, radius=False, runs=False, exact=False, stdin=None, stdout=None, max_length=None, max_entry=None):
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
            if max_length is not None:
                hello["max_length"] = int(max_length)
            if max_entry is not None:
                # a float goes as a JSON number, which mhaq reads as exactly
                # this float64: the very bound check_entries compares with
                hello["max_entry"] = max_entry if isinstance(max_entry, str) else float(max_entry)
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
#
# float32 also grows with the tokens' size: a score is a sum of products of
# entries, rounded relative to their size, and the placed design scales its
# tokens up on small weights (entries up to 118 on torch's (8, 2) layer). So
# a float32 kernel states abs and rel 64 (N + M) 2^-24 each for sequences of
# at most N tokens with entries of at most M in magnitude, and refuses the
# others (check_length, check_entries). Measured for torch float32 (d = 8,
# H = 2, seeds 1-5, tests/bench/float32_error.py): |error| <=
# 8.6 (n + M) 2^-24 (1 + |answer|) for n up to 65,537 and M up to 128, so a
# margin of 7.5; the old abs 3e-5 up to 17 tokens failed there (7.7e-5 at
# M = 128, 5.8e-5 at M = 16).
#
# A transformer (attention, then an FFN and a readout) grows with the square
# of the entries: where the softmax is in balance a score's rounding error,
# of the size of the product of two tokens, moves the answer by up to the
# values' difference. torch_transformer.py states 64 (N + M^2) u
# (entry_power=2), measured by tests/bench/transformer_error.py.
SHORT = 17
# the largest entry a float32 statement covers: measured up to it, and the
# error grows faster than M beyond (15 M 2^-24 (1 + |answer|) at M = 128
# against 3.5 M up to 64)
FLOAT32_MAX_ENTRY = 128


def stated_accuracy(max_length, short_abs="5e-14", unit=2.0**-53, max_entry=None, short_entry=0, entry_power=1):
    """The accuracy a float attention states for sequences of at most max_length tokens
    (and, when max_entry is given, entries of at most max_entry in magnitude: the float32 form).

    short_abs (None: none) holds up to SHORT tokens, and with max_entry given only for entries of
    at most short_entry; otherwise abs and rel 64 (N + M^entry_power) unit each, M = max_entry
    (0 when not given). entry_power 2 is a transformer's: torch_transformer.py."""
    if short_abs is not None and max_length <= SHORT and (max_entry is None or max_entry <= short_entry):
        return {"abs": short_abs}
    size = max_length + (max_entry**entry_power if max_entry is not None else 0)
    a = "%.1e" % (64 * size * unit * 1.05)  # rounded up (2 digits)
    return {"abs": a, "rel": a}


def check_length(n, max_length):
    """Refuses (an exception: serve replies with an error) a sequence longer than the stated accuracy covers."""
    if n > max_length:
        raise ValueError("a sequence of %d tokens: this oracle's stated accuracy covers at most %d (start it with --max-length %d or more)" % (n, max_length, n))


def check_entries(tokens, max_entry):
    """Refuses a sequence with a token entry larger in magnitude than the stated accuracy covers."""
    m = max((abs(x) for t in tokens for x in t), default=0.0)
    if m > max_entry:
        raise ValueError("a token entry of magnitude %g: this oracle's stated accuracy covers entries of at most %g (--max-entry)" % (m, max_entry))


def read_model(path):
    """A plain mhaq model file (format mhaq-model) as d and a list of heads (W, v), floats."""
    with open(path) as fh:
        m = json.load(fh)
    if m.get("format") != "mhaq-model":
        raise SystemExit("%s: expected a plain mhaq-model file (mhaq convert turns a factored one into it)" % path)
    heads = [([[float(Fraction(x)) for x in row] for row in h["W"]], [float(Fraction(x)) for x in h["v"]]) for h in m["heads"]]
    return m["d"], heads
