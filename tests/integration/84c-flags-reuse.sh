#!/usr/bin/env bash
# -F after a new disk took a gone disk's queue id, and so its slot: the new
# disk's flag classes count its own requests only, the gone disk's its own,
# in the totals and in the interval where the slot changed hands. As in
# 84-scrape-reuse.sh: loop A (a number no device has) is made and read
# 2,000 times, scraped (a read of the maps: the disk is seen), detached and
# removed through /dev/loop-control; loop B, made then, takes the queue id
# A gave back, is read 100 times and scraped. Then A is made again (another
# queue id: B holds A's first), read 300 times, scraped and removed, and
# loop C takes that queue id: the totals keep A's two gone lives as one
# row. All of it inside the first interval. Checked against each disk's
# own /proc/diskstats:
#  - the first interval: B's read "all" class + its missed completions
#    equal its diskstats reads (udev's reads are in both);
#  - the totals: A's one row (both lives), B's and C's, each its own;
#  - the cases happened: B on A's first queue id and slot, C on A's second
#    (-v names each disk when a read first sees it), all before the first
#    interval ended; else the test fails saying so.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/faults.sh"
need python3 curl dd losetup

reuse_run -F

check_lines < <(py "
def reads(row):
    fl = row.get('flags', {}).get('read', {}).get('all', {}).get('ios', 0)
    return fl, row['ops'].get('read', {}).get('missed', 0)
ivs = [d for d in docs('$out') if d['type'] != 'totals']
row = tj.device(ivs[0], 'loop$b') if ivs else None
fl, missed = reads(row) if row else (0, 0)
print('interval_new', int(row is None or fl + missed != $LIVES_NEW or $LIVES_NEW != $LIVES_NEW_AT_REPORT),
      'the first interval, loop$b: read all class %d + %d missed, its diskstats %d (%d at the report; exact)%s'
      % (fl, missed, $LIVES_NEW, $LIVES_NEW_AT_REPORT, '' if row else '; no row of it'))
t = totals('$out')
for name, d, want in (('old', 'loop$a', $LIVES_OLD), ('new', 'loop$b', $LIVES_NEW_AT_REPORT),
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
