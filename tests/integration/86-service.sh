#!/usr/bin/env bash
# Run as a service: contrib/systemd/truestat-exporter.service passes
# systemd-analyze verify and scores as hardened; truestat runs as an
# unprivileged user with exactly the unit's capabilities (setpriv), attaches
# and serves /metrics, and refuses to start without either of them; every
# system call it makes is in the unit's SystemCallFilter=. Where systemd is
# PID 1, the unit itself is also started (from /run, on a free port),
# scraped and stopped. prometheus/truestat.rules.yml passes promtool check
# rules and its unit test, and every metric and label its rules and test
# series use is one the exporter serves. Leaves no unit, process or BPF
# program behind.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
"$TS_ROOT/scripts/deps.sh" systemd prometheus strace >/dev/null 2>&1 || true
need systemd-analyze promtool setpriv strace python3 curl bpftool

unit=$TS_ROOT/contrib/systemd/truestat-exporter.service
rules=$TS_ROOT/prometheus/truestat.rules.yml
rules_test=$TS_ROOT/prometheus/truestat.rules.test.yml
make_tmp
chmod 755 "$tmp" # the unprivileged runs below execute a copy from here

# unit_value KEY: the value of KEY= in the unit (the last one)
unit_value() { sed -n "s/^$1=//p" "$unit" | tail -1; }
# ts_progs UID: truestat's programs (ts_*) in the kernel loaded by UID;
# other truestat runs on the machine (as root) are not counted
ts_progs() {
	bpftool -j prog show 2>/dev/null | python3 -c '
import json, sys
print(sum(p.get("name", "").startswith("ts_") and p.get("uid") == int(sys.argv[1])
          for p in json.load(sys.stdin)))' "$1"
}
# wait_metrics PID URL FILE: URL answered, into FILE, within START_GUARD s
# (a guard: the start is an attach, slower under strace or on a busy host);
# it fails at once if PID (when not empty) ends first
wait_metrics() {
	wait_for "$1" "$START_GUARD" curl -sf "$2" -o "$3"
}

# --- the unit file
exec_start=$(unit_value ExecStart)
read -r unit_bin unit_args <<<"$exec_start"
# verify wants ExecStart's binary to exist: the copy checked points at the
# one built here; everything else is the file as installed
mkdir "$tmp/unit"
sed "s#^ExecStart=$unit_bin#ExecStart=$TRUESTAT#" "$unit" >"$tmp/unit/${unit##*/}"
verify=$(systemd-analyze verify --man=no "$tmp/unit/${unit##*/}" 2>&1) && rc=0 || rc=$?
check unit_verify "$([[ $rc == 0 && -z $verify ]]; echo $?)" \
	"systemd-analyze verify: no error or warning in ${unit#"$TS_ROOT"/} (ExecStart $unit_bin pointed at ./truestat; its Documentation= man page is man/truestat.8)${verify:+: $verify}"
exposure=$(systemd-analyze security --offline=yes "$tmp/unit/${unit##*/}" 2>&1 |
	sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
check unit_exposure "$(python3 -c "import sys; sys.exit(not ('$exposure' and float('$exposure') <= 2.0))"; echo $?)" \
	"systemd-analyze security --offline: exposure ${exposure:-unknown} (at most 2.0 of 10)"

bounding=$(unit_value CapabilityBoundingSet)
ambient=$(unit_value AmbientCapabilities)
caps=$(tr ' ' '\n' <<<"$bounding" | sort | tr '\n' ' ')
caps=${caps% }
check unit_caps "$([[ $caps == "CAP_BPF CAP_PERFMON" && $(tr ' ' '\n' <<<"$ambient" | sort | tr '\n' ' ') == "$caps " && $(unit_value NoNewPrivileges) == yes && $(unit_value DynamicUser) == yes ]]; echo $?)" \
	"the unit's capabilities (want CAP_BPF and CAP_PERFMON, both): bounding set $bounding, ambient $ambient; DynamicUser=$(unit_value DynamicUser), NoNewPrivileges=$(unit_value NoNewPrivileges)"
# setpriv's spelling (+bpf,+perfmon) and the kernel's mask of the set
setpriv_caps() { local c out=; for c in "$@"; do c=${c#CAP_}; out+=,+${c,,}; done; echo "${out#,}"; }
cap_mask() {
	local c n m=0
	for c in "$@"; do
		n=$(sed -n "s/^#define ${c}[[:space:]]\+\([0-9]\+\).*/\1/p" /usr/include/linux/capability.h)
		m=$((m | 1 << n))
	done
	printf '%016x' "$m"
}
read -ra cap_list <<<"$caps"
nobody=65534
# nobody_cmd CAPS...: NOBODY becomes setpriv's command line to run a command
# as uid and gid 65534 with exactly CAPS (setpriv execs it: same pid)
nobody_cmd() {
	local set
	set=$(setpriv_caps "$@")
	NOBODY=(setpriv --reuid="$nobody" --regid="$nobody" --clear-groups
		--inh-caps=-all${set:+,$set} --ambient-caps=-all${set:+,$set}
		--bounding-set=-all${set:+,$set} --no-new-privs)
}

# --- truestat with exactly those capabilities, as the unit starts it
cp "$TRUESTAT" "$tmp/truestat"
chmod 755 "$tmp/truestat"
loop_new 16
port=$(free_port)
args=$(sed -E "s/--prometheus=([^ ]*:)?[0-9]+/--prometheus=\\1$port/" <<<"$unit_args")
nobody_cmd "${cap_list[@]}"
# shellcheck disable=SC2086 # the unit's arguments, split as systemd does here
"${NOBODY[@]}" "$tmp/truestat" $args >"$tmp/out" 2>"$tmp/err" &
pid=$!
on_exit "kill -9 $pid"
ok=0
wait_metrics "$pid" "http://127.0.0.1:$port/metrics" "$tmp/m0" || ok=1
dd if="/dev/$LOOP" of=/dev/null bs=4k count=256 iflag=direct status=none
curl -sf "http://127.0.0.1:$port/metrics" >"$tmp/metrics" || ok=1
status=$(grep -E '^(Uid|CapEff|CapBnd|NoNewPrivs):' "/proc/$pid/status" | tr -s '\t ' ' ' | tr '\n' ';' || true)
progs=$(ts_progs $nobody)
reads=$(sed -n "s/^truestat_requests_total{device=\"$LOOP\",[^}]*op=\"read\"} //p" "$tmp/metrics" || true)
kill -TERM "$pid" 2>/dev/null || true
rc=0
wait "$pid" || rc=$?
mask=$(cap_mask "${cap_list[@]}")
check caps_enough "$([[ $ok == 0 && $rc == 0 && ${reads:-0} -ge 256 && $progs -gt 0 && $status == *"Uid: $nobody "* && $status == *"CapEff: $mask;"* && $status == *"NoNewPrivs: 1;"* ]]; echo $?)" \
	"as uid $nobody with only ${caps// /+} (CapEff $mask, no_new_privs), truestat ${args} attached: $progs ts_ programs loaded by uid $nobody; it served /metrics: ${reads:-no} reads of $LOOP counted (256 made); SIGTERM: status $rc"
[[ $ok == 0 && $rc == 0 ]] || { echo "its status: $status"; tail -3 "$tmp/err"; }

# each capability is needed: without it truestat refuses to start
for c in "${cap_list[@]}"; do
	rest=()
	for o in "${cap_list[@]}"; do [[ $o == "$c" ]] || rest+=("$o"); done
	rc=0
	nobody_cmd "${rest[@]}"
	# shellcheck disable=SC2086
	timeout 10 "${NOBODY[@]}" "$tmp/truestat" $args >/dev/null 2>"$tmp/err.$c" || rc=$?
	said=$(grep -m1 '^truestat:' "$tmp/err.$c" || true)
	check "caps_need_${c#CAP_}" "$([[ $rc != 0 && $rc != 124 && $said == *"$c"* ]]; echo $?)" \
		"without $c (only ${rest[*]:-none}) it does not start: status $rc, \"$said\""
done

# every system call it makes, attaching, serving and stopping, is allowed
# by the unit's SystemCallFilter=
filter=$(unit_value SystemCallFilter)
systemd-analyze syscall-filter >"$tmp/groups" 2>/dev/null
port=$(free_port)
args_s=$(sed -E "s/--prometheus=([^ ]*:)?[0-9]+/--prometheus=\\1$port/" <<<"$unit_args")
nobody_cmd "${cap_list[@]}"
# shellcheck disable=SC2086
strace -f -qq -o "$tmp/trace" "${NOBODY[@]}" "$tmp/truestat" $args_s >/dev/null 2>"$tmp/err.s" &
spid=$!
on_exit "kill -9 $spid"
# killing strace would leave its tracee running: it is killed by its own
# pid, strace's child (setpriv execs truestat)
on_exit "kill -9 \$(ps -o pid= --ppid $spid)"
ok=0
wait_metrics "$spid" "http://127.0.0.1:$port/metrics" "$tmp/m1" || ok=1
curl -s -o /dev/null "http://127.0.0.1:$port/nope" || true
tpid=$(ps -o pid= --ppid "$spid" | tr -d ' ' || true)
if [[ -n $tpid ]]; then kill -TERM "$tpid" 2>/dev/null || true; else ok=1; fi
wait "$spid" || ok=1
# shellcheck disable=SC2086 # $filter: its groups, an argument each
check_lines < <(python3 - "$tmp/trace" "$tmp/groups" "$tpid" "$ok" $filter <<'EOF'
import re, sys
trace, groups_file, pid, ok, allowed = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
groups, cur = {}, None
for l in open(groups_file):
    if l.startswith('@'):
        cur = groups[l.split()[0]] = []
    elif cur is not None and l.strip() and not l.strip().startswith('#'):
        cur.append(l.strip())
def expand(name):
    if not name.startswith('@'):
        return {name}
    return set().union(*(expand(m) for m in groups.get(name, [])))
allow = set().union(*(expand(a) for a in allowed))
used, on = set(), False
for l in open(trace):
    m = re.match(r'(\d+)\s+(?:<\.\.\. )?([a-z0-9_]+)[( ]', l)
    if not m or m.group(1) != pid:
        continue
    on = on or (m.group(2) == 'execve' and '/truestat"' in l)
    if on:
        used.add(m.group(2))
bad = sorted(used - allow)
print('syscall_filter', int(ok != '0' or not used or 'bpf' not in used or bool(bad)),
      'truestat made %d distinct system calls, attaching, serving /metrics and stopping; all in SystemCallFilter=%s%s'
      % (len(used), ' '.join(allowed), ': NOT %s' % ' '.join(bad) if bad else ''))
# what the unit's ProtectSystem=strict, PrivateDevices= and ProcSubset=pid
# take away: writing, /dev, /proc
opened, bad, on = set(), [], False
for l in open(trace):
    if not l.startswith(pid + ' '):
        continue
    on = on or ('execve(' in l and '/truestat"' in l)
    m = re.search(r'openat\([^,]+, "([^"]+)", ([A-Z_|]+)', l)
    if on and m:
        path, flags = m.groups()
        opened.add(path)
        if path.startswith(('/proc/', '/dev/')) or re.search(r'O_(WRONLY|RDWR|CREAT)', flags):
            bad.append(path)
print('files_opened', int(not opened or bool(bad)),
      'it opened %d files, none for writing, none in /proc or /dev%s'
      % (len(opened), ': NOT %s' % ' '.join(sorted(set(bad))) if bad else ''))
EOF
)

# --- the unit itself, where systemd runs this machine
if [[ $(ps -p 1 -o comm=) == systemd ]]; then
	name=truestat-exporter-86test
	run_dir=$(mktemp -d /run/truestat-test.XXXXXX) # /tmp is private to it
	on_exit "rm -rf $run_dir"
	chmod 755 "$run_dir"
	cp "$TRUESTAT" "$run_dir/truestat"
	port=$(free_port)
	on_exit "systemctl daemon-reload"
	on_exit "rm -f /run/systemd/system/$name.service"
	on_exit "systemctl reset-failed $name"
	on_exit "systemctl stop $name"
	sed -e "s#^ExecStart=$unit_bin .*#ExecStart=$run_dir/truestat $(sed -E "s/--prometheus=([^ ]*:)?[0-9]+/--prometheus=\\1$port/" <<<"$unit_args")#" \
		"$unit" >"/run/systemd/system/$name.service"
	systemctl daemon-reload
	ok=0
	systemctl start "$name" || ok=1
	# systemd may restart it (Restart=): no pid to watch
	wait_metrics "" "http://127.0.0.1:$port/metrics" "$tmp/m2" || ok=1
	mpid=$(systemctl show -p MainPID --value "$name")
	status=$(grep -E '^(Uid|CapEff):' "/proc/$mpid/status" 2>/dev/null | tr -s '\t ' ' ' | tr '\n' ';' || true)
	systemctl stop "$name" || ok=1
	result=$(systemctl show -p Result --value "$name")
	check unit_runs "$([[ $ok == 0 && $status == *"CapEff: $mask;"* && $status != *"Uid: 0 "* && $result == success ]]; echo $?)" \
		"systemd started the unit (from /run, port $port): /metrics served, ${status:-no status}, stopped with result $result"
else
	echo "  (systemd is not PID 1 here ($(ps -p 1 -o comm=)): the unit is verified, not started; its capabilities and system calls are proven above with setpriv)"
fi

# --- the rules
out=$(promtool check rules "$rules" 2>&1) && rc=0 || rc=$?
n=$(sed -n 's/.*SUCCESS: \([0-9]*\) rules found.*/\1/p' <<<"$out")
check rules_check "$([[ $rc == 0 && -n $n ]]; echo $?)" \
	"promtool check rules: ${n:-no} rules in ${rules#"$TS_ROOT"/}${n:+, well formed}"
alerts=$(grep -c '^ *- alert:' "$rules")
out=$(cd "${rules_test%/*}" && promtool test rules "${rules_test##*/}" 2>&1) && rc=0 || rc=$?
check rules_test "$rc" \
	"promtool test rules: $alerts alerts, each firing for the disk whose series cross its threshold and silent for the others, in the first hour and before its 'for' ran out; recorded depth-1 mean service, service over it by depth class, depth while busy, queue share and p99 as computed by hand"
[[ $rc == 0 ]] || echo "$out" | head -20

# the rules and the test's series name only metrics and labels the exporter
# serves (from the scrape above)
check_lines < <(python3 - "$tmp/metrics" "$rules" "$rules_test" <<'EOF'
import re, sys
served = {}
for l in open(sys.argv[1]):
    m = re.match(r'([a-z_]+)(?:\{([^}]*)\})? ', l)
    if m:
        served.setdefault(m.group(1), set()).add(
            frozenset(re.findall(r'([a-z_]+)="', m.group(2) or '')))
def base(name):
    return re.sub(r'_(bucket|sum|count)$', '', name)
# declared with no sample now (truestat_finding while nothing is found):
# known by name; 85-prometheus-findings checks their labels
declared = set(re.findall(r'^# TYPE ([a-z_]+) ', open(sys.argv[1]).read(), re.M))
known = {base(n) for n in served} | set(served) | declared
# exported names; not the middle of a recorded one (device:truestat_x:rate5m)
used = set(re.findall(r'(?<![:\w])(truestat_[a-z_]+)(?![\w:])', open(sys.argv[2]).read()))
missing = sorted(n for n in used if n not in known and base(n) not in known)
print('rules_metrics', int(bool(missing) or not used),
      'the rules use %d exported metrics, all served: %s%s' % (len(used), ' '.join(sorted(used)),
      '; NOT served: ' + ' '.join(missing) if missing else ''))
bad = []
n = 0
for name, labels in re.findall(r"series: '([a-z_]+)\{([^}]*)\}'", open(sys.argv[3]).read()):
    n += 1
    names = frozenset(re.findall(r'([a-z_]+)="', labels)) - {'instance', 'job'}
    if name in declared and name not in served:
        continue
    if names not in served.get(name, set()):
        bad.append('%s{%s}' % (name, ','.join(sorted(names))))
print('test_series_labels', int(bool(bad) or not n),
      'the rules test\'s %d input series have the names and labels of the exposition%s'
      % (n, '; NOT: ' + ' '.join(sorted(set(bad))) if bad else ''))
EOF
)

# --- nothing left (the kernel frees a program after an RCU grace period)
end=$(($(date +%s) + $(rcu_freed_within)))
while left=$(ts_progs $nobody) && ((left > 0 && $(date +%s) <= end)); do sleep 0.1; done
others=$(bpftool prog show 2>/dev/null | grep -c ' name ts_' || true)
alive=$(for p in $pid $spid; do if kill -0 "$p" 2>/dev/null; then echo "$p"; fi; done | wc -l)
check nothing_left "$([[ $left == 0 && $alive == 0 && ! -e /etc/systemd/system/${unit##*/} ]]; echo $?)" \
	"after the runs: $left ts_ programs of uid $nobody in the kernel (and $others of other truestat runs, as root), $alive of its processes, no unit installed in /etc"
finish
