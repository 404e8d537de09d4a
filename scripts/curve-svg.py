#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""curve-svg.py JSON-FILE DEVICE OUT.svg

Draws the parallelism curve of DEVICE from a `truestat -j -D` run as a
self-contained SVG: throughput (top panel) and service time p99 and p95
(bottom panel) against depth, on a log2 x axis, with the effective
parallelism and the saturation depth marked. JSON-FILE holds truestat's
output, one object per line; the totals line is used (the last line that
has DEVICE when there is no totals line, e.g. a run that was killed).

scripts/knee.sh draws its plot with plot() below. Only the standard
library: the SVG is written by hand.
"""

import json
import math
import sys
from xml.sax.saxutils import escape

W, H = 760, 600
LEFT, RIGHT, TOP = 84, 36, 64
PANEL_H, GAP = 200, 70  # two panels, the x axis labelled under each
BLUE, RED, ORANGE, GREEN, GREY = "#1f5fa8", "#b3261e", "#d9822b", "#2e7d32", "#888"


def nice_ticks(top, n=5):
    """0, step, 2 step, ... up to >= top, step 1, 2 or 5 x 10^k."""
    if not top or top <= 0 or not math.isfinite(top):
        top = 1.0
    raw = top / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    k = math.ceil(top / step - 1e-9)
    return [i * step for i in range(k + 1)]


def fmt(v):
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v if v != int(v) else "%d" % v
    return ("%.2f" % v).rstrip("0").rstrip(".")


def plot(points, out, title, subtitle="", parallelism=None, saturation=None,
         x_name="depth"):
    """points: [{"x": depth > 0, "label": str, "iops", "p99_ms", "p95_ms":
    number or None, "evidence": bool}]; parallelism, saturation: (x, text)
    or None. Writes the SVG to the path out."""
    pts = sorted((p for p in points if p["x"] and p["x"] > 0), key=lambda p: p["x"])
    if not pts:
        raise ValueError("no points to plot")
    lo = 2 ** math.floor(math.log2(pts[0]["x"]))
    hi = 2 ** math.ceil(math.log2(pts[-1]["x"]))
    if hi <= lo:
        hi = lo * 2
    pw = W - LEFT - RIGHT

    # a third of an octave of margin on each side, for the end points' labels
    span = math.log2(hi) - math.log2(lo) + 2 / 3

    def xpos(x):
        return LEFT + pw * (math.log2(x) - math.log2(lo) + 1 / 3) / span

    s = []
    s.append('<?xml version="1.0" encoding="UTF-8"?>')
    s.append('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
             'viewBox="0 0 %d %d" font-family="DejaVu Sans, Verdana, sans-serif" '
             'font-size="12">' % (W, H, W, H))
    s.append('<title>%s</title>' % escape(title))
    s.append('<rect x="0" y="0" width="%d" height="%d" fill="white"/>' % (W, H))
    s.append('<text x="%d" y="24" font-size="16" font-weight="bold">%s</text>'
             % (LEFT, escape(title)))
    if subtitle:
        s.append('<text x="%d" y="44" fill="#444">%s</text>' % (LEFT, escape(subtitle)))

    def panel(top, series, ylabel):
        """series: [(key, colour, dashed, name)]; the first one is labelled."""
        vals = [p[k] for k, _, _, _ in series for p in pts if p.get(k) is not None]
        ticks = nice_ticks(1.08 * max(vals) if vals else 1.0)
        ymax = ticks[-1]
        bottom = top + PANEL_H

        def ypos(v):
            return bottom - PANEL_H * v / ymax

        # grid and y axis
        for t in ticks:
            y = ypos(t)
            s.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e4e4e4"/>'
                     % (LEFT, y, W - RIGHT, y))
            s.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>'
                     % (LEFT - 6, y + 4, fmt(t)))
        s.append('<text transform="translate(%d %d) rotate(-90)" text-anchor="middle">%s</text>'
                 % (18, top + PANEL_H // 2, escape(ylabel)))
        # x axis: a tick at each power of two
        x = lo
        while x <= hi:
            X = xpos(x)
            s.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e4e4e4"/>'
                     % (X, top, X, bottom))
            s.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (X, bottom + 16, x))
            x *= 2
        s.append('<text x="%d" y="%d" text-anchor="middle" fill="#444">%s (log2 scale)</text>'
                 % (LEFT + pw // 2, bottom + 34, escape(x_name)))
        s.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>'
                 % (LEFT, top, pw, PANEL_H))
        # knee markers
        for mark, colour in ((parallelism, GREEN), (saturation, RED)):
            if mark:
                X = xpos(mark[0])
                s.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" '
                         'stroke-width="1.5" stroke-dasharray="6 4"/>'
                         % (X, top, X, bottom, colour))
        # the series
        for n, (key, colour, dashed, name) in enumerate(series):
            line = [(xpos(p["x"]), ypos(p[key]), p) for p in pts if p.get(key) is not None]
            if len(line) > 1:
                s.append('<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>'
                         % (colour, ' stroke-dasharray="5 3"' if dashed else "",
                            " ".join("%.1f,%.1f" % (a, b) for a, b, _ in line)))
            for a, b, p in line:
                fill = colour if p.get("evidence", True) else "white"
                s.append('<circle cx="%.1f" cy="%.1f" r="4" fill="%s" stroke="%s" '
                         'stroke-width="1.5"/>' % (a, b, fill, colour))
                if n == 0:
                    s.append('<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10" '
                             'fill="%s" stroke="white" stroke-width="3" paint-order="stroke">'
                             '%s</text>' % (a, b - 9, colour, fmt(p[key])))
            # legend, top left inside the panel
            lx, ly = LEFT + 10, top + 16 + 16 * n
            s.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>'
                     % (lx, ly - 4, lx + 22, ly - 4, colour,
                        ' stroke-dasharray="5 3"' if dashed else ""))
            s.append('<text x="%d" y="%d">%s</text>' % (lx + 28, ly, escape(name)))
        # marker labels at the foot of their lines, on the roomier side
        for n, (mark, colour) in enumerate(((parallelism, GREEN), (saturation, RED))):
            if mark:
                X = xpos(mark[0])
                right = X < LEFT + pw * 0.7
                s.append('<text x="%.1f" y="%d" text-anchor="%s" fill="%s" stroke="white" '
                         'stroke-width="3" paint-order="stroke">%s</text>'
                         % (X + (5 if right else -5), bottom - 8 - 16 * n,
                            "start" if right else "end", colour, escape(mark[1])))

    panel(TOP, [("iops", BLUE, False, "throughput (IOPS)")], "IOPS")
    panel(TOP + PANEL_H + GAP, [("p99_ms", RED, False, "service p99 (ms)"),
                                ("p95_ms", ORANGE, True, "service p95 (ms)")],
          "service time (ms)")
    if any(not p.get("evidence", True) for p in pts):
        s.append('<text x="%d" y="%d" fill="%s">hollow points: little evidence '
                 '(under 1%% of the time or 50 requests)</text>' % (LEFT, H - 8, GREY))
    s.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(s) + "\n")


def depths(r):
    lo, hi = r["depth_lo"], r["depth_hi"]
    return "%d" % lo if lo == hi else "%d-%d" % (lo, hi)


def main(argv):
    if len(argv) != 4 or argv[1] in ("-h", "--help"):
        print("usage: " + __doc__.strip().split("\n\n")[0], file=sys.stderr)
        return 0 if len(argv) > 1 and argv[1] in ("-h", "--help") else 2
    path, device, out = argv[1:]
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        print("curve-svg.py: cannot read %s: %s" % (path, e.strerror), file=sys.stderr)
        return 1
    docs = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            docs.append(json.loads(line))
        except ValueError:
            print("curve-svg.py: %s line %d is not JSON (truestat -j output expected)"
                  % (path, n), file=sys.stderr)
            return 1
    with_dev = [d for d in docs if any(x.get("device") == device for x in d.get("devices", []))]
    totals = [d for d in with_dev if d.get("type") == "totals"]
    if not with_dev:
        seen = sorted({x.get("device") for d in docs for x in d.get("devices", [])})
        print("curve-svg.py: no report of %s in %s (devices seen: %s)"
              % (device, path, " ".join(seen) or "none"), file=sys.stderr)
        return 1
    doc = (totals or with_dev)[-1]
    dev = next(x for x in doc["devices"] if x["device"] == device)
    curve = dev.get("depth_curve")
    if not curve:
        print("curve-svg.py: %s has no depth_curve in %s: run truestat with -D"
              % (device, path), file=sys.stderr)
        return 1
    pts = []
    for r in curve["rows"]:
        if r["iops"] is None or not r["mean_depth"]:
            continue
        pts.append({"x": r["mean_depth"], "label": depths(r), "iops": r["iops"],
                    "p99_ms": r["service_p99_ms"], "p95_ms": r["service_p95_ms"],
                    "evidence": r["evidence"]})
    if not pts:
        print("curve-svg.py: %s: no depth class with time and requests in %s"
              % (device, path), file=sys.stderr)
        return 1

    def mark(depth_str, what):
        for r in curve["rows"]:
            if depth_str is not None and depths(r) == depth_str and r["mean_depth"]:
                return (r["mean_depth"], "%s: depth %s" % (what, depth_str))
        return None

    par = mark(curve.get("parallelism_depths"), "parallelism"
               + (" (still growing)" if curve.get("still_growing") else ""))
    sat = mark(curve.get("saturation_depths"), "saturation")
    sub = "%s %s, %.1f s; points at each depth class's mean depth" % (
        "totals" if totals else "last report", doc.get("time", ""), doc.get("span_s", 0))
    try:
        plot(pts, out, "%s: parallelism curve (truestat -D)" % device, sub, par, sat,
             x_name="in-device depth at issue")
    except OSError as e:
        print("curve-svg.py: cannot write %s: %s" % (out, e.strerror), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
