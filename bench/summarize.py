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
    """IOPS from the pairs (bpf_stats off), BPF time from the cost runs."""
    traced = [r for r in runs if r["tracer"] == tool and r["tool"] == tool]
    base = {r["pair"]: r for r in runs if r["tracer"] == "none" and r["tool"] == tool}
    ratios = [r["iops"] / base[r["pair"]]["iops"] for r in traced if r["pair"] in base]
    cpu = [100.0 * r["ticks"] / hz / r["secs"] for r in traced if r["tracer"].startswith("truestat")]
    row = dict(tool=tool, n=len(ratios), base=med([b["iops"] for b in base.values()]),
               traced=med([r["iops"] for r in traced]), ratio=med(ratios),
               lo=min(ratios, default=float("nan")), hi=max(ratios, default=float("nan")),
               cpu=med(cpu))
    row.update(cost(runs, tool))
    return row


def cost(runs, tool):
    """Median BPF ns per I/O, programs run per I/O and ns per call, per program."""
    costed = [r for r in runs if r["tracer"] == tool and r["tool"] == "cost"
              and r["progs"] and r["ios"]]
    per_io = [sum(ns for _, ns, _ in r["progs"]) / r["ios"] for r in costed]
    # the sweep runs once per report, not per I/O: left out of runs and floor
    hot = [[(ns, cnt) for name, ns, cnt in r["progs"] if not name.endswith("sweep")]
           for r in costed]
    runs_per_io = [sum(cnt for _, cnt in h) / r["ios"] for h, r in zip(hot, costed)]
    per_call = [sum(ns for ns, _ in h) / max(1, sum(cnt for _, cnt in h)) for h in hot]
    calls = {}
    for r in costed:
        for name, ns, cnt in r["progs"]:
            if cnt:
                calls.setdefault(name, []).append(ns / cnt)
    return dict(per_io=med(per_io), runs_per_io=med(runs_per_io), per_call=med(per_call),
                calls={k: med(v) for k, v in calls.items()})


def per_io_by_round(runs, tool):
    """BPF ns per I/O of each cost run of @tool, by round (a run that read
    no BPF time, bpf_stats turned off meanwhile by someone else, left out)."""
    per_io = {r["pair"]: sum(ns for _, ns, _ in r["progs"]) / r["ios"] for r in runs
              if r["tracer"] == tool and r["tool"] == "cost" and r["progs"] and r["ios"]}
    return {k: v for k, v in per_io.items() if v > 0}


def against_base(runs, tools):
    """Each tracer's BPF ns per I/O over truestat-base's in the same round:
    runs seconds apart, so that the machine's slow and fast spells, which
    move a median over rounds by more than a change costs, cancel."""
    base = per_io_by_round(runs, "truestat-base")
    if not base:
        return
    print()
    print("BPF ns per I/O over truestat-base's, round by round (median, min-max, rounds):")
    for tool in tools:
        if tool == "truestat-base":
            continue
        mine = per_io_by_round(runs, tool)
        ratios = sorted(mine[k] / base[k] for k in mine if k in base)
        if ratios:
            print("  %-16s %.3f (%.3f-%.3f, %d)" % (tool, med(ratios), ratios[0],
                                                    ratios[-1], len(ratios)))
        calls = per_call_ratios(runs, tool)
        if calls:
            print("  %-16s per call: %s" % ("", ", ".join(
                "%s %.3f" % (k, med(v)) for k, v in sorted(calls.items()))))


def per_call_ratios(runs, tool):
    """Each program's ns per call over truestat-base's same-named one, by
    round: the programs run on every I/O (a thousand calls a run or more)."""
    def by_round(t):
        out = {}
        for r in runs:
            if r["tracer"] == t and r["tool"] == "cost":
                out[r["pair"]] = {n: ns / c for n, ns, c in r["progs"] if c >= 1000}
        return out
    base, mine, ratios = by_round("truestat-base"), by_round(tool), {}
    for k, progs in mine.items():
        for name, v in progs.items():
            if name in base.get(k, {}):
                ratios.setdefault(name, []).append(v / base[k][name])
    return ratios


# The most BPF time per I/O each may take, as a share of biolatency's
# (whole, floor included) in the same run: what a host at a million IOPS
# can leave running.
GOALS = {"truestat": 0.50, "truestat-light": 0.35}


def goal_cell(tool, vs, least):
    """The goal of @tool beside its share @vs of biolatency's, met or not,
    and @least, the share of a tracer that only reads the clock."""
    goal = GOALS.get(tool)
    if goal is None or vs != vs:
        return "-"
    return "at most %.2f: %s (%s)" % (goal, "met" if vs <= goal else "not met",
                                      fmt(least, ".2f"))


def fmt(x, spec):
    return "-" if x != x else format(x, spec)


def main():
    runs = parse(sys.argv[1])
    hz = int(sys.argv[2])
    rows = [summarize(runs, t, hz) for t in sys.argv[3:]]
    floor = cost(runs, "truestat-empty")["per_call"]
    clocked = cost(runs, "truestat-clock")["per_call"]
    ref = {r["tool"]: r for r in rows}.get("biolatency")
    print()
    print("| tracer | IOPS untraced | IOPS traced | traced/untraced (min-max) | CPU of its process |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %s | %s (%s-%s) | %s |" % (
            r["tool"], fmt(r["base"], ".0f"), fmt(r["traced"], ".0f"),
            fmt(r["ratio"], ".3f"), fmt(r["lo"], ".3f"), fmt(r["hi"], ".3f"),
            fmt(r["cpu"], ".2f") + "%" if r["cpu"] == r["cpu"] else "-"))
    print()
    print("BPF time (bpf_stats on). The floor: %s ns per program run, what bpf_stats"
          % fmt(floor, ".0f"))
    print("shows for truestat's programs emptied (trampoline and its own clock reads);")
    print("%s ns with one clock read each (truestat-clock): a clock read costs %s ns." % (
        fmt(clocked, ".0f"), fmt(clocked - floor, ".0f")))
    print("In brackets beside a goal: the least share of biolatency's that a tracer")
    print("with as many program runs per I/O, each reading the clock once, can show.")
    print()
    print("| tracer | BPF ns per I/O | program runs per I/O | above the floor | vs biolatency (above the floor) | goal (least possible) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if r["per_io"] != r["per_io"]:
            continue
        above = r["per_io"] - floor * r["runs_per_io"]
        r["above"] = above
        vs, share, least = "-", float("nan"), float("nan")
        if ref and ref.get("per_io") == ref.get("per_io"):
            ref_above = ref["per_io"] - floor * ref["runs_per_io"]
            share = r["per_io"] / ref["per_io"]
            least = clocked * r["runs_per_io"] / ref["per_io"]
            vs = "%.2f (%.2f)" % (share, above / ref_above)
        print("| %s | %s | %s | %s | %s | %s |" % (r["tool"], fmt(r["per_io"], ".0f"),
              fmt(r["runs_per_io"], ".2f"), fmt(above, ".0f"), vs,
              goal_cell(r["tool"], share, least)))
    print()
    print("BPF ns per call, by program (median over runs; programs that never ran left out):")
    for r in rows:
        if r["calls"]:
            parts = ", ".join("%s %.0f" % (k, v) for k, v in sorted(r["calls"].items()))
            print("  %-16s %s" % (r["tool"], parts))
    against_base(runs, sys.argv[3:])


if __name__ == "__main__":
    main()
