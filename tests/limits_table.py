#!/usr/bin/env python3
"""Walks the numeric options table of docs/limits.md against the program.

Each row is tried at its lowest and highest value (accepted), one past each
(refused: exit 2, the message naming the option) and zero (accepted only
when the range holds it). A row checked when the command line is "read" is
tried with --help after it: the option is validated before help is printed,
so an accepted value prints help (exit 0) and no work runs. A row checked at
"start" runs a small command (d = 2, H = 1) or, for sweep, one whose output
file exists, so that an accepted value ends at that file instead. Every
numeric option that `mhaq CMD --help` lists must have its row.

usage: limits_table.py MHAQ SOURCE_DIR
"""
import os
import re
import subprocess
import sys
import tempfile

COMMANDS = ["generate", "recover", "demo", "golden export", "golden check", "golden kernel", "prove", "verify", "convert", "sweep",
            "check-certificate", "baseline", "compare", "oracle"]
# help types of numeric options (CLI11: INT, UINT, FLOAT, and the validators' names)
NUMERIC = re.compile(r"^(INT|UINT|FLOAT)")
# options that take numbers as text (lists, exact decimals): their rows say so
TEXT_NUMERIC = {("recover", "--noise"), ("recover", "--tolerance"), ("recover", "--target-error"), ("recover", "--max-memory"), ("sweep", "--d"), ("sweep", "--heads"),
                ("sweep", "--bits"), ("sweep", "--token-scale"), ("baseline", "--noise"), ("baseline", "--tolerance"),
                ("baseline", "--w-bound"), ("compare", "--noise"), ("compare", "--tolerance")}
SMALL = "--d 2 --heads 1 --seed 1"


def table(src):
    text = open(os.path.join(src, "docs", "limits.md"), encoding="utf-8").read()
    part = text.split("## Numeric options", 1)[1]
    rows = []
    for line in part.split("\n"):
        m = re.match(r"^\|\s*([a-z -]+?)\s*\|\s*`(--[a-z0-9-]+)`\s*\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|\s*(read|start)\s*\|", line)
        if m:
            rows.append(m.groups())
    return rows


def help_options(mhaq, cmd):
    out = subprocess.run([mhaq] + cmd.split() + ["--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout.decode()
    found = set()
    for line in out.split("\n"):
        m = re.match(r"^\s+(?:-\w,)?(--[a-z0-9-]+)\s+(\S+)", line)
        if m and NUMERIC.match(m.group(2)):
            found.add(m.group(1))
    return found


def base(cmd, opt, tmp):
    """The command line a 'start' row's value is tried in, and the text an accepted value ends with (or None)."""
    if cmd == "sweep":
        keep = {"--d": "2", "--heads": "1", "--bits": "53", "--token-scale": "1"}
        keep.pop(opt)
        args = " ".join(f"{k} {v}" for k, v in keep.items())
        return f"sweep --trials 1 {args} -o {tmp}/exists.csv", "exists; pass --resume"
    if cmd == "recover" and opt == "--oracle-timeout":
        return "recover --oracle true --d 2 --heads 1 --arith double", None
    if cmd == "recover":
        return f"recover {SMALL} --arith {'ball' if opt == '--target-error' else 'mpfr'} --bits 64", None
    if cmd == "baseline":
        return f"baseline --method single-head {SMALL} --arith mpfr --bits 64", None
    if cmd == "compare":
        return f"compare {SMALL} --arith mpfr --bits 64", None
    raise SystemExit(f"limits_table: no start command for {cmd} {opt}")


def number(s):
    if s == "-":
        return None
    return int(s) if re.fullmatch(r"-?\d+", s) else s


def main():
    mhaq, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    rows = table(src)
    failures = []
    listed = {(c, o) for c, o, *_ in rows}
    for cmd in COMMANDS:
        for opt in sorted(help_options(mhaq, cmd)):
            if (cmd, opt) not in listed:
                failures.append(f"{cmd} {opt}: a numeric option missing from the table")
    for key in TEXT_NUMERIC:
        if key not in listed:
            failures.append(f"{key[0]} {key[1]}: missing from the table")
    tried = 0
    with tempfile.TemporaryDirectory(prefix="mhaq-limits-") as tmp:
        open(os.path.join(tmp, "exists.csv"), "w").close()
        for cmd, opt, lo, hi, when in rows:
            lo_n, hi_n = number(lo), number(hi)
            cases = []  # (value, accepted?)
            if lo == "> 0":
                cases += [("0", False), ("-1", False), ("1", True)]
            else:
                cases += [(str(lo_n), True), (str(lo_n - 1), False), ("0", lo_n <= 0 and (hi_n is None or hi_n >= 0))]
            if hi_n is not None:
                cases += [(str(hi_n), True), (str(hi_n + 1), False)]
            for value, accepted in cases:
                tried += 1
                if when == "read":
                    argv = [mhaq] + cmd.split() + [opt, value, "--help"]
                    ends = None
                else:
                    line, ends = base(cmd, opt, tmp)
                    argv = [mhaq] + line.split() + [opt, value]
                p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=tmp, timeout=120)
                out = p.stdout.decode("utf-8", "replace")
                shown = " ".join(argv[1:])
                if accepted:
                    ok = (p.returncode == 0) if when == "read" else (ends in out if ends else p.returncode != 2)
                    if not ok:
                        failures.append(f"{shown}: refused (exit {p.returncode}) at an edge the table accepts: {out.strip()[-200:]}")
                else:
                    named = opt in out or opt.lstrip("-") in out
                    echoed = when != "read" or value in out
                    if p.returncode != 2 or not named or not echoed:
                        failures.append(f"{shown}: want exit 2 naming {opt} and {value}, got exit {p.returncode}: {out.strip()[-200:]}")
    print(f"limits_table: {len(rows)} options, {tried} values tried, {len(failures)} failures")
    for f in failures:
        print(f, file=sys.stderr)
    if len(rows) < 50:
        failures.append("the table has fewer rows than the commands have numeric options")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
