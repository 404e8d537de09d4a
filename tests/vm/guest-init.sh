#!/bin/sh
# /init of the test guest (busybox sh). tests/vm/run.sh copies it into the
# initramfs next to a file "params" that sets S_NS, K, DEPTH, RUNTIME,
# MODULES and GUARD. Every line meant for the host starts with "@@TS "; the
# host parses only those. The guest always powers off: at the end, or after
# GUARD seconds whatever happens.
export PATH=/bin
. /params

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
# kernel messages would land in the middle of our lines on the one console
echo 1 >/proc/sys/kernel/printk

(sleep "$GUARD"; echo "@@TS guest guard_expired"; poweroff -f) &

say() { echo "@@TS $*"; }

say guest kernel "$(uname -r)"
say guest btf "$([ -r /sys/kernel/btf/vmlinux ] && echo yes || echo no)"
say guest clocksource "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
for m in $MODULES; do
	insmod "/modules/$m.ko" || say guest insmod_failed "$m"
done
# known service time S and parallelism K: one hardware queue with K tags,
# each request completed by a timer S after it reaches the driver
insmod /modules/null_blk.ko queue_mode=2 nr_devices=1 submit_queues=1 \
	irqmode=2 completion_nsec="$S_NS" hw_queue_depth="$K" ||
	say guest insmod_failed null_blk
i=0
while [ ! -b /dev/nullb0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
say guest nr_requests "$(cat /sys/block/nullb0/queue/nr_requests)"

# run_case NAME SCHEDULER [TRUESTAT ARGS...]; $TS_ENV: its environment
run_case() {
	name=$1 sched=$2
	shift 2
	echo "$sched" >/sys/block/nullb0/queue/scheduler
	say "$name" scheduler "$(cat /sys/block/nullb0/queue/scheduler)"
	: >/tmp/$name.err
	env $TS_ENV /truestat -j -v -d nullb0 "$@" >/tmp/$name.json 2>>/tmp/$name.err &
	pid=$!
	i=0
	while ! grep -q "attached with" /tmp/$name.err && [ $i -lt 600 ]; do
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	grep "^truestat:" /tmp/$name.err | sed "s/^/@@TS $name stderr /"
	if ! grep -q "attached with" /tmp/$name.err; then
		kill -9 $pid 2>/dev/null
		say "$name" attach_failed
		# the verifier log: its last lines say what was rejected
		tail -n 60 /tmp/$name.err | sed "s/^/@@TS $name log /"
		return
	fi
	say "$name" attach_s "$((i / 10)).$((i % 10))"
	say "$name" before "$(grep ' nullb0 ' /proc/diskstats)"
	# DEPTH synchronous jobs: each has one bio in the block layer at a
	# time, so the offered depth is exact and the jobs K cannot place in
	# the device sleep in the OS (scheduler or tag wait), after Q
	LD_LIBRARY_PATH=/lib /bin/fio --name=vm --filename=/dev/nullb0 \
		--direct=1 --rw=randread --bs=4k --ioengine=psync \
		--numjobs="$DEPTH" --thread --group_reporting \
		--runtime="$RUNTIME" --time_based --output-format=terse \
		--terse-version=3 >/tmp/$name.fio 2>&1 || say "$name" fio_failed
	say "$name" after "$(grep ' nullb0 ' /proc/diskstats)"
	kill -INT $pid
	wait $pid
	say "$name" exit "$?"
	sed "s/^/@@TS $name fio /" /tmp/$name.fio
	sed "s/^/@@TS $name json /" /tmp/$name.json
}

run_case none none
run_case deadline mq-deadline
run_case rawtp none --raw-tp
TS_ENV=TRUESTAT_TEST_MISS_EVERY=20
run_case missed none
TS_ENV=
say guest done
poweroff -f
