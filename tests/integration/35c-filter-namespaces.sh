#!/usr/bin/env bash
# -c and --pid run inside namespaces, as in a container. A cgroup
# namespace whose cgroup v2 mount was made inside it shows the cgroups
# from its root down, so a directory's depth under that mount is not the
# kernel's level of it; a pid namespace shows its own process ids, which
# the kernel's current pid is not. Each: truestat inside the namespace,
# one dd of N direct 4 KiB reads by the filtered submitter beside another
# dd of the same device, counted from outside by the dd's own count
# (count=N): N read bios of the filter and N read requests in the row, the
# other dd's in filter_other_requests.
#  - cgroup: unshare -C -m in cgroup NS, cgroup v2 mounted again inside (the
#    inherited mount removed there), truestat -c MOUNT/inner: inner is at
#    depth 1 under that mount and at level 2 in the kernel;
#  - pid: unshare -p -f --mount-proc, truestat --pid of the dd's pid there.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
need dd python3 unshare

loop_new 64
dev=$LOOP
N=500
make_tmp

# judge NAME OUT: the row of truestat's totals against the two dd's N
judge() {
	check_lines < <(py "
d = dev(totals('$2'), '$dev')
ev, rd = d['events'], d['ops'].get('read', {'ios': 0, 'missed': 0})
print('$1_bios', int(ev['filter_read_bios'] != $N or ev['filter_read_bytes'] != $N * 4096),
      'the filter\'s read bios %d (%d bytes), its dd read %d (count=$N)'
      % (ev['filter_read_bios'], ev['filter_read_bytes'], $N))
print('$1_requests', int(rd['ios'] + rd['missed'] != $N), 'reads in the row %d + %d missed, its dd %d'
      % (rd['ios'], rd['missed'], $N))
print('$1_others', int(ev['filter_other_requests'] < $N),
      'the other dd\'s requests %d, at least its %d' % (ev['filter_other_requests'], $N))
")
}

# $inside OUT TRUESTAT DEV N CG FILTER...: run in a namespace: truestat
# with FILTER (INNER replaced by the submitting dd's pid), the two dd once
# it attached, the submitting one in cgroup CG when not empty
read -r -d '' inside <<'EOF' || true
out=$1 truestat=$2 dev=$3 n=$4 cg=$5
shift 5
bash -c 'while ! grep -q "attached with" "$1.err"; do sleep 0.05; done
	[[ -z $2 ]] || echo $$ >"$2/cgroup.procs"; exec dd if=/dev/'"$dev"' of=/dev/null bs=4k count='"$n"' iflag=direct status=none' _ "$out" "$cg" &
sub=$!
filter=("${@//INNER/$sub}")
"$truestat" -j -v -d "$dev" "${filter[@]}" >"$out" 2>"$out.err" &
ts=$!
bash -c 'while ! grep -q "attached with" "$1.err"; do sleep 0.05; done; exec dd if=/dev/'"$dev"' of=/dev/null bs=4k count='"$n"' skip=8192 iflag=direct status=none' _ "$out" &
other=$!
# truestat attached, or ended: then the dd waiting for it are ended too
while ! grep -q "attached with" "$out.err"; do
	kill -0 $ts 2>/dev/null && { sleep 0.05; continue; }
	kill $sub $other 2>/dev/null
	wait $ts
	exit
done
wait $sub $other
kill -INT $ts
wait $ts
EOF

# the cgroup namespace, rooted at cgroup NS; inner below it
cgroup_new ns
NS=$CG
mkdir "$NS/inner"
on_exit "rmdir $NS/inner"
mnt=$tmp/cgroup2
mkdir "$mnt"
rc=0
INSIDE=$inside cgroup_exec "$NS" timeout 120 unshare -C -m --propagation private bash -c '
	mnt=$1
	shift
	mount -t cgroup2 none "$mnt"
	for m in $(awk -v keep="$mnt" '"'"'$3 == "cgroup2" && $2 != keep { print $2 }'"'"' /proc/self/mounts); do
		umount -l "$m"
	done
	exec bash -c "$INSIDE" _ "$@"' _ "$mnt" "$tmp/cg.json" "$TRUESTAT" "$dev" "$N" "$mnt/inner" -c "$mnt/inner" || rc=$?
check cgroup_exit "$rc" "truestat and the dd in the cgroup namespace ended with status $rc: $(tail -3 "$tmp/cg.json.err" 2>/dev/null)"
judge cgroup "$tmp/cg.json"

rc=0
timeout 120 unshare -p -f --mount-proc bash -c "$inside" _ "$tmp/pid.json" "$TRUESTAT" "$dev" "$N" "" --pid INNER || rc=$?
check pid_exit "$rc" "truestat and the dd in the pid namespace ended with status $rc: $(tail -3 "$tmp/pid.json.err" 2>/dev/null)"
judge pid "$tmp/pid.json"
finish
