#!/usr/bin/env bash
# Any number of queues. Every request-based disk takes its queue id from one
# pool, lowest free first, and truestat once dropped ids of 256 and up
# without a word: a busy disk reported idle.
#
# 1. 300 loop devices attached over small files in /dev/shm; the last one
#    (a queue id of 256 or more, as truestat -v says) under fio, traced with
#    -d: its counts equal its /proc/diskstats delta exactly (ios + missed +
#    unissued per direction, and bytes), the 299 others take no slot.
#    Then it and the disk made 256 before it, whose queue ids differ by 256
#    and so ask for the same slot first (an id's slot is id % 256 when
#    free, found with one lookup): both traced, both exact.
# 3. The request table (records from issue to completion) and the bio
#    table (Q to D) sized at start for the driver tags of the disks traced:
#    with 300 loop devices of 128 tags each, more than the 16384 and 32768
#    slots they once had for every host.
# 2. The limit: at most 2 disks at once (TRUESTAT_TEST_MAX_DEVS) and every
#    queue id from 2 on looked up in the hash (TRUESTAT_TEST_QID_NEAR), three
#    of those devices traced with -d and under fio, the third started last:
#    the first two equal diskstats exactly; the third, which did I/O, is
#    named NOT TRACED in every report after it was refused (JSON not_traced,
#    the table's note, stderr), never in devices, never "no I/O" alone.
#
# Every loop device this test made is removed through /dev/loop-control
# (LOOP_CTL_REMOVE), also when it fails: a detached one keeps its queue and
# its id, and every disk made after it on this machine would get a higher
# one (notes/machine-facts.md). Devices that existed before are left.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/faults.sh"
need fio python3 losetup

N=${N_LOOPS:-300}
make_tmp
shm=$(mktemp -d /dev/shm/truestat-test.XXXXXX)

# remove_made: each device in $tmp/made ("loopN FILE" lines) still backed by
# its FILE is detached, then removed through /dev/loop-control unless it
# existed before (those are only detached) or someone else attached it
# meanwhile (the kernel refuses that: EBUSY). One process for them all.
ls /sys/block | grep '^loop' | sort >"$tmp/existed" || true
existed() { grep -qx "$1" "$tmp/existed"; }
remove_made() {
	python3 - "$tmp/made" "$tmp/existed" <<'PY'
import errno, fcntl, os, sys, time
LOOP_CLR_FD, LOOP_CTL_REMOVE = 0x4C01, 0x4C81
existed = set(open(sys.argv[2]).read().split())
ctl = os.open("/dev/loop-control", os.O_RDWR)
made = [l.split() for l in open(sys.argv[1]) if l.strip()]
def backing(dev):
    try:
        return open("/sys/block/%s/loop/backing_file" % dev).read().strip()
    except OSError:
        return ""
for dev, f in made:
    if backing(dev) == f:
        try:
            fd = os.open("/dev/" + dev, os.O_RDWR)
            fcntl.ioctl(fd, LOOP_CLR_FD)
            os.close(fd)
        except OSError as e:
            print("detach %s: %s" % (dev, e), file=sys.stderr)
for dev, f in made:
    if dev in existed:
        continue
    for i in range(100):  # a detach in progress holds it for a moment
        try:
            fcntl.ioctl(ctl, LOOP_CTL_REMOVE, int(dev[4:]))
            break
        except OSError as e:
            if e.errno == errno.ENODEV:  # gone already
                break
            if e.errno == errno.EBUSY and backing(dev) not in ("", f):
                break  # someone else's now
            time.sleep(0.02)
PY
}
: >"$tmp/made"
on_exit "rm -rf $shm"
on_exit remove_made

# the target: big enough for fio; the others: 1 MiB each (tmpfs, sparse)
for ((i = 0; i < N; i++)); do
	f=$shm/$i
	truncate -s "$( ((i == N - 1)) && echo 64M || echo 1M)" "$f"
	dev=$(losetup -f --show --direct-io=on "$f")
	echo "${dev#/dev/} $f" >>"$tmp/made"
done
udevadm settle 2>/dev/null || sleep 1
read -r target _ < <(tail -n 1 "$tmp/made")
echo "  # $N loop devices attached in $SECONDS s; $(ls /sys/block | wc -l) disks in all; target $target"

# 1. the last one, under fio
out=$tmp/one.json
ts_start "$out" -d "$target"
before=$(diskstats "$target")
fio --name=q --filename="/dev/$target" --direct=1 --ioengine=libaio \
	--rw=randrw --bs=4k --iodepth=16 --runtime=3 --time_based \
	--output=/dev/null
after=$(diskstats "$target")
ts_stop INT
check one_exit "$TS_RC" "exit status $TS_RC at SIGINT"
qid=$(sed -n "s/^truestat: tracing $target (queue id \([0-9]*\)).*/\1/p" "$out.err")
check one_high_id $(( ${qid:-0} >= 256 ? 0 : 1 )) \
	"$target traced with queue id ${qid:-none} (256 or more: the case that was dropped)"
check_lines < <(py "$COUNTS_PY
t = totals('$out')
print('one_only_target', int([x['device'] for x in t['devices']] != ['$target']),
      'devices in the totals: %s' % [x['device'] for x in t['devices']])
print('one_none_untraced', int(bool(t['not_traced'])), 'not_traced: %s' % t['not_traced'])
verdict('one_counts', dev(t, '$target'), '$before', '$after')
")

# 1b. two ids that ask for the same slot
other=$(tail -n 257 "$tmp/made" | sed -n "1{s/ .*//;p}") # sed reads on: no SIGPIPE
fio --name=fill --filename="/dev/$other" --rw=write --bs=64k --direct=1 \
	--output=/dev/null
out=$tmp/pair.json
ts_start "$out" -v -d "$target" -d "$other"
before=$(diskstats "$target"; diskstats "$other")
fio --direct=1 --ioengine=libaio --runtime=3 --time_based --output=/dev/null \
	--bs=4k --iodepth=8 --name=t --filename="/dev/$target" --rw=randrw \
	--name=o --filename="/dev/$other" --rw=randrw --size=1M
after=$(diskstats "$target"; diskstats "$other")
ts_stop INT
check pair_exit "$TS_RC" "exit status $TS_RC at SIGINT"
ids=$(sed -n "s/^truestat: tracing \(loop[0-9]*\) (queue id \([0-9]*\)).*/\2/p" "$out.err" | sort -n | tr '\n' ' ')
read -r lo hi <<<"$ids"
check pair_ids $(( ${hi:-0} - ${lo:-0} == 256 ? 0 : 1 )) \
	"$target and $other have queue ids ${ids:-none}: 256 apart"
check_lines < <(py "$COUNTS_PY
t = totals('$out')
b = '''$before'''.splitlines()
a = '''$after'''.splitlines()
verdict('pair_target', dev(t, '$target'), b[0], a[0])
verdict('pair_other', dev(t, '$other'), b[1], a[1])
")

echo "  # part 1 done at $SECONDS s"

# 3. the request and bio tables sized for the driver tags of the disks
#    traced (every disk here: the 300 loop devices' among them), as sysfs
#    gives them
ts_start "$tmp/sized.json"
ts_stop INT
read -r slots bios tags < <(sed -n 's/^truestat: request table of \([0-9]*\) slots, bio table of \([0-9]*\), for \([0-9]*\) driver tags.*/\1 \2 \3/p' "$tmp/sized.json.err")
want=$(python3 - <<'PY'
import glob
tags = sum(int(open(f).read()) for f in glob.glob("/sys/block/*/mq/*/nr_tags"))
def size(want, least, most):
    n = least
    while n < most and n < want:
        n *= 2
    return n
print(size(2 * tags, 16384, 1 << 20), size(4 * tags, 32768, 1 << 21), tags)
PY
)
check table_sized "$([[ "${slots:-?} ${bios:-?} ${tags:-?}" == "$want" ]]; echo $?)" \
	"request table of ${slots:-?} slots, bio table of ${bios:-?}, for ${tags:-?} driver tags; from sysfs' nr_tags summed over every disk: $want (twice and four times the tags, powers of two, 16384 to 2^20 and 32768 to 2^21)"

# 2. the limit reached: three devices, room for two
mapfile -t three < <(tail -n 4 "$tmp/made" | sed -n "1,3{s/ .*//;p}")
a=${three[0]} b=${three[1]} c=${three[2]}
for d in "$a" "$b" "$c"; do
	fio --name=fill --filename="/dev/$d" --rw=write --bs=64k --direct=1 \
		--output=/dev/null
done
out=$tmp/limit.json
export TRUESTAT_TEST_MAX_DEVS=2 TRUESTAT_TEST_QID_NEAR=2
ts_start "$out" -d "$a" -d "$b" -d "$c" 1
for d in "$a" "$b" "$c"; do diskstats "$d"; done >"$tmp/before"
# a and b take the two slots before c does any I/O
dd if="/dev/$a" of=/dev/null bs=4k count=16 iflag=direct status=none
dd if="/dev/$b" of=/dev/null bs=4k count=16 iflag=direct status=none
fio --direct=1 --ioengine=libaio --runtime=3 --time_based --output=/dev/null \
	--bs=4k --iodepth=8 --name=a --filename="/dev/$a" --rw=randrw \
	--name=b --filename="/dev/$b" --rw=randread \
	--name=c --filename="/dev/$c" --rw=randrw
for d in "$a" "$b" "$c"; do diskstats "$d"; done >"$tmp/after"
ts_reports_after "$out"
ts_stop INT
unset TRUESTAT_TEST_MAX_DEVS TRUESTAT_TEST_QID_NEAR
check limit_exit "$TS_RC" "exit status $TS_RC at SIGINT"
check_cmd limit_stderr "stderr says $c is not traced, and why" \
	grep -q "^truestat: not tracing $c: 2 disks traced already" "$out.err"
check_lines < <(py "$COUNTS_PY
before = open('$tmp/before').read().splitlines()
after = open('$tmp/after').read().splitlines()
c_ios = sum(int(after[2].split()[k]) - int(before[2].split()[k]) for k in (0, 4))
print('limit_c_busy', int(c_ios == 0), '$c did %d I/Os (diskstats): it is not idle' % c_ios)
d = docs('$out')
t = totals('$out')
for name, b, a in zip(['$a', '$b'], before, after):
    verdict('limit_' + name, dev(t, name), b, a)
shown = {x['device'] for doc in d for x in doc['devices']}
print('limit_c_not_shown', int('$c' in shown), 'devices in any report: %s' % sorted(shown))
# from the first report that names it, every later one does
named = [('$c' in doc['not_traced']) for doc in d]
first = named.index(True) if True in named else len(named)
print('limit_c_named', int(not named[-1] or not all(named[first:])),
      '$c in not_traced of %d of %d reports, every one from the %dth on, the totals too'
      % (sum(named), len(named), first + 1))
")
# the table: the note names it; no report says 'no I/O' without naming it
echo "  # part 2 done at $SECONDS s"
TRUESTAT_TEST_MAX_DEVS=1 "$TRUESTAT" -v -d "$a" -d "$c" 1 2 >"$tmp/table" 2>"$tmp/table.err" &
tpid=$!
on_exit "kill -9 $tpid"
wait_for "$tpid" "$START_GUARD" grep -q "attached with" "$tmp/table.err"
dd if="/dev/$a" of=/dev/null bs=4k count=64 iflag=direct status=none
dd if="/dev/$c" of=/dev/null bs=4k count=64 iflag=direct status=none
rc=0
wait $tpid || rc=$?
check table_exit "$rc" "exit status $rc"
check_cmd table_note "the table's note names $c: $(grep -m1 'NOT TRACED' "$tmp/table" || true)" \
	grep -q "note: NOT TRACED, no room (1 disks traced at once at most): $c\$" "$tmp/table"
check table_not_idle "$(grep 'no I/O on the traced disks' "$tmp/table" | grep -vc "not traced: $c" || true)" \
	"no report says 'no I/O' without naming $c"

# every loop device made is gone (removed, not only detached)
start=$SECONDS
remove_made
echo "  # removed in $((SECONDS - start)) s"
left=()
while read -r d _; do
	existed "$d" || [[ ! -e /sys/block/$d ]] || left+=("$d")
done <"$tmp/made"
check removed "${#left[@]}" \
	"the $N loop devices made are removed, not only detached: ${#left[@]} left ${left[*]:0:5}"
finish
