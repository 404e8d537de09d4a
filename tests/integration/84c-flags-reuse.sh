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

make_tmp
out=$tmp/ts.json
interval=20
slot_reuse 3
a=$N_OLD b=$N_NEW c=$N_THIRD
port=$(free_port)
ts_start "$out" -F --prometheus="$port" "$interval"

# a read of the maps: the disk is seen (as a report would)
scrape() { curl -sf "http://127.0.0.1:$port/metrics" >/dev/null || true; }

loop_life "$a" 2000 >/dev/null
scrape
a1=$(loop_end "$a")
new=$(loop_life "$b" 100)
scrape
loop_life "$a" 300 >/dev/null
scrape
a2=$(loop_end "$a")
third=$(loop_life "$c" 50)
scrape
# all lives inside the first interval: no report written yet
early=$(wc -l <"$out")
wait_for "$TS_PID" $((interval + 15)) _lines_at_least "$out" 1 || true
new_at_report=$(diskstats "loop$b" | cut -d' ' -f1)
third_at_end=$(diskstats "loop$c" | cut -d' ' -f1)
ts_stop INT
check exit "$TS_RC" "SIGINT ends truestat with status $TS_RC"
check one_interval "$early" \
	"reports written before the lives were over: $early (0: they are all in the first interval)"

check_lines < <(py "
def reads(row):
    fl = row.get('flags', {}).get('read', {}).get('all', {}).get('ios', 0)
    return fl, row['ops'].get('read', {}).get('missed', 0)
ivs = [d for d in docs('$out') if d['type'] != 'totals']
row = tj.device(ivs[0], 'loop$b') if ivs else None
fl, missed = reads(row) if row else (0, 0)
print('interval_new', int(row is None or fl + missed != $new or $new != $new_at_report),
      'the first interval, loop$b: read all class %d + %d missed, its diskstats %d (%d at the report; exact)%s'
      % (fl, missed, $new, $new_at_report, '' if row else '; no row of it'))
t = totals('$out')
for name, d, want in (('old', 'loop$a', $a1 + $a2), ('new', 'loop$b', $new_at_report),
                      ('third', 'loop$c', $third_at_end)):
    rows = [x for x in t['devices'] if x['device'] == d]
    fl, missed = reads(rows[0]) if len(rows) == 1 else (0, 0)
    print('totals_' + name, int(len(rows) != 1 or fl + missed != want),
          'the totals, %s (%s disk, %d rows): read all class %d + %d missed, its diskstats %d (exact)'
          % (d, name, len(rows), fl, missed, want))
    full = rows[0]['events'].get('flags_full', 0) if rows else 0
    print('flags_full_' + name, int(full != 0), '%s: flags_full %d' % (d, full))
")
# the cases this is about: B on A's first queue id and slot, C on A's second
said_a1=$(slot_said "$out.err" "$a") said_a2=$(slot_said "$out.err" "$a" 2)
said_b=$(slot_said "$out.err" "$b") said_c=$(slot_said "$out.err" "$c")
check same_slot "$([[ -n $said_a1 && $said_a1 == "$said_b" ]]; echo $?)" \
	"loop$a and loop$b, queue id:slot as -v named them: ${said_a1:-none} and ${said_b:-none} (the same: the case happened)"
check same_slot_again "$([[ -n $said_a2 && $said_a2 == "$said_c" ]]; echo $?)" \
	"loop$a made again and loop$c: ${said_a2:-none} and ${said_c:-none} (the same: A's two lives are one gone row)"
finish
