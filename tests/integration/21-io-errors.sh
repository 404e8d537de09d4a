#!/usr/bin/env bash
# I/Os that fail: a loop device over a file on a 2 MiB tmpfs, written 8 MiB
# with direct I/O. Past the first 2 MiB every write fails (ENOSPC, an I/O
# error for the block layer), and fio, told to go on, counts them. truestat
# counts them as I/Os (diskstats does) and in the event io_errors: equal to
# fio's failed writes, less at most the completions the platform lost
# (counted missed, their status unseen).
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3

make_tmp
mkdir "$tmp/fs"
mount -t tmpfs -o size=2M truestat-test "$tmp/fs"
on_exit "umount '$tmp/fs'" # after the loop device is gone (last to first)
loop_new 16 "$tmp/fs"
dev=$LOOP

read -ra before <"/sys/block/$dev/stat"
ts_start "$tmp/e.json" -d "$dev"
fio --name=e --filename="/dev/$dev" --rw=write --bs=4k --size=8M --direct=1 \
	--ioengine=psync --continue_on_error=all --ignore_error=,ENOSPC \
	--output-format=json --output="$tmp/e.fio"
ts_stop INT
read -ra after <"/sys/block/$dev/stat"

check_lines < <(py "
d = dev(totals('$tmp/e.json'), '$dev')
f = json.load(open('$tmp/e.fio'))['jobs'][0]
w = d['ops']['write']
errs, failed, missed = d['events']['io_errors'], f['total_err'], w['missed']
print('errors_seen', int(failed == 0), 'fio: %d of %d writes failed (ENOSPC past 2 MiB; some must)' % (failed, f['write']['total_ios']))
print('io_errors', int(not failed - missed <= errs <= failed),
      'io_errors %d, fio failed %d (missed %d: their status unseen)' % (errs, failed, missed))
stat = $((after[4] - before[4]))
print('counted_as_ios', int(w['ios'] + missed + w['unissued'] != stat),
      'write ios %d + missed %d + unissued %d = diskstats %d writes, failed ones included'
      % (w['ios'], missed, w['unissued'], stat))
")
finish
