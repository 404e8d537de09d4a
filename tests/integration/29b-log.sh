#!/usr/bin/env bash
# --slow=0, a line per request, against /proc/diskstats and fio: a loop
# device over /dev/shm (no disk behind it: as fast as this machine goes),
# fio randread 4k, libaio iodepth 32, 2 jobs of a known --number_ios each.
# (a) The default ring: the lines of the device equal the totals' "logged";
# logged + dropped (ring full) == truestat's ios; ios + missed == the
# diskstats delta == fio's own count; every line's sector lies on the
# device. The rate reached is printed (a figure of this machine, not
# asserted). (b) --slow-buffer=4096 (42 records): lines are dropped, and
# counted: the same equations hold. (c) Bad --slow-buffer: one line, exit 2.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3

tmp=$(mktemp -d /tmp/truestat-test.XXXXXX)
on_exit "rm -rf $tmp"
loop_new 256 /dev/shm
NIOS=40000 JOBS=2 # 4k blocks: 65536 on the device, each job reads distinct ones

# run NAME TRUESTAT-ARGS...: fio under truestat --slow=0 ARGS
run() {
	local name=$1
	shift
	diskstats "$LOOP" >"$tmp/$name.ds0"
	ts_start "$tmp/$name.json" --slow=0 "$@" -d "$LOOP"
	fio --name="$name" --filename="/dev/$LOOP" --direct=1 --rw=randread --bs=4k \
		--ioengine=libaio --iodepth=32 --numjobs=$JOBS --number_ios=$NIOS \
		--group_reporting --output-format=json --output="$tmp/$name.fio"
	diskstats "$LOOP" >"$tmp/$name.ds1"
	ts_stop INT
	check "${name}_exit" "$TS_RC" "truestat exit status $TS_RC"
}

# judge NAME PYTHON: the equations of every run, then PYTHON
judge() {
	check_lines < <(py "
name = '$1'
out = docs('$tmp/$1.json')
lines = [x for x in out if x['type'] == 'slow' and x['device'] == '$LOOP']
d = dev(totals('$tmp/$1.json'), '$LOOP')
ios = sum(o['ios'] for o in d['ops'].values())
missed = sum(o['missed'] for o in d['ops'].values())
s = d['slow']
ds0, ds1 = ([int(v) for v in open('$tmp/%s.ds%d' % (name, i)).read().split()] for i in (0, 1))
delta = (ds1[0] - ds0[0]) + (ds1[4] - ds0[4])  # reads + writes completed
f = json.load(open('$tmp/$1.fio'))['jobs'][0]
fio_ios = f['read']['total_ios']
print(name + '_logged_lines', int(s['logged'] != len(lines)),
      '%d lines of $LOOP, the totals say %d logged' % (len(lines), s['logged']))
print(name + '_logged_plus_dropped', int(s['logged'] + s['dropped'] != ios),
      'logged %d + dropped %d = %d, truestat ios %d' % (s['logged'], s['dropped'], s['logged'] + s['dropped'], ios))
print(name + '_missed', int(s['missed'] != missed or d['events']['slow_dropped'] != s['dropped']),
      'missed %d (ops: %d), dropped %d (events: %d)' % (s['missed'], missed, s['dropped'], d['events']['slow_dropped']))
print(name + '_vs_diskstats', int(ios + missed != delta),
      'ios %d + missed %d = %d, diskstats delta %d' % (ios, missed, ios + missed, delta))
print(name + '_vs_fio', int(delta != fio_ios or fio_ios != $JOBS * $NIOS),
      'diskstats delta %d, fio read %d (%d jobs x %d)' % (delta, fio_ios, $JOBS, $NIOS))
size = int(open('/sys/block/$LOOP/size').read())
off = [x for x in lines if x['sector'] + x['bytes'] // 512 > size or x['bytes'] != 4096 or x['op'] != 'read']
print(name + '_on_device', int(bool(off) or not lines),
      '%d lines, each a 4096-byte read within the %d sectors: %s' % (len(lines), size, off[:1] or 'yes'))
rt = f['job_runtime'] / 1e3 / $JOBS
print('# %s: fio %.0f IOPS (%d reads in %.2f s); %d logged, %.0f lines/s, %d dropped' %
      (name, fio_ios / rt, fio_ios, rt, s['logged'], s['logged'] / rt, s['dropped']))
$2")
}

run default
judge default ""
grep -q "reader: " "$tmp/default.json.err" && echo "  # $(grep -o 'reader: .*' "$tmp/default.json.err")"

run tiny --slow-buffer=4096
judge tiny "
print(name + '_dropped', int(not s['dropped']), '%d dropped with a 4096-byte ring buffer' % s['dropped'])
"
check_schema schema "$tmp/default.json" "$tmp/tiny.json"

for v in 1000 4097 2G 16X abc ''; do
	rc=0
	err=$("$TRUESTAT" --slow=0 --slow-buffer="$v" 1 1 2>&1 >/dev/null) || rc=$?
	check "bad_buffer_${v:-empty}" "$([[ $rc == 2 && $(wc -l <<<"$err") == 1 && $err == *--slow-buffer* ]]; echo $?)" \
		"--slow-buffer='$v': exit $rc, $err"
done
finish
