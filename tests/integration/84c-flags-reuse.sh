#!/usr/bin/env bash
# -F after a new disk took a gone disk's queue id, and so its slot: the new
# disk's flag classes count its own requests only, the gone disk's its own,
# in the totals of the span where the slot changed hands. As in
# 84-scrape-reuse.sh: loop A (a number no device has) is made and read
# 2,000 times, scraped (a read of the maps: the disk is seen), detached and
# removed through /dev/loop-control; loop B, made then, takes the queue id
# A gave back, is read 100 times and scraped. Then A is made again (another
# queue id: B holds A's first), read 300 times, scraped and removed, and
# loop C takes that queue id: the totals keep A's two gone lives as one
# row. truestat reports once a day (reuse_run): no report falls among the
# lives, by construction; the scrapes and the totals at SIGINT read them.
# (The first interval, which the checks read before, was measured from
# the empty start as the totals are: its B row was the totals' B row.)
# Checked against each disk's own /proc/diskstats:
#  - B's scrape after its life: requests + missed completions equal its
#    diskstats reads (udev's reads are in both; /metrics has no flag
#    classes);
#  - the totals: A's one row (both lives), B's and C's, each its own, by
#    the read "all" class + missed completions;
#  - the cases happened: B on A's first queue id and slot, C on A's second
#    (-v names each disk when a read first sees it), no report before
#    SIGINT; else the test fails saying so.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/faults.sh"
need python3 curl dd losetup

reuse_run -F

check_lines < <(py "
def reads(row):
    fl = row.get('flags', {}).get('read', {}).get('all', {}).get('ios', 0)
    return fl, row['ops'].get('read', {}).get('missed', 0)
t = totals('$out')
for name, d, want in (('old', 'loop$a', $LIVES_OLD), ('new', 'loop$b', $LIVES_NEW_AT_END),
                      ('third', 'loop$c', $LIVES_THIRD)):
    rows = [x for x in t['devices'] if x['device'] == d]
    fl, missed = reads(rows[0]) if len(rows) == 1 else (0, 0)
    print('totals_' + name, int(len(rows) != 1 or fl + missed != want),
          'the totals, %s (%s disk, %d rows): read all class %d + %d missed, its diskstats %d (exact)'
          % (d, name, len(rows), fl, missed, want))
    full = rows[0]['events'].get('flags_full', 0) if rows else 0
    print('flags_full_' + name, int(full != 0), '%s: flags_full %d' % (d, full))
")
finish
