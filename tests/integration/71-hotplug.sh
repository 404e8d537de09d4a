#!/usr/bin/env bash
# Safe to leave running, 2: disks come and go while truestat runs (every
# disk, 0.5 s reports). Checked per report against /proc/diskstats:
#  - a loop device attached mid-run shows up in the next reports, counted
#    exactly;
#  - one detached while fio is using it (losetup -d on a busy device is
#    lazy: it goes when fio closes it) goes without a crash, wrong counts or
#    a row left behind in later reports;
#  - its number attached again to a new file (the same gendisk: diskstats
#    goes on) counts only the new I/O;
#  - a number whose loop device is removed and added again (a new gendisk
#    and request queue, usually on the freed queue id, as with a USB disk
#    unplugged and plugged back) counts the new disk from its own start,
#    and the totals keep the old disk's row.
# Between phases the disks are left idle until two more reports are
# written, so the reports written up to a point hold all of the I/O before
# it.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/faults.sh"
need fio python3

make_tmp
out=$tmp/ts.json
newfile() {
	local f
	f=$(mktemp /var/tmp/truestat-test.XXXXXX)
	on_exit "rm -f '$f'"
	truncate -s "$1M" "$f"
	FILE=$f
}
mark() { wc -l <"$out"; }
idle() { ts_reports_after "$out"; }
io() { # DEV RW SECONDS [fio args]
	local d=$1 rw=$2 s=$3
	shift 3
	fio --name=hp --filename="/dev/$d" --direct=1 --rw="$rw" \
		--bssplit=4k/70:64k/30 --ioengine=libaio --iodepth=8 \
		--runtime="$s" --time_based --output=/dev/null "$@"
}
alive() { kill -0 "$TS_PID" 2>/dev/null && echo 0 || echo 1; }
busy() { # DEV: it has requests in flight
	local r w
	read -r r w <"/sys/block/$1/inflight" && ((r + w))
}

newfile 128
loop_at "$FILE"
dev_a=$LOOP
ts_start "$out" 0.5
cat /proc/diskstats >"$tmp/ds_start"
pre_a=$(diskstats "$dev_a")

# 1. attached mid-run
sleep 1.1
m0=$(mark)
cat /proc/diskstats >"$tmp/ds0"
newfile 128
loop_at "$FILE"
dev_b=$LOOP
io "$dev_b" randrw 1.5
idle
post_b=$(diskstats "$dev_b")
m1=$(mark)
check attach_alive "$(alive)" "truestat still running after $dev_b was attached"

# 2. detached while fio is using it
m2=$(mark)
io "$dev_a" randread 3 &
fio_pid=$!
on_exit "kill $fio_pid"
# the detach is lazy only once fio has the device open: its I/O in flight
# says so, however long fio took to start (its 3 s count from then)
wait_for "$fio_pid" "$START_GUARD" busy "$dev_a" || true
rc=0
losetup -d "/dev/$dev_a" || rc=$?
check detach_lazy "$rc" "losetup -d $dev_a during I/O: status $rc, backing file still there: $(losetup -nO BACK-FILE "/dev/$dev_a" | wc -l) (lazy)"
rc=0
wait "$fio_pid" || rc=$?
check detach_fio "$rc" "fio ran to its end on the detached device: status $rc"
rc=0
loop_gone "$dev_a" || rc=$?
check detach_gone "$rc" "$dev_a has no backing file once fio closed it"
idle
post_a=$(diskstats "$dev_a")
m3=$(mark)
idle
m4=$(mark)
check detach_alive "$(alive)" "truestat still running after $dev_a went away"

# 3. the same number, a new file (the gendisk stays: diskstats goes on)
pre_c=$(diskstats "$dev_a")
m5=$(mark)
newfile 64
rc=0
loop_at "$FILE" "$dev_a" || rc=$?
check reuse_attached "$rc" "a new file attached on $dev_a again"
io "$dev_a" randwrite 1.5
idle
post_c=$(diskstats "$dev_a")
m6=$(mark)

# 4. the same number, a new gendisk: the loop device removed and added
losetup -d "/dev/$dev_b"
loop_gone "$dev_b" || true
n_b=${dev_b#loop}
rc=0
python3 -c "
import fcntl, os, sys
fd = os.open('/dev/loop-control', os.O_RDWR)
fcntl.ioctl(fd, 0x4C81, $n_b)	# LOOP_CTL_REMOVE
fcntl.ioctl(fd, 0x4C80, $n_b)	# LOOP_CTL_ADD
" || rc=$?
check renew_readded "$rc" "$dev_b removed and added again through /dev/loop-control"
pre_d=$(diskstats "$dev_b")
m7=$(mark)
newfile 64
rc=0
loop_at "$FILE" "$dev_b" || rc=$?
check renew_attached "$rc" "a new file attached on the new $dev_b"
io "$dev_b" randread 1.5
idle
post_d=$(diskstats "$dev_b")
m8=$(mark)
check renew_alive "$(alive)" "truestat still running"
end_a=$(diskstats "$dev_a")
ts_stop INT
check exit "$TS_RC" "exit status $TS_RC at SIGINT"

check_lines < <(py "$COUNTS_PY
d = docs('$out')
def rows(name, i, j):
    return [x for doc in d[i:j] if doc['type'] == 'interval'
            for x in doc['devices'] if x['device'] == name]
def stat(name, path):
    for l in open(path):
        f = l.split()
        if f[2] == name:
            return ' '.join(f[3:])
    return ''
A, B = '$dev_a', '$dev_b'
# 1. attached mid-run: absent before (unless someone else used the number
# in between), present after, every I/O counted once
quiet_before = stat(B, '$tmp/ds_start') == stat(B, '$tmp/ds0')
early = rows(B, 0, $m0)
print('attach_absent_before', int(quiet_before and bool(early)),
      '%s in %d of the %d reports before its attach' % (B, len(early), $m0))
r = rows(B, $m0, $m1)
print('attach_shown', int(not any(x['all']['ios'] for x in r)),
      '%s in %d reports after its attach' % (B, len(r)))
verdict('attach_counts', add_rows(r), stat(B, '$tmp/ds0'), '$post_b')
# 2. detached under I/O
verdict('detach_counts', add_rows(rows(A, 0, $m3)), '$pre_a', '$post_a')
last = rows(A, 0, $m3)[-1]
ev = add_rows(rows(A, 0, $m3))['events']
print('detach_depth_zero', int(last['concurrency']['now'] != 0),
      'in the device %d at its last report (run: %s)' % (last['concurrency']['now'],
      ' '.join('%s=%d' % kv for kv in ev.items() if kv[1]) or 'no events'))
# A bio record says which disk counted it: the OS depth ends at exactly 0,
# even when records of other disks' bios went stale here.
os_now = last['os_queue']['now']
print('detach_os_depth', int(os_now != 0), 'in the OS %d at its last report' % os_now)
stale = rows(A, $m3, $m5)
print('detach_no_stale_row', len(stale), '%s in %d of the %d reports after it went away' % (
      A, len(stale), $m5 - $m3))
# 3. same number, new file
verdict('reuse_counts', add_rows(rows(A, $m5, $m6)), '$pre_c', '$post_c')
print('reuse_quiet_after', len(rows(A, $m6, len(d))), '%s in %d reports once idle' % (A, len(rows(A, $m6, len(d)))))
# 4. same number, new gendisk
r = rows(B, $m7, $m8)
verdict('renew_counts', add_rows(r), '$pre_d', '$post_d')
# totals: the whole run for A, and for B one row per gendisk
t = [x for x in totals('$out')['devices']]
verdict('totals_$dev_a', dev(totals('$out'), A), '$pre_a', '$end_a')
tb = [x for x in t if x['device'] == B]
print('totals_two_rows', int(len(tb) != 2), '%d rows for %s in the totals (the old and the new disk)' % (len(tb), B))
if len(tb) == 2:
    # the rows go by queue id: the new disk first when it took over the
    # old one's, else after it
    new = lambda x: all(agrees(r) for r in counts(x, '$pre_d', '$post_d'))
    if not new(tb[0]):
        tb.reverse()
    verdict('totals_new_$dev_b', tb[0], '$pre_d', '$post_d')
    verdict('totals_old_$dev_b', tb[1], stat(B, '$tmp/ds0'), '$post_b')
")
finish
