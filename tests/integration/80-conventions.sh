#!/usr/bin/env bash
# Conventions users expect: the man page renders without warnings and lists
# every option of --help, as README's Options block does; --version; the bash completion offers options and
# the disks and partitions that exist; real -j -H -D output validates against
# schema/truestat.schema.json, and output with an undocumented field does not;
# make install puts the six files where they belong.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need groff fio sfdisk partx make llvm-readelf llvm-objdump clang

make_tmp
T=$TRUESTAT
MAN=$TS_ROOT/man/truestat.8
COMPLETION=$TS_ROOT/completion/truestat.bash
SCHEMA=$TS_ROOT/schema/truestat.schema.json
VERSION=$(sed -n 's/^VERSION := *//p' "$TS_ROOT/Makefile")

# --- man page ---------------------------------------------------------------

groff -man -ww -z "$MAN" >"$tmp/groff" 2>&1 && rc=0 || rc=$?
check man_groff $((rc + $(wc -l <"$tmp/groff"))) \
	"groff -man -ww -z: exit $rc, $(wc -l <"$tmp/groff") lines of warnings $(head -c 200 "$tmp/groff")"
if command -v man >/dev/null; then
	MANWIDTH=80 man --warnings -l "$MAN" >"$tmp/man.txt" 2>"$tmp/man.err" && rc=0 || rc=$?
	check man_warnings $((rc + $(wc -l <"$tmp/man.err"))) \
		"man --warnings -l: exit $rc, $(wc -l <"$tmp/man.err") lines of warnings $(head -c 200 "$tmp/man.err")"
fi

# The options as --help lists them ("  -d, --device=NAME", "      --raw-tp"),
# and the OPTIONS section of the man page with its \- turned into -.
"$T" --help >"$tmp/help"
grep -oE -- '^  (-[a-zA-Z], )? *--[a-z][a-z-]*(\.[a-z][a-z-]*)*' "$tmp/help" | grep -oE -- '--[a-z][a-z-]*(\.[a-z][a-z-]*)*|-[a-zA-Z]' |
	sort -u >"$tmp/help.opts"
sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$MAN" | sed 's/\\-/-/g' >"$tmp/man.options"
missing=()
while read -r opt; do
	grep -qE -- "(^|[^a-zA-Z-])${opt//./\\.}\\.?([^a-z.-]|\$)" "$tmp/man.options" || missing+=("$opt")
done <"$tmp/help.opts"
check man_lists_help_options ${#missing[@]} \
	"$(wc -l <"$tmp/help.opts") options in --help ($(grep -c -- '^--' "$tmp/help.opts") long), all in the man page's OPTIONS; missing: ${missing[*]:-none}"
extra=()
for opt in $(grep -oE -- '--[a-z][a-z-]+(\.[a-z][a-z-]*)*' "$tmp/man.options" | sort -u); do
	grep -qxF -- "$opt" "$tmp/help.opts" || extra+=("$opt")
done
check man_no_stale_options ${#extra[@]} "long options in the man page's OPTIONS but not in --help: ${extra[*]:-none}"

# The README's "## Options" block (its short list; the man page is the
# reference) names every option of --help, and none that --help lacks.
awk '/^## Options$/{s=1; next} s&&/^## /{exit} s&&/^```/{f++; next} s&&f==1' "$TS_ROOT/README.md" >"$tmp/readme.options"
grep -oE -- '^  (-[a-zA-Z], )? *--[a-z][a-z-]*(\.[a-z][a-z-]*)*' "$tmp/readme.options" | grep -oE -- '--[a-z][a-z-]*(\.[a-z][a-z-]*)*|-[a-zA-Z]' |
	sort -u >"$tmp/readme.opts"
check readme_lists_help_options \
	"$([[ -s $tmp/readme.opts ]] && cmp -s "$tmp/help.opts" "$tmp/readme.opts" && echo 0 || echo 1)" \
	"$(wc -l <"$tmp/readme.opts") options in README's Options block, $(wc -l <"$tmp/help.opts") in --help; only in --help: $(comm -23 "$tmp/help.opts" "$tmp/readme.opts" | xargs) ; only in README: $(comm -13 "$tmp/help.opts" "$tmp/readme.opts" | xargs)"
th=$(sed -n 's/^\.TH .*"truestat \([^"]*\)".*/\1/p' "$MAN")
check man_version "$([[ $th == "$VERSION" ]] && echo 0 || echo 1)" \
	"the man page's .TH says truestat $th, the Makefile VERSION $VERSION"
missing=()
for what in "EXIT STATUS" SIGNALS ENVIRONMENT EXAMPLES "SEE ALSO" "JSON OUTPUT" \
	TRUESTAT_BTF TRUESTAT_TEST_VERIFIER_FAILURE SIGHUP truestat.schema.json \
	"iostat (1)" "biolatency (8)" "btt (1)" "blktrace (8)" \
	QUEUE_ms SERVICE_ms TOTAL_ms CONC CONC_MAX OS_QD BUSY% SVCTM_ms AVG_KiB MiB/s MRG/s \
	MEAN_ms P99.9_ms MAX_ms TIME% P95_ms; do
	grep -qF -- "$what" "$MAN" || missing+=("$what")
done
check man_sections ${#missing[@]} "the man page has the sections, columns, variables and references; missing: ${missing[*]:-none}"

# Every event of include/events.def (their one source) has its entry in the
# man page's EVENTS section, and the section names no other
sed -n 's/^TS_EVENT([A-Z_]*, "\([a-z_]*\)",$/\1/p' "$TS_ROOT/include/events.def" | sort >"$tmp/events"
sed -n '/^\.SH EVENTS/,/^\.SH /p' "$MAN" | sed -n '/^\.TP/{n;s/^\.BR* //p}' |
	sed 's/ *", " */\n/g' | sort >"$tmp/man.events"
check man_lists_events "$([[ -s $tmp/events ]] && cmp -s "$tmp/events" "$tmp/man.events" && echo 0 || echo 1)" \
	"$(wc -l <"$tmp/events") events in events.def, $(wc -l <"$tmp/man.events") in the man page's EVENTS; only in events.def: $(comm -23 "$tmp/events" "$tmp/man.events" | xargs) ; only in the man page: $(comm -13 "$tmp/events" "$tmp/man.events" | xargs)"

# Every hook of include/hooks.def (the loader's list) has a program of
# each attach kind in the BPF object, and no program is of another
# tracepoint: the loader would leave it unloaded without a word
sed -n 's/^TS_HOOK([A-Z_]*, "\([a-z_]*\)",.*/\1/p' "$TS_ROOT/include/hooks.def" | sort >"$tmp/hooks"
for kind in tp_btf raw_tp; do
	llvm-readelf -S --wide "$TS_ROOT/.output/truestat.bpf.o" |
		grep -oE " $kind/[a-z_]+" | sed "s| $kind/||" | sort -u >"$tmp/$kind"
	check "hooks_$kind" "$([[ -s $tmp/hooks ]] && cmp -s "$tmp/hooks" "$tmp/$kind" && echo 0 || echo 1)" \
		"$(wc -l <"$tmp/hooks") hooks in hooks.def, $(wc -l <"$tmp/$kind") $kind programs in truestat.bpf.o; only in hooks.def: $(comm -23 "$tmp/hooks" "$tmp/$kind" | xargs) ; only in the object: $(comm -13 "$tmp/hooks" "$tmp/$kind" | xargs)"
done

# Each header of bpf/ includes what it uses: it compiles on its own, in
# both objects (as .output/truestat.bpf.o and truestat-locked.bpf.o are;
# a *_locked header only in the second)
alone=()
arch=$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
for h in "$TS_ROOT"/bpf/*.bpf.h; do
	for v in "" -DTS_LOCKED_ATOMICS; do
		[[ $h == *_locked.bpf.h && -z $v ]] && continue
		echo "#include \"${h##*/}\"" | clang -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$arch $v -Wall -Werror \
			-Wno-unused-function -I"$TS_ROOT/include" -I"$TS_ROOT/.output" -I"$TS_ROOT/bpf" \
			-fsyntax-only -x c - 2>"$tmp/alone.err" || alone+=("${h##*/}${v:+ $v}: $(grep -m1 error "$tmp/alone.err")")
	done
done
check bpf_headers_alone ${#alone[@]} \
	"$(ls "$TS_ROOT"/bpf/*.bpf.h | wc -l) headers of bpf/, each compiled alone with and without TS_LOCKED_ATOMICS; failed: ${alone[*]:-none}"

# The object for kernels before 5.12 holds no atomic but the add (BPF_XADD,
# imm 0): those kernels reject any other before verifying a thing ("BPF_STX
# uses reserved fields"), and LLVM makes some adds other atomics (an add of
# a constant 0 an OR). Its qemu guest would tell only in 95-older-kernel.
locked=$TS_ROOT/.output/truestat-locked.bpf.o
others=$(llvm-objdump -d "$locked" | awk '$1 ~ /^[0-9a-f]+:$/ && ($2 == "db" || $2 == "c3") && $6 $7 $8 $9 != "00000000" { n++; if (n == 1) first = $0 } END { print n + 0, first }')
adds=$(llvm-objdump -d "$locked" | awk '$1 ~ /^[0-9a-f]+:$/ && ($2 == "db" || $2 == "c3") { n++ } END { print n + 0 }')
check locked_atomics_add_only "$([[ ${others%% *} == 0 && $adds -gt 0 ]]; echo $?)" \
	"the object for kernels before 5.12: $adds atomic instructions, other than the add: ${others}"

# --- --version ----------------------------------------------------------------

out=$("$T" --version) && rc=0 || rc=$?
out_V=$("$T" -V) || true
re="^truestat ${VERSION//./\\.}( \(([0-9a-f]{4,})\))?\$"
if [[ $rc -eq 0 && $out =~ $re && $out == "$out_V" ]]; then
	hash=${BASH_REMATCH[2]}
	# the hash, when there is one, names a commit of this tree
	if [[ -n $hash ]] && command -v git >/dev/null && git -C "$TS_ROOT" rev-parse -q --git-dir >/dev/null 2>&1; then
		git -C "$TS_ROOT" cat-file -e "$hash^{commit}" 2>/dev/null && rc=0 || rc=1
	fi
else
	rc=$((rc + 1))
fi
check version "$rc" "--version and -V exit 0 and print '$out' (Makefile VERSION $VERSION)"
check_cmd help_lists_version "--help lists -V, --version" grep -qE -- '^  -V, --version ' "$tmp/help"

# --- a loop device with a partition: for the completion and for real I/O ----

LOOP_FLAGS=-P loop_new 64
echo ",32M,L" | sfdisk -q "/dev/$LOOP" >/dev/null
partx -u "/dev/$LOOP" 2>/dev/null || true # sfdisk's re-read does not always add it
for _ in $(seq 50); do [[ -e /sys/class/block/${LOOP}p1 ]] && break; sleep 0.1; done

# --- bash completion ------------------------------------------------------------

# comp WORD...: what the completion offers for "WORD... <TAB>" (the last word
# is the one being completed), sorted, on one line.
comp() {
	bash --norc --noprofile -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_truestat
		printf "%s\n" "${COMPREPLY[@]}"' _ "$COMPLETION" "$@" | sed '/^$/d' | sort | xargs
}
# expect_comp NAME WANT WORD...: the completion offers exactly WANT.
expect_comp() {
	local name=$1 want=$2 got
	shift 2
	got=$(comp "$@")
	check "$name" "$([[ $got == "$want" ]] && echo 0 || echo 1)" "'$*<TAB>' offers '$got' (want '$want')"
}
# Other users attach and detach loop devices meanwhile: what is offered must
# lie between the loop devices that existed both before and after the call
# and those that existed at either time.
loops() { for d in /sys/block/loop* /sys/class/block/loop*; do [[ -e $d ]] && echo "${d##*/}"; done | sort -u; }
# expect_loops NAME WORD...: the completion offers the loop devices, as above.
expect_loops() {
	local name=$1 before after got
	shift
	before=$(loops)
	got=$(comp "$@" | tr ' ' '\n')
	after=$(loops)
	if [[ -z $(comm -23 <(comm -12 <(echo "$before") <(echo "$after")) <(echo "$got")) &&
		-z $(comm -13 <(sort -u <(echo "$before") <(echo "$after")) <(echo "$got")) ]]; then
		check "$name" 0 "'$*<TAB>' offers the $(echo "$got" | wc -w) loop devices and partitions: $(echo $got)"
	else
		check "$name" 1 "'$*<TAB>' offers '$(echo $got)'; before: '$(echo $before)', after: '$(echo $after)'"
	fi
}
expect_loops complete_loop_devices truestat -d lo
check_cmd complete_has_new_disk "... including the new disk $LOOP and its partition ${LOOP}p1" \
	grep -qw -- "${LOOP}p1" <<<"$(comp truestat -d "$LOOP")"
expect_comp complete_partition "${LOOP}p1" truestat -d "${LOOP}p"
expect_loops complete_long_device truestat --device = lo
expect_comp complete_long_device_one_word "--device=${LOOP}p1" truestat "--device=${LOOP}p"
expect_comp complete_dev_prefix "/dev/${LOOP}p1" truestat -j -d "/dev/${LOOP}p"
expect_comp complete_attached "-d${LOOP}p1" truestat "-d${LOOP}p"
expect_comp complete_h "--heatmap --help --hist" truestat --h
expect_comp complete_hist_fine "fine" truestat --hist =
expect_comp complete_hist_fine_one_word "--hist=fine" truestat --hist=f
expect_comp complete_units "ms us" truestat --units ""
expect_comp complete_units_one_word "--units=us" truestat --units=u
expect_comp complete_interval "" truestat -j 1
longs=$(grep -- '^--' "$tmp/help.opts" | sort | xargs)
expect_comp complete_every_long_option "$longs" truestat --
complete_p=$(bash --norc --noprofile -c '. "$1"; complete -p truestat' _ "$COMPLETION")
check_cmd complete_registered "registered: $complete_p" grep -q -- '-F _truestat truestat$' <<<"$complete_p"

# --- JSON Schema against real output ------------------------------------------

py_schema=
for p in /usr/bin/python3 python3; do
	if command -v "$p" >/dev/null && "$p" -c 'import jsonschema' 2>/dev/null; then
		py_schema=$p
		break
	fi
done
if [[ -z $py_schema ]]; then
	check schema_python 1 "no python3 with jsonschema (Debian: python3-jsonschema, make deps)"
	finish
	exit
fi

# 0.5 s reports and the totals, over every disk, while the loop device
# reads, writes, flushes and discards (rate-limited: the host is shared).
# Not a count of reports: fio starts after the attach, and ends, when the
# host lets it; truestat is stopped two reports after the discard, so that
# a report holds the loop device's I/O whatever the host's speed.
ts_start "$tmp/json" -H -D 0.5
fio --name=mix --filename="/dev/$LOOP" --direct=1 --rw=randrw --bs=4k --offset=36M --size=24M \
	--ioengine=libaio --iodepth=8 --rate_iops=1500,1500 --fsync=64 \
	--time_based --runtime=1 --output=/dev/null
blkdiscard -o $((62 << 20)) -l $((1 << 20)) "/dev/$LOOP" 2>/dev/null || true
ts_reports_after "$tmp/json"
ts_stop INT
check schema_run "$TS_RC" "truestat -j -H -D 0.5 ended at SIGINT two reports after fio, status $TS_RC, $(wc -l <"$tmp/json") lines"

"$py_schema" "$TS_ROOT/tests/tools/validate-json.py" "$SCHEMA" "$tmp/json" >"$tmp/valid" 2>&1 && rc=0 || rc=$?
check schema_valid "$rc" "$(tail -1 "$tmp/valid") against schema/truestat.schema.json ($($py_schema -c 'import importlib.metadata as m; print("jsonschema", m.version("jsonschema"))'))$( ((rc)) && head -5 "$tmp/valid")"

# What the lines held: optional parts (-H, -D) must really have been
# validated, in a report and in the totals. Both hold the loop device by
# construction: the second report after the discard was read after it,
# and the totals are of the whole run.
py "
d = docs('$tmp/json')
types = [x['type'] for x in d]
loop = [x for doc in d for x in doc['devices'] if x['device'] == '$LOOP']
in_ivs = sum(x['device'] == '$LOOP' for doc in d if doc['type'] == 'interval' for x in doc['devices'])
in_tot = sum(x['device'] == '$LOOP' for doc in d if doc['type'] == 'totals' for x in doc['devices'])
ops = sorted({op for x in loop for op in x['ops']})
hist = sum('histograms' in o for x in loop for o in x['ops'].values())
curve = sum('depth_curve' in x for x in loop)
devs = sum(len(doc['devices']) for doc in d)
print('schema_lines', int(len(types) < 3 or types != ['interval'] * (len(types) - 1) + ['totals']),
      'types', ' '.join(types), '(at least the 2 reports waited for, then the totals)')
print('schema_covered', int(not (in_ivs >= 1 and in_tot == 1 and hist and curve and {'read', 'write'} <= set(ops))),
      '%d device objects validated, %d of $LOOP (%d in reports, at least 1; %d in the totals, 1 wanted): '
      'ops %s (read and write wanted), %d with histograms, %d with depth_curve (1 at least each)'
      % (devs, len(loop), in_ivs, in_tot, ','.join(ops), hist, curve))
" | check_lines

# The check can fail: one line with an undocumented field, textually.
sed '2s/"lost_events":/"undocumented":1,"lost_events":/' "$tmp/json" >"$tmp/mutated"
"$py_schema" "$TS_ROOT/tests/tools/validate-json.py" "$SCHEMA" "$tmp/mutated" >"$tmp/invalid" 2>&1 && rc=0 || rc=$?
check schema_rejects_mutated_line "$([[ $rc -eq 1 ]] && grep -q "^line 2: .*'undocumented'" "$tmp/invalid" && echo 0 || echo 1)" \
	"a copy with one field added to line 2: exit $rc, $(grep -m1 '^line' "$tmp/invalid" || echo 'no error')"

# Every object is closed, and the types and required fields hold: mutations
# of a real report, each of which must be rejected.
"$py_schema" - "$SCHEMA" "$tmp/json" "$LOOP" <<'EOF' | check_lines
import copy, json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
v = jsonschema.validators.validator_for(schema)(schema)
docs = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
doc = docs[-1]
dev = next(x for x in doc['devices'] if x['device'] == sys.argv[3])
i = doc['devices'].index(dev)
op = next(o for o in dev['ops'] if 'histograms' in dev['ops'][o])
def at(x):
    return x['devices'][i]
mutations = {
    'extra top-level field': lambda x: x.update(extra=1),
    'extra device field': lambda x: at(x).update(extra=1),
    'extra op field': lambda x: at(x)['ops'][op].update(extra=1),
    'extra direction': lambda x: at(x)['ops'].update(zone=at(x)['ops'][op]),
    'extra field in all': lambda x: at(x)['all'].update(extra=1),
    'histograms in all': lambda x: at(x)['all'].update(histograms=at(x)['ops'][op]['histograms']),
    'extra percentile': lambda x: at(x)['ops'][op]['percentiles_ms']['service'].update(p75=1.0),
    'extra histogram': lambda x: at(x)['ops'][op]['histograms'].update(read_ns=[]),
    'bucket of three': lambda x: at(x)['ops'][op]['histograms']['service_ns'][0].append(1),
    'extra concurrency field': lambda x: at(x)['concurrency'].update(extra=1),
    'extra os_queue field': lambda x: at(x)['os_queue'].update(extra=1),
    'extra iostat field': lambda x: at(x)['iostat'].update(await_ms=1.0),
    'extra depth_curve field': lambda x: at(x)['depth_curve'].update(extra=1),
    'extra depth_curve row field': lambda x: at(x)['depth_curve']['rows'][0].update(extra=1),
    'extra event': lambda x: at(x)['events'].update(new_event=0),
    'event missing': lambda x: at(x)['events'].pop('stale_bios'),
    'ios null': lambda x: at(x)['ops'][op].update(ios=None),
    'ios as a string': lambda x: at(x)['ops'][op].update(ios='1'),
    'max_exact as a number': lambda x: at(x)['concurrency'].update(max_exact=1),
    'bad type': lambda x: x.update(type='total'),
    'time not UTC': lambda x: x.update(time=x['time'].rstrip('Z')),
}
base = list(v.iter_errors(doc))
accepted = []
for name, mutate in mutations.items():
    x = copy.deepcopy(doc)
    mutate(x)
    if not list(v.iter_errors(x)):
        accepted.append(name)
print('schema_rejects_mutations', int(bool(base or accepted)),
      '%d of %d mutations of the totals line rejected (direction %s)%s'
      % (len(mutations) - len(accepted), len(mutations), op,
         '; accepted: ' + ', '.join(accepted) if accepted else ''))
EOF

# doc/json.md (where the README points for -j) and the schema name the same
# fields; a page without its example fails, it does not pass unchecked.
"$py_schema" - "$SCHEMA" "$TS_ROOT/doc/json.md" <<'EOF' | check_lines
import json, re, sys
def names(node, out):
    if isinstance(node, dict):
        out.update(node.get('properties', {}))
        for v in node.values():
            names(v, out)
    elif isinstance(node, list):
        for v in node:
            names(v, out)
    return out
schema = names(json.load(open(sys.argv[1])), set())
page = open(sys.argv[2]).read()
parts = re.split(r'^# JSON \(`-j`\)\n', page, maxsplit=1, flags=re.M)
fences = parts[1].split('```') if len(parts) == 2 else []
if len(fences) < 3:
    print('schema_doc_json 1 doc/json.md has no "# JSON (`-j`)" heading followed by a fenced example')
    sys.exit(0)
block = fences[1]
documented = set(re.findall(r'"([a-z0-9_]+)":', block))
words = set(re.findall(r'[a-z0-9_]+', block))
print('schema_doc_json', int(bool(documented - schema or schema - words)),
      '%d field names in the schema, %d keys in doc/json.md\'s JSON example; not in the schema: %s; not in doc/json.md: %s'
      % (len(schema), len(documented), ' '.join(sorted(documented - schema)) or 'none',
         ' '.join(sorted(schema - words)) or 'none'))
EOF

# --- make install ---------------------------------------------------------------

root=$tmp/root
make -C "$TS_ROOT" --no-print-directory install DESTDIR="$root" PREFIX=/usr >"$tmp/install.log" 2>&1 && rc=0 || rc=$?
check install_runs "$rc" "make install DESTDIR=\$tmp PREFIX=/usr: exit $rc $( ((rc)) && tail -3 "$tmp/install.log")"
bad=()
for f in "sbin/truestat:755:$T" "share/man/man8/truestat.8:644:$MAN" \
	"share/bash-completion/completions/truestat:644:$COMPLETION" \
	"share/doc/truestat/truestat.schema.json:644:$SCHEMA" \
	"share/truestat/truestat.rules.yml:644:$TS_ROOT/prometheus/truestat.rules.yml"; do
	IFS=: read -r path mode src <<<"$f"
	[[ -f $root/usr/$path && $(stat -c %a "$root/usr/$path") == "$mode" ]] &&
		cmp -s "$src" "$root/usr/$path" || bad+=("$path")
done
unit=$root/usr/lib/systemd/system/truestat-exporter.service
[[ -f $unit && $(stat -c %a "$unit") == 644 ]] &&
	diff <(sed 's|/usr/local/sbin/truestat|/usr/sbin/truestat|' "$TS_ROOT/contrib/systemd/truestat-exporter.service") "$unit" >/dev/null &&
	grep -qx 'ExecStart=/usr/sbin/truestat --prometheus=127.0.0.1:9101' "$unit" || bad+=(lib/systemd/system/truestat-exporter.service)
n=$(find "$root" -type f | wc -l)
check install_files $((${#bad[@]} + (n != 6))) \
	"$n files under \$DESTDIR/usr: sbin/truestat, man8/truestat.8, completions/truestat, doc/truestat/truestat.schema.json, systemd/system/truestat-exporter.service (ExecStart= in PREFIX), truestat/truestat.rules.yml with their modes and contents; wrong: ${bad[*]:-none}"
if command -v man >/dev/null; then
	found=$(MANPATH=$root/usr/share/man man -w truestat 2>/dev/null || true)
	check install_man_found "$([[ $found == "$root/usr/share/man/man8/truestat.8" ]] && echo 0 || echo 1)" \
		"man -w truestat with MANPATH=\$DESTDIR/usr/share/man: ${found:-not found}"
fi
# against the tree's binary as installed: in a work tree whose HEAD moved
# since the build, make install rebuilds it with the new commit in --version
installed=$("$root/usr/sbin/truestat" --version 2>&1 || true)
built=$("$T" --version 2>&1 || true)
check install_binary_runs "$([[ $installed == "$built" && $built =~ $re ]] && echo 0 || echo 1)" \
	"the installed binary says '$installed', the tree's '$built'"
finish
