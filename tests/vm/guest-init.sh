#!/bin/sh
# /init of the test guest (busybox sh). tests/vm/run.sh copies it into the
# initramfs next to a file "params" that sets S_NS, K, DEPTH, RUNTIME,
# MODULES, GUARD, CASES and the stacked cases' settings (RAID_*, DM_*,
# INTERVAL, TICK). Every line meant for the host starts with "@@TS "; the host
# parses only those. The guest always powers off: at the end, or after
# GUARD seconds whatever happens.
export PATH=/bin
. /params

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mkdir -p /run && mount -t tmpfs tmpfs /run
# kernel messages would land in the middle of our lines on the one console
echo 1 >/proc/sys/kernel/printk
# no udev here: mdadm and dmsetup make their nodes themselves
export MDADM_NO_UDEV=1 DM_DISABLE_UDEV=1 LD_LIBRARY_PATH=/lib

(sleep "$GUARD"; echo "@@TS guest guard_expired"; poweroff -f) &

say() { echo "@@TS $*"; }
now() { cut -d' ' -f1 /proc/uptime; }

# The host's sign that the guest goes on (tests/vm/run.sh ends qemu when
# none comes for a while): the guest's clock, every second of it, on the
# second serial port, where it cannot break a line of the console's; at
# real-time priority, so that 64 fio jobs do not hold it back
(while :; do now; sleep 1; done >/dev/ttyS1) 2>/dev/null &
/bin/chrt -f -p 50 $! >/dev/null 2>&1

say guest kernel "$(uname -r)"
say guest btf "$([ -r /sys/kernel/btf/vmlinux ] && echo yes || echo no)"
say guest clocksource "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
for m in $MODULES; do
	insmod "/modules/$m.ko" || say guest insmod_failed "$m"
done

# nullb_load N S_NS K [QUEUES [IRQMODE]]: N null_blk disks (nullb0..),
# each QUEUES (default 1) hardware queues with K tags each whose requests
# a timer completes S_NS after they reach the driver (IRQMODE 2, the
# default): known service time S and parallelism K per queue
nullb_load() {
	rmmod null_blk 2>/dev/null
	insmod /modules/null_blk.ko queue_mode=2 nr_devices="$1" submit_queues="${4:-1}" \
		irqmode="${5:-2}" completion_nsec="$2" hw_queue_depth="$3" ||
		say guest insmod_failed null_blk
	wait_dev nullb$(($1 - 1))
}

# wait_dev DEV: until /dev/DEV exists (5 s at most)
wait_dev() {
	local i=0
	while [ ! -b /dev/$1 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}

# ts_start NAME ARGS...: truestat -j -v ARGS in the background ($TS_ENV: its
# environment), JSON to /tmp/NAME.json; returns once it has attached, or
# fails after saying why (its stderr, the verifier log's end)
ts_start() {
	local name=$1 i=0 t0
	shift
	t0=$(now)
	: >/tmp/$name.err
	env $TS_ENV /truestat -j -v "$@" >/tmp/$name.json 2>>/tmp/$name.err &
	pid=$!
	while ! grep -q "attached with" /tmp/$name.err && [ $i -lt 600 ]; do
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	grep "^truestat:" /tmp/$name.err | sed "s/^/@@TS $name stderr /"
	if ! grep -q "attached with" /tmp/$name.err; then
		kill -9 $pid 2>/dev/null
		wait $pid 2>/dev/null
		say "$name" start_rc "$?"
		say "$name" attach_failed
		# the verifier log: its last lines say what was rejected
		tail -n 60 /tmp/$name.err | sed "s/^/@@TS $name log /"
		return 1
	fi
	say "$name" attach_s "$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')"
	# a fall back to raw_tp: what the verifier said to tp_btf
	grep -q "tp_btf failed" /tmp/$name.err &&
		sed -n '/tp_btf failed/q;p' /tmp/$name.err | tail -n 40 | sed "s/^/@@TS $name log /"
	return 0
}

# ts_stop NAME: SIGINT, then its exit status and its JSON to the host
ts_stop() {
	kill -INT $pid
	wait $pid
	say "$1" exit "$?"
	grep "^truestat: request table:" /tmp/$1.err | sed "s/^/@@TS $1 stderr /"
	sed "s/^/@@TS $1 json /" /tmp/$1.json
}

# ds NAME TAG DEV...: the devices' /proc/diskstats lines ("ds TAG MAJ MIN
# DEV FIELDS..."), after "at TAG UPTIME REPORTS": the time, and how many
# reports truestat had printed to /tmp/NAME.json by then
ds() {
	local n=$1 tag=$2 d
	shift 2
	say "$n" at "$tag $(now) $(cat /tmp/$n.json 2>/dev/null | wc -l)"
	for d in "$@"; do
		say "$n" ds "$tag $(grep " $d " /proc/diskstats)"
	done
}

# sampler NAME REGEX: every TICK s, until /tmp/NAME.sampling is removed,
# the diskstats lines of the devices REGEX matches, tagged tickN (with
# the time and truestat's reports so far, as ds gives them). Each
# phase begins with fio setting its jobs up and ends with them stopping
# one by one: the host takes iostat's figures from the ticks that lie
# where I/O ran all along, told by the in-flight count. Start it with
# sampler_idle: on the one vCPU, the sampler (a shell, grep, sed: a few
# ms of forks) holds the CPU when a job's read completes, and 6.12's
# EEVDF lets it run on where 6.1's CFS had the woken job preempt it: the
# job issues its next read only after the sample, which then counts it
# out of md0 (6.12: 16 jobs 13 in flight mid-phase, 1 job 0; 6.1, the
# same sampler: n at every tick), and the host saw no stretch with all
# jobs running.
sampler() {
	local n=$1 re=$2 k=0 up rest
	while [ -e /tmp/$n.sampling ]; do
		read -r up rest </proc/uptime
		say "$n" at "tick$k $up $(wc -l </tmp/$n.json)"
		grep -E "$re" /proc/diskstats | sed "s/^/@@TS $n ds tick$k /"
		k=$((k + 1))
		sleep "$TICK"
	done
}

# sampler_idle NAME PID: the sampler PID (and what it forks after this)
# in SCHED_IDLE, which any woken task preempts at once on every kernel:
# a job whose read completed issues its next one before the sample is
# taken. Says the policy it got.
sampler_idle() {
	/bin/chrt -i -p 0 "$2" || say "$1" sampler_policy_failed
	say "$1" sampler_policy "$(/bin/chrt -p "$2" | tr '\n' ' ')"
}

# fio_read DEV JOBS BS SECONDS OUT: JOBS synchronous readers (psync), each
# with one bio in the block layer at a time, random and block-aligned.
# --norandommap: without it each job first zeroes a map of the blocks it
# has read (8 MiB for md0's 1 TB in 16 KiB blocks), and 64 jobs began
# their I/O over a whole second of this guest's time
fio_read() {
	/bin/fio --name=vm --filename="/dev/$1" --direct=1 --rw=randread \
		--norandommap --bs="$3" --ioengine=psync --numjobs="$2" --thread \
		--group_reporting --runtime="$4" --time_based \
		--output-format=terse --terse-version=3 >"$5" 2>&1
}

# remaps_start / remaps NAME: block_bio_remap as ftrace sees it (the
# kernel's own record, independent of truestat): per stacked device, how
# many bios it sent on ("dev,minor" of the device they came from)
T=/sys/kernel/tracing
remaps_start() {
	[ -d $T/events ] || mount -t tracefs tracefs $T 2>/dev/null
	echo 0 >$T/tracing_on
	echo 8192 >$T/buffer_size_kb
	echo >$T/trace
	echo 1 >$T/events/block/block_bio_remap/enable
	echo 1 >$T/tracing_on
}
remaps() {
	local c from
	echo 0 >$T/tracing_on
	echo 0 >$T/events/block/block_bio_remap/enable
	grep -o '<- ([0-9]*,[0-9]*)' $T/trace | sort | uniq -c |
		while read -r c from; do say "$1" remaps "$from $c"; done
	say "$1" remaps_lost "$(grep -o 'entries-in-buffer/entries-written: [0-9]*/[0-9]*' $T/trace)"
}

# bpf_fds NAME: truestat's ($pid) BPF links and programs as the kernel
# shows them in /proc/PID/fdinfo, independent of what truestat says:
# "bpf link TP_NAME PROG_ID" per attachment, "bpf prog PROG_ID RUN_CNT
# NAME" per program (run_cnt counts with kernel.bpf_stats_enabled on; the
# name from bpftool)
bpf_fds() {
	local f i id
	for f in /proc/$pid/fd/*; do
		i=/proc/$pid/fdinfo/${f##*/}
		id=$(fdinfo prog_id "$i")
		case $(readlink "$f") in
		anon_inode:bpf_link)
			say "$1" bpf "link $(fdinfo tp_name "$i") $id" ;;
		anon_inode:bpf-prog)
			say "$1" bpf "prog $id $(fdinfo run_cnt "$i") $(/bin/bpftool prog show id "$id" |
				sed -n 's/.* name \([^ ]*\) .*/\1/p')" ;;
		esac
	done
}

# fdinfo FIELD FILE: FIELD's value in fdinfo FILE, "?" when it has none
fdinfo() {
	awk -v k="$1:" '$1 == k { v = $2 } END { print v == "" ? "?" : v }' "$2"
}

# run_case NAME SCHEDULER [TRUESTAT ARGS...]: nullb0 (K, S) offered DEPTH
run_case() {
	local name=$1 sched=$2
	shift 2
	echo "$sched" >/sys/block/nullb0/queue/scheduler
	say "$name" scheduler "$(cat /sys/block/nullb0/queue/scheduler)"
	ts_start "$name" -d nullb0 "$@" || return
	say "$name" before "$(grep ' nullb0 ' /proc/diskstats)"
	# DEPTH synchronous jobs: each has one bio in the block layer at a
	# time, so the offered depth is exact and the jobs K cannot place in
	# the device sleep in the OS (scheduler or tag wait), after Q
	fio_read nullb0 "$DEPTH" 4k "$RUNTIME" /tmp/$name.fio || say "$name" fio_failed
	say "$name" after "$(grep ' nullb0 ' /proc/diskstats)"
	ts_stop "$name"
	sed "s/^/@@TS $name fio /" /tmp/$name.fio
}

# case raid0: md raid0 over four serial null_blk disks (K = 1, S =
# RAID_S_NS), chunk RAID_CHUNK KiB, read RAID_BS at a time (block-aligned:
# no bio crosses a chunk) by 1, 4, 16, 64 jobs (RAID_JOBS) in turn, each
# RAID_RUNTIME s, under one truestat -D -d md0 run with reports every
# INTERVAL s. The host takes each phase's figures from the reports that
# lie wholly inside it: the number of reports printed when it started and
# ended is given ("at" lines).
# refuse: a kernel older than truestat supports; it must say so and exit 2
case_refuse() {
	ts_start refuse 1 || true
}

case_raid0() {
	local c=raid0 devs="md0 nullb0 nullb1 nullb2 nullb3" t0 n spid
	nullb_load 4 "$RAID_S_NS" 1
	t0=$(now)
	/bin/mdadm --build /dev/md0 --level=0 --chunk="$RAID_CHUNK" \
		--raid-devices=4 /dev/nullb0 /dev/nullb1 /dev/nullb2 /dev/nullb3 2>&1 |
		sed "s/^/@@TS $c setup /"
	[ -b /dev/md0 ] || { say $c setup_failed; return; }
	say $c setup "$(grep '^md0' /proc/mdstat) in $t0..$(now) s"
	remaps_start
	# without truestat (it did not attach) the I/O still runs: the host
	# prints the guest's own figures
	ts_start $c -D -d md0 "$INTERVAL" || pid=
	ds $c start $devs
	: >/tmp/$c.sampling
	sampler $c ' (md0|nullb[0-3]) ' &
	spid=$!
	sampler_idle $c $spid
	for n in $RAID_JOBS; do
		ds $c "p$n-begin" $devs
		fio_read md0 "$n" "$RAID_BS" "$RAID_RUNTIME" /tmp/$c.fio$n || say $c fio_failed "$n"
		ds $c "p$n-end" $devs
	done
	rm /tmp/$c.sampling
	wait $spid
	ds $c end $devs
	[ -z "$pid" ] || ts_stop $c
	remaps $c
	for n in $RAID_JOBS; do sed "s/^/@@TS $c fio p$n /" /tmp/$c.fio$n; done
	/bin/mdadm --stop /dev/md0 >/dev/null 2>&1
}

# case dm: dm-linear, dm-delay (DM_DELAY_MS on reads) and dm-crypt
# (cipher_null: the crypto path without the cost of a cipher) over the
# one nullb0 (K, S), each read by DM_JOBS jobs for DM_RUNTIME s in turn,
# under one truestat run that traces the three and their member. Before
# it (dm_plain), the plain nullb1 traced alone while dm-linear is read
# too. Both runs with kernel.bpf_stats_enabled: which programs ran.
case_dm() {
	local c=dm sz t0 names= t d x args= lin=
	nullb_load 2 "$S_NS" "$K"
	sz=$(blockdev --getsz /dev/nullb0)
	t0=$(now)
	/bin/dmsetup create lin --table "0 $sz linear /dev/nullb0 0" 2>&1 | sed "s/^/@@TS $c setup /"
	/bin/dmsetup create dly --table "0 $sz delay /dev/nullb0 0 $DM_DELAY_MS" 2>&1 | sed "s/^/@@TS $c setup /"
	/bin/dmsetup create cry --table "0 $sz crypt cipher_null-ecb - 0 /dev/nullb0 0" 2>&1 | sed "s/^/@@TS $c setup /"
	for t in lin dly cry; do
		d=
		for x in /sys/block/dm-*; do
			[ "$(cat $x/dm/name 2>/dev/null)" = $t ] && d=${x##*/}
		done
		[ -n "$d" ] || { say $c setup_failed "$t"; continue; }
		say $c dev "$t $d $(cat /sys/block/$d/dev)"
		names="$names $d"
		[ $t != lin ] || lin=$d
		# by the /dev/mapper name, as users know them: truestat
		# resolves it to dm-N, the name it reports
		args="$args -d $t"
	done
	say $c setup "in $t0..$(now) s"
	echo 1 >/proc/sys/kernel/bpf_stats_enabled
	[ -z "$lin" ] || dm_plain "$lin"
	remaps_start
	[ -n "$names" ] && ts_start $c $args || pid=
	ds $c start $names nullb0
	for d in $names; do
		fio_read "$d" "$DM_JOBS" 4k "$DM_RUNTIME" /tmp/$c.fio$d || say $c fio_failed "$d"
		ds $c "$d-end" $names nullb0
	done
	ds $c end $names nullb0
	[ -z "$pid" ] || { bpf_fds $c; ts_stop $c; }
	remaps $c
	echo 0 >/proc/sys/kernel/bpf_stats_enabled
	for d in $names; do sed "s/^/@@TS $c fio $d /" /tmp/$c.fio$d; done
	for t in lin dly cry; do /bin/dmsetup remove $t >/dev/null 2>&1; done
}

# dm_plain LIN: the plain nullb1 traced with -d while dm-linear LIN (over
# nullb0) and nullb1 are read at once: block_bio_remap fires for LIN's
# bios (ftrace) but no traced disk is stacked, so truestat must not run
# its remap program (bpf_fds); nullb1's counts against diskstats
dm_plain() {
	local c=dm_plain fpid
	remaps_start
	ts_start $c -d nullb1 || pid=
	ds $c start nullb1 nullb0 "$1"
	fio_read nullb1 "$DM_JOBS" 4k "$DM_RUNTIME" /tmp/$c.fio &
	fpid=$!
	fio_read "$1" "$DM_JOBS" 4k "$DM_RUNTIME" /tmp/$c.fiolin || say $c fio_failed "$1"
	wait $fpid || say $c fio_failed nullb1
	ds $c end nullb1 nullb0 "$1"
	[ -z "$pid" ] || { bpf_fds $c; ts_stop $c; }
	remaps $c
}

# --- Real drivers: each run below is judged by tests/vm/drivers.py ---

# hctxs NAME DEV: the type of each hardware queue of DEV (default, read,
# poll: debugfs), which says which queues a run can use
hctxs() {
	local h
	for h in /sys/kernel/debug/block/$2/hctx*; do
		[ -d "$h" ] && say "$1" hctx "${h##*/} $(cat $h/type)"
	done
}

# irqs NAME TAG: the interrupt counts of the NVMe I/O queues and the
# virtio-blk request queues (/proc/interrupts): which queues completed
# requests by interrupt
irqs() {
	grep -E 'nvme0q[1-9]|virtio[0-9]*-req' /proc/interrupts | sed "s/^/@@TS $1 irq $2 /"
}

# rq_trace_start [full] / rq_trace NAME DEV: ftrace's record of DEV, the
# kernel's own beside truestat's: "ftrace REQUEUES ERRORS ISSUED": its
# requeues (block_rq_requeue), its completions with an error
# (block_rq_complete), and with "full" (issues and all completions
# traced too, for the few thousand I/Os of scsi_debug) how many of the
# requeues gave back a request the driver had been issued; the others
# never left the OS (SCSI refuses them before blk_mq_start_request when the
# host is blocked). Without "full" ISSUED is -1 and only completions with
# an error are kept.
rq_trace_start() {
	[ -d $T/events ] || mount -t tracefs tracefs $T 2>/dev/null
	echo 0 >$T/tracing_on
	echo 4096 >$T/buffer_size_kb
	echo >$T/trace
	RQ_FULL=${1:-}
	[ -n "$RQ_FULL" ] || echo 'error != 0' >$T/events/block/block_rq_complete/filter
	[ -z "$RQ_FULL" ] || echo 1 >$T/events/block/block_rq_issue/enable
	echo 1 >$T/events/block/block_rq_complete/enable
	echo 1 >$T/events/block/block_rq_requeue/enable
	echo 1 >$T/tracing_on
}
rq_trace() {
	local name=$1 d mm
	shift
	echo 0 >$T/tracing_on
	echo 0 >$T/events/block/block_rq_issue/enable
	echo 0 >$T/events/block/block_rq_complete/enable
	echo 0 >$T/events/block/block_rq_requeue/enable
	echo 0 >$T/events/block/block_rq_complete/filter
	for d in "$@"; do
		mm=$(tr : , </sys/block/$d/dev)
		rq_count "$mm" | sed "s/^/@@TS $name ftrace $d /"
	done
	say "$name" ftrace_kept "$(grep -o 'entries-in-buffer/entries-written: [0-9]*/[0-9]*' $T/trace)"
}

# rq_count MAJ,MIN: "REQUEUES ERRORS ISSUED" of that disk from the trace
rq_count() {
	# a request is "out" (in the driver) from its issue to its completion
	# or requeue, by direction and sector: two requests at one sector at
	# once would be taken for one (4 KiB random over scsi_debug's 64 GiB:
	# about 1 in 1000 runs), and show as a difference to truestat's count
	awk -v mm="$1" -v full="${RQ_FULL:-}" '
		$0 !~ ("block_rq_(issue|requeue|complete): " mm " ") { next }
		{ for (i = 1; i <= NF; i++) {
			if ($i ~ /^block_rq_/) rw = $(i + 2)
			if ($i == "+") k = rw " " $(i - 1)
		} }
		/block_rq_issue:/ { out[k]++; next }
		/block_rq_requeue:/ { rq++; if (out[k] > 0) { out[k]--; issued++ }; next }
		{ if ($NF != "[0]") err++; if (out[k] > 0) out[k]-- }
		END { printf "%d %d %d\n", rq, err, full ? issued : -1 }' $T/trace
}

# drv_run NAME DEV[:DEV...] JOBS IODEPTH FIO_ARGS...: DEV (scheduler none;
# several: fio spreads each job's I/O over them, one truestat traces all)
# under
# fio, 4 KiB random direct I/O, JOBS jobs of IODEPTH each, split over the
# vCPUs (each job pinned to one, so every CPU's hardware queue gets
# JOBS/CPUs x IODEPTH), under one truestat -d DEV run. Around it: the
# guest's diskstats, the queues' counts (hctxs), ftrace's requeues and
# errors (rq_trace); fio's JSON on one line. $TS_ARGS: more of truestat's
# options.
drv_run() {
	local name=$1 devs jobs=$3 depth=$4 q=/sys/block/${2%%:*} ncpu x args=
	devs=$(echo "$2" | tr : ' ')
	shift 4
	ncpu=$(grep -c ^processor /proc/cpuinfo)
	for x in $devs; do
		echo none >/sys/block/$x/queue/scheduler 2>/dev/null
		args="$args -d $x"
	done
	say "$name" dev "$devs"
	say "$name" scheduler "$(cat $q/queue/scheduler)"
	say "$name" nr_requests "$(cat $q/queue/nr_requests)"
	say "$name" hw_queues "$(ls $q/mq | wc -l)"
	say "$name" max_sectors_kb "$(cat $q/queue/max_sectors_kb)"
	say "$name" offered "$((jobs * depth))"
	[ ! -r $q/device/queue_depth ] || say "$name" queue_depth "$(cat $q/device/queue_depth)"
	ts_start "$name" $args $TS_ARGS || return
	rq_trace_start $RQ_TRACE
	hctxs "$name" "${devs%% *}"
	irqs "$name" before
	for x in $devs; do say "$name" before "$(grep " $x " /proc/diskstats)"; done
	/bin/fio --name="$name" --filename="/dev/$(echo $devs | sed 's# #:/dev/#g')" \
		--direct=1 --bs=4k --thread \
		--norandommap --numjobs="$jobs" --iodepth="$depth" \
		--cpus_allowed=0-$((ncpu - 1)) --cpus_allowed_policy=split \
		--group_reporting --runtime="$RUNTIME" --time_based \
		--output-format=json "$@" >/tmp/$name.fio 2>/tmp/$name.fioerr ||
		say "$name" fio_failed "$(tail -n 3 /tmp/$name.fioerr | tr '\n' ' ')"
	for x in $devs; do say "$name" after "$(grep " $x " /proc/diskstats)"; done
	irqs "$name" after
	rq_trace "$name" $devs
	ts_stop "$name"
	say "$name" fio "$(sed -n '/^{/,$p' /tmp/$name.fio | tr -d '\n')"
}

# sysfs_dev GLOB: the block device under the sysfs path GLOB/block/ (a
# driver's disk, whatever sdX name it got), waited for
sysfs_dev() {
	local i=0 x
	while [ $i -lt 50 ]; do
		for x in $1/block/*; do
			[ -e "$x" ] && { wait_dev "${x##*/}"; echo "${x##*/}"; return; }
		done
		sleep 0.1
		i=$((i + 1))
	done
}

# case nvme: qemu's NVMe controller with two namespaces, io_queue_depth
# NVME_QD (NVME_QD - 1 tags per queue), one I/O queue per vCPU,
# interrupt-driven on nvme0n1, then on both namespaces; then again
# with poll_queues=1 and io_uring's hipri, which sends every request to the
# poll queue and has the submitter reap the completions (in batches)
case_nvme() {
	insmod /modules/nvme.ko io_queue_depth="$NVME_QD" || say nvme_irq insmod_failed
	wait_dev nvme0n1
	drv_run nvme_irq nvme0n1 4 8 --ioengine=io_uring --rw=randrw
	# both namespaces at once: one tag set, so one pool of requests
	# that serve either disk in turn
	wait_dev nvme0n2
	drv_run nvme_ns nvme0n1:nvme0n2 4 8 --ioengine=io_uring --rw=randrw
	rmmod nvme
	insmod /modules/nvme.ko io_queue_depth="$NVME_QD" poll_queues=1 || say nvme_poll insmod_failed
	wait_dev nvme0n1
	drv_run nvme_poll nvme0n1 4 8 --ioengine=io_uring --hipri --rw=randrw
	rmmod nvme
}

# case virtio: qemu's virtio-blk with num-queues=2 and a ring of
# VIRTIO_QSIZE: one hardware queue per vCPU
case_virtio() {
	insmod /modules/virtio_blk.ko || say virtio insmod_failed
	wait_dev vda
	drv_run virtio vda 4 8 --ioengine=io_uring --rw=randrw
}

# case nullq: null_blk with two submit queues of K tags, in each irqmode:
# 0 completes inside the submission, 1 in a softirq, 2 by a timer S later
case_nullq() {
	local m
	for m in 0 1 2; do
		nullb_load 1 "$S_NS" "$K" 2 "$m"
		drv_run nullq$m nullb0 4 8 --ioengine=io_uring --rw=randrw
	done
	rmmod null_blk
}

# case tags64: a host's worth of tags: 64 null_blk disks of TAGS64_K tags
# (one queue each) whose timer completes each request TAGS64_S_NS after
# the driver gets it, long enough that a tag freed is taken again at once;
# 64 libaio jobs, each offering 2 x TAGS64_K reads over all 64 disks
# (io_submit waits while a disk has no tag free): every tag of every disk
# in flight at once, 64 x TAGS64_K records in truestat's request table
case_tags64() {
	local i=1 devs=nullb0
	echo 1048576 >/proc/sys/fs/aio-max-nr
	ulimit -n 16384
	nullb_load 64 "$TAGS64_S_NS" "$TAGS64_K"
	while [ $i -lt 64 ]; do devs="$devs:nullb$i"; i=$((i + 1)); done
	RUNTIME=6
	drv_run tags64 "$devs" 64 $((2 * TAGS64_K)) --ioengine=libaio --rw=randread --bs=512
	RUNTIME=2
	rmmod null_blk
}

# case cpus8: a guest of 8 vCPUs, null_blk with a submit queue per CPU (K
# tags each) in each irqmode, 8 fio jobs of depth K, one pinned to each
# CPU: every CPU issues and completes on its own queue, all 8 write the
# disk's one entry. After each run, the CPUs each hardware queue serves
# (debugfs: "hctxN cpu...") and the disk's issues on each CPU ("CPU
# COUNT"), counted by an ftrace instance of its own: block_rq_issue
# filtered to the disk, a small ring whose per-CPU entries + overrun are
# the events written (no trace text to format: 140,000 lines took the
# 6.12 guest longer than its guard)
case_cpus8() {
	local m h i=$T/instances/cpus8 c mm
	[ -d $T/events ] || mount -t tracefs tracefs $T 2>/dev/null
	for m in 0 1 2; do
		say cpus8_$m ncpu "$(grep -c ^processor /proc/cpuinfo)"
		nullb_load 1 "$S_NS" "$K" 8 "$m"
		mkdir -p $i
		echo 16 >$i/buffer_size_kb
		mm=$(cat /sys/block/nullb0/dev)
		echo "dev == $((${mm%:*} << 20 | ${mm#*:}))" >$i/events/block/block_rq_issue/filter
		echo 1 >$i/events/block/block_rq_issue/enable
		drv_run cpus8_$m nullb0 8 "$K" --ioengine=io_uring --rw=randrw
		echo 0 >$i/events/block/block_rq_issue/enable
		for c in $i/per_cpu/cpu*; do
			say cpus8_$m issues_on_cpu "${c##*/cpu} $(awk '$1 == "entries:" || $1 == "overrun:" { n += $2 } END { print n + 0 }' $c/stats)"
		done
		rmdir $i
		for h in /sys/kernel/debug/block/nullb0/hctx*; do
			say cpus8_$m hctx_cpus "${h##*/} $(cd $h && echo cpu*)"
		done
	done
	rmmod null_blk
}

# case scsi: scsi_debug with max_queue SCSI_QD below the offered depth,
# each command answered S_NS after it (ndelay). Runs: plain; every 10th
# command refused as host busy (the midlayer requeues it); every 10th
# failed with a transport error (ABORTED COMMAND: retried, requeued); a
# range of sectors that fails reads with a medium error (not retried: the
# I/O completes with an error). The requeueing runs count by submitter
# (--by process): a request given back enters the OS queue again in a
# kworker or an interrupt, and must stay fio's.
case_scsi() {
	local p=/sys/bus/pseudo/drivers/scsi_debug d
	# 64 GiB seen (virtual_gb), 64 MiB of memory behind them
	insmod /modules/scsi_debug.ko dev_size_mb=64 virtual_gb=64 max_queue="$SCSI_QD" ndelay="$S_NS" ||
		say scsi insmod_failed
	d=$(sysfs_dev "$p/adapter*/host*/target*/*")
	[ -n "$d" ] || { say scsi no_disk; return; }
	RQ_TRACE=full
	drv_run scsi "$d" 4 8 --ioengine=io_uring --rw=randrw
	echo 10 >$p/every_nth
	echo 0x8000 >$p/opts
	TS_ARGS="--by process"
	drv_run scsi_busy "$d" 4 8 --ioengine=io_uring --rw=randrw
	echo 0x10 >$p/opts
	drv_run scsi_retry "$d" 4 8 --ioengine=io_uring --rw=randrw
	TS_ARGS=
	echo 0 >$p/every_nth
	# scsi_debug's medium error: sectors 0x1234 to 0x123d; 64 KiB read
	# around them, 2 of its 16 blocks fail
	echo 2 >$p/opts
	drv_run scsi_error "$d" 4 8 --ioengine=io_uring --rw=randread \
		--offset=$((0x1200 * 512)) --size=64k --continue_on_error=all \
		--ignore_error=61,5
	echo 0 >$p/opts
	RQ_TRACE=
	rmmod scsi_debug
}

# case ahci: qemu's AHCI controller and one SATA disk (libata, NCQ),
# offered 64 at once: NCQ at the depth the guest chose, then queue_depth 1
case_ahci() {
	local d
	insmod /modules/ahci.ko || say ncq insmod_failed
	d=$(sysfs_dev "/sys/bus/pci/drivers/ahci/*/ata*/host*/target*/*")
	[ -n "$d" ] || { say ncq no_disk; return; }
	drv_run ncq "$d" 1 64 --ioengine=io_uring --rw=randread
	echo 1 >/sys/block/$d/device/queue_depth
	drv_run ncq1 "$d" 1 64 --ioengine=io_uring --rw=randread
}

mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
RQ_TRACE=
TS_ARGS=
LOAD_OPTS="--slow=1000 --by=process --pattern"
for c in $CASES; do
	say guest case "$c $(now)"
	case $c in
	base)
		nullb_load 1 "$S_NS" "$K"
		say guest nr_requests "$(cat /sys/block/nullb0/queue/nr_requests)"
		run_case none none
		run_case deadline mq-deadline
		run_case rawtp none --raw-tp
		TS_ENV=TRUESTAT_TEST_MISS_EVERY=20
		run_case missed none
		TS_ENV=
		;;
	load)
		nullb_load 1 "$S_NS" "$K"
		run_case none none
		run_case rawtp none --raw-tp
		# the options' code, which the verifier sees only when they are on
		run_case opts none $LOAD_OPTS
		run_case optsraw none --raw-tp $LOAD_OPTS
		# -p's code too: every option on, under mq-deadline (merges)
		run_case parts mq-deadline -p $LOAD_OPTS
		run_case partsraw mq-deadline --raw-tp -p $LOAD_OPTS
		;;
	raid0) case_raid0 ;;
	dm) case_dm ;;
	nvme | virtio | nullq | cpus8 | tags64 | scsi | ahci | refuse) case_$c ;;
	esac
done
say guest case "end $(now)"
say guest done
poweroff -f
