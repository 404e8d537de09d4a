#!/usr/bin/env bash
# A completion that lands inside another's adds to the same device's
# figures on one CPU keeps both counted (op_add, bpf/account.bpf.h): a loop
# on every CPU counts completions of a test slot while a program on
# block_rq_complete counts one more at each completion of vda, whose
# interrupts fio keeps coming (O_DIRECT reads of a file in /var/tmp;
# /dev/vda itself cannot be opened). The counts must be whole and some of
# the interrupts must have nested; the control, plain adds, must lose some
# in the same time (tests/tools/nest-check.c).
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio

tool=$TS_ROOT/.output/nest-check
tool_need "$tool"
file=$(mktemp /var/tmp/truestat-nest.XXXXXX)
on_exit "rm -f $file"
fio --name=fill --filename="$file" --size=64M --rw=write --bs=1M \
	--output=/dev/null
fio --name=irqs --filename="$file" --size=64M --rw=randread --bs=4k \
	--direct=1 --ioengine=libaio --iodepth=4 --runtime=600 --time_based \
	--output=/dev/null &
fio_pid=$!
on_exit "kill $fio_pid 2>/dev/null; wait $fio_pid 2>/dev/null || true"
check_lines < <("$tool" 60 || true)
finish
