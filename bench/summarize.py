#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarize bench/overhead.sh runs: one row per tracer, medians over pairs.

Input lines (tab-separated): tracer, paired-with, pair, fio IOPS, I/Os the
device completed, seconds, tracer CPU ticks, programs
("name:run_time_ns:run_cnt,..." or "-").
"""
import statistics
import sys


def parse(path):
    runs = []
    for line in open(path):
        tracer, tool, pair, iops, ios, secs, ticks, progs = line.rstrip("\n").split("\t")
        p = []
        if progs != "-":
            for item in progs.split(","):
                name, ns, cnt = item.rsplit(":", 2)
                p.append((name, int(ns), int(cnt)))
        runs.append(dict(tracer=tracer, tool=tool, pair=int(pair), iops=float(iops),
                         ios=int(ios), secs=float(secs), ticks=int(ticks), progs=p))
    return runs


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def summarize(runs, tool, hz):
    traced = [r for r in runs if r["tracer"] == tool]
    base = {r["pair"]: r for r in runs if r["tracer"] == "none" and r["tool"] == tool}
    ratios = [r["iops"] / base[r["pair"]]["iops"] for r in traced if r["pair"] in base]
    per_io = [sum(ns for _, ns, _ in r["progs"]) / r["ios"]
              for r in traced if r["progs"] and r["ios"]]
    calls = {}
    for r in traced:
        for name, ns, cnt in r["progs"]:
            if cnt:
                calls.setdefault(name, []).append(ns / cnt)
    cpu = [100.0 * r["ticks"] / hz / r["secs"] for r in traced if r["tracer"].startswith("truestat")]
    return dict(tool=tool, n=len(ratios), base=med([b["iops"] for b in base.values()]),
                traced=med([r["iops"] for r in traced]), ratio=med(ratios),
                lo=min(ratios, default=float("nan")), hi=max(ratios, default=float("nan")),
                per_io=med(per_io), calls={k: med(v) for k, v in calls.items()},
                cpu=med(cpu))


def fmt(x, spec):
    return "-" if x != x else format(x, spec)


def main():
    runs = parse(sys.argv[1])
    hz = int(sys.argv[2])
    rows = [summarize(runs, t, hz) for t in sys.argv[3:]]
    print()
    print("| tracer | IOPS untraced | IOPS traced | traced/untraced (min-max) | BPF ns per I/O | CPU of its process |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %s | %s (%s-%s) | %s | %s |" % (
            r["tool"], fmt(r["base"], ".0f"), fmt(r["traced"], ".0f"),
            fmt(r["ratio"], ".3f"), fmt(r["lo"], ".3f"), fmt(r["hi"], ".3f"),
            fmt(r["per_io"], ".0f"), fmt(r["cpu"], ".2f") + "%" if r["cpu"] == r["cpu"] else "-"))
    print()
    print("BPF ns per call, by program (median over runs; programs that never ran left out):")
    for r in rows:
        if r["calls"]:
            parts = ", ".join("%s %.0f" % (k, v) for k, v in sorted(r["calls"].items()))
            print("  %-16s %s" % (r["tool"], parts))


if __name__ == "__main__":
    main()
