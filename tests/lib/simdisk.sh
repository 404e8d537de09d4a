# shellcheck shell=bash
# simdisk.sh: a block device whose timing is known. Source it after
# common.sh, then:
#
#	simdisk_up K S_US [SIZE_MB]	start tests/simdisk (built by make as
#				.output/simdisk) with K units and S µs per
#				request on a FUSE mount in a new temporary
#				directory, and attach a loop device with direct
#				I/O on its file (scheduler none). Sets
#				$SIMDISK_LOOP (e.g. loop3), $SIMDISK_LOG (one
#				line per request, see simdisk.c), $SIMDISK_PID,
#				$SIMDISK_MNT. Teardown is registered with
#				on_exit, so it also happens after a failure.
#	simdisk_down		tear it down now (loop detached, unmounted,
#				daemon ended by pid, files removed); idempotent
#	simdisk_sync		wait until every reply so far is in the log
#
# One simulated disk at a time. SIMDISK_BW (MB/s) adds size/bandwidth.

SIMDISK_BIN=$TS_ROOT/.output/simdisk
SIMDISK_LOOP=
SIMDISK_LOG=
SIMDISK_PID=
SIMDISK_MNT=
SIMDISK_DIR=	# under /tmp/truestat-test.*: run-integration.sh looks for leftovers there
_SIMDISK_HOOKED=

simdisk_up() {
	local k=$1 s=$2 size=${3:-256} i conn
	[[ -x $SIMDISK_BIN ]] || { echo "simdisk: $SIMDISK_BIN not built (make $SIMDISK_BIN)"; return 1; }
	[[ -n $_SIMDISK_HOOKED ]] || on_exit simdisk_down
	_SIMDISK_HOOKED=1
	SIMDISK_DIR=$(mktemp -d /tmp/truestat-test.simdisk.XXXXXX)
	SIMDISK_MNT=$SIMDISK_DIR/mnt
	SIMDISK_LOG=$SIMDISK_DIR/requests.log
	mkdir "$SIMDISK_MNT"
	"$SIMDISK_BIN" -k "$k" -s "$s" -z "$size" ${SIMDISK_BW:+-b "$SIMDISK_BW"} \
		-l "$SIMDISK_LOG" "$SIMDISK_MNT" 2>"$SIMDISK_DIR/stderr" &
	SIMDISK_PID=$!
	for ((i = 0; i < 100; i++)); do
		mountpoint -q "$SIMDISK_MNT" && break
		kill -0 "$SIMDISK_PID" 2>/dev/null || break
		sleep 0.05
	done
	if ! mountpoint -q "$SIMDISK_MNT" || [[ ! -f $SIMDISK_MNT/disk ]]; then
		echo "simdisk: did not mount: $(cat "$SIMDISK_DIR/stderr")"
		return 1
	fi
	# FUSE lets only max_background async requests reach the daemon, the
	# rest wait unseen in the kernel: it must be above any depth tested
	conn=/sys/fs/fuse/connections/$(stat -c %d "$SIMDISK_MNT")/max_background
	if [[ -r $conn ]] && (($(<"$conn") < 1024)); then
		echo "simdisk: max_background is $(<"$conn"), expected 4096"
		return 1
	fi
	# without direct I/O, loop serves one request at a time
	SIMDISK_LOOP=$(losetup -f --show --direct-io=on "$SIMDISK_MNT/disk")
	SIMDISK_LOOP=${SIMDISK_LOOP#/dev/}
	[[ $(<"/sys/block/$SIMDISK_LOOP/loop/dio") == 1 ]] ||
		{ echo "simdisk: $SIMDISK_LOOP has no direct I/O"; return 1; }
	udevadm settle 2>/dev/null || sleep 0.5
	echo none >"/sys/block/$SIMDISK_LOOP/queue/scheduler"
	echo 127 >"/sys/block/$SIMDISK_LOOP/queue/nr_requests"
	echo 128 >"/sys/block/$SIMDISK_LOOP/queue/nr_requests"
}

simdisk_sync() {
	# the daemon writes its log every 20 ms
	sleep 0.1
}

simdisk_down() {
	local i
	# every step may find its part gone already (set -e in the callers)
	if [[ -n $SIMDISK_LOOP ]]; then
		losetup -d "/dev/$SIMDISK_LOOP" 2>/dev/null || true
		SIMDISK_LOOP=
	fi
	if [[ -n $SIMDISK_MNT ]]; then
		# lazily, should the loop device still hold the file
		fusermount3 -u "$SIMDISK_MNT" 2>/dev/null ||
			umount -l "$SIMDISK_MNT" 2>/dev/null || true
		SIMDISK_MNT=
	fi
	if [[ -n $SIMDISK_PID ]]; then
		# unmounting ends the daemon; a signal if it did not
		kill "$SIMDISK_PID" 2>/dev/null || true
		for ((i = 0; i < 40; i++)); do
			kill -0 "$SIMDISK_PID" 2>/dev/null || break
			sleep 0.05
		done
		kill -9 "$SIMDISK_PID" 2>/dev/null || true
		wait "$SIMDISK_PID" 2>/dev/null || true
		SIMDISK_PID=
	fi
	[[ -z $SIMDISK_DIR ]] || rm -rf "$SIMDISK_DIR"
	SIMDISK_DIR=
	return 0
}
