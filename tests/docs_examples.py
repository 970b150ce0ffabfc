#!/usr/bin/env python3
"""Runs the command blocks of README.md and docs/ and compares their output.

A fenced block with lines starting "$ " shows commands and what they print:
each command runs (mhaq as the program under test, python3 as this
interpreter) in a fresh temporary folder holding links to the source tree's
examples/ and tests/, standard error merged into standard output, and the
output must equal the lines the page shows after them. A line "..." (any
indentation) in the page stands for any number of lines. Times ("0.12 s")
and the temporary folder's path are masked on both sides.

A block that cannot run here is marked on the line before its fence:
    <!-- docs-test: skip: the reason -->
and counted. Blocks that show commands without output are counted too (not
compared: there is nothing to compare).

The control: for every block that passed, one character of its shown output
is changed and the comparison must then fail; a runner that accepts a wrong
page is no test.

usage: docs_examples.py MHAQ SOURCE_DIR
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^\s*```(\S*)\s*$")
SKIP = re.compile(r"^\s*<!--\s*docs-test:\s*skip:\s*(.+?)\s*-->\s*$")
TIME = re.compile(r"\b\d+(\.\d+)?( ?)(s|ms)\b")
ELIDE = "..."


def blocks(path):
    """(line number, info, lines, skip reason or None) of each fenced block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not FENCE.match(lines[j]):
            j += 1
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        s = SKIP.match(lines[k]) if k >= 0 else None
        out.append((i + 1, m.group(1), lines[i + 1:j], s.group(1) if s else None))
        i = j + 1
    return out


def steps(body):
    """[(command, shown output lines)] of a block's "$ " lines."""
    out = []
    for line in body:
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def mask(text, tmp):
    text = text.replace(os.path.realpath(tmp), "<TMP>").replace(tmp, "<TMP>")
    return TIME.sub(lambda m: "<T>" + m.group(2) + m.group(3), text)


def matches(shown, got):
    """shown (with "..." lines) against got, line by line."""
    shown = [l.rstrip() for l in shown]
    got = [l.rstrip() for l in got]
    while shown and not shown[-1]:
        shown.pop()
    while got and not got[-1]:
        got.pop()

    memo = {}

    def at(i, j):
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(shown):
            r = j == len(got)
        elif shown[i].strip() == ELIDE:
            r = any(at(i + 1, k) for k in range(j, len(got) + 1))
        else:
            r = j < len(got) and shown[i] == got[j] and at(i + 1, j + 1)
        memo[(i, j)] = r
        return r

    return at(0, 0)


def command_line(cmd, mhaq):
    cmd = re.sub(r"^(\./build/mhaq|build/mhaq|mhaq)(?=\s)", lambda m: mhaq, cmd.strip())
    return re.sub(r"^python3(?=\s)", sys.executable, cmd)


def run_block(body, mhaq, src):
    """[(shown, got)] per command, masked."""
    with tempfile.TemporaryDirectory(prefix="mhaq-docs-") as tmp:
        for d in ("examples", "tests"):
            os.symlink(os.path.join(src, d), os.path.join(tmp, d))
        out = []
        for cmd, shown in steps(body):
            p = subprocess.run(command_line(cmd, mhaq), shell=True, cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
            got = p.stdout.decode("utf-8", "replace").split("\n")
            out.append(([mask(l, tmp) for l in shown], [mask(l, tmp) for l in got]))
        return out


def mutated(shown):
    """shown with one character of its first real output line changed, or None."""
    for n, line in enumerate(shown):
        if line.strip() in ("", ELIDE):
            continue
        plain = re.sub(r"<[A-Z]+>", lambda m: "\0" * len(m.group(0)), line)
        for c, ch in enumerate(plain):
            if ch.isalnum():
                repl = "7" if ch != "7" else "8"
                return shown[:n] + [line[:c] + repl + line[c + 1:]] + shown[n + 1:]
    return None


def main():
    mhaq, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    pages = [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "**", "*.md"), recursive=True))
    ran = skipped = no_output = controls = 0
    failures = []
    for page in pages:
        rel = os.path.relpath(page, src)
        for line, info, body, skip in blocks(page):
            where = f"{rel}:{line}"
            if skip:
                skipped += 1
                print(f"marked  {where}: {skip}")
                continue
            if not any(l.startswith("$ ") for l in body):
                if info in ("sh", "bash", "console", "shell"):
                    no_output += 1
                continue
            ran += 1
            results = run_block(body, mhaq, src)
            bad = [(s, g) for s, g in results if not matches(s, g)]
            if bad:
                s, g = bad[0]
                failures.append(f"{where}: the output differs from the page\n--- page\n" + "\n".join(s) + "\n--- program\n" + "\n".join(g))
                print(f"FAIL    {where}")
                continue
            print(f"ok      {where}")
            for s, g in results:  # the control
                m = mutated(s)
                if m is None:
                    continue
                controls += 1
                if matches(m, g):
                    failures.append(f"{where}: control: a changed character in the shown output still matched")
    print(f"docs_examples: {ran} blocks run, {skipped} marked, {no_output} command blocks without output (not compared), {controls} controls")
    for f in failures:
        print(f, file=sys.stderr)
    if ran == 0 or controls == 0:
        failures.append("nothing was compared")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
