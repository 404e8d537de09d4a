#!/usr/bin/env bash
# scripts/knee.sh, the active knee finder, against the simulated disk with
# K = 4 units of S = 2 ms: fio offers depth 1, 2, 4, 8, 16 for 2 s each. The
# knee must read parallelism 4 with throughput there near K/S, and
# saturation at the first depth whose p95 service passes 3x depth 1's (16
# by the model). Meanwhile a truestat -D of its own records the whole run,
# and must find the same parallelism. Both SVG plots (knee.sh --svg and
# scripts/curve-svg.py) must be well formed and render. Then its refusals:
# writes to a mounted device or over a filesystem, a missing target, no fio.
# KNEE_PNG_DIR=DIR keeps the rendered PNGs there, to look at.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/simdisk.sh"
need fio python3 xmllint rsvg-convert mkfs.ext4 blkid

KNEE=$TS_ROOT/scripts/knee.sh
CURVE_SVG=$TS_ROOT/scripts/curve-svg.py
K=4 S_US=2000
tmp=$(mktemp -d /tmp/truestat-test.knee.XXXXXX)
on_exit "[[ -n \${KNEE_KEEP:-} ]] || rm -rf '$tmp'"

# svg_ok NAME FILE: well formed, and renders headless to a PNG
svg_ok() {
	local png=$tmp/$1.png
	check_cmd "$1_xml" "$(basename "$2") is well-formed XML (xmllint)" xmllint --noout "$2"
	if rsvg-convert -o "$png" "$2" 2>"$tmp/rsvg.err" &&
		[[ $(head -c 8 "$png" | od -An -tx1 | tr -d ' ') == 89504e470d0a1a0a ]]; then
		check "$1_png" 0 "rendered by rsvg-convert: $(stat -c %s "$png") bytes of PNG"
	else
		check "$1_png" 1 "rsvg-convert failed: $(head -1 "$tmp/rsvg.err")"
	fi
	[[ -z ${KNEE_PNG_DIR:-} ]] || cp "$png" "$KNEE_PNG_DIR/"
}

# expect_refusal NAME STATUS PATTERN MSG -- ARGS: knee.sh ARGS must end with
# STATUS and say PATTERN in one line on stderr
expect_refusal() {
	local name=$1 want=$2 pat=$3 msg=$4 rc=0
	shift 5
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if ((rc == want)) && [[ $(wc -l <"$tmp/err") -eq 1 ]] && grep -q "$pat" "$tmp/err"; then
		check "$name" 0 "$msg: status $rc, '$(cat "$tmp/err")'"
	else
		check "$name" 1 "$msg: status $rc (want $want), stderr '$(head -3 "$tmp/err")'"
	fi
}

# --- the knee of the simulated disk
simdisk_up "$K" "$S_US"
dev=$SIMDISK_LOOP
ts_start "$tmp/curve.json" -D -d "$dev"
rc=0
"$KNEE" --max-depth 16 --runtime 2 --svg "$tmp/knee.svg" --json "$tmp/knee.json" \
	"/dev/$dev" >"$tmp/table" 2>"$tmp/knee.err" || rc=$?
ts_stop INT
simdisk_down
sed 's/^/# /' "$tmp/table"
check knee_runs "$rc" "knee.sh --max-depth 16 --runtime 2 /dev/$dev: status $rc $(grep -v 'depth .* done' "$tmp/knee.err" | tail -1)"

check_lines < <(py "
k, s_ms = $K, $S_US / 1000
d = json.load(open('$tmp/knee.json'))
steps = {r['depth']: r for r in d['steps']}
print('knee_depths', int(sorted(steps) != [1, 2, 4, 8, 16]), 'offered depths %s' % sorted(steps))
# each step's requests are fio's, exactly: those truestat saw and those whose
# completion it did not see (up to 0.5% on this disk, 60-simdisk.sh)
for q, r in sorted(steps.items()):
    ok = r['ios'] + r['missed'] == r['fio_ios'] and r['missed'] <= 0.005 * r['fio_ios']
    print('knee_ios_%d' % q, int(not ok), 'depth %d: truestat %d requests + %d unseen completions, fio %d' % (
        q, r['ios'], r['missed'], r['fio_ios']))
print('knee_parallelism', int(d['parallelism'] != k),
      'parallelism %s, K = %d' % (d['parallelism'], k))
want = k / s_ms * 1000
r = steps[k]
print('knee_iops_at_k', int(not within(r['iops'], want, 0.15)),
      '%.1f IOPS at depth %d, K/S = %.0f (15%%)' % (r['iops'], k, want))
# the rule, from the table itself: the first depth whose p95 > 3x depth 1's
base = steps[1]['service_p95_ms']
first = next((q for q, r in sorted(steps.items()) if q > 1 and r['service_p95_ms'] > 3 * base), None)
print('knee_saturation_rule', int(d['saturation'] != first),
      'saturation %s, first depth with p95 > 3 x %.3f ms: %s' % (d['saturation'], base, first))
# the model: p95 ~ max(1, d/K) S + overhead: 2 S at 8, 4 S at 16
print('knee_saturation_model', int(d['saturation'] != 16),
      'saturation %s, model 16 (p95 %.3f ms at 8, %.3f ms at 16)' % (
          d['saturation'], steps[8]['service_p95_ms'], steps[16]['service_p95_ms']))
# device concurrency while busy: the offered depth, less fio's reissue time.
# An unseen completion leaves the depth registers one high until the step
# ends (1.04-1.19 at depth 1 was seen): not judged then, as in 60-simdisk.sh
for q, r in sorted(steps.items()):
    ok = q * 0.95 <= r['concurrency'] <= q * 1.001
    if r['missed']:
        print('knee_conc_%d' % q, 0, 'depth %d: mean %.2f in the device while busy: not judged, %d unseen completions' % (
            q, r['concurrency'], r['missed']))
    else:
        print('knee_conc_%d' % q, int(not ok), 'depth %d: mean %.2f in the device while busy (-5%%)' % (q, r['concurrency']))
# the same run seen by truestat -D: the same parallelism
c = dev(totals('$tmp/curve.json'), '$dev')['depth_curve']
for r in c['rows']:
    print('# -D depth %d-%d: %.2f s, mean %.2f, %d ios, %.0f IOPS, p95 %.3f ms%s' % (
        r['depth_lo'], r['depth_hi'], r['time_s'], r['mean_depth'] or 0, r['ios'], r['iops'] or 0,
        r['service_p95_ms'] or 0, '' if r['evidence'] else ' (little evidence)'), file=sys.stderr)
# judged only without unseen completions, which leave the registers high
# (once this read 8 for K = 4)
missed = dev(totals('$tmp/curve.json'), '$dev')['ops']['read']['missed']
print('curve_parallelism', int(c['parallelism'] != k and not missed),
      'truestat -D over the whole run: parallelism %s (%s)%s' % (c['parallelism'], c['parallelism_depths'],
      ', not judged: %d unseen completions' % missed if missed else ''))
")
check_cmd knee_table_says "the table states the knee: '$(grep 'parallelism:' "$tmp/table" | sed 's/^ *//')'" \
	grep -q "parallelism: 4: beyond depth 4" "$tmp/table"

svg_ok knee "$tmp/knee.svg"
rc=0
"$CURVE_SVG" "$tmp/curve.json" "$dev" "$tmp/curve.svg" 2>"$tmp/err" || rc=$?
check curve_svg_runs "$rc" "curve-svg.py on the run's totals: status $rc $(head -1 "$tmp/err")"
svg_ok curve "$tmp/curve.svg"
expect_refusal curve_svg_nodev 1 "no report of nosuchdev" "curve-svg.py, a device not in the file" \
	-- "$CURVE_SVG" "$tmp/curve.json" nosuchdev "$tmp/x.svg"

# --- refusals
loop_new 64
mkfs.ext4 -q "/dev/$LOOP"
mnt=$tmp/mnt
mkdir "$mnt"
mount "/dev/$LOOP" "$mnt"
on_exit "umount '$mnt'"
expect_refusal write_mounted 1 "is mounted on $mnt" "--write on a mounted device" \
	-- "$KNEE" --write --runtime 0.2 "/dev/$LOOP"
expect_refusal write_mounted_force 1 "is mounted on $mnt" "--write --force on a mounted device" \
	-- "$KNEE" --write --force --runtime 0.2 "/dev/$LOOP"
umount "$mnt"
expect_refusal write_fs 1 "holds TYPE=ext4" "--write over an unmounted ext4" \
	-- "$KNEE" --write --runtime 0.2 "/dev/$LOOP"
rc=0
"$KNEE" --write --force --max-depth 2 --runtime 0.3 "/dev/$LOOP" >"$tmp/out" 2>"$tmp/err" || rc=$?
check write_force "$rc" "--write --force over an unmounted ext4 writes: status $rc, $(grep -c '^ *[12] ' "$tmp/out") rows"
expect_refusal missing 1 "no such file or device" "a missing target" \
	-- "$KNEE" /dev/truestat-no-such-disk
expect_refusal not_dev 1 "not a block device or a regular file" "a directory" \
	-- "$KNEE" "$tmp"
expect_refusal bad_option 2 "unknown option" "an unknown option" -- "$KNEE" --depth 4 /dev/null
mkdir "$tmp/bin"
ln -s "$(command -v dirname)" "$(command -v awk)" "$tmp/bin/"
expect_refusal no_fio 1 "fio is not installed" "fio not on PATH" \
	-- env PATH="$tmp/bin" "$(command -v bash)" "$KNEE" "/dev/$LOOP"

# --- a file: its disk is traced, and other I/O there is said to mix in
file=$(mktemp /var/tmp/truestat-test.XXXXXX)
on_exit "rm -f '$file'"
dd if=/dev/zero of="$file" bs=1M count=8 status=none conv=fsync
rc=0
"$KNEE" --max-depth 2 --runtime 0.3 "$file" >"$tmp/out" 2>"$tmp/err" || rc=$?
fdisk_of=$(basename "$(readlink -f "/sys/dev/block/$(stat -c '%Hd:%Ld' "$file")")")
[[ -e /sys/class/block/$fdisk_of/partition ]] &&
	fdisk_of=$(basename "$(dirname "$(readlink -f "/sys/class/block/$fdisk_of")")")
grep -q "truestat traces $fdisk_of\$" "$tmp/err" && grep -q "other I/O on $fdisk_of mixes in" "$tmp/err" &&
	[[ $(grep -c '^ *[12] ' "$tmp/out") -eq 2 ]] || rc=1
check file "$rc" "a file on $fdisk_of: status $rc, its disk traced, the mixing noted, 2 rows"

finish
