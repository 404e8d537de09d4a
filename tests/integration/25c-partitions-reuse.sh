#!/usr/bin/env bash
# -p after a new disk took a gone disk's queue id, and so its slot: the
# new disk's partition rows count its own I/O only, not the gone disk's
# (its partition table is keyed by the slot's claim too). A file with two
# partitions: loop N (a number no device has) is made on it with its
# partitions and its p1 read for 5 s (more than one 4 s interval, so that a
# report sees it and -v names it), then detached and removed through
# /dev/loop-control; loop N+1, made then on the same file, takes the queue
# id N gave back (the kernel hands out the lowest free one), and its p1 is
# read 300 times. Checked against each partition's own /proc/diskstats
# line, exactly (requests + missed completions; udev's reads of a new disk
# are in both):
#  - the totals: the new disk's p1 row, and the gone disk's p1 row;
#  - the intervals: the new disk's p1 rows summed (the interval where the
#    new disk came holds the gone disk's last reads, unless a report fell
#    between them);
#  - no row says it is not complete (partition_table_full is 0);
#  - the new disk took the old one's queue id and slot (-v names each disk
#    when a report first sees it): else the case did not happen, and the
#    test fails saying so;
#  - a full table (below): the rows say they are not complete.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/faults.sh"
need python3 dd losetup sfdisk

make_tmp
file=$(mktemp /var/tmp/truestat-test.XXXXXX)
on_exit "rm -f '$file'"
truncate -s 16M "$file"
# sectors: p1 2048-10239, p2 12288-20479
printf 'label: dos\nstart=2048, size=8192, type=83\nstart=12288, size=8192, type=83\n' |
	sfdisk -q "$file" >/dev/null
loop_numbers 2
read -r n_old n_new <<<"$LOOP_NUMBERS"
ts_start "$tmp/ts.json" -p 4

# made N: loop N on the file with its partitions, once p1 is there
made() {
	loop_ctl add "$1"
	losetup -P --direct-io=on "/dev/loop$1" "$file"
	partx -u "/dev/loop$1" 2>/dev/null || true # the re-read does not always add them
	wait_for "" "$START_GUARD" test -b "/dev/loop$1p1" ||
		die 1 "loop$1p1: no device node $START_GUARD s after losetup -P"
	settle
}
# p1_reads N: the reads in loop N's p1 diskstats line
p1_reads() { diskstats "loop$1p1" | cut -d' ' -f1; }

made "$n_old"
end=$((SECONDS + 5))
while ((SECONDS < end)); do
	dd if="/dev/loop${n_old}p1" of=/dev/null bs=4k count=256 iflag=direct status=none
done
settle
old=$(p1_reads "$n_old")
losetup -d "/dev/loop$n_old"
loop_gone "loop$n_old" || true
settle
loop_ctl remove "$n_old"
made "$n_new"
dd if="/dev/loop${n_new}p1" of=/dev/null bs=4k count=300 iflag=direct status=none
settle
new=$(p1_reads "$n_new")
ts_reports_after "$tmp/ts.json"
ts_stop INT
check exit "$TS_RC" "SIGINT ends truestat with status $TS_RC"

check_lines < <(py "
def p1(row):
    # (reads + missed, complete) of row's partition 1, or None
    p = [x for x in (row or {}).get('partitions', []) if x['partno'] == 1]
    if not p:
        return None
    r = p[0]['ops'].get('read', {})
    return r.get('ios', 0) + r.get('missed', 0), p[0]['complete']
t = totals('$tmp/ts.json')
for name, dev, want in (('new', 'loop$n_new', $new), ('old', 'loop$n_old', $old)):
    got = p1(tj.device(t, dev))
    print('totals_' + name, int(got != (want, True)),
          'the totals: %sp1 reads + missed, complete: %s; its diskstats %d (exact)' % (dev, got, want))
rows = [p1(tj.device(d, 'loop$n_new')) for d in docs('$tmp/ts.json') if d['type'] != 'totals']
rows = [x for x in rows if x]
got = sum(x[0] for x in rows)
print('intervals_new', int(got != $new or not all(x[1] for x in rows)),
      'the intervals: loop${n_new}p1 reads + missed summed over %d: %d, all complete: %s; its diskstats %d (exact)'
      % (len(rows), got, all(x[1] for x in rows), $new))
")
# the case this is about: the new disk on the old one's queue id, and so its
# slot (-v names each disk when a report first sees it)
said() { sed -n "s/^truestat: tracing loop$1 (queue id \([0-9]*\)) in slot \([0-9]*\)$/\1:\2/p" "$tmp/ts.json.err"; }
id_old=$(said "$n_old") id_new=$(said "$n_new")
check same_slot "$([[ -n $id_old && $id_old == "$id_new" ]]; echo $?)" \
	"loop$n_old and loop$n_new, queue id:slot as -v named them: ${id_old:-none} and ${id_new:-none} (the same: the case happened)"
check_schema schema "$tmp/ts.json"

# A full table: a row short of requests says so. The table shrunk to one
# entry (TRUESTAT_TEST_PART_SLOTS=1), the new disk's p1 read first (it
# takes the entry), then p2: p2's reads are counted in
# partition_table_full, exactly its diskstats reads; p1's row still equals
# its own line, and it, as every row of the disk in that span, says it is
# not complete: "complete": false in the JSON, a NOT COMPLETE note under
# it in the table.
: >"$tmp/full.err"
TRUESTAT_TEST_PART_SLOTS=1 TRUESTAT_TEST_JSON="$tmp/full.json" \
	"$TRUESTAT" -v -p -d "loop$n_new" 60 >"$tmp/full.txt" 2>"$tmp/full.err" &
TS_PID=$!
on_exit "kill -9 $TS_PID"
wait_for "$TS_PID" "$START_GUARD" grep -q "attached with" "$tmp/full.err"
b1=$(p1_reads "$n_new") b2=$(diskstats "loop${n_new}p2" | cut -d' ' -f1)
dd if="/dev/loop${n_new}p1" of=/dev/null bs=4k count=200 iflag=direct status=none
dd if="/dev/loop${n_new}p2" of=/dev/null bs=4k count=100 iflag=direct status=none
a1=$(p1_reads "$n_new") a2=$(diskstats "loop${n_new}p2" | cut -d' ' -f1)
ts_stop INT
check full_exit "$TS_RC" "SIGINT ends truestat with status $TS_RC"
check_lines < <(py "
t = totals('$tmp/full.json')
d = tj.device(t, 'loop$n_new') or {'events': {}}
full = d['events'].get('partition_table_full')
print('full_counted', int(full != $a2 - $b2),
      'partition_table_full %s: loop${n_new}p2 reads, its diskstats %d (exact)' % (full, $a2 - $b2))
rows = {p['partno']: p for p in d.get('partitions', [])}
r = rows.get(1, {}).get('ops', {}).get('read', {})
got = r.get('ios', 0) + r.get('missed', 0)
print('full_p1', int(got != $a1 - $b1), 'loop${n_new}p1 reads + missed %d, its diskstats %d (exact)' % (got, $a1 - $b1))
print('full_marked', int(not rows or any(p['complete'] for p in rows.values())),
      'rows %s, complete: %s' % (sorted(rows), [p['complete'] for p in rows.values()]))
")
check_cmd full_note "the table: $(grep -m1 "NOT COMPLETE" "$tmp/full.txt" || echo no note)" \
	grep -q "note: loop${n_new}p1: NOT COMPLETE" "$tmp/full.txt"
check_schema full_schema "$tmp/full.json"
finish
