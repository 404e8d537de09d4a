# SPDX-License-Identifier: GPL-2.0
"""truestat's JSON lines (truestat -j) as scripts/ and tests/ read them.

doc/json.md describes the objects. Import it from the tree:
    sys.path.insert(0, '<tree>/scripts'); import truestat_json as tj
"""
import json

# the events that make a report's depth in the device not exact, and how a
# sentence says each (doc/json.md)
DEPTH_CAUSES = {
    'missed_completions': '%d completions unseen, each estimated',
    'unmatched_completions': '%d requests already in the device at attach',
    'rq_table_full': 'request table full %d times',
    'issues_unseen': '%d requests issued uncounted, now completed',
    'claim_races': '%d claim races',
    'contended_depth_updates': '%d contended depth updates',
    'depth_below_zero': 'depth below zero %d times',
    'unordered_depth_changes': '%d unordered depth changes',
}

# /proc/diskstats fields, 0-based after the name: each direction's
# completed I/Os and sectors (a flush has none)
DISKSTATS = {'read': (0, 2), 'write': (4, 6), 'discard': (11, 13),
             'flush': (15, None)}


def docs(path):
    """every object of a file of JSON lines, in order"""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def totals(path):
    """the one totals object of a run (an error unless there is one)"""
    found = [d for d in docs(path) if d['type'] == 'totals']
    assert len(found) == 1, 'expected one totals object'
    return found[0]


def last_totals(path):
    """the last totals object of a file, or None"""
    found = [d for d in docs(path) if d['type'] == 'totals']
    return found[-1] if found else None


def device(doc, name):
    """report @doc's row of device @name, or None"""
    return next((d for d in doc['devices'] if d['device'] == name), None)


def not_exact_why(events):
    """why a depth is not exact, in words, from a row's events"""
    why = [t % events[k] for k, t in DEPTH_CAUSES.items() if events.get(k)]
    return ', '.join(why) or 'a request too young to judge at the last sweep'


def against_diskstats(ops, before, after, max_sectors_kb):
    """Each direction with I/O in a row's @ops or in diskstats, held
    to the /proc/diskstats fields @before and @after (lists of ints; a
    field a kernel lacks counts 0): (op, truestat's ios + missed +
    unissued, diskstats' I/Os, truestat's bytes + missed_bytes, diskstats'
    bytes or None (a flush has none), slack). Equal but for the slack:
    an unissued request (completed without its issue seen) has no known
    size, at most @max_sectors_kb() KiB each, so diskstats' bytes may be
    above truestat's by up to that."""
    out = []
    for op, (i, s) in DISKSTATS.items():
        field = lambda x, k: x[k] if len(x) > k else 0
        n = field(after, i) - field(before, i)
        nbytes = None if s is None else (field(after, s) - field(before, s)) * 512
        o = ops.get(op)
        if not n and not nbytes and o is None:
            continue
        o = o or {}
        un = o.get('unissued', 0)
        out.append((op, o.get('ios', 0) + o.get('missed', 0) + un, n,
                    o.get('bytes', 0) + o.get('missed_bytes', 0), nbytes,
                    un * max_sectors_kb() * 1024 if un else 0))
    return out


def findings_of(doc, name):
    """report @doc's findings about device @name, most important first"""
    return [f for f in doc.get('findings', []) if f['device'] == name]


def findings_lines(doc, name, width=100):
    """truestat's findings about device @name in report @doc, as the table
    prints them, each sentence wrapped to @width and followed by the
    figures it rests on; one line when there is none (and why, when the
    report skipped the device)"""
    import textwrap
    out = []
    for f in findings_of(doc, name):
        head = ('cannot tell (%s): ' % f['id'] if f['severity'] == 'cannot_tell'
                else '%d. %s [%s]: ' % (f['rank'], f['id'], f['severity']))
        out += textwrap.wrap(head + f['sentence'], width, initial_indent='  ',
                             subsequent_indent='     ')
        figs = ', '.join('%s %.6g %s' % (x['name'], x['value'], x['unit']) for x in f['figures'])
        out += textwrap.wrap('figures: ' + figs, width, initial_indent='     ',
                             subsequent_indent='       ')
    if not out:
        why = [s['reason'] for s in doc.get('findings_skipped', []) if s['device'] == name]
        out.append('  none' + (' (%s)' % why[0] if why else ''))
    return out
