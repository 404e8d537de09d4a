#!/usr/bin/env bash
# Records a gone disk leaves behind are not the next disk's. A request whose
# completion truestat did not see keeps its record until the sweep finds it
# ended (or its address is issued again); if its disk goes meanwhile and a
# new disk takes its request-queue id (the lowest free one: a loop device
# removed and another added, a USB disk plugged back), the record names
# the new disk's slot. It must be dropped as the old disk's
# (events.stale_records), never repaired as a request of the new disk: that
# would take the new disk's depth below what it holds.
# Disk A (a loop number no device has) is added, read at depth 16 with one
# completion in 2 of A's ignored on purpose (TRUESTAT_TEST_MISS_EVERY with
# TRUESTAT_TEST_MISS_DEV), detached and removed; disk B (the next free
# number) is added, taking A's queue id, and written at depth 16 with every
# completion seen. truestat reports once a day (as 84-scrape-reuse.sh): no
# report can fall in between, and only two scrapes of /metrics read its
# maps before the totals at SIGINT: one after A's first read (A seen, -v
# names its queue id and slot), one after B's writes (its sweep finds A's
# last unseen requests only after B took the slot; -v names B). Checked
# against /proc/diskstats:
#  - setup: B took A's queue id and slot (truestat -v's lines), and no
#    report was written before SIGINT (a day's interval: by construction);
#  - B named: B's writes are in B's row only. The allocator often gives B
#    A's request queue back at the same address (about one run in three
#    here): then only the device number tells B from A;
#  - stale: the rows count stale_records > 0 (A left some);
#  - B's depth: never below 0 (depth_below_zero 0) and 0 at the end, in
#    the device and in the OS: none of A's records came off B's depth (the
#    row's exact flag cannot tell: it holds A's missed completions too);
#  - shared: B's row says it may hold another disk's counts (A read for
#    a second after the last read of the maps, by construction);
#  - counts: over the totals' rows of both numbers (a disk that came and
#    went between two reports is counted in the next one's row, see
#    doc/building.md), reads + missed + stale_records equal A's and B's
#    reads in diskstats, writes + missed B's writes, exactly: each record
#    dropped was one of A's requests, counted once.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/faults.sh"
need fio python3 losetup curl

make_tmp
out=$tmp/ts.json
file=$(mktemp /var/tmp/truestat-test.XXXXXX)
on_exit "rm -f '$file'"
truncate -s 64M "$file"
# two numbers no loop device has, made and removed by this test only
loop_numbers 2
read -r na nb <<<"$LOOP_NUMBERS"
a=loop$na b=loop$nb
io() { # DEV RW: 1 s of 4 KiB random I/O at depth 16
	fio --name=gone --filename="/dev/$1" --direct=1 --rw="$2" --bs=4k \
		--ioengine=libaio --iodepth=16 --runtime=1 --time_based \
		--output=/dev/null
}
devt() { IFS=: read -r maj min <"/sys/block/$1/dev" && echo $(((maj << 20) | min)); }

loop_ctl add "$na" # A's new queue takes the lowest free id
losetup --direct-io=on "/dev/$a" "$file"
settle
mm_a=$(cat "/sys/block/$a/dev")
ds_a0=$(diskstats "$a") # udev's reads of the new disk, before tracing
# a report a day: none falls between A's reads and B's writes, whatever
# the host's speed; the scrapes below are the only reads of the maps
port=$(free_port)
TRUESTAT_TEST_MISS_EVERY=2 TRUESTAT_TEST_MISS_DEV=$(devt "$a") \
	ts_start "$out" --prometheus="$port" 86400
wait_serving "http://127.0.0.1:$port" || true
scrape() { curl -sf "http://127.0.0.1:$port/metrics" >"$1" || true; }
# one read and a scrape, so that truestat sees A (-v names its queue id
# and slot) before its records are left behind
dd if="/dev/$a" of=/dev/null bs=4k count=1 iflag=direct status=none
scrape "$tmp/a.prom"
io "$a" randread
losetup -d "/dev/$a"
loop_gone "$a" || true
settle
ds_a=$(diskstats "$a")
loop_ctl remove "$na" # the id is free once udev let go
settle
loop_ctl add "$nb"
losetup --direct-io=on "/dev/$b" "$file"
settle
mm_b=$(cat "/sys/block/$b/dev")
io "$b" randwrite
# the next read of the maps (its sweep finds A's records with B in the slot)
scrape "$tmp/b.prom"
ds_b=$(diskstats "$b")
early=$(wc -l <"$out") # reports before SIGINT: none, the interval is a day
ts_stop INT
check exit "$TS_RC" "exit status $TS_RC at SIGINT"

said() { sed -n "s/^truestat: tracing $1 (queue id \([0-9]*\)) in slot \([0-9]*\)$/\1 \2/p" "$out.err" | head -1; }
sa=$(said "$a") sb=$(said "$b")
check setup "$([[ -n $sa && $sa == "$sb" && $early == 0 ]]; echo $?)" \
	"A ($a) queue id and slot '${sa:-none said}', B ($b) '${sb:-none said}' (the same, as -v named them at the scrapes); reports before SIGINT: $early (0: a report a day, none between A's reads and B's writes by construction)"

check_lines < <(py "$COUNTS_PY
rows = [x for x in totals('$out')['devices'] if '%d:%d' % (x['major'], x['minor']) in ('$mm_a', '$mm_b')]
s = add_rows(rows)
stale = s['events'].get('stale_records', 0)
print('stale', int(stale <= 0), '%d rows, stale_records %d (> 0: records A left, found after B took the slot)' % (len(rows), stale))
wb = [x for x in rows if x['ops'].get('write', {}).get('ios')]
print('b_named', int([x['device'] for x in wb] != ['$b']),
      'the rows with writes: %s (B, $b, only: a disk that got a gone one\'s queue back is still its own disk)'
      % ([x['device'] for x in wb] or 'none'))
for x in wb:
    c, o = x['concurrency'], x['os_queue']
    print('b_depth', int(x['events']['depth_below_zero'] != 0 or c['now'] != 0 or (o or {}).get('now', 0) != 0),
          '%s: depth_below_zero %d, at the end %s in the device and %s in the OS (0, 0 and 0)'
          % (x['device'], x['events']['depth_below_zero'], c['now'], (o or {}).get('now')))
if not wb:
    print('b_depth 1 no row with B\\'s writes')
# A read for a second after the last read of the maps before B took its
# slot, so A's last reads are in B's row, and the row says so
print('b_shared', int(not wb or not all(x['counts_shared'] for x in wb)),
      'B\\'s row may hold A\\'s counts (A read after the last read of the maps): counts_shared %s'
      % [x['counts_shared'] for x in wb])
A = [int(v) - int(v0) for v, v0 in zip('$ds_a'.split(), '$ds_a0'.split())]
B = [int(v) for v in '$ds_b'.split()]
r, w = s['ops'].get('read', {}), s['ops'].get('write', {})
got = r.get('ios', 0) + r.get('missed', 0) + stale
print('reads', int(got != A[0] + B[0]), 'reads %d + %d missed + %d stale = %d; diskstats A %d + B %d (exact)'
      % (r.get('ios', 0), r.get('missed', 0), stale, got, A[0], B[0]))
got = w.get('ios', 0) + w.get('missed', 0)
print('writes', int(got != A[4] + B[4]), 'writes %d + %d missed = %d; diskstats A %d + B %d (exact)'
      % (w.get('ios', 0), w.get('missed', 0), got, A[4], B[4]))
")
finish
