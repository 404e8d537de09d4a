#!/usr/bin/env bash
# Safe to leave running, 3: eight loop devices under fio at once (one job
# each, different patterns), traced together, once with eight -d options
# and 1 s reports, once with every disk traced and only the totals. Each
# device's counts equal its own /proc/diskstats delta exactly (ios + missed
# per direction), in the totals and summed over the reports, and no
# device's I/O shows up on another.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/faults.sh"
need fio python3

N=8
make_tmp
devs=()
for ((i = 0; i < N; i++)); do
	loop_new 64
	devs+=("$LOOP")
done
# one job per device: reads, writes or both, sizes and depths that differ
jobs=()
rws=(randread randwrite randrw read write randrw randread randwrite)
bss=(4k 16k 4k 64k 8k 4k/50:64k/50 32k 4k)
for ((i = 0; i < N; i++)); do
	jobs+=(--name="j$i" --filename="/dev/${devs[i]}" --rw="${rws[i]}"
		--bssplit="${bss[i]}" --iodepth=$((1 << (i % 4))))
done

for mode in filtered all; do
	out=$tmp/$mode.json
	if [[ $mode == filtered ]]; then
		args=()
		for d in "${devs[@]}"; do args+=(-d "$d"); done
		ts_start "$out" "${args[@]}" 1
	else
		ts_start "$out"
	fi
	for d in "${devs[@]}"; do diskstats "$d"; done >"$tmp/before"
	fio --direct=1 --ioengine=libaio --runtime=3 --time_based \
		--output=/dev/null "${jobs[@]}"
	for d in "${devs[@]}"; do diskstats "$d"; done >"$tmp/after"
	[[ $mode == all ]] || ts_reports_after "$out"	# the reports hold all the I/O
	ts_stop INT
	check "${mode}_exit" "$TS_RC" "exit status $TS_RC at SIGINT"
	check_lines < <(py "$COUNTS_PY
devs = '${devs[*]}'.split()
before = open('$tmp/before').read().splitlines()
after = open('$tmp/after').read().splitlines()
t = totals('$out')
seen = [x['device'] for x in t['devices']]
print('${mode}_all_present', int(not set(devs) <= set(seen)),
      '%d of %d devices in the totals' % (len(set(devs) & set(seen)), len(devs)))
for d, b, a in zip(devs, before, after):
    if d in seen:
        verdict('${mode}_' + d, dev(t, d), b, a)
if '$mode' == 'filtered':
    print('${mode}_only_these', int(set(seen) != set(devs)),
          'devices in the totals: %s' % ' '.join(sorted(seen)))
    iv = [x for x in docs('$out') if x['type'] == 'interval']
    for d, b, a in zip(devs, before, after):
        rows = [x for doc in iv for x in doc['devices'] if x['device'] == d]
        verdict('${mode}_reports_' + d, add_rows(rows), b, a)
")
done
finish
