"""The time a disk had a request in a span, from tests/tools/spans' lines.

Two spans per request: allocation..end (block_io_start .. block_io_done,
what /proc/diskstats' io_ticks and ms fields account) and issue..completion
(block_rq_issue .. block_rq_requeue or ending block_rq_complete: truestat's
time in the device). A span whose end no program saw (the platform loses
some completion tracepoint runs, and a full ring buffer loses any event)
ended between its last event and the request's next start, or the end of
the trace: the union is given as a range, [lo, hi], lo with such a span
taken as ending at once, hi as ending as late as it can.
"""

OPEN = {'S': 'ae', 'I': 'dc'}
CLOSE = {'E': ('ae',), 'Q': ('dc',), 'C': ('dc',)}


def read(path):
    """(events sorted by time, dropped): events as (ns, kind, request)."""
    events, dropped = [], None
    for line in open(path):
        f = line.split()
        if f[0] == '#':
            dropped = int(f[2])
        else:
            events.append((int(f[1]), f[0], f[2]))
    assert dropped is not None, 'spans ended without its "# dropped" line'
    events.sort()
    return events, dropped


def union(spans):
    """Total length of the union of (start, end) pairs."""
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(spans):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def unions(path):
    """{'ae': (lo, hi), 'dc': (lo, hi)} in ms, 'unended': {set: n},
    'ends': {set: n}, 'dropped': n."""
    events, dropped = read(path)
    end_ns = events[-1][0] if events else 0
    open_at = {'ae': {}, 'dc': {}}
    lo = {'ae': [], 'dc': []}
    hi = {'ae': [], 'dc': []}
    unended = {'ae': 0, 'dc': 0}
    ends = {'ae': 0, 'dc': 0}
    for ns, kind, rq in events:
        if kind in OPEN:
            s = OPEN[kind]
            if rq in open_at[s]:            # its end was never seen
                t = open_at[s].pop(rq)
                unended[s] += 1
                lo[s].append((t, t))
                hi[s].append((t, ns))
            open_at[s][rq] = ns
            continue
        for s in CLOSE.get(kind, ()):
            t = open_at[s].pop(rq, None)
            if t is None:
                continue                    # started before the trace
            ends[s] += 1
            lo[s].append((t, ns))
            hi[s].append((t, ns))
    for s in open_at:
        for rq, t in open_at[s].items():
            unended[s] += 1
            lo[s].append((t, t))
            hi[s].append((t, end_ns))
    return {'ae': (union(lo['ae']) / 1e6, union(hi['ae']) / 1e6),
            'dc': (union(lo['dc']) / 1e6, union(hi['dc']) / 1e6),
            'unended': unended, 'ends': ends, 'dropped': dropped}


def time_at_most(path, k, start_ns, end_ns):
    """ns of [start_ns, end_ns] in which at most k requests were between
    issue and completion (a span whose end was never seen taken as ending
    at once: the most such time there can have been)."""
    events, _ = read(path)
    open_at, steps = {}, []
    for ns, kind, rq in events:
        if kind == 'I':
            if rq in open_at:               # its end was never seen
                steps.remove((open_at[rq], 1))
            open_at[rq] = ns
            steps.append((ns, 1))
        elif kind in ('Q', 'C') and rq in open_at:
            steps.append((ns, -1))
            del open_at[rq]
    for rq, t in open_at.items():
        steps.remove((t, 1))
    steps.sort(key=lambda s: (s[0], s[1]))  # ends first: the depth at most
    total, depth, last = 0, 0, start_ns
    for ns, d in steps:
        ns = min(max(ns, start_ns), end_ns)
        if depth <= k:
            total += ns - last
        depth, last = depth + d, ns
    if depth <= k:
        total += end_ns - last
    return total


def lives(path):
    """Each request's issue..completion: [issue_ns, end_ns or None, rq], in
    order of issue (None: its end was never seen; 'hi' ends it at its
    request's next issue or the trace's end)."""
    events, _ = read(path)
    out, open_at = [], {}
    for ns, kind, rq in events:
        if kind == 'I':
            if rq in open_at:
                open_at[rq][1] = None       # its end was never seen
            life = [ns, None, rq]
            open_at[rq] = life
            out.append(life)
        elif kind in ('Q', 'C') and rq in open_at:
            open_at.pop(rq)[1] = ns
    return out


def depth_at_low(path, repairs, hi_for_unseen):
    """truestat's depth in the device rebuilt from spans' lines: each request
    counted from its issue to its completion, or, for a request in
    @repairs ((issue_ns, found_ns, rq) of truestat's repairs), to when
    truestat found it ended. For each repair, the ns of its window at
    depth 1..4 (a list of 4). A request whose end spans never saw ends at
    once, or (@hi_for_unseen) at its next issue or the trace's end."""
    ls = lives(path)
    by_rq = {}
    for life in ls:
        by_rq.setdefault(life[2], []).append(life)
    end = {}
    for issue, found, rq in repairs:    # the life whose issue is nearest
        cand = by_rq.get(rq, [])
        if cand:
            life = min(cand, key=lambda x: abs(x[0] - issue))
            end[id(life)] = found
    last = max([x[0] for x in ls] + [f for _, f, _ in repairs] or [0])
    steps = []
    for life in ls:
        e = end.get(id(life), life[1])
        if e is None:
            later = [x[0] for x in by_rq[life[2]] if x[0] > life[0]]
            e = (min(later) if later else last) if hi_for_unseen else life[0]
        steps.append((life[0], 1))
        steps.append((e, -1))
    steps.sort()
    times = [s[0] for s in steps]
    depth, d = [], 0
    for _, x in steps:
        d += x
        depth.append(d)
    import bisect
    out = []
    for issue, found, _ in repairs:
        low = [0] * 4
        i = bisect.bisect_right(times, issue)
        t, d = issue, depth[i - 1] if i else 0
        while i < len(times) and times[i] < found:
            if 1 <= d <= 4:
                low[d - 1] += times[i] - t
            t, d = times[i], depth[i]
            i += 1
        if 1 <= d <= 4:
            low[d - 1] += found - t
        out.append(low)
    return out


def end_gaps(path):
    """(sorted us, dropped): for each request's ending completion (C) the
    time to its block_io_done (E), where the kernel takes the end that
    /proc/diskstats' ms fields add (taken a little before E). A C whose E
    never came, or an E without its C, gives none."""
    events, dropped = read(path)
    at_c, gaps = {}, []
    for ns, kind, rq in events:
        if kind == 'C':
            at_c[rq] = ns
        elif kind == 'E' and rq in at_c:
            gaps.append((ns - at_c.pop(rq)) / 1e3)
        elif kind in ('S', 'I'):
            at_c.pop(rq, None)
    return sorted(gaps), dropped
