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
  000   %util and capacity ("Why %util Number from Iostat is Meaningless
        for MySQL Capacity Planning"): MariaDB (its own server, a buffer
        pool of 8 MiB, far smaller than the data) on ext4 over a simulated
        disk of 4 units, 8 ms a request, under sysbench oltp_read_only with
        1, 4, 16 and 64 clients. For each: sysbench's
        transactions and latency, iostat -x's r/s, r_await, aqu-sz, %util
        and svctm (busy time / I/Os, as sysstat computed it), and
        truestat's IOPS, QUEUE, SERVICE, CONC and BUSY%; then truestat
        -D's verdict over all four steps (effective parallelism,
        saturation), and truestat's findings: at 1 client alone, at 1
        client with a load step (15 more for its last second), and over
        the four steps.
  001   iowait and commits ("Do not trust vmstat IOwait numbers"): MariaDB
        (its own server, on ext4 over a simulated disk of one unit, 2 ms a
        request, whose cache flush holds it 8 ms) under sysbench
        oltp_write_only with 64 threads, with
        innodb_flush_log_at_trx_commit=1, then 2. For each: sysbench's
        transactions and latency, vmstat's us, sy, id and wa, iostat -x's
        w/s, w_await and %util, InnoDB's own fsync counters, and
        truestat's sync row (durable writes a second, their time, the
        share of it in flush commands); then truestat's findings for each.
  002   A fragmented scan ("mysql I/O performance analysis with iostat"):
        a MyISAM table of variable-length rows, each grown by an update in
        random order (its growth in a block at the end of the file), on
        ext4 over a simulated disk with one arm that seeks (1 to 8 ms by
        distance, 0.5 ms a request, 100 MB/s), scanned from a cold cache
        over and over, then rebuilt by OPTIMIZE TABLE and scanned again.
        For each: myisamchk's blocks a row, the scan's time, iostat -x's
        r/s, rMB/s, rareq-sz and %util, and truestat --pattern's
        sequential share, seek distances and the request sizes that
        carried the bytes; then truestat's findings for each.
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
        --max-latency 50 on the volume (how many clients it serves
        within 50 ms), and the findings of one truestat -D over all
        the steps.

Options:
  --quick      fewer, shorter steps (000: 4 s each, without it 10 s; 001:
               5 s, without it 10 s; 002: 20,000 rows, 4 s, without it
               40,000 rows, 10 s; 004: 1, 4, 16 and 64 threads, 2 s
               each, without it 5 s)
  --keep DIR   keep the raw material in DIR: per step truestat's report,
               iostat's JSON, sysbench's output, /proc/diskstats before and
               after and the volume's own log of the step's requests
  -h, --help   this text

Needs root, FUSE (/dev/fuse) and loop devices, and for 000-002 no
MariaDB or MySQL server running; installs what it lacks (scripts/deps.sh:
fio, fuse3, sysbench, sysstat, e2fsprogs, for 000-002 mariadb-server, its
service not started), builds truestat and the simulated disk, and leaves
nothing behind: daemon, mounts, loop device, temporary files, the
database server, truestat and sysbench are gone at exit, also after
Ctrl-C. Exit status: 0 done, 1 cannot run (one line says why), 2 bad
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
000 | 001 | 002 | 004) ;;
'') echo "$ME: which investigation? 000, 001, 002 or 004 (--help for usage)" >&2; exit 2 ;;
*) echo "$ME: no investigation '$which': 000, 001, 002 or 004 (--help for usage)" >&2; exit 2 ;;
esac

((EUID == 0)) || {
	echo "$ME: needs root: it loads BPF programs, attaches a loop device and mounts a file system" >&2
	exit 1
}
# shellcheck source=lib.sh
. "$HERE/lib.sh"
need_fuse_and_loop
database=0
[[ $which == 00[012] ]] && database=1
if ((database)) && db=$(pgrep -x 'mariadbd|mysqld' | head -1); then
	die 1 "a database server runs on this host already (pid $db, $(cat "/proc/$db/comm")): stop it first; the investigation starts one of its own"
fi

pkgs=(sysbench sysstat e2fsprogs)
((database)) && pkgs+=(mariadb-server mariadb-client procps)
# a package's service is not started on install: the investigation runs
# its own server, and leaves the host as it was
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
	"$ROOT/scripts/deps.sh" --demo "${pkgs[@]}"
	rm -f /usr/sbin/policy-rc.d
	trap - EXIT
else
	"$ROOT/scripts/deps.sh" --demo "${pkgs[@]}"
fi
make -C "$ROOT" -s truestat .output/simdisk

# shellcheck source=tests/lib/common.sh
. "$ROOT/tests/lib/common.sh"
# shellcheck source=tests/lib/simdisk.sh
. "$ROOT/tests/lib/simdisk.sh"
# a script ended early is not a failed test: its files are not kept
unset TS_KEEP_FAILED
tmp=$(mktemp -d /tmp/truestat-investigate.XXXXXX)
on_exit "rm -rf '$tmp'"
SB_PID='' IO_PID='' VM_PID=''
# shellcheck disable=SC2016 # expanded at exit: the pids of then
on_exit 'stop_pid "$SB_PID" 0 KILL; stop_pid "$IO_PID" 0 KILL; stop_pid "$VM_PID" 0 KILL'
if [[ -n $keep ]]; then
	mkdir -p "$keep" || die 1 "--keep: cannot create $keep"
	keep=$(cd "$keep" && pwd)
	# at exit, also after a failure: what the steps kept
	on_exit "find '$tmp' -maxdepth 1 -type f -exec cp {} '$keep/' \\;"
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
# iostat -x, vmstat and /proc/diskstats watch it: diskstats read before
# truestat starts and after it stops (NAME.ds0, .ds1), and inside its
# window (.ds0b, .ds1a), as STEP_BEFORE and STEP_AFTER, if set, run with
# the step's name; STEP_TS_ARGS: truestat's further options
step() {
	local name=$1 secs=$2
	shift 2
	sync
	simdisk_mark
	diskstats "$dev" >"$tmp/$name.ds0"
	ts_start "$tmp/$name.json" -H -D ${STEP_TS_ARGS:-} -d "$dev" || die 1 "truestat did not start: $(last_error "$tmp/$name.json.err")"
	diskstats "$dev" >"$tmp/$name.ds0b"
	[[ -z ${STEP_BEFORE:-} ]] || "$STEP_BEFORE" "$name"
	iostat -dxy -o JSON "$dev" "$secs" 1 >"$tmp/$name.iostat" &
	IO_PID=$!
	vmstat -n 1 "$((secs + 1))" >"$tmp/$name.vmstat" &
	VM_PID=$!
	(cd "$tmp/mnt" && exec "$@") >"$tmp/$name.out" 2>&1 &
	SB_PID=$!
	wait "$SB_PID" || die 1 "$1 failed: $(tail -1 "$tmp/$name.out")"
	SB_PID=
	wait "$IO_PID" || true
	IO_PID=
	stop_pid "$VM_PID" 0 TERM
	VM_PID=
	[[ -z ${STEP_AFTER:-} ]] || "$STEP_AFTER" "$name"
	diskstats "$dev" >"$tmp/$name.ds1a"
	ts_stop INT
	((TS_RC == 0)) || die 1 "truestat ended with status $TS_RC: $(last_error "$tmp/$name.json.err")"
	diskstats "$dev" >"$tmp/$name.ds1"
	simdisk_save "$tmp/$name"
}

# mariadb_up: a MariaDB server of its own, its data on the volume, reached
# by its socket only (stopped at exit, before the volume goes); POOL its
# buffer pool (64M)
DB_PID=
mariadb_up() {
	local d=$tmp/mnt/mysql
	mariadb-install-db --no-defaults --user=root --datadir="$d" --skip-test-db \
		--auth-root-authentication-method=socket >"$tmp/install.out" 2>&1 ||
		die 1 "mariadb-install-db failed: $(tail -1 "$tmp/install.out")"
	mariadbd --no-defaults --user=root --datadir="$d" --socket="$tmp/db.sock" \
		--pid-file="$tmp/db.pid" --skip-networking --log-error="$tmp/db.err" \
		--innodb-buffer-pool-size="${POOL:-64M}" --innodb-log-file-size=64M \
		--innodb-flush-method=O_DIRECT >/dev/null 2>&1 &
	DB_PID=$!
	# shellcheck disable=SC2016 # expanded at exit: the pid of then
	on_exit 'stop_pid "$DB_PID" 60 TERM'
	wait_for "$DB_PID" 60 db_alive ||
		die 1 "mariadbd did not start: $(last_error "$tmp/db.err")"
	[[ -n $keep ]] && echo "db_pid=$DB_PID" >>"$keep/where"
	return 0
}

sql() {
	mariadb --no-defaults --socket="$tmp/db.sock" -uroot -N -B -e "$1"
}

db_alive() {
	sql "SELECT 1" >/dev/null
}

# InnoDB's own counters, NAME.status (STEP_BEFORE) and NAME.status1 (AFTER)
innodb_status() {
	sql "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_os_log_fsyncs', 'Innodb_data_fsyncs',
		'Innodb_os_log_written', 'Com_commit', 'Handler_commit', 'Innodb_data_reads')" \
		>"$tmp/$1.status${2:-}"
}
status_before() { innodb_status "$1"; }
status_after() { innodb_status "$1" 1; }

# 000: sysbench oltp_read_only at each client count, under one truestat -D
# over all of them beside each step's own
investigate_000() {
	local threads=(1 4 16 64) secs=10 n
	((quick)) && secs=4
	local sb=(--db-driver=mysql --mysql-socket="$tmp/db.sock" --mysql-user=root
		--mysql-db=sbtest --tables=4 --table-size=50000)
	SIMDISK_STORE=1 volume 4 8000
	POOL=8M mariadb_up
	sql "CREATE DATABASE sbtest"
	# loaded without a flush per commit; the steps only read
	sql "SET GLOBAL innodb_flush_log_at_trx_commit = 0"
	sysbench oltp_read_only "${sb[@]}" prepare >"$tmp/prepare.out" 2>&1 ||
		die 1 "sysbench prepare failed: $(tail -1 "$tmp/prepare.out")"
	curve_start
	for n in "${threads[@]}"; do
		echo "$ME: $n client(s), $secs s" >&2
		STEP_BEFORE=status_before STEP_AFTER=status_after step "c$n" "$secs" \
			sysbench oltp_read_only "${sb[@]}" --threads="$n" --time="$secs" \
			--percentile=95 run
	done
	curve_stop
	# what truestat's note at 1 client asks for: a load step, the last
	# second of a step at 1 client joined by 15 more
	echo "$ME: 1 client, 15 more for its last second, $((2 * secs)) s" >&2
	step burst $((2 * secs)) bash -c 'sysbench oltp_read_only "${@:2}" --threads=1 --time="$1" run &
		sleep $(($1 - 1))
		sysbench oltp_read_only "${@:2}" --threads=15 --time=1 run
		wait' burst $((2 * secs)) "${sb[@]}"
	python3 -B "$HERE/investigate.py" 000 "$tmp" "$dev" "${threads[@]}"
}

# curve_start, curve_stop: truestat -D over every step, its totals (and
# their findings) in $tmp/curve.json
CURVE_PID=
curve_start() {
	"$ROOT/truestat" -j -v -D -d "$dev" >"$tmp/curve.json" 2>"$tmp/curve.json.err" &
	CURVE_PID=$!
	# shellcheck disable=SC2016 # expanded at exit: the pid of then
	on_exit 'stop_pid "$CURVE_PID" 0 KILL'
	wait_for "$CURVE_PID" "$START_GUARD" grep -q "attached with" "$tmp/curve.json.err" ||
		die 1 "truestat -D did not start: $(last_error "$tmp/curve.json.err")"
}
curve_stop() {
	local rc=0
	kill -INT "$CURVE_PID"
	wait "$CURVE_PID" || rc=$?
	CURVE_PID=
	((rc == 0)) || die 1 "truestat -D ended with status $rc: $(last_error "$tmp/curve.json.err")"
}

# 001: sysbench oltp_write_only, 64 threads, with each flush_log_at_trx_commit
investigate_001() {
	local secs=10 trx
	((quick)) && secs=5
	local sb=(--db-driver=mysql --mysql-socket="$tmp/db.sock" --mysql-user=root
		--mysql-db=sbtest --tables=4 --table-size=10000)
	SIMDISK_FSYNC=8000 SIMDISK_STORE=1 volume 1 2000
	mariadb_up
	sql "CREATE DATABASE sbtest"
	sysbench oltp_write_only "${sb[@]}" prepare >"$tmp/prepare.out" 2>&1 ||
		die 1 "sysbench prepare failed: $(tail -1 "$tmp/prepare.out")"
	for trx in 1 2; do
		echo "$ME: innodb_flush_log_at_trx_commit=$trx, 64 threads, $secs s" >&2
		sql "SET GLOBAL innodb_flush_log_at_trx_commit = $trx"
		STEP_BEFORE=status_before STEP_AFTER=status_after step "trx$trx" "$secs" \
			sysbench oltp_write_only "${sb[@]}" --threads=64 --time="$secs" --percentile=95 run
	done
	python3 -B "$HERE/investigate.py" 001 "$tmp" "$dev" 1 2
}

# 002: a MyISAM table whose rows grew by updates in random order (each row's
# growth a block at the end of the file), scanned, rebuilt by OPTIMIZE
# TABLE, scanned again
investigate_002() {
	local secs=10 rows=40000
	((quick)) && secs=4 rows=20000
	SIMDISK_SEEK=1000:8000 SIMDISK_BW=100 SIMDISK_STORE=1 volume 1 500
	# FUSE hands the disk a request of over 1 MiB in pieces of 1 MiB: at
	# most 1 MiB a request (a disk's limit, as SATA's often is), and the
	# disk's log holds the requests truestat saw, one for one (the loop
	# device goes at exit, and its setting with it)
	echo 1024 >"/sys/block/$dev/queue/max_sectors_kb"
	mariadb_up
	sql "CREATE DATABASE scan"
	sql "CREATE TABLE scan.t (id INT PRIMARY KEY, v INT, pad VARCHAR(1000))
		ENGINE=MyISAM ROW_FORMAT=DYNAMIC"
	sql "INSERT INTO scan.t SELECT seq, seq % 1000, REPEAT('a', 100) FROM scan.seq_1_to_$rows"
	sql "UPDATE scan.t SET pad = REPEAT('b', 600) ORDER BY RAND(1)"
	scan_step fragmented "$secs"
	sql "OPTIMIZE TABLE scan.t" >/dev/null
	scan_step rebuilt "$secs"
	python3 -B "$HERE/investigate.py" 002 "$tmp" "$dev" fragmented rebuilt
}

# scan_step NAME SECS: the table's own statistics (myisamchk), then its
# full scan, over and over for SECS, each from a cold cache, under
# truestat --pattern
scan_step() {
	local myd=$tmp/mnt/mysql/scan/t.MYD
	sql "FLUSH TABLES scan.t"
	sync
	myisamchk -e -i -T "${myd%.MYD}" >"$tmp/$1.myisamchk" 2>&1 ||
		die 1 "myisamchk failed: $(tail -1 "$tmp/$1.myisamchk")"
	echo "$ME: the table $1, scans for $2 s" >&2
	STEP_TS_ARGS=--pattern step "$1" "$2" bash -c '
		end=$((SECONDS + $1))
		while ((SECONDS < end)); do
			dd if="$2" iflag=nocache count=0 status=none
			t0=$(date +%s%N)
			mariadb --no-defaults --socket="$3" -uroot -N -B \
				-e "SELECT COUNT(*) FROM scan.t WHERE v < 0" >/dev/null || exit 1
			echo "scan_ms $((($(date +%s%N) - t0) / 1000000))"
		done' scan "$2" "$myd" "$tmp/db.sock"
}

# 004: sysbench fileio at each thread count, then knee.sh
investigate_004() {
	local threads=(1 2 4 8 16 32 64) secs=5 n knee_rt=2
	((quick)) && threads=(1 4 16 64) secs=2 knee_rt=1
	local files=(--file-total-size=256M --file-num=16)
	SIMDISK_IOPS=1000 SIMDISK_STORE=1 volume 4 1000
	(cd "$tmp/mnt" && sysbench fileio "${files[@]}" prepare) >"$tmp/prepare.out" 2>&1 ||
		die 1 "sysbench fileio prepare failed: $(tail -1 "$tmp/prepare.out")"
	curve_start
	for n in "${threads[@]}"; do
		echo "$ME: $n thread(s), $secs s" >&2
		step "t$n" "$secs" sysbench fileio "${files[@]}" --file-test-mode=rndrw \
			--file-rw-ratio=2 --file-extra-flags=direct --file-fsync-freq=0 \
			--threads="$n" --time="$secs" \
			--percentile=95 run
	done
	curve_stop
	echo "$ME: scripts/knee.sh --max-latency 50 /dev/$dev" >&2
	"$HERE/knee.sh" --max-latency 50 --runtime "$knee_rt" --json "$tmp/knee.json" \
		"/dev/$dev" >"$tmp/knee.out" 2>&1 || die 1 "knee.sh failed: $(tail -1 "$tmp/knee.out")"
	python3 -B "$HERE/investigate.py" 004 "$tmp" "$dev" "${threads[@]}"
}

"investigate_$which"
