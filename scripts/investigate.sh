#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# investigate.sh: an investigation of an article truestat grew from, run on
# the real software it was about and a simulated disk of known timing,
# iostat's reading beside truestat's. See --help.
set -euo pipefail

ME=investigate.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)

usage() {
	cat <<'EOF'
Usage: scripts/investigate.sh [--quick] [--keep DIR] INVESTIGATION

INVESTIGATION:
  004   A cloud volume's tipping point (the method of the article on
        measuring a cloud provider's virtual disk from inside the VM, with
        sysbench and iostat). sysbench fileio (rndrw: two reads to a
        write, 4 KiB, direct I/O, no fsync: each thread always has one
        request at the volume, as the article's reading assumes) with
        1, 2, 4, ... 64 threads on ext4 over a simulated volume capped at
        1,000 IOPS that serves a request in 1 ms (4 units). For each
        thread count: sysbench's latency, iostat -x's r/s, w/s, await,
        aqu-sz and %util, and truestat's IOPS, QUEUE, SERVICE and TOTAL
        (means over reads and writes) and CONC; then scripts/knee.sh
        --max-latency 50 on the volume, and the conclusion: how many
        clients it serves within 50 ms.

Options:
  --quick      fewer, shorter steps (1, 4, 16 and 64 threads, 2 s each;
               without it 5 s each)
  --keep DIR   keep the raw material in DIR: per step truestat's report,
               iostat's JSON, sysbench's output, /proc/diskstats before and
               after and the volume's own log of the step's requests
  -h, --help   this text

Needs root, FUSE (/dev/fuse) and loop devices; installs what it lacks
(scripts/deps.sh: fio, fuse3, sysbench, sysstat, e2fsprogs), builds
truestat and the simulated disk, and leaves nothing behind: daemon, mounts,
loop device, temporary files, truestat and sysbench are gone at exit, also
after Ctrl-C. Exit status: 0 done, 1 cannot run (one line says why), 2 bad
usage, 130 interrupted.
EOF
}

keep= quick=0 which=
while (($#)); do
	case $1 in
	-h | --help) usage; exit 0 ;;
	--quick) quick=1; shift ;;
	--keep) (($# >= 2)) || { echo "$ME: --keep needs a directory" >&2; exit 2; }
		keep=$2; shift 2 ;;
	--keep=*) keep=${1#*=}; shift ;;
	-*) echo "$ME: unknown option '$1' (--help for usage)" >&2; exit 2 ;;
	*) [[ -z $which ]] || { echo "$ME: one investigation at a time: '$which' and '$1'" >&2; exit 2; }
		which=$1; shift ;;
	esac
done
case $which in
004) ;;
'') echo "$ME: which investigation? 004 (--help for usage)" >&2; exit 2 ;;
*) echo "$ME: no investigation '$which': 004 (--help for usage)" >&2; exit 2 ;;
esac

((EUID == 0)) || {
	echo "$ME: needs root: it loads BPF programs, attaches a loop device and mounts a file system" >&2
	exit 1
}
# shellcheck source=lib.sh
. "$HERE/lib.sh"
need_fuse_and_loop

"$ROOT/scripts/deps.sh" --demo sysbench sysstat e2fsprogs
make -C "$ROOT" -s truestat .output/simdisk

# shellcheck source=tests/lib/common.sh
. "$ROOT/tests/lib/common.sh"
# shellcheck source=tests/lib/simdisk.sh
. "$ROOT/tests/lib/simdisk.sh"
# a script ended early is not a failed test: its files are not kept
unset TS_KEEP_FAILED
tmp=$(mktemp -d /tmp/truestat-investigate.XXXXXX)
on_exit "rm -rf '$tmp'"
SB_PID='' IO_PID=''
# shellcheck disable=SC2016 # expanded at exit: the pids of then
on_exit 'stop_pid "$SB_PID" 0 KILL; stop_pid "$IO_PID" 0 KILL'
if [[ -n $keep ]]; then
	mkdir -p "$keep" || die 1 "--keep: cannot create $keep"
	keep=$(cd "$keep" && pwd)
fi

# volume K S_US [SIMDISK VARIABLES]: the simulated disk holding its data,
# ext4 on it mounted on $tmp/mnt; $dev its loop device
volume() {
	if ! simdisk_up "$1" "$2" 512 >"$tmp/err" 2>&1; then
		die 1 "the simulated disk did not start: $(tail -1 "$tmp/err")"
	fi
	dev=$SIMDISK_LOOP
	# every inode table and the journal written now, not by a kernel
	# thread during the steps; no commit but those the workload asks for
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "/dev/$dev" >"$tmp/err" 2>&1 ||
		die 1 "mkfs.ext4 failed: $(tail -1 "$tmp/err")"
	mkdir -p "$tmp/mnt"
	mount -o noatime,commit=3600 "/dev/$dev" "$tmp/mnt" 2>"$tmp/err" ||
		die 1 "cannot mount ext4 on the simulated disk: $(tail -1 "$tmp/err")"
	on_exit "umount -l '$tmp/mnt'"
	if [[ -n $keep ]]; then	# what there is to clean up, for the tests
		printf '%s=%s\n' tmp "$tmp" simdisk_dir "$SIMDISK_DIR" simdisk_mnt "$SIMDISK_MNT" \
			simdisk_pid "$SIMDISK_PID" loop "$dev" >"$keep/where"
	fi
}

# step NAME SECS CMD...: CMD on the volume for SECS, while truestat (-H -D),
# iostat -x and /proc/diskstats watch it; the volume idle before and after
step() {
	local name=$1 secs=$2
	shift 2
	sync
	simdisk_mark
	diskstats "$dev" >"$tmp/$name.ds0"
	ts_start "$tmp/$name.json" -H -D -d "$dev" || die 1 "truestat did not start: $(last_error "$tmp/$name.json.err")"
	iostat -dxy -o JSON "$dev" "$secs" 1 >"$tmp/$name.iostat" &
	IO_PID=$!
	(cd "$tmp/mnt" && exec "$@") >"$tmp/$name.out" 2>&1 &
	SB_PID=$!
	wait "$SB_PID" || die 1 "$1 failed: $(tail -1 "$tmp/$name.out")"
	SB_PID=
	wait "$IO_PID" || true
	IO_PID=
	ts_stop INT
	((TS_RC == 0)) || die 1 "truestat ended with status $TS_RC: $(last_error "$tmp/$name.json.err")"
	diskstats "$dev" >"$tmp/$name.ds1"
	simdisk_save "$tmp/$name"
}

# 004: sysbench fileio at each thread count, then knee.sh
investigate_004() {
	local threads=(1 2 4 8 16 32 64) secs=5 n knee_rt=2
	((quick)) && threads=(1 4 16 64) secs=2 knee_rt=1
	local files=(--file-total-size=256M --file-num=16)
	SIMDISK_IOPS=1000 SIMDISK_STORE=1 volume 4 1000
	(cd "$tmp/mnt" && sysbench fileio "${files[@]}" prepare) >"$tmp/prepare.out" 2>&1 ||
		die 1 "sysbench fileio prepare failed: $(tail -1 "$tmp/prepare.out")"
	for n in "${threads[@]}"; do
		echo "$ME: $n thread(s), $secs s" >&2
		step "t$n" "$secs" sysbench fileio "${files[@]}" --file-test-mode=rndrw \
			--file-rw-ratio=2 --file-extra-flags=direct --file-fsync-freq=0 \
			--threads="$n" --time="$secs" \
			--percentile=95 run
	done
	echo "$ME: scripts/knee.sh --max-latency 50 /dev/$dev" >&2
	"$HERE/knee.sh" --max-latency 50 --runtime "$knee_rt" --json "$tmp/knee.json" \
		"/dev/$dev" >"$tmp/knee.out" 2>&1 || die 1 "knee.sh failed: $(tail -1 "$tmp/knee.out")"
	python3 -B "$HERE/investigate.py" 004 "$tmp" "$dev" "${threads[@]}"
}

"investigate_$which"
if [[ -n $keep ]]; then
	simdisk_sync
	find "$tmp" -maxdepth 1 -type f -exec cp {} "$keep/" \;
fi
