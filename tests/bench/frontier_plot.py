#!/usr/bin/env python3
"""The frontier plot: log2 max_rel_error against H, one colour per design.

usage: frontier_plot.py RUNS_DIR DESIGNS HEADS SEEDS OUT.svg

RUNS_DIR holds one `mhaq recover --json` output per run, named
DESIGN-H-SEED.json (as tests/bench/frontier.sh writes them). Every ok run is a
dot; the line joins each design's worst ok run per H; the count of ok seeds is
written under each column of dots. The dashed lines are the issue's targets
(2^-45 at H = 4, 2^-40 at H = 6) and the answers' own precision (2^-53).
The SVG is written by hand, so no plotting package is needed.
"""
import json
import math
import sys

COLOURS = {"paper": "#1f77b4", "tuned": "#ff7f0e", "placed": "#2ca02c"}


def load(runs, design, h, seed):
    try:
        with open(f"{runs}/{design}-{h}-{seed}.json") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {"status": "none"}


def main():
    runs, designs, heads, seeds, out = sys.argv[1], sys.argv[2].split(","), \
        [int(x) for x in sys.argv[3].split()], [int(x) for x in sys.argv[4].split()], sys.argv[5]
    W, Hgt, left, right, top, bottom = 720, 520, 70, 150, 30, 100
    y_hi, y_lo = 0.0, -56.0  # log2 of the error, top and bottom of the axes

    def px(h):
        span = max(heads) - min(heads) or 1
        return left + (h - min(heads)) / span * (W - left - right)

    def py(v):
        v = min(max(v, y_lo), y_hi)
        return top + (y_hi - v) / (y_hi - y_lo) * (Hgt - top - bottom)

    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{Hgt}" font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{Hgt}" fill="white"/>']
    for v in range(int(y_lo), int(y_hi) + 1, 8):
        s.append(f'<line x1="{left}" y1="{py(v):.1f}" x2="{W - right}" y2="{py(v):.1f}" stroke="#ddd"/>')
        s.append(f'<text x="{left - 8}" y="{py(v) + 4:.1f}" text-anchor="end">2^{v}</text>')
    for h in heads:
        s.append(f'<text x="{px(h):.1f}" y="{Hgt - bottom + 18}" text-anchor="middle">{h}</text>')
    s.append(f'<text x="{(left + W - right) / 2:.0f}" y="{Hgt - 8}" text-anchor="middle">heads H (d = 8, answers rounded to 53 bits)</text>')
    s.append(f'<text x="16" y="{(top + Hgt - bottom) / 2:.0f}" transform="rotate(-90 16 {(top + Hgt - bottom) / 2:.0f})" '
             'text-anchor="middle">max_rel_error of ok runs</text>')
    for v, label in ((-53, "answers 2^-53"), ):
        s.append(f'<line x1="{left}" y1="{py(v):.1f}" x2="{W - right}" y2="{py(v):.1f}" stroke="#888" stroke-dasharray="2,3"/>')
        s.append(f'<text x="{W - right + 4}" y="{py(v) + 4:.1f}" fill="#555">{label}</text>')
    for h, v in ((4, -45), (6, -40)):
        if h in heads:
            s.append(f'<line x1="{px(h) - 14:.1f}" y1="{py(v):.1f}" x2="{px(h) + 14:.1f}" y2="{py(v):.1f}" stroke="#c00" stroke-dasharray="4,2"/>')
    s.append(f'<text x="{W - right + 4}" y="{top + 10}" fill="#c00">- - target</text>')
    for k, d in enumerate(designs):
        col = COLOURS.get(d, "#444")
        off = (k - (len(designs) - 1) / 2) * 7  # designs side by side within a column
        worst = []
        for h in heads:
            errs = []
            for seed in seeds:
                r = load(runs, d, h, seed)
                e = r.get("max_rel_error")
                if r.get("status") == "ok" and isinstance(e, (int, float)) and e > 0:
                    errs.append(math.log2(e))
            for e in errs:
                s.append(f'<circle cx="{px(h) + off:.1f}" cy="{py(e):.1f}" r="3" fill="{col}" fill-opacity="0.6"/>')
            s.append(f'<text x="{px(h):.1f}" y="{Hgt - bottom + 34 + 13 * k}" text-anchor="middle" fill="{col}" font-size="10">'
                     f'{len(errs)}/{len(seeds)}</text>')
            worst.append((h, max(errs)) if errs else None)
        pts = [f"{px(h) + off:.1f},{py(e):.1f}" for h, e in (w for w in worst if w)]
        if len(pts) > 1:
            s.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="{col}" stroke-width="1.5"/>')
        s.append(f'<circle cx="{W - right + 10}" cy="{top + 34 + 18 * k}" r="4" fill="{col}"/>')
        s.append(f'<text x="{W - right + 20}" y="{top + 38 + 18 * k}">{d}</text>')
    s.append(f'<text x="{W - right + 4}" y="{top + 50 + 18 * len(designs)}" font-size="10">line: worst ok seed</text>')
    s.append(f'<text x="{W - right + 4}" y="{top + 64 + 18 * len(designs)}" font-size="10">k/n under the axis:</text>')
    s.append(f'<text x="{W - right + 4}" y="{top + 77 + 18 * len(designs)}" font-size="10">ok seeds per design</text>')
    s.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(s) + "\n")


if __name__ == "__main__":
    main()
