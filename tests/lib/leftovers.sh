# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# leftovers.sh: what an integration test may leave on the host, found by
# the names every test gives what it makes (files, folders, mounts and
# cgroups named truestat-test.*: tests/lib/common.sh) and by the state
# the runner found when it started; removed, a line each. Sourced by
# tests/run-integration.sh:
#
#	leftovers_begin		remember the host as it is now (loop device
#				numbers, zram0's size)
#	leftovers_sweep		remove what a test left, saying what: its
#				cgroups (their processes killed), mounts, loop
#				devices and their files, zram0, the blk tracer;
#				and name the truestat programs still loaded
#	leftovers_end		also remove the loop device numbers made since
#				leftovers_begin and now unused, saying how many
#
# The tests that run beside the others (# concurrent: yes) make none of
# these (their files are truestat-test.* too, and are not looked at).

_LO_LOOPS=
_LO_ZRAM=0

leftovers_begin() {
	_LO_LOOPS=" $(_lo_loop_numbers | tr '\n' ' ') "
	_LO_ZRAM=$(cat /sys/block/zram0/disksize 2>/dev/null || echo 0)
}

_lo_loop_numbers() {
	local d
	for d in /sys/block/loop[0-9]*; do
		[[ -e $d ]] && echo "${d##*/loop}"
	done
}

# cgroups, deepest first: their processes killed (again while the
# directory stays: one may have forked, or not yet left it), the
# directory removed; a process that outlives the kills for a minute (D
# state) is said
_lo_cgroups() {
	local cg end
	while read -r cg; do
		end=$((SECONDS + 60))
		until rmdir "$cg" 2>/dev/null || ((SECONDS >= end)); do
			xargs -r kill -9 <"$cg/cgroup.procs" 2>/dev/null
			sleep 0.05
		done
		[[ ! -d $cg ]] && echo "cgroup $cg: removed" ||
			echo "cgroup $cg: could not remove it ($(wc -l <"$cg/cgroup.procs") processes left)"
	done < <(find /sys/fs/cgroup -mindepth 1 -maxdepth 4 -depth -type d \
		-name 'truestat-test.*' 2>/dev/null)
}

_lo_mounts() {
	local m
	while read -r m; do
		umount -l "$m" 2>/dev/null && echo "mount $m: unmounted" ||
			echo "mount $m: could not unmount it"
	done < <(awk '$2 ~ /truestat-test/ { print $2 }' /proc/mounts | sort -r)
}

_lo_loops() {
	local dev file
	while read -r dev file; do
		[[ $file == *truestat-test* ]] || continue
		losetup -d "$dev" 2>/dev/null && echo "loop device $dev on $file: detached" ||
			echo "loop device $dev on $file: could not detach it"
		[[ $file == */truestat-test.* ]] && rm -f "$file"
	done < <(losetup -l -n -O NAME,BACK-FILE 2>/dev/null)
}

leftovers_sweep() {
	local z=/sys/block/zram0
	_lo_cgroups
	_lo_mounts
	_lo_loops
	if [[ $_LO_ZRAM == 0 && -r $z/disksize && $(<"$z/disksize") != 0 ]]; then
		echo 1 >"$z/reset" 2>/dev/null && echo "zram0: reset" ||
			echo "zram0: sized, and could not reset it"
	fi
	if grep -qs '^blk$' /sys/kernel/tracing/current_tracer; then
		echo nop >/sys/kernel/tracing/current_tracer 2>/dev/null
		echo "blk tracer: was still on, now nop"
	fi
	command -v bpftool >/dev/null &&
		bpftool prog show 2>/dev/null | grep ' name ts_' | sed 's/^/still loaded: /'
	return 0
}

# the loop device numbers this run made (losetup -f adds one when every
# number is bound) and left unbound: a number keeps its request queue id
leftovers_end() {
	local n removed=()
	for n in $(_lo_loop_numbers); do
		[[ $_LO_LOOPS == *" $n "* ]] && continue
		[[ -e /sys/block/loop$n/loop/backing_file ]] && continue
		python3 -c "import fcntl, os, sys
fcntl.ioctl(os.open('/dev/loop-control', os.O_RDWR), 0x4C81, int(sys.argv[1]))  # LOOP_CTL_REMOVE" \
			"$n" 2>/dev/null && removed+=("loop$n")
	done
	((${#removed[@]} == 0)) ||
		echo "== removed the ${#removed[@]} loop device numbers this run made: ${removed[*]}"
}
