#!/usr/bin/env bash
# -c/--cgroup and --pid against the kernel's own per-cgroup counts. fio in
# cgroup A (direct 4 KiB random reads and writes, 1 MiB writes split at the
# queue's 64 KiB max_sectors_kb, and discards where the loop device takes
# them) while fio in cgroup B reads and writes the same loop device.
# truestat -c A's bio counts (filter_{read,write,discard}_{bios,bytes})
# equal the delta of A's io.stat line for the device (rios wios dios
# rbytes wbytes dbytes), exactly: both count each submission of a bio,
# the remainder of a split again, its bytes once. Where the io controller
# is bound to cgroup v1 (no io.stat; truestat then matches the submitting
# task's cgroup v2), the same figures come from A's twin in the v1 blkio
# hierarchy (blkio.throttle.io_serviced and io_service_bytes, which the
# kernel counts like io.stat once throttling is on for the queue: a limit
# no job reaches turns it on). B's requests are counted apart
# (filter_other_requests). --pid: a dd of N direct 4 KiB reads beside
# another dd: N read bios of 4096 N bytes, and N read requests in the row.
# Three runs: tp_btf, the raw_tp fallback, and the programs for kernels
# before 5.12 (TRUESTAT_TEST_LOCKED).
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3 dd

loop_new 256
dev=$LOOP
majmin=$(<"/sys/block/$dev/dev")
queue_set "$dev" max_sectors_kb 64 # 1 MiB bios split
cgroup_new a
A=$CG
cgroup_new b
B=$CG
root=${A%/*}

# the independent count of A's bios: io.stat, else blkio v1's
if grep -qw io "$root/cgroup.controllers"; then
	source=io.stat
	if ! grep -qw io "$root/cgroup.subtree_control"; then
		echo +io >"$root/cgroup.subtree_control"
		on_exit "echo -io >'$root/cgroup.subtree_control'"
	fi
	twin_a=$A twin_b=$B
else
	v1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)blkio(,|$)/ { print $2; exit }' /proc/self/mounts)
	if [[ -z $v1 ]]; then
		check no_io_stat 1 "no io.stat: the io controller is neither on cgroup v2 ($root/cgroup.controllers: $(<"$root/cgroup.controllers")) nor a mounted cgroup v1 blkio hierarchy"
		finish
	fi
	source="blkio v1 (the io controller is not on cgroup v2 here)"
	twin_a=$v1/truestat-test.$$.a twin_b=$v1/truestat-test.$$.b
	mkdir "$twin_a" "$twin_b"
	on_exit "rmdir $twin_a $twin_b"
	echo "$majmin 1099511627776" >"$twin_a/blkio.throttle.read_bps_device"
	on_exit "echo '$majmin 0' >$twin_a/blkio.throttle.read_bps_device"
fi
echo "  # A's bios counted by $source"

# cgroup_end DIR: every process in cgroup DIR ended (fio's job processes
# outlive its first one)
cgroup_end() {
	local procs i
	for ((i = 0; i < 100; i++)); do
		procs=$(<"$1/cgroup.procs")
		[[ -n $procs ]] || return 0
		# shellcheck disable=SC2086 # one pid a word
		kill -9 $procs 2>/dev/null || true
		sleep 0.1
	done
}
on_exit "cgroup_end $B"

# in_cgroups V2 TWIN COMMAND...: COMMAND in cgroup V2 and its twin
in_cgroups() {
	bash -c 'echo $$ >"$1/cgroup.procs"; [[ $1 == "$2" ]] ||
		echo $$ >"$2/cgroup.procs"; shift 2; exec "$@"' _ "$@"
}

# A's counts for the device: rbytes wbytes rios wios dbytes dios
counts_a() {
	if [[ $source == io.stat ]]; then
		awk -v d="$majmin" '$1 == d { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			printf "%d %d %d %d %d %d\n", v["rbytes"], v["wbytes"], v["rios"], v["wios"], v["dbytes"], v["dios"] }
			END { if (!NR) print "0 0 0 0 0 0" }' "$A/io.stat"
		return
	fi
	awk -v d="$majmin" 'FNR == 1 { f++ } $1 == d { v[f, $2] = $3 }
		END { printf "%d %d %d %d %d %d\n", v[1, "Read"], v[1, "Write"], v[2, "Read"], v[2, "Write"], v[1, "Discard"], v[2, "Discard"] }' \
		"$twin_a/blkio.throttle.io_service_bytes" "$twin_a/blkio.throttle.io_serviced"
}

trims=0
[[ $(<"/sys/block/$dev/queue/discard_max_bytes") != 0 ]] && trims=1
fio_a() {
	in_cgroups "$A" "$twin_a" fio --filename="/dev/$dev" --direct=1 \
		--ioengine=libaio --output=/dev/null \
		--name=rr --rw=randread --bs=4k --size=32M --iodepth=16 \
		--name=rw --rw=randwrite --bs=4k --size=16M --iodepth=16 --offset=64M \
		--name=big --rw=write --bs=1M --size=32M --iodepth=4 --offset=128M
	if ((trims)); then
		in_cgroups "$A" "$twin_a" fio --filename="/dev/$dev" \
			--ioengine=libaio --output=/dev/null --name=trim \
			--rw=trim --bs=256k --size=16M --iodepth=4 --offset=192M
	fi
}
fio_b() {
	in_cgroups "$B" "$twin_b" fio --filename="/dev/$dev" --direct=1 \
		--ioengine=libaio --output=/dev/null --name=b --rw=randrw \
		--bs=4k --size=32M --iodepth=8 --time_based --runtime=30 &
	B_PID=$!
}

for kind in tp_btf raw_tp locked; do
	out=$(mktemp /tmp/truestat-test.XXXXXX)
	on_exit "rm -f $out $out.err"
	fio_b
	case $kind in
	raw_tp) ts_start "$out" -d "$dev" -c "$A" --raw-tp ;;
	locked) TRUESTAT_TEST_LOCKED=1 ts_start "$out" -d "$dev" -c "$A" ;;
	*) ts_start "$out" -d "$dev" -c "$A" ;;
	esac
	before=$(counts_a)
	fio_a
	after=$(counts_a)
	ts_stop INT
	cgroup_end "$B"
	{ wait "$B_PID"; } 2>/dev/null || true
	check_lines < <(py "
b = [int(x) for x in '$before'.split()]
a = [int(x) for x in '$after'.split()]
k = [y - x for x, y in zip(b, a)]
ev = dev(totals('$out'), '$dev')['events']
names = ['read_bytes', 'write_bytes', 'read_bios', 'write_bios', 'discard_bytes', 'discard_bios']
got = [ev['filter_' + n] for n in names]
for n, g, want in zip(names, got, k):
    print('${kind}_' + n, int(g != want), '-c A: %s %d, A\'s counts (%s) %d (exact)' % (n, g, '$source', want))
# 4 KiB writes, one bio each; 1 MiB ones in 64 KiB parts at least
least = 16 * 1024 * 1024 // 4096 + 32 * 16
print('${kind}_split', int(k[3] < least),
      'A: %d write bios, at least %d with every 1 MiB bio split in 16' % (k[3], least))
if $trims:
    print('${kind}_trimmed', int(not k[5]), 'A discarded %d bios' % k[5])
print('${kind}_others', int(not ev['filter_other_requests']),
      '%d requests of B not counted' % ev['filter_other_requests'])
")
done

# --pid: N reads of one dd beside another one, both started by one
# write to a fifo once truestat is attached
n=3000
fifo=$(mktemp -u /tmp/truestat-test.XXXXXX)
mkfifo "$fifo"
on_exit "rm -f $fifo"
out=$(mktemp /tmp/truestat-test.XXXXXX)
on_exit "rm -f $out $out.err"
bash -c 'read -r _ <"$1"; exec dd if="$2" of=/dev/null iflag=direct bs=4k count="$3" status=none' \
	_ "$fifo" "/dev/$dev" "$n" &
dd_pid=$!
on_exit "kill $dd_pid"
bash -c 'read -r _ <"$1"; exec dd if="$2" of=/dev/null iflag=direct bs=4k skip=8192 count="$3" status=none' \
	_ "$fifo" "/dev/$dev" $((2 * n)) &
other=$!
on_exit "kill $other"
ts_start "$out" -d "$dev" --pid="$dd_pid"
echo go >"$fifo"
wait "$dd_pid"
wait "$other"
ts_stop INT
check_lines < <(py "
d = dev(totals('$out'), '$dev')
ev, r = d['events'], d['ops'].get('read', {})
print('pid_bios', int(ev['filter_read_bios'] != $n), '--pid: %d read bios, dd read %d' % (ev['filter_read_bios'], $n))
print('pid_bytes', int(ev['filter_read_bytes'] != 4096 * $n), '--pid: %d bytes, dd %d' % (ev['filter_read_bytes'], 4096 * $n))
# a request repaired (its completion unseen) is counted in missed, of
# either submitter: the row's requests are within the device's missed
ios, missed = r.get('ios', 0), r.get('missed', 0)
print('pid_requests', int(not ios <= $n <= ios + missed or r.get('bytes', 0) != 4096 * ios),
      '--pid: read row %d requests of %d bytes, %d missed (any submitter), dd %d' % (ios, r.get('bytes', 0), missed, $n))
print('pid_others', int(not ev['filter_other_requests']), '%d requests of the other dd not counted' % ev['filter_other_requests'])
")

check_refuses_usage() {
	local name=$1 what=$2 rc=0 e
	shift 2
	e=$(mktemp /tmp/truestat-test.XXXXXX)
	on_exit "rm -f $e"
	"$@" >/dev/null 2>"$e" || rc=$?
	check "$name" "$( ((rc == 2)) && [[ $(wc -l <"$e") == 1 ]] && grep -q -- "$what" "$e"; echo $?)" \
		"status $rc, $(wc -l <"$e") line: $(head -1 "$e")"
}
check_refuses_usage light_cgroup "--light" "$TRUESTAT" -L -c "$A" 1 1
check_refuses_usage light_pid "--light" "$TRUESTAT" -L --pid=1 1 1
check_refuses_usage not_cgroup "not a cgroup v2 directory" "$TRUESTAT" -c /tmp 1 1
gone=$(bash -c 'echo $$')
check_refuses_usage no_pid "no such process" "$TRUESTAT" --pid="$gone" 1 1
finish
