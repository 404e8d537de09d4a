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
