#!/usr/bin/env bash
# -F after a new disk took a gone disk's queue id, and so its slot: the new
# disk's flag classes count its own requests only, the gone disk's its own,
# in the totals and in the interval where the slot changed hands. As in
# 84-scrape-reuse.sh: loop N (a number no device has) is made and read
# 2,000 times, scraped (a read of the maps: the disk is seen), detached and
# removed through /dev/loop-control; loop N+1, made then, takes the queue
# id N gave back, is read 100 times and scraped; all of it inside the first
# interval. Checked against each disk's own /proc/diskstats:
#  - the first interval: the new disk's read "all" class + its missed
#    completions equal its diskstats reads (udev's reads are in both);
#  - the totals: the gone disk's row and the new one's, each its own;
#  - the case happened: the new disk took the old one's queue id and slot
#    (-v names each disk when a read first sees it), and both lives came
#    before the first interval ended; else the test fails saying so.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/faults.sh"
need python3 curl dd losetup

make_tmp
out=$tmp/ts.json
interval=20
slot_reuse
n_old=$N_OLD n_new=$N_NEW
port=$(free_port)
ts_start "$out" -F --prometheus="$port" "$interval"

# a read of the maps: the disk is seen (as a report would)
scrape() { curl -sf "http://127.0.0.1:$port/metrics" >/dev/null || true; }

loop_life "$n_old" 2000 >/dev/null
scrape
old=$(loop_end "$n_old")
new=$(loop_life "$n_new" 100)
scrape
# both lives inside the first interval: no report written yet
early=$(wc -l <"$out")
wait_for "$TS_PID" $((interval + 15)) _lines_at_least "$out" 1 || true
new_at_report=$(diskstats "loop$n_new" | cut -d' ' -f1)
ts_stop INT
check exit "$TS_RC" "SIGINT ends truestat with status $TS_RC"
check one_interval "$early" \
	"reports written before the reuse was over: $early (0: the old disk, its removal and the new disk are in the first interval)"

check_lines < <(py "
def reads(row):
    fl = row.get('flags', {}).get('read', {}).get('all', {}).get('ios', 0)
    return fl, row['ops'].get('read', {}).get('missed', 0)
ivs = [d for d in docs('$out') if d['type'] != 'totals']
row = tj.device(ivs[0], 'loop$n_new') if ivs else None
fl, missed = reads(row) if row else (0, 0)
print('interval_new', int(row is None or fl + missed != $new or $new != $new_at_report),
      'the first interval, loop$n_new: read all class %d + %d missed, its diskstats %d (%d at the report; exact)%s'
      % (fl, missed, $new, $new_at_report, '' if row else '; no row of it'))
t = totals('$out')
for name, d, want in (('old', 'loop$n_old', $old), ('new', 'loop$n_new', $new_at_report)):
    rows = [x for x in t['devices'] if x['device'] == d]
    fl, missed = reads(rows[0]) if len(rows) == 1 else (0, 0)
    print('totals_' + name, int(len(rows) != 1 or fl + missed != want),
          'the totals, %s (%s disk, %d rows): read all class %d + %d missed, its diskstats %d (exact)'
          % (d, name, len(rows), fl, missed, want))
    full = rows[0]['events'].get('flags_full', 0) if rows else 0
    print('flags_full_' + name, int(full != 0), '%s: flags_full %d' % (d, full))
")
# the case this is about: the new disk on the old one's queue id and slot
id_old=$(slot_said "$out.err" "$n_old") id_new=$(slot_said "$out.err" "$n_new")
check same_slot "$([[ -n $id_old && $id_old == "$id_new" ]]; echo $?)" \
	"loop$n_old and loop$n_new, queue id:slot as -v named them: ${id_old:-none} and ${id_new:-none} (the same: the case happened)"
finish
