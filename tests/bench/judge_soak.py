#!/usr/bin/env python3
"""A blind soak of the float judge (proofs/40-float-judge.md).

Seeded generators draw attention models in families (the default drawn
models, heads whose W differ by 2^-4 to 2^-12, W entries up to 32, shared and
cancelling heads, d = 1..4, H up to 4) and one-layer transformers; each is
recovered in mpfr or double, from answers at 20 to 64 bits or at the learner's
precision, with and without a stated error, in-process or through
`mhaq oracle` as an external oracle. The learner is told the canonical head
count. Every run's status is the judge's, from the answers alone; the truth is
compared afterwards (a blind ok that the truth contradicts is `mismatch`).

Required: no ok-and-wrong (mismatch, or ok beyond the tolerance), no
`inconsistent` (the answers are honest), no `not_identifiable` (the stated
H is the canonical count) but on a stated condition the drawn model meets
(`stated_ni`: a transformer with d = 1 and two or more heads), and no run
without a status (`other`: a crash, or output that is not one JSON object).
A drawn transformer whose canonical form is empty is `refused` before any
query (nothing to recover) and counts as neither decided nor failed. Prints the
outcome counts and the ok fraction per family; exit 1 when a requirement
fails, or when too few runs were decided.

The defaults draw 18,020 in-process and 2,020 external attention runs, so
that at least 20,000 and 2,000 of them run after the few drawn with no
canonical head are left out, and 2,000 transformer runs (half external).

  usage: judge_soak.py MHAQ [--attention N] [--external N] [--transformer N]
                            [--seed S] [--jobs J] [--list FILE] [--slice]
It runs any mhaq binary (an older one too, for the fractions before a change).
"""
import argparse
import concurrent.futures
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from fractions import Fraction

OUTCOMES = ["ok", "unable", "degenerate", "stated_ni", "refused", "inconsistent", "not_identifiable", "mismatch", "other"]


def frac(x):
    return str(Fraction(x).limit_denominator(1 << 40))


def rand_entry(rng, scale, den):
    return Fraction(rng.randint(-scale * den, scale * den), den)


def attention_model(rng, family):
    """A model file's text and the canonical head count the learner is told."""
    d = rng.randint(1, 4)
    H = rng.randint(1, 4)
    scale, den = (32, 2) if family == "large_w" else (2, 8)
    heads = []
    for _ in range(H):
        W = [[rand_entry(rng, scale, den) for _ in range(d)] for _ in range(d)]
        v = [Fraction(rng.randint(-16, 16), 8) for _ in range(d)]
        if all(x == 0 for x in v):
            v[0] = Fraction(1)
        heads.append((W, v))
    if family == "near_equal" and H >= 2:
        k = rng.randint(4, 12)
        W2 = [row[:] for row in heads[0][0]]
        i, j = rng.randrange(d), rng.randrange(d)
        W2[i][j] += Fraction(rng.choice([-1, 1]), 1 << k)
        heads[1] = (W2, heads[1][1])
    if family == "cancel_shared" and H >= 2:
        if rng.random() < 0.5:  # shared W: the canonical form merges the two
            heads[1] = ([row[:] for row in heads[0][0]], heads[1][1])
        else:  # opposite v: both vanish
            if H == 2:
                heads.append(([[rand_entry(rng, 2, 8) for _ in range(d)] for _ in range(d)], [Fraction(1)] * d))
                H = 3
            heads[1] = ([row[:] for row in heads[0][0]], [-x for x in heads[0][1]])
    # the canonical count: heads with equal W merge (v summed), a zero v vanishes
    merged = {}
    for W, v in heads:
        key = tuple(tuple(row) for row in W)
        merged[key] = [a + b for a, b in zip(merged[key], v)] if key in merged else list(v)
    canonical = sum(1 for v in merged.values() if any(x != 0 for x in v))
    text = json.dumps({"format": "mhaq-model", "version": 1, "d": d,
                       "heads": [{"W": [[frac(x) for x in row] for row in W], "v": [frac(x) for x in v]} for W, v in heads]})
    return d, canonical, text


def arith_options(rng):
    if rng.random() < 0.3:
        return ["--arith", "double"], 53
    bits = rng.choice([64, 128, 256])
    return ["--arith", "mpfr", "--bits", str(bits)], bits


def plan(seed, n_att, n_ext, n_tr):
    """Every run as (family, kind, files, argv builder), drawn from one seeded stream."""
    rng = random.Random(seed)
    runs = []
    families = ["default", "near_equal", "large_w", "cancel_shared"]
    for t in range(n_att + n_ext):
        family = families[t % len(families)]
        external = t >= n_att
        learner, p = arith_options(rng)
        seed_l = rng.randint(1, 10 ** 6)
        if family == "default":
            d, H = rng.randint(1, 4), rng.randint(1, 4)
            if not external and rng.random() < 0.5:
                learner, p = ["--arith", "mpfr", "--bits", "256"], 256
            o = {"d": d, "H": H, "learner": learner, "p": p, "seed": seed_l, "external": external,
                 "answer_bits": rng.choice([0, 0, 20, 24, 32, 40, 53, 64]), "noise": rng.random() < 0.3,
                 "stated": rng.random() < 0.5, "gen_seed": rng.randint(1, 10 ** 6)}
            # the drawn models at mpfr 256 from the model's own answers: the
            # ok rate that may not fall
            full = p == 256 and not external and o["answer_bits"] == 0 and not o["noise"]
            runs.append(("default_mpfr256_own" if full else family, "attention", None, o))
            continue
        d, H, text = attention_model(rng, family)
        if H < 1:  # no canonical head (cancelling heads): nothing to learn, not run
            continue
        runs.append((family, "attention", text, {"d": d, "H": H, "learner": learner, "p": p, "seed": seed_l, "external": external,
                                                 "answer_bits": rng.choice([0, 0, 20, 24, 32, 40, 53, 64]), "noise": rng.random() < 0.3,
                                                 "stated": rng.random() < 0.5}))
    for t in range(n_tr):
        learner, p = arith_options(rng)
        runs.append(("transformer", "transformer", None, {"d": rng.randint(1, 3), "H": rng.randint(1, 2), "m": rng.randint(1, 3),
                                                          "learner": learner, "p": p, "seed": rng.randint(1, 10 ** 6),
                                                          "gen_seed": rng.randint(1, 10 ** 6), "external": t % 2 == 1,
                                                          "answer_bits": rng.choice([0, 24, 32, 53]), "stated": rng.random() < 0.5}))
    return runs


def run_one(mhaq, family, kind, text, o, workdir, index):
    tmp = tempfile.mkdtemp(dir=workdir)
    try:
        model = os.path.join(tmp, "m.json")
        if kind == "transformer":
            subprocess.run([mhaq, "generate", "--d", str(o["d"]), "--heads", str(o["H"]), "--ffn", str(o["m"]), "--seed", str(o["gen_seed"]),
                            "-o", model], check=True, capture_output=True)
        elif text is None:
            gen = [mhaq, "generate", "--d", str(o["d"]), "--heads", str(o["H"]), "--seed", str(o["gen_seed"]),
                   "--w-range", str(3 << 14), "--w-den", str(1 << 16), "--v-range", str(1 << 16), "--v-den", str(1 << 16), "-o", model]
            subprocess.run(gen, check=True, capture_output=True)
        else:
            with open(model, "w") as f:
                f.write(text)
        argv = [mhaq, "recover", "--model", model, "--seed", str(o["seed"]), "--json", "--quiet"] + o["learner"]
        if kind == "attention" and "H" in o and text is not None:
            argv += ["--heads", str(o["H"])]
        b = o["answer_bits"]
        if o["external"]:
            served = b or o["p"]
            argv += ["--oracle", f"{mhaq} oracle --model {model} --arith mpfr --bits {served}"]
            if o.get("stated"):
                argv += ["--oracle-error", f"rel:{2.0 ** (1 - served):.17g}"]
        elif kind == "attention":
            if b:
                argv += ["--oracle-bits", str(b)]
            if o.get("noise"):
                argv += ["--noise", f"{2.0 ** -(min(b or o['p'], o['p']) - 4):.17g}", "--noise-seed", str(index + 1)]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        try:
            doc = json.loads(r.stdout)
        except ValueError:
            return family, "other", o["external"], {"argv": argv, "stderr": r.stderr[-400:]}
        status = doc.get("status", "other")
        if status == "ok":
            err, tol = doc.get("max_rel_error"), doc.get("tolerance")
            if err is not None and tol is not None and err > tol:
                status = "mismatch"
        outcome = status if status in OUTCOMES else "other"
        # refused before any query: a drawn model the program does not take
        # (a transformer whose canonical form is empty: nothing to recover)
        if status == "error" and doc.get("error") in ("usage", "input") and "canonical form is empty" in doc.get("message", ""):
            outcome = "refused"
        # not_identifiable on a stated condition the drawn model meets: a
        # transformer with d = 1 and two or more heads (every neuron's
        # hyperplane is the point 0)
        if outcome == "not_identifiable" and kind == "transformer" and o["d"] == 1 and o["H"] >= 2:
            outcome = "stated_ni"
        with open(model) as f:
            info = {"argv": argv, "message": doc.get("message", ""), "model": f.read()}
        return family, outcome, o["external"], info if outcome in ("mismatch", "inconsistent", "not_identifiable", "other") else None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mhaq")
    ap.add_argument("--attention", type=int, default=18020)
    ap.add_argument("--external", type=int, default=2020)
    ap.add_argument("--transformer", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--list", help="write every flagged run's command line here")
    ap.add_argument("--slice", action="store_true",
                    help="ctest's slice: 40 attention, 8 external and 8 transformer runs, times MHAQ_TEST_MULTIPLIER")
    a = ap.parse_args()
    if a.slice:
        k = max(1, int(os.environ.get("MHAQ_TEST_MULTIPLIER", "1") or 1))
        a.attention, a.external, a.transformer = 40 * k, 8 * k, 8 * k
    mhaq = os.path.abspath(a.mhaq)
    runs = plan(a.seed, a.attention, a.external, a.transformer)
    counts = defaultdict(Counter)
    flagged = []
    with tempfile.TemporaryDirectory() as workdir, concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futures = [pool.submit(run_one, mhaq, f, k, t, o, workdir, i) for i, (f, k, t, o) in enumerate(runs)]
        for fut in concurrent.futures.as_completed(futures):
            family, outcome, external, info = fut.result()
            counts[family][outcome] += 1
            if external:
                counts["(through mhaq oracle)"][outcome] += 1
            if info:
                flagged.append((family, outcome, info))
    print(f"{'family':24s} {'runs':>6s} " + " ".join(f"{o:>9s}" for o in OUTCOMES) + f" {'ok %':>6s}")
    total = Counter()
    for family in sorted(counts):
        c = counts[family]
        n = sum(c.values())
        if family != "(through mhaq oracle)":
            total.update(c)
        print(f"{family:24s} {n:6d} " + " ".join(f"{c[o]:9d}" for o in OUTCOMES) + f" {100.0 * c['ok'] / max(n, 1):6.1f}")
    n = sum(total.values())
    print(f"{'all':24s} {n:6d} " + " ".join(f"{total[o]:9d}" for o in OUTCOMES) + f" {100.0 * total['ok'] / max(n, 1):6.1f}")
    bad = [x for x in flagged if x[1] in ("mismatch", "inconsistent", "not_identifiable")]
    for family, outcome, info in flagged[:20]:
        print(f"  {outcome} ({family}): {' '.join(info['argv'])}\n    {info.get('message') or info.get('stderr', '')}")
    if a.list:
        with open(a.list, "w") as f:
            for family, outcome, info in flagged:
                f.write(json.dumps({"family": family, "outcome": outcome, **info}) + "\n")
    decided = total["ok"] + total["unable"] + total["degenerate"] + total["stated_ni"]
    if decided < n // 2:
        print(f"judge_soak: too few runs decided ({decided} of {n})")
        return 1
    if bad or total["other"]:
        print(f"judge_soak: {len(bad)} runs ok-and-wrong, inconsistent or not identifiable, {total['other']} without a status")
        return 1
    print("judge_soak: no ok-and-wrong, no inconsistent, no not_identifiable")
    return 0


if __name__ == "__main__":
    sys.exit(main())
