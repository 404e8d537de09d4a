#!/usr/bin/env bash
# --exclude=GLOB: two loop devices, one excluded by name, then both by a
# glob. An excluded disk takes no slot and is in no report, while the other
# one's reads equal its /proc/diskstats delta exactly; each report names
# the disks left out. A glob that matches no disk is said on stderr and in
# the report; a filter that leaves no disk says so, never "no I/O"; a bad
# glob is one line and exit status 2.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need fio python3

loop_new 64
a=$LOOP
loop_new 64
b=$LOOP
make_tmp

# reads of DEV, direct, 4 KiB, a fixed number of them
reads() {
	fio --name=r --filename="/dev/$1" --direct=1 --rw=randread --bs=4k \
		--size=8M --ioengine=libaio --iodepth=4 --output=/dev/null
}

# run NAME ARGS...: truestat with ARGS over reads of both disks
run() {
	local name=$1
	shift
	ts_start "$tmp/$name" "$@"
	before=$(diskstats "$b")
	before_a=$(diskstats "$a")
	reads "$a"
	reads "$b"
	after=$(diskstats "$b")
	after_a=$(diskstats "$a")
	ts_stop INT
	check "${name}_exit" "$TS_RC" "SIGINT ends truestat with status $TS_RC"
}

run by_name --exclude="$a"
check_lines < <(py "
t = totals('$tmp/by_name')
names = [d['device'] for d in t['devices']]
print('by_name_left_out', int('$a' in names), '$a not in the report (%s)' % ' '.join(names))
b0 = [int(x) for x in '$before'.split()]
b1 = [int(x) for x in '$after'.split()]
a0 = [int(x) for x in '$before_a'.split()]
a1 = [int(x) for x in '$after_a'.split()]
print('# $a: %d reads in diskstats, none traced' % (a1[0] - a0[0]))
r = dev(t, '$b')['ops'].get('read', {})
n = r.get('ios', 0) + r.get('missed', 0)
print('by_name_other_exact', int(n != b1[0] - b0[0]),
      '$b reads: truestat %d + %d missed, diskstats %d (exact)'
      % (r.get('ios', 0), r.get('missed', 0), b1[0] - b0[0]))
x = t['exclude']
print('by_name_listed', int(x['names'] != ['$a'] or x['disks'] != 1 or x['unmatched'] or x['none_left']),
      'exclude: %s' % x)
")
check_cmd by_name_no_slot "-v names a slot for $b, none for $a" \
	bash -c "grep -q 'tracing $b ' '$tmp/by_name.err' && ! grep -q 'tracing $a ' '$tmp/by_name.err'"
check_cmd by_name_said "-v says what it leaves out" \
	grep -q "exclude: not tracing 1 disk: $a" "$tmp/by_name.err"

run by_glob --exclude='loop*' --exclude='nosuchdisk*'
check_lines < <(py "
t = totals('$tmp/by_glob')
names = [d['device'] for d in t['devices']]
loops = [n for n in names if n.startswith('loop')]
print('by_glob_left_out', int(bool(loops)), 'no loop device in the report (%s)' % ' '.join(names))
x = t['exclude']
# other tests may add loop devices meanwhile: the names are loop devices,
# both of this test's among them, and as many as it counts
bad = [n for n in x['names'] if not n.startswith('loop')]
print('by_glob_listed', int(bool(bad) or '$a' not in x['names'] or '$b' not in x['names']
                            or x['disks'] != len(x['names'])),
      'exclude: %d disks named, %d counted, not loop devices: %s'
      % (len(x['names']), x['disks'], bad or 'none'))
print('by_glob_unmatched', int(x['unmatched'] != ['nosuchdisk*']), 'unmatched: %s' % x['unmatched'])
")
check_cmd by_glob_unmatched_said "stderr says the glob matches no disk" \
	grep -q "exclude matches no disk: nosuchdisk\*" "$tmp/by_glob.err"

# Every disk -d names excluded: the table says so, not "no I/O"
"$TRUESTAT" -d "$b" --exclude="$b" 0.2 1 >"$tmp/none" 2>"$tmp/none.err" && rc=0 || rc=$?
check none_left_exit "$rc" "truestat -d $b --exclude=$b 0.2 1: status $rc"
check_cmd none_left_said "the report says nothing is traced: $(head -1 "$tmp/none")" \
	grep -q "nothing traced: --exclude leaves no disk" "$tmp/none"
check_cmd none_left_not_idle "and never 'no I/O'" bash -c "! grep -q 'no I/O' '$tmp/none'"

"$TRUESTAT" --exclude='sd[ab' 1 1 >"$tmp/bad" 2>"$tmp/bad.err" && rc=0 || rc=$?
check bad_glob "$( ((rc == 2)) && [[ ! -s $tmp/bad && $(wc -l <"$tmp/bad.err") == 1 ]]; echo $?)" \
	"--exclude='sd[ab': status $rc, $(wc -l <"$tmp/bad.err") line: $(head -1 "$tmp/bad.err")"
finish
