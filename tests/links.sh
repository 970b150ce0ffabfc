#!/usr/bin/env bash
# Documentation that resolves.   usage: bash tests/links.sh SOURCE_DIR [--no-control]
#
# 1. Every relative link in README.md, docs/**/*.md, proofs/*.md and
#    tests/golden/*.md ([text](target), ![alt](target), [ref]: target) names a
#    file or folder that exists; a link with #anchor into a markdown page names
#    one of its headings (GitHub's heading ids). Code blocks and `code spans`
#    are not links, but a code span that quotes a repository path
#    (`src/...`, `include/...`, `tests/...`, `proofs/...`, `docs/...`,
#    `examples/...`, `cmake/...`, relative to the top) must name an existing
#    file or folder. External links (http:, https:, mailto:) are not checked.
# 2. No comment in src/, include/, tests/ or CMakeLists.txt cites a file outside the
#    repository (ALGORITHM.md, ../shared/...) or an issue number ("issue 15"):
#    the mathematics lives in docs/math/ and proofs/, history in the commits.
# 3. Controls: a copy of the tree with one broken link, and a copy with one
#    comment citing ALGORITHM.md, must each fail; the unchanged copy must pass.
set -euo pipefail
src="${1:?usage: links.sh SOURCE_DIR [--no-control]}"
control="${2:-}"

check_tree() {  # root: prints every problem, exits 1 if there is one
  python3 - "$1" <<'PY'
import os, re, sys, glob
root = sys.argv[1]
problems = []

def slug(heading):
    # GitHub: lower case, drop everything but letters, digits, spaces, '-' and '_', spaces -> '-'
    h = re.sub(r'`', '', heading.strip().lower())
    h = re.sub(r'[^\w\- ]', '', h)
    return h.replace(' ', '-')

anchor_cache = {}
def anchors(path):
    if path not in anchor_cache:
        ids, seen = set(), {}
        in_code = False
        for line in open(path, encoding='utf-8'):
            if line.lstrip().startswith('```'):
                in_code = not in_code
                continue
            m = None if in_code else re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', line)
            if m:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                ids.add(s if n == 0 else f'{s}-{n}')
        anchor_cache[path] = ids
    return anchor_cache[path]

link_re = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
ref_re = re.compile(r'^\s*\[[^\]]+\]:\s*(\S+)')
code_path_re = re.compile(r'`((?:src|include|tests|proofs|docs|examples|cmake)/[A-Za-z0-9_./*+-]+)`')

pages = [os.path.join(root, 'README.md')]
pages += sorted(glob.glob(os.path.join(root, 'docs', '**', '*.md'), recursive=True))
pages += sorted(glob.glob(os.path.join(root, 'proofs', '*.md')))
pages += sorted(glob.glob(os.path.join(root, 'tests', 'golden', '*.md')))
nlinks = 0
for page in pages:
    if not os.path.isfile(page):
        problems.append(f'{os.path.relpath(page, root)}: missing page')
        continue
    in_code = False
    for lineno, line in enumerate(open(page, encoding='utf-8'), 1):
        if line.lstrip().startswith('```'):
            in_code = not in_code
            continue
        if in_code:
            continue
        text = re.sub(r'`[^`]*`', '', line)  # code spans are not links
        targets = [m.group(1) for m in link_re.finditer(text)]
        m = ref_re.match(text)
        if m:
            targets.append(m.group(1))
        for t in targets:
            if re.match(r'^[a-z][a-z0-9+.-]*:', t):  # http:, https:, mailto:
                continue
            nlinks += 1
            where = f'{os.path.relpath(page, root)}:{lineno}: link "{t}"'
            path, _, frag = t.partition('#')
            target = page if path == '' else os.path.normpath(os.path.join(os.path.dirname(page), path))
            if os.path.relpath(target, root).split(os.sep)[0] == '..':
                problems.append(f'{where} leaves the repository')
                continue
            if not os.path.exists(target):
                problems.append(f'{where}: no such file or folder')
                continue
            if frag and target.endswith('.md') and frag not in anchors(target):
                problems.append(f'{where}: no heading with id "{frag}" in {os.path.relpath(target, root)}')
        # A repository path quoted as code (`src/...`, `include/mhaq/...`) names a file that exists.
        for m in code_path_re.finditer(line):
            t = m.group(1).rstrip('/.')
            nlinks += 1
            if '*' not in t and not os.path.exists(os.path.join(root, t)):
                problems.append(f'{os.path.relpath(page, root)}:{lineno}: path `{t}`: no such file or folder')

# Comments in the code: no citation of files outside the repository, no issue numbers.
bad = [(re.compile(r'ALGORITHM\.md'), 'cites ALGORITHM.md, which is not in the repository (cite docs/math/ or proofs/)'),
       (re.compile(r'\.\./shared|shared/design'), 'cites a file outside the repository'),
       (re.compile(r'\bissues?\s+#?[0-9]+', re.I), 'names an issue number (say what and why; history lives in the commits)')]
code = []
for d in ('src', 'include'):
    for dirpath, _, files in os.walk(os.path.join(root, d)):
        code += [os.path.join(dirpath, f) for f in files]
# the tests too, but this script (its controls cite on purpose) and the two
# benchmarks that read an optional reference outside the tree (MHAQ_SHARED)
for dirpath, _, files in os.walk(os.path.join(root, 'tests')):
    code += [os.path.join(dirpath, f) for f in files if os.path.splitext(f)[1] in ('.cpp', '.hpp', '.sh', '.py', '.md', '.txt')
             and os.path.relpath(os.path.join(dirpath, f), root) not in ('tests/links.sh', 'tests/bench/run.sh', 'tests/bench/speed.sh')]
code.append(os.path.join(root, 'CMakeLists.txt'))
code += glob.glob(os.path.join(root, 'cmake', '*.cmake'))
for f in sorted(code):
    if not os.path.isfile(f):
        continue
    for lineno, line in enumerate(open(f, encoding='utf-8', errors='replace'), 1):
        for rx, why in bad:
            if rx.search(line):
                problems.append(f'{os.path.relpath(f, root)}:{lineno}: {why}: {line.strip()[:100]}')

for p in problems:
    print(p)
print(f'links.sh: {len(pages)} pages, {nlinks} relative links, {len(code)} code files scanned, {len(problems)} problems')
sys.exit(1 if problems else 0)
PY
}

check_tree "$src"
[[ "$control" == --no-control ]] && exit 0

# Controls on temporary copies of the documented tree.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
copy() {  # dest: the source tree without build directories, git metadata or bytecode
  # ctest runs this beside tests that start Python from examples/, which may
  # create __pycache__ while tar reads; tar's exit 1 ("changed as we read it")
  # is therefore not an error here, exit 2 (fatal) is.
  mkdir -p "$1"
  local rc=0
  (cd "$src" && tar --exclude='./build*' --exclude=./.git --exclude=__pycache__ \
     --warning=no-file-changed --warning=no-file-removed -cf - .) > "$work/tree.tar" || rc=$?
  if (( rc > 1 )); then echo "links.sh: could not copy the tree (tar exit $rc)"; exit 1; fi
  tar -C "$1" -xf "$work/tree.tar"
}
copy "$work/same"
check_tree "$work/same" >/dev/null || { echo "links.sh control: the unchanged copy fails"; check_tree "$work/same" | tail -5; exit 1; }
copy "$work/link"
printf '\nSee [a page that is not there](math/no-such-page.md).\n' >> "$work/link/docs/README.md"
if check_tree "$work/link" >/dev/null; then echo "links.sh control: a broken link was not caught"; exit 1; fi
copy "$work/anchor"
printf '\nSee [a heading that is not there](math/model.md#no-such-heading).\n' >> "$work/anchor/docs/README.md"
if check_tree "$work/anchor" >/dev/null; then echo "links.sh control: a broken anchor was not caught"; exit 1; fi
copy "$work/cite"
# (the first file in sorted order; sed reads all of it: `| head` under pipefail
# can end sort by SIGPIPE and so this script, silently)
f=$(find "$work/cite/src" -name '*.cpp' | sort | sed -n 1p)
[[ -n "$f" ]] || { echo "links.sh control: no .cpp file found in the copy"; exit 1; }
printf '// See ALGORITHM.md section 3.\n' >> "$f"
if check_tree "$work/cite" >/dev/null; then echo "links.sh control: a comment citing ALGORITHM.md was not caught"; exit 1; fi
copy "$work/issue"
printf '// Added for issue 15.\n' >> "$f"
f=$(find "$work/issue/include" -name '*.hpp' | sort | sed -n 1p)
[[ -n "$f" ]] || { echo "links.sh control: no .hpp file found in the copy"; exit 1; }
printf '// Added for issue 15.\n' >> "$f"
if check_tree "$work/issue" >/dev/null; then echo "links.sh control: an issue number in a comment was not caught"; exit 1; fi
echo "links.sh: controls fail as they must (broken link, broken anchor, ALGORITHM.md citation, issue number)"
