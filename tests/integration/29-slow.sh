#!/usr/bin/env bash
# --slow=MS against the simulated disk's own log. Every 10th request the
# disk serves (by its arrival order) takes 50 ms more than the 1 ms the
# others take; 4 fio readers, run in a cgroup v2 of their own. truestat
# --slow=25: each slow request the daemon logged is printed once (matched
# by offset: the loop device maps sector s to byte 512 s of the disk),
# less at most the completions it counted missed; each printed line is at
# least 25 ms, holds the daemon's A..R (service >= R - A), its size, a
# depth of at most the 4 readers (plus the completions counted missed),
# fio's process and the test's cgroup; and none is printed where fio's own
# latency log (which holds Q -> C) saw no read of 25 ms.
# Then a 4096-byte ring buffer: printed + dropped (slow_dropped) equals
# the daemon's slow requests, less at most the missed (its reader drains
# it as it fills: at 2000 a second it may drop none; 29b-log.sh makes one
# drop at the loop device's full rate). Buffered writes: the flusher's. Bad values of --slow: one line,
# exit 2.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
need fio python3 fusermount3

cgroup_new slow
cg=$CG
make_tmp

SIMDISK_SLOW=10:50000 simdisk_up 16 1000 64

# run NAME JOBS FIO-ARGS...: fio in the cgroup, under truestat --slow=25
run() {
	local name=$1 jobs=$2
	shift 2
	simdisk_mark
	ts_start "$tmp/$name.json" --slow=25 -d "$SIMDISK_LOOP" 1
	cgroup_exec "$cg" fio --name="$name" --filename="/dev/$SIMDISK_LOOP" --direct=1 \
		--rw=randread --bs=4k --ioengine=psync --numjobs="$jobs" \
		--runtime=3 --time_based --group_reporting "$@" \
		--write_lat_log="$tmp/$name" --log_offset=1 \
		--output-format=json --output="$tmp/$name.fio"
	ts_stop INT
	simdisk_save "$tmp/$name"
}
judge() { # NAME PYTHON
	simdisk_judge "$1" "
import collections, glob
name, MS = '$1', 25.0
out = docs('$tmp/$1.json')
slow = [x for x in out if x['type'] == 'slow']
d = dev(totals('$tmp/$1.json'), '$SIMDISK_LOOP')
missed = sum(o['missed'] for o in d['ops'].values())
dropped = d['events']['slow_dropped']
P = sd_params('$tmp/$1.full')
reqs = sd_read('$tmp/$1.log')
late = [r for r in reqs if r[9] % P['slow_every'] == P['slow_every'] - 1]
# fio's own latency of each read (submit to reap, ns) by offset: it holds Q -> C
fio_lat = collections.defaultdict(list)
for path in glob.glob('$tmp/%s_lat.*.log' % name):
    for l in open(path):
        x = [int(v) for v in l.split(',')]
        fio_lat[x[4]].append(x[1])
$2"
}

run every 4
judge every "
by_off = collections.defaultdict(list)
for r in late:
    by_off[r[5]].append(r)
printed = collections.Counter(x['sector'] * 512 for x in slow)
want = collections.Counter(r[5] for r in late)
lost = want - printed
print(name + '_each_slow_once', int(sum(lost.values()) > missed or dropped),
      '%d slow requests logged by the disk (50 ms more), %d not printed (missed completions %d, dropped %d)'
      % (len(late), sum(lost.values()), missed, dropped))
# none below: what fio itself saw took at least MS where truestat printed
fio_slow = collections.Counter(o for o, v in fio_lat.items() for ns in v if ns >= MS * 1e6)
below = printed - fio_slow
print(name + '_none_below', int(bool(below)),
      '%d printed, each at an offset where fio timed a read of >= %g ms (%d such reads); printed where fio saw none: %d'
      % (len(slow), MS, sum(fio_slow.values()), sum(below.values())))
bad = [x for x in slow if x['total_ms'] < MS or x['total_ms'] < x['service_ms']]
print(name + '_at_least', int(bool(bad) or not slow), '%d printed, all with total >= %g ms and >= service: %s' % (len(slow), MS, bad[:1] or 'yes'))
by_off = collections.defaultdict(list)
for r in late:
    by_off[r[5]].append(r)
mine = [x for x in slow if x['sector'] * 512 in by_off]
inner = [x for x in mine if any(x['service_ms'] * 1e6 >= r[3] - r[0] and x['bytes'] == r[6] for r in by_off[x['sector'] * 512])]
print(name + '_fields', int(len(inner) != len(mine)), '%d of the %d printed at a logged slow request hold it (service >= R - A, same size)' % (len(inner), len(mine)))
# each completion unseen until the sweep repairs it holds the depth 1 higher
deep = [x['depth'] for x in slow if not 1 <= x['depth'] <= 4 + missed]
print(name + '_depth', int(bool(deep)), 'depth at issue within 1..4 readers (+ %d missed completions): %s' % (missed, deep[:5] or 'yes'))
who = collections.Counter((x['comm'], x['cgroup']) for x in slow)
ok = set(who) == {('fio', '/' + '$cg'.rsplit('/', 1)[1])}
print(name + '_submitter', int(not ok), 'submitters (comm, cgroup): %s' % dict(who))
"

# 64 readers on 64 units, every request 30 ms more: about 2000 slow ones a
# second through a ring buffer of 4096 bytes (42 of them): what it drops,
# if any, is counted
simdisk_down
SIMDISK_SLOW=1:30000 simdisk_up 64 1000 64
TRUESTAT_TEST_SLOW_RING=4096 run ring 64
judge ring "
n = len(slow) + dropped
print('# %d dropped with a 4096-byte ring buffer' % dropped)
print(name + '_printed_plus_dropped', int(not len(late) - missed <= n <= len(late)),
      'printed %d + dropped %d = %d, the disk logged %d slow (missed completions %d)'
      % (len(slow), dropped, n, len(late), missed))
"

# Buffered writes from the cgroup, written back by the flusher while the
# disk stays open here (the last close would write the rest from fio's own
# context): attributed to the flusher, a kworker, and its cgroup, as the
# man page says, not to the cgroup that dirtied the pages. Dirty pages
# expire after 10 ms here, restored after.
simdisk_down
simdisk_up 4 200 64
for k in dirty_expire_centisecs dirty_writeback_centisecs; do
	on_exit "echo $(</proc/sys/vm/$k) >/proc/sys/vm/$k"
	echo 1 >/proc/sys/vm/$k
done
exec {hold}<"/dev/$SIMDISK_LOOP"
on_exit "exec $hold<&-"
w0=$(diskstats "$SIMDISK_LOOP" | awk '{ print $7 }')
ts_start "$tmp/wb.json" --slow=0 -d "$SIMDISK_LOOP" 1
cgroup_exec "$cg" fio --name=wb --filename="/dev/$SIMDISK_LOOP" --rw=write --bs=64k \
	--size=4M --ioengine=psync --output=/dev/null
for ((i = 0; i < 100; i++)); do # until 4 MiB (8192 sectors) are written
	(($(diskstats "$SIMDISK_LOOP" | awk '{ print $7 }') - w0 >= 8192)) && break
	sleep 0.1
done
ts_stop INT
check_lines < <(py "
import collections
w = [x for x in docs('$tmp/wb.json') if x['type'] == 'slow' and x['op'] == 'write']
who = collections.Counter((x['comm'].split('/')[0], x['cgroup']) for x in w)
test_cg = '/' + '$cg'.rsplit('/', 1)[1]
ok = w and all(c == 'kworker' and g != test_cg for c, g in who)
print('writeback_flusher', int(not ok), '%d buffered writes written back, submitters (comm, cgroup): %s; fio ran in %s' % (len(w), dict(who), test_cg))
")

for v in -1 abc 1e99 ''; do
	rc=0
	err=$("$TRUESTAT" --slow="$v" 1 1 2>&1 >/dev/null) || rc=$?
	check "bad_slow_${v:-empty}" "$([[ $rc == 2 && $(wc -l <<<"$err") == 1 && $err == *--slow* ]]; echo $?)" \
		"--slow='$v': exit $rc, $err"
done
finish
