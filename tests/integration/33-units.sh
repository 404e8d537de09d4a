#!/usr/bin/env bash
# The table's times against the JSON of the same reports: a loop device over
# /dev/shm under fio, traced once with the units chosen per table and once
# with --units=ms; TRUESTAT_TEST_JSON has each run write every report's JSON
# beside its table. Every time the table prints (main table, percentiles,
# stack lines' members) must equal the JSON's to the decimals printed, show
# three significant digits unless below 0.1 us (the clock's 1 ns), and sit
# in the unit its header names, chosen by the rule of --help.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/faults.sh"
need fio python3 bpftool

make_tmp
loop_new 256 /dev/shm
dev=$LOOP

# run NAME FIO_SECONDS ARGS...: truestat ARGS -d dev 0.5 (table to
# NAME.table, JSON to NAME.json) around fio; it must end by itself at
# SIGINT with status 0, its programs and links gone.
run() {
	local name=$1 secs=$2 pid rc=0
	shift 2
	TRUESTAT_TEST_JSON=$tmp/$name.json "$TRUESTAT" -v "$@" -d "$dev" 0.5 \
		>"$tmp/$name.table" 2>"$tmp/$name.err" &
	pid=$!
	on_exit "kill -9 $pid"
	wait_for "$pid" "$START_GUARD" grep -q "attached with" "$tmp/$name.err" ||
		{ check "${name}_attached" 1 "$(grep -v '^libbpf' "$tmp/$name.err" | tail -3)"; return; }
	bpf_ids "$pid" >"$tmp/$name.ids"
	fio --name=units --filename="/dev/$dev" --direct=1 --rw=randread --bs=4k \
		--ioengine=libaio --iodepth=4 --runtime="$secs" --time_based \
		--output=/dev/null
	kill -INT "$pid"
	wait "$pid" || rc=$?
	check "${name}_exit" "$rc" "truestat ${*:+$* }-d $dev 0.5: exit $rc, $(grep -c . "$tmp/$name.json") reports"
	check "${name}_detached" "$(bpf_left "$tmp/$name.ids")" \
		"$(wc -l <"$tmp/$name.ids") programs and links held, none left"
}

run auto 2
run ms 1 --units=ms

check_lines < <(python3 - "$tmp" "$dev" <<'PYEOF'
import json, math, re, sys
tmp, dev = sys.argv[1], sys.argv[2]
START = re.compile(r'^\d\d:\d\d:\d\d  (interval|totals over) ')
MAIN = ['QUEUE', 'SERVICE', 'TOTAL']
PCT = ['mean', 'p50', 'p90', 'p99', 'p99_9', 'max']

def reports(name):
    """The table split into reports, each with the JSON of the same one."""
    text, cur = [], None
    for line in open('%s/%s.table' % (tmp, name)):
        if START.match(line):
            cur = []
            text.append(cur)
        if cur is not None and not line.startswith('slow '):
            cur.append(line.rstrip('\n'))
    docs = [json.loads(l) for l in open('%s/%s.json' % (tmp, name)) if l.strip()]
    return list(zip(text, docs)), len(text), len(docs)

def figures(lines, d):
    """(table text, JSON ms, unit) of each time the report's tables print."""
    out, unit, kind, col = [], None, None, {}
    devs = {x['device']: x for x in d['devices']}
    for line in lines:
        f = line.split()
        if f and f[0] == 'DEVICE':
            unit = re.search(r'_(us|ms)\b', line).group(1)
            kind = 'pct' if f[2] == 'TIME' else 'main'
            col = {h.split('_')[0]: i for i, h in enumerate(f)}  # by header
            continue
        if not f or f[0] not in devs or not kind:
            continue
        x = devs[f[0]]
        if kind == 'main':
            o = x['sync'] if f[1] == 'sync' else x['ops'].get(f[1], x['all'] if f[1] == 'all' else None)
            for k in MAIN:
                out.append((f[col[k]], o[k.lower() + '_ms'], unit, kind, '%s %s %s' % (f[0], f[1], k)))
            i = col['SVCTM']
            if len(f) > i and f[i] != '-':
                out.append((f[i], x['iostat']['svctm_ms'], unit, kind, f[0] + ' svctm'))
        elif kind == 'pct':
            o = x['sync'] if f[1] == 'sync' else x['ops'][f[1]]
            p = o['percentiles_ms'][f[2]]
            js = [o[f[2] + '_ms']] + [p[k] for k in PCT[1:]]
            for k, s, v in zip(PCT, f[3:9], js):
                out.append((s, v, unit, kind, '%s %s %s %s' % (f[0], f[1], f[2], k)))
    return out

def judge(name, fixed):
    pairs, ntab, njson = reports(name)
    print('%s_same_reports' % name, int(ntab != njson or ntab < 2),
          '%d table reports, %d JSON lines' % (ntab, njson))
    n, bad, digits, rule, units = 0, [], [], [], set()
    for lines, d in pairs:
        by_table = {}
        for s, v, unit, kind, what in figures(lines, d):
            if s == '-' or v is None:
                if not (s == '-' and v is None):
                    bad.append('%s: table %s, JSON %s' % (what, s, v))
                continue
            n += 1
            units.add(unit)
            scale = 1e3 if unit == 'us' else 1
            dec = len(s.split('.')[1]) if '.' in s else 0
            # the table's last digit, and the JSON's own 6 decimals of ms
            tol = 0.5 * 10 ** -dec + 0.5e-6 * scale + 1e-9
            if abs(float(s) - v * scale) > tol:
                bad.append('%s: table %s %s, JSON %.6f ms' % (what, s, unit, v))
            sig = len(s.replace('.', '').lstrip('0'))
            if float(s) and sig < 3 and not (unit == 'us' and float(s) < 0.1):
                digits.append('%s: %s %s' % (what, s, unit))
            by_table.setdefault((kind, unit), []).append(v)
        for (_, unit), vs in by_table.items():
            low = min([v for v in vs if v > 0] or [math.inf])
            want = fixed or ('us' if low < 0.1 else 'ms')
            if unit != want:
                rule.append('smallest %.6f ms, header %s, want %s' % (low, unit, want))
    print('%s_equal' % name, int(bool(bad) or n < 20),
          '%d times, equal to the JSON to their printed decimals%s'
          % (n, '; not: ' + '; '.join(bad[:5]) if bad else ''))
    print('%s_three_digits' % name, int(bool(digits)),
          'every non-zero time from 0.1 us up has >= 3 significant digits%s'
          % ('; not: ' + '; '.join(digits[:5]) if digits else ''))
    print('%s_unit_rule' % name, int(bool(rule)),
          'units %s, each table as the rule says%s'
          % (','.join(sorted(units)), '; not: ' + '; '.join(rule[:5]) if rule else ''))
    return units

auto = judge('auto', None)
print('auto_fast_in_us', int('us' not in auto),
      'the fast device has a table in us (units seen: %s)' % ','.join(sorted(auto)))
forced = judge('ms', 'ms')
print('ms_fixed', int(forced != {'ms'}), '--units=ms: units seen %s' % ','.join(sorted(forced)))
PYEOF
)
finish
