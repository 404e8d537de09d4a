#!/usr/bin/env bash
# A scrape of /metrics after a new disk took a gone disk's queue id, and so
# its slot, whose per-CPU counters go on from the old disk's: the new disk's
# series count its own I/O only. loop N (a number no device has) is made
# and read 2,000 times, scraped, then detached and removed through
# /dev/loop-control; loop N+1, made then, takes the queue id N gave back
# (the kernel hands out the lowest free one), is read 100 times and
# scraped at once. (The same number made again can get the same request
# queue back, at the same address: that is the same disk to truestat, see
# doc/building.md.) truestat reports once a day: only the scrapes read its
# maps until the totals at SIGINT. Checked against each disk's own
# /proc/diskstats:
#  - each scrape: requests + missed completions of the disk's reads equal
#    its diskstats (udev's reads of a new disk are in both), exactly;
#  - the totals: the gone disk's row and the new one's, each its own;
#  - the new disk took the old one's queue id and slot (truestat -v names
#    each disk when a scrape first sees it): else the case did not happen,
#    and the test fails saying so.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/faults.sh"
need python3 curl dd losetup

make_tmp
slot_reuse
n_old=$N_OLD n_new=$N_NEW
port=$(free_port)
ts_start "$tmp/ts.json" --prometheus="$port" 86400

scrape() { curl -sf "http://127.0.0.1:$port/metrics" >"$1" || true; }

old=$(loop_life "$n_old" 2000)
scrape "$tmp/old.prom"
old=$(loop_end "$n_old")
new=$(loop_life "$n_new" 100)
scrape "$tmp/new.prom"
ts_stop INT
check exit "$TS_RC" "SIGINT ends truestat with status $TS_RC"

check_lines < <(py "
import re
def reads(path, dev):
    got = {}
    for l in open(path):
        m = re.match(r'truestat_(requests|missed_completions)_total\{device=\"%s\",layer=\"request\",op=\"read\"\} (\S+)' % dev, l)
        if m:
            got[m.group(1)] = float(m.group(2))
    return int(got.get('requests', 0) + got.get('missed_completions', 0)), bool(got)
for name, dev, path, want in (('old', 'loop$n_old', '$tmp/old.prom', $old), ('new', 'loop$n_new', '$tmp/new.prom', $new)):
    got, seen = reads(path, dev)
    print('scrape_' + name, int(not seen or got != want),
          'the %s disk, %s, in its scrape: requests + missed %d, its diskstats %d (exact)%s'
          % (name, dev, got, want, '' if seen else '; no series of it'))
t = totals('$tmp/ts.json')['devices']
tot = [sum(x['ops'].get('read', {}).get('ios', 0) + x['ops'].get('read', {}).get('missed', 0)
           for x in t if x['device'] == d) for d in ('loop$n_old', 'loop$n_new')]
print('totals', int(tot != [$old, $new]),
      'the totals\' rows of loop$n_old and loop$n_new: reads + missed %s, their diskstats %s' % (tot, [$old, $new]))
")
# the case this is about: the new disk on the old one's queue id, and so its
# slot (-v names each disk when a read, here a scrape, first sees it)
id_old=$(slot_said "$tmp/ts.json.err" "$n_old")
id_new=$(slot_said "$tmp/ts.json.err" "$n_new")
check same_slot "$([[ -n $id_old && $id_old == "$id_new" ]]; echo $?)" \
	"loop$n_old and loop$n_new, queue id:slot as -v named them: ${id_old:-none} and ${id_new:-none} (the same: the case happened)"
finish
