#!/usr/bin/env bash
# --by=process after a new disk took a gone disk's queue id, and so its
# slot: the new disk's submitter rows count its own requests only, the gone
# disk's its own, in the totals and in a scrape just after the slot changed
# hands. As in 84c-flags-reuse.sh: loop A (a number no device has) is made
# and read 2,000 times, scraped (a read of the maps: the disk is seen),
# detached and removed through /dev/loop-control; loop B, made then, takes
# the queue id A gave back, is read 100 times and scraped. Then A is made
# again (another queue id: B holds A's first), read 300 times, scraped and
# removed, and loop C takes that queue id: the totals keep A's two gone
# lives as one row. truestat reports once a day (reuse_run): no report
# falls among the lives, by construction; the scrapes and the totals at
# SIGINT read them. Checked against each disk's own /proc/diskstats:
#  - B's scrape after its life: its submitter series' reads
#    (truestat_by_requests_total) + its missed completions equal its
#    diskstats reads (udev's reads are in both); and its plain
#    requests + missed (reuse_run's scrape_new);
#  - the totals: A's one row (both lives), B's and C's, each its own;
#  - the cases happened: B on A's first queue id and slot, C on A's second
#    (-v names each disk when a read first sees it), no report before
#    SIGINT; else the test fails saying so.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/faults.sh"
need python3 curl dd losetup

reuse_run --by=process --top=1000

check_lines < <(py "
def reads(row):
    rows = [r for r in row.get('by', {}).get('rows', []) if r['op'] == 'read']
    return sum(r['ios'] for r in rows), sum(r['missed'] for r in rows), len(rows)
m = scrape('$out.new.prom')
lab = '{device=\"loop$b\",layer=\"request\",op=\"read\"'
by = [v for k, v in m.items() if k.startswith('truestat_by_requests_total' + lab + ',process=')]
missed = m.get('truestat_missed_completions_total' + lab + '}', 0)
print('scrape_by_new', int(not by or int(sum(by) + missed) != $LIVES_NEW),
      'loop$b in the scrape after its life (the slot just handed over): %d submitter series, reads %d + %d missed, its diskstats %d (exact)'
      % (len(by), sum(by), missed, $LIVES_NEW))
t = totals('$out')
for name, d, want in (('old', 'loop$a', $LIVES_OLD), ('new', 'loop$b', $LIVES_NEW_AT_END),
                      ('third', 'loop$c', $LIVES_THIRD)):
    rows = [x for x in t['devices'] if x['device'] == d]
    ios, missed, n = reads(rows[0]) if len(rows) == 1 else (0, 0, 0)
    print('totals_' + name, int(len(rows) != 1 or ios + missed != want),
          'the totals, %s (%s disk, %d rows, %d submitter rows): reads %d + %d missed, its diskstats %d (exact)'
          % (d, name, len(rows), n, ios, missed, want))
    full = rows[0]['by']['not_attributed'] if rows else 0
    print('not_attributed_' + name, int(full != 0), '%s: not_attributed %d' % (d, full))
")
finish
