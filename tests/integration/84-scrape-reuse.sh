#!/usr/bin/env bash
# A scrape of /metrics after a new disk took a gone disk's queue id, and so
# its slot, whose per-CPU counters go on from the old disk's: the new disk's
# series count its own I/O only. loop N (a number no device has) is made
# and read 2,000 times, scraped, then detached and removed through
# /dev/loop-control; loop N made again takes the queue id it gave back (the
# kernel hands out the lowest free one), is read 100 times and scraped at
# once. truestat reports once a day: only the scrapes read its maps until
# the totals at SIGINT. Checked against each disk's own /proc/diskstats:
#  - each scrape: requests + missed completions of loop N's reads equal its
#    diskstats (udev's reads of a new disk are in both), exactly;
#  - the totals: the gone disk's row and the new one's, each its own;
#  - the new disk took the old one's queue id and slot (truestat -v names
#    each disk when a scrape first sees it): else the case did not happen,
#    and the test fails saying so.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/faults.sh"
need python3 curl dd losetup

tmp=$(mktemp -d /tmp/truestat-test.XXXXXX)
on_exit "rm -rf $tmp"
file=$(mktemp /var/tmp/truestat-test.XXXXXX)
on_exit "rm -f '$file'"
truncate -s 16M "$file"
loop_numbers 1
n=$LOOP_NUMBERS
dev=loop$n
port=$(free_port)
ts_start "$tmp/ts.json" --prometheus="$port" 86400

# life READS: loop N made on the file and read READS times; its diskstats
# reads once udev has let go of it
life() {
	loop_ctl add "$n"
	losetup --direct-io=on "/dev/$dev" "$file"
	dd if="/dev/$dev" of=/dev/null bs=4k count="$1" iflag=direct status=none
	udevadm settle 2>/dev/null || sleep 0.5
	diskstats "$dev" | cut -d' ' -f1
}
scrape() { curl -sf "http://127.0.0.1:$port/metrics" >"$1" || true; }

old=$(life 2000)
scrape "$tmp/old.prom"
losetup -d "/dev/$dev"
loop_gone "$dev" || true
udevadm settle 2>/dev/null || sleep 0.5
old=$(diskstats "$dev" | cut -d' ' -f1)
loop_ctl remove "$n"
new=$(life 100)
scrape "$tmp/new.prom"
ts_stop INT
check exit "$TS_RC" "SIGINT ends truestat with status $TS_RC"

check_lines < <(py "
import re
def reads(path):
    got = {}
    for l in open(path):
        m = re.match(r'truestat_(requests|missed_completions)_total\{device=\"$dev\",layer=\"request\",op=\"read\"\} (\S+)', l)
        if m:
            got[m.group(1)] = float(m.group(2))
    return int(got.get('requests', 0) + got.get('missed_completions', 0)), bool(got)
for name, path, want in (('old', '$tmp/old.prom', $old), ('new', '$tmp/new.prom', $new)):
    got, seen = reads(path)
    print('scrape_' + name, int(not seen or got != want),
          'the %s $dev in its scrape: requests + missed %d, its diskstats %d (exact)%s'
          % (name, got, want, '' if seen else '; no series of it'))
rows = [x for x in totals('$tmp/ts.json')['devices'] if x['device'] == '$dev']
tot = sorted(x['ops'].get('read', {}).get('ios', 0) + x['ops'].get('read', {}).get('missed', 0) for x in rows)
print('totals', int(tot != sorted([$old, $new])),
      'the totals\' rows of $dev: reads + missed %s, diskstats of the two disks %s' % (tot, sorted([$old, $new])))
")
# the case this is about: the new disk on the old one's queue id, and so its
# slot (-v names each disk when a read, here a scrape, first sees it)
ids=$(sed -n "s/^truestat: tracing $dev (queue id \([0-9]*\)) in slot \([0-9]*\)$/\1:\2/p" "$tmp/ts.json.err" | paste -sd ' ')
read -r id_old id_new _ <<<"$ids $ids"
check same_slot "$([[ -n $ids && $id_old == "$id_new" && $ids == *" "* ]]; echo $?)" \
	"the two disks $dev (queue id:slot as -v named them): $ids (the same: the case happened)"
finish
