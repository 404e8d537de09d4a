#!/usr/bin/env bash
# --slow=0, a line per request, against /proc/diskstats and fio: a loop
# device over /dev/shm (no disk behind it: as fast as this machine goes),
# fio randread 4k, libaio iodepth 32, 2 jobs of a known --number_ios each.
# (a) The default ring: the lines of the device equal the totals' "logged";
# logged + dropped (ring full) == truestat's ios; ios + missed == the
# diskstats delta == fio's own count; every line's sector lies on the
# device. The rate reached is printed (a figure of this machine, not
# asserted). (b) --slow-buffer=4096 (42 records): lines are dropped, and
# counted: the same equations hold. (c) A bio-based device (zram0, traced
# at its own layer, Q -> C): the same equations, and every line carries
# its submitter (fio) and its sector. (d) Bad --slow-buffer: one line,
# exit 2.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3

tmp=$(mktemp -d /tmp/truestat-test.XXXXXX)
on_exit "rm -rf $tmp"
loop_new 256 /dev/shm
NIOS=40000 JOBS=2 # 4k blocks: 65536 on the device, each job reads distinct ones

# run NAME DEVICE TRUESTAT-ARGS...: fio on DEVICE under truestat --slow=0 ARGS
run() {
	local name=$1 dev=$2
	shift 2
	diskstats "$dev" >"$tmp/$name.ds0"
	ts_start "$tmp/$name.json" --slow=0 "$@" -d "$dev"
	# a bio layer's entry is claimed by its first event: one read first,
	# so that two CPUs' first bios cannot race the claim (claim_races)
	dd if="/dev/$dev" of=/dev/null bs=4k count=1 iflag=direct status=none
	fio --name="$name" --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
		--ioengine=libaio --iodepth=32 --numjobs=$JOBS --number_ios=$NIOS \
		--group_reporting --output-format=json --output="$tmp/$name.fio"
	diskstats "$dev" >"$tmp/$name.ds1"
	ts_stop INT
	check "${name}_exit" "$TS_RC" "truestat exit status $TS_RC"
}

# judge NAME DEVICE PYTHON: the equations of every run, then PYTHON
judge() {
	check_lines < <(py "
name, device = '$1', '$2'
out = docs('$tmp/$1.json')
lines = [x for x in out if x['type'] == 'slow' and x['device'] == device]
d = dev(totals('$tmp/$1.json'), device)
ios = sum(o['ios'] for o in d['ops'].values())
missed = sum(o['missed'] for o in d['ops'].values())
s = d['slow']
ds0, ds1 = ([int(v) for v in open('$tmp/%s.ds%d' % (name, i)).read().split()] for i in (0, 1))
delta = (ds1[0] - ds0[0]) + (ds1[4] - ds0[4])  # reads + writes completed
f = json.load(open('$tmp/$1.fio'))['jobs'][0]
fio_ios = f['read']['total_ios']
print(name + '_logged_lines', int(s['logged'] != len(lines)),
      '%d lines of %s, the totals say %d logged' % (len(lines), device, s['logged']))
print(name + '_logged_plus_dropped', int(s['logged'] + s['dropped'] != ios),
      'logged %d + dropped %d = %d, truestat ios %d' % (s['logged'], s['dropped'], s['logged'] + s['dropped'], ios))
print(name + '_missed', int(s['missed'] != missed or d['events']['slow_dropped'] != s['dropped']),
      'missed %d (ops: %d), dropped %d (events: %d)' % (s['missed'], missed, s['dropped'], d['events']['slow_dropped']))
print(name + '_vs_diskstats', int(ios + missed != delta),
      'ios %d + missed %d = %d, diskstats delta %d' % (ios, missed, ios + missed, delta))
print(name + '_vs_fio', int(delta != fio_ios + 1 or fio_ios != $JOBS * $NIOS),
      'diskstats delta %d, fio read %d (%d jobs x %d) + dd 1' % (delta, fio_ios, $JOBS, $NIOS))
size = int(open('/sys/block/%s/size' % device).read())
off = [x for x in lines if x['sector'] + x['bytes'] // 512 > size or x['bytes'] != 4096 or x['op'] != 'read']
print(name + '_on_device', int(bool(off) or not lines),
      '%d lines, each a 4096-byte read within the %d sectors: %s' % (len(lines), size, off[:1] or 'yes'))
who = [x for x in lines if x['comm'] not in ('fio', 'dd') or not x['pid']]
print(name + '_submitter', int(bool(who) or not lines),
      '%d lines, each of fio or dd, pid known: %s' % (len(lines), who[:1] or 'yes'))
spread = len(set(x['sector'] for x in lines))
print(name + '_sectors', int(spread < len(lines) // 2),
      '%d distinct sectors in %d lines of random reads' % (spread, len(lines)))
rt = f['job_runtime'] / 1e3 / $JOBS
print('# %s: fio %.0f IOPS (%d reads in %.2f s); %d logged, %.0f lines/s, %d dropped' %
      (name, fio_ios / rt, fio_ios, rt, s['logged'], s['logged'] / rt, s['dropped']))
$3")
}

run default "$LOOP"
judge default "$LOOP" ""
grep -q "reader: " "$tmp/default.json.err" && echo "  # $(grep -o 'reader: .*' "$tmp/default.json.err")"

run tiny "$LOOP" --slow-buffer=4096
judge tiny "$LOOP" "
print(name + '_dropped', int(not s['dropped']), '%d dropped with a 4096-byte ring buffer' % s['dropped'])
"
zram_new 256
run bio zram0
judge bio zram0 "
print(name + '_layer', int(d['layer'] != 'bio'), 'zram0 traced as layer %r (bio)' % d['layer'])
"
check_schema schema "$tmp/default.json" "$tmp/tiny.json" "$tmp/bio.json"

for v in 1000 4097 2G 16X abc ''; do
	rc=0
	err=$("$TRUESTAT" --slow=0 --slow-buffer="$v" 1 1 2>&1 >/dev/null) || rc=$?
	check "bad_buffer_${v:-empty}" "$([[ $rc == 2 && $(wc -l <<<"$err") == 1 && $err == *--slow-buffer* ]]; echo $?)" \
		"--slow-buffer='$v': exit $rc, $err"
done
finish
