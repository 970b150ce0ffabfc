#!/usr/bin/env python3
"""Small units: file and function lengths, and repeated runs of lines.

Usage: units.py SOURCE_DIR [PATH ...]

Scans the C++ sources (.cpp, .hpp, .h) under src/ and include/ of SOURCE_DIR,
or only the given PATHs (files or folders, relative to SOURCE_DIR) when any
are named. Prints the five longest files and the five longest functions, then
fails (exit 1) when
  - a file has more than MAX_FILE lines,
  - a function has more than MAX_FUNCTION lines (from the line its signature
    starts on to the line of its closing brace),
  - a run of more than MAX_RUN normalised lines stands in two places, unless
    the pair of files is listed in tests/duplicates_allow.txt.
The repeated-run check always reads the whole of src/ and include/, so a copy
of a named file's lines elsewhere is found; it reports only runs that touch a
named path.
"""
import os
import re
import sys

MAX_FILE = 800
MAX_FUNCTION = 120
MAX_RUN = 10
EXTS = (".cpp", ".hpp", ".h")
ROOTS = ("src", "include")
ALLOW = os.path.join("tests", "duplicates_allow.txt")


def sources(src_dir, paths):
    out = []
    for p in paths:
        full = os.path.join(src_dir, p)
        if os.path.isfile(full):
            out.append(os.path.normpath(p))
            continue
        if not os.path.isdir(full):
            sys.exit(f"units.py: no such file or folder: {p}")
        for dirpath, dirnames, filenames in os.walk(full):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(EXTS):
                    out.append(os.path.normpath(os.path.relpath(os.path.join(dirpath, f), src_dir)))
    return sorted(set(out))


def blank_code(text):
    """The text with comments, string and character literals and preprocessor
    lines replaced by spaces (newlines kept), so braces can be counted."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            out.append(c)
            line_start = True
            i += 1
            continue
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":
            # a preprocessor line, with its backslash continuations
            while i < n:
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                if text[i] == "\n":
                    break
                out.append(" ")
                i += 1
            continue
        line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        m = re.match(r'R"([^()\\\s]{0,16})\(', text[i:i + 20])
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + m.group(1) + '"', i + m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "'":
            # a digit separator (1'000) is not a character literal
            k = i - 1
            while k >= 0 and (text[k].isalnum() or text[k] in "_'"):
                k -= 1
            if k + 1 < i and text[k + 1].isdigit():
                out.append(" ")
                i += 1
                continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else " " * (j - i))
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out)


CONTROL = re.compile(r"^(if|for|while|switch|catch|do|else|return|try)\b")
SCOPE = re.compile(r"^(?:template\s*<.*>\s*)?(?:(?:export|inline)\s+)*(namespace|extern|class|struct|union|enum)\b")
TRAILER = re.compile(r"\)\s*(?:const|volatile|noexcept\s*(?:\([^()]*\))?|override|final|mutable|&&|&|->[^;{}]*|requires[^;{}]*|try|\s)*$")
LABEL = re.compile(r"^(?:(?:public|private|protected)\s*:(?!:)\s*)+")


def functions(code):
    """(name, first line, last line) of every function body in blanked code,
    not counting lambdas and local classes inside a function (they are part of
    their enclosing function)."""
    found = []
    stack = []  # (kind, start line, name) per open brace
    head_start = 0
    i, n = 0, len(code)
    line_at = [0]
    for k, ch in enumerate(code):
        if ch == "\n":
            line_at.append(k + 1)

    def line_of(pos):
        lo, hi = 0, len(line_at) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_at[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    def in_function():
        return any(k == "function" for k, _, _ in stack)

    while i < n:
        c = code[i]
        if c in ";":
            head_start = i + 1
        elif c == "{":
            raw = code[head_start:i]
            head = " ".join(raw.split())
            head = LABEL.sub("", head)
            kind, name = "other", ""
            if in_function():
                kind = "inner"
            elif SCOPE.match(head) and "(" not in head.split("{")[0].split("=")[0] or head.startswith("extern"):
                kind = "scope"
            elif head and not CONTROL.match(head) and "(" in head:
                before = head.split("(")[0]
                if re.search(r"\)\s*:[^:]", head) and re.search(r"[\w>]$", head):
                    # a braced member initialiser in a constructor's initialiser
                    # list: skip it, the head goes on
                    depth = 0
                    while i < n:
                        depth += {"{": 1, "}": -1}.get(code[i], 0)
                        if depth == 0:
                            break
                        i += 1
                    i += 1
                    continue
                if "=" not in before and (TRAILER.search(head) or re.search(r"\)\s*:[^:]", head)):
                    kind = "function"
                    name = before.split()[-1] if before.split() else "?"
                    if name == "operator" or before.rstrip().endswith("operator"):
                        name = "operator"
            start = head_start
            while start < i and code[start].isspace():
                start += 1
            # skip an access label at the start of the head
            m = LABEL.match(code[start:i].lstrip())
            if m:
                start = start + (len(code[start:i]) - len(code[start:i].lstrip())) + m.end()
                while start < i and code[start].isspace():
                    start += 1
            stack.append((kind, line_of(start), name))
            head_start = i + 1
        elif c == "}":
            if stack:
                kind, first, name = stack.pop()
                if kind == "function":
                    found.append((name, first, line_of(i)))
            head_start = i + 1
        i += 1
    return found


def normalised_lines(text):
    """(line number, folded text) of the lines that count for repetition:
    no blank lines, comment-only lines, lone punctuation or #include lines."""
    out = []
    in_block = False
    for no, raw in enumerate(text.split("\n"), 1):
        s = raw.strip()
        if in_block:
            end = s.find("*/")
            if end < 0:
                continue
            s = s[end + 2:].strip()
            in_block = False
        if s.startswith("/*") and "*/" not in s:
            in_block = True
            continue
        if s.startswith("//") or s.startswith("#include") or not s:
            continue
        if re.fullmatch(r"[{}()\[\];,]*", s):
            continue
        out.append((no, " ".join(s.split())))
    return out


def read_allow(src_dir):
    pairs = set()
    path = os.path.join(src_dir, ALLOW)
    if not os.path.exists(path):
        return pairs
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if len(line) == 2:
                pairs.add(tuple(sorted(line)))
            elif line:
                sys.exit(f"units.py: {ALLOW}: expected two paths a line, got {' '.join(line)}")
    return pairs


def repeated_runs(src_dir, files):
    """Runs of more than MAX_RUN normalised lines standing in two places:
    a list of (file a, first, last, file b, first, last)."""
    w = MAX_RUN + 1
    where = {}
    lines = {}
    for f in files:
        with open(os.path.join(src_dir, f), errors="replace") as fh:
            lines[f] = normalised_lines(fh.read())
        ls = lines[f]
        for k in range(len(ls) - w + 1):
            key = "\n".join(t for _, t in ls[k:k + w])
            where.setdefault(key, []).append((f, k))
    # pairs of window starts, grouped into maximal runs along both files
    seen = set()
    runs = []
    for places in where.values():
        if len(places) < 2:
            continue
        for a in range(len(places)):
            for b in range(a + 1, len(places)):
                (fa, ka), (fb, kb) = places[a], places[b]
                if (fa, ka, fb, kb) in seen:
                    continue
                # walk back to the start of the run and forward to its end
                while ka > 0 and kb > 0 and lines[fa][ka - 1][1] == lines[fb][kb - 1][1] and (fa, ka - 1) != (fb, kb):
                    ka, kb = ka - 1, kb - 1
                ea, eb = ka, kb
                la, lb = lines[fa], lines[fb]
                while ea + 1 < len(la) and eb + 1 < len(lb) and la[ea + 1][1] == lb[eb + 1][1] and (fa, ea + 1) != (fb, kb):
                    ea, eb = ea + 1, eb + 1
                for d in range(0, ea - ka + 1):
                    seen.add((fa, ka + d, fb, kb + d))
                runs.append((fa, la[ka][0], la[ea][0], fb, lb[kb][0], lb[eb][0], ea - ka + 1))
    return runs


def self_test():
    """The checks must be able to fail: a synthetic tree with one defect of
    each kind, and the tricky-but-fine constructs the scanner must not trip on."""
    import tempfile
    body = "\n".join(f"  x += {k};" for k in range(MAX_FUNCTION))
    fine = (
        'struct S {\n  S() : a_{1}, b_(2) {\n    c = "}{";\n  }\n  int a_, b_, c;\n};\n'
        "int g() { return 1'000 + '}'; }\n"
        'const char* r = R"(}})";\n'
    )
    cases = {
        "long_function": ("int f() {\n  int x = 0;\n" + body + "\n  return x;\n}\n", "a0.cpp:9 f has 124 lines"),
        "long_file": ("\n".join(f"int v{k} = {k};" for k in range(MAX_FILE + 1)) + "\n", "a0.cpp has 809 lines"),
        "repeated": ("\n".join(f"int w{k} = {k};" for k in range(MAX_RUN + 1)) + "\n", "repeated lines"),
    }
    ok = True
    for name, (text, expect) in cases.items():
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "src"))
            for k in range(2 if name == "repeated" else 1):
                with open(os.path.join(d, "src", f"a{k}.cpp"), "w") as f:
                    f.write(fine + text)
            import io
            import contextlib
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                rc = run(d, [])
            if rc != 1 or expect not in out.getvalue():
                print(f"FAIL: self-test {name}: expected a failure naming '{expect}', got:\n{out.getvalue()}")
                ok = False
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "src"))
        with open(os.path.join(d, "src", "a.cpp"), "w") as f:
            f.write(fine)
        found = sorted((n, b - a + 1) for n, a, b in functions(blank_code(fine)))
        if found != [("S", 3), ("g", 1)]:
            print(f"FAIL: self-test scanner: functions {found}, expected [('S', 3), ('g', 1)]")
            ok = False
    return ok


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if not self_test():
        return 1
    return run(sys.argv[1], sys.argv[2:])


def run(src_dir, named):
    if False:
        pass
    everything = sources(src_dir, [r for r in ROOTS if os.path.isdir(os.path.join(src_dir, r))])
    scope = sources(src_dir, named) if named else everything
    scope_set = set(scope)

    file_len, funcs = [], []
    for f in scope:
        with open(os.path.join(src_dir, f), errors="replace") as fh:
            text = fh.read()
        file_len.append((text.count("\n") + (0 if text.endswith("\n") or not text else 1), f))
        for name, first, last in functions(blank_code(text)):
            funcs.append((last - first + 1, f, first, name))
    file_len.sort(key=lambda t: (-t[0], t[1]))
    funcs.sort(key=lambda t: (-t[0], t[1], t[2]))

    what = "named paths" if named else "src/ and include/"
    print(f"units: {len(scope)} files, {len(funcs)} functions in {what}")
    print("longest files:")
    for length, f in file_len[:5]:
        print(f"  {length:6d}  {f}")
    print("longest functions:")
    for length, f, first, name in funcs[:5]:
        print(f"  {length:6d}  {f}:{first}  {name}")

    fail = 0
    for length, f in file_len:
        if length > MAX_FILE:
            print(f"FAIL: {f} has {length} lines (at most {MAX_FILE})")
            fail += 1
    for length, f, first, name in funcs:
        if length > MAX_FUNCTION:
            print(f"FAIL: {f}:{first} {name} has {length} lines (at most {MAX_FUNCTION})")
            fail += 1

    allow = read_allow(src_dir)
    allowed = 0
    for fa, a0, a1, fb, b0, b1, count in sorted(repeated_runs(src_dir, everything)):
        if fa not in scope_set and fb not in scope_set:
            continue
        if tuple(sorted((fa, fb))) in allow:
            allowed += 1
            continue
        print(f"FAIL: {count} repeated lines: {fa}:{a0}-{a1} ~ {fb}:{b0}-{b1}")
        fail += 1
    if allowed:
        print(f"({allowed} repeated runs between file pairs listed in {ALLOW})")
    if fail:
        print(f"units: {fail} failure(s)")
        return 1
    print("units: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
