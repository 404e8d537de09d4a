#!/usr/bin/env bash
# The two ways to ship truestat to a host without a compiler (doc/building.md):
#  - make static: one file, no dynamic section (ldd), that prints its
#    version and, run from a directory with nothing else in it, one report
#    that counts a loop device's reads as /proc/diskstats does;
#  - make deb: a package lintian finds no error or warning in, that
#    dpkg -i installs (the binary on PATH with this tree's version, its man
#    page where man finds it, its bash completion, the exporter's unit valid
#    to systemd-analyze and not enabled, the Prometheus rules), and that
#    dpkg --purge takes away whole. Run only where no truestat package is
#    installed; purged at exit, also on failure.
# systemctl cat needs systemd as init, which this VM has not: the unit is
# checked with systemd-analyze verify and systemctl --root=/ is-enabled.
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/faults.sh"
need python3 dpkg-deb dpkg-shlibdeps lintian man systemd-analyze

make_tmp

# make static: no dynamic section, its version, one exact report
make -s -C "$TS_ROOT" static >"$tmp/make-static" 2>&1 ||
	{ check static_built 1 "make static failed: $(tail -n 3 "$tmp/make-static")"; finish; exit 1; }
cp "$TS_ROOT/truestat-static" "$tmp/truestat"
ldd "$tmp/truestat" >"$tmp/ldd" 2>&1 || true
check static_linked "$(grep -q 'not a dynamic executable' "$tmp/ldd"; echo $?)" \
	"ldd: $(head -n 1 "$tmp/ldd" | tr -s ' \t' ' ')"
want=$("$TRUESTAT" -V)
got=$(cd "$tmp" && ./truestat -V)
check static_version "$([[ $got == "$want" ]]; echo $?)" "-V: '$got' (the tree's: '$want')"
loop_new 64
before=$(diskstats "$LOOP")
(cd "$tmp" && ./truestat -j -v -d "$LOOP" 2 1 >"$tmp/out" 2>"$tmp/err") &
pid=$!
on_exit "kill -9 $pid"
wait_for "$pid" "$START_GUARD" grep -q "attached with" "$tmp/err" 2>/dev/null || true
dd if="/dev/$LOOP" of=/dev/null bs=4k count=500 iflag=direct status=none
rc=0
wait "$pid" || rc=$?
after=$(diskstats "$LOOP")
check static_exit "$rc" "exit status $rc: $(grep -v '^libbpf' "$tmp/err" | tail -n 2 | tr '\n' ' ')"
check_lines < <(py "$COUNTS_PY
d = [x for x in docs('$tmp/out') if x['type'] == 'interval']
print('static_report', int(len(d) != 1), '%d interval report(s)' % len(d))
verdict('static_counts', dev(d[0], '$LOOP'), '$before', '$after')
")

# make deb: lintian clean, installs, works, purges whole
if dpkg-query -W -f='${db:Status-Abbrev}' truestat 2>/dev/null | grep -q '^.i'; then
	check deb_not_installed 1 "a truestat package is installed here already: not replaced"
	finish
	exit 1
fi
make -s -C "$TS_ROOT" deb DEB_DIR="$tmp/deb" >"$tmp/make-deb" 2>&1 ||
	{ check deb_built 1 "make deb failed: $(tail -n 3 "$tmp/make-deb")"; finish; exit 1; }
deb=$(ls "$tmp"/deb/truestat_*.deb)
check deb_version "$(dpkg-deb -f "$deb" Version | grep -qx "$(sed -n 's/^VERSION := //p' "$TS_ROOT/Makefile")+g[0-9a-f]*"; echo $?)" \
	"version $(dpkg-deb -f "$deb" Version), depends: $(dpkg-deb -f "$deb" Depends)"
lintian --no-tag-display-limit "$deb" >"$tmp/lintian" 2>&1 || true
n=$(grep -c '^[EW]: ' "$tmp/lintian" || true)
check deb_lintian "$n" "lintian: $n errors or warnings $(grep '^[EW]: ' "$tmp/lintian" | head -n 3 | tr '\n' ' ')"
on_exit "dpkg --purge truestat >/dev/null 2>&1"
dpkg -i "$deb" >"$tmp/dpkg-i" 2>&1 && rc=0 || rc=$?
check deb_install "$rc" "dpkg -i: $(tail -n 1 "$tmp/dpkg-i")"
dpkg -L truestat >"$tmp/files"
got=$(truestat -V 2>&1 || true)
check deb_binary "$([[ $(command -v truestat) == /usr/sbin/truestat && $got == "$want" ]]; echo $?)" \
	"$(command -v truestat): '$got'"
check deb_man "$([[ $(man -w truestat 2>&1) == /usr/share/man/man8/truestat.8.gz ]] &&
	man truestat 2>/dev/null | grep -q 'BUSY%'; echo $?)" "man -w truestat: $(man -w truestat 2>&1)"
check deb_completion "$(bash -c '. /usr/share/bash-completion/completions/truestat && complete -p truestat' >/dev/null 2>&1; echo $?)" \
	"the completion defines: $(bash -c '. /usr/share/bash-completion/completions/truestat && complete -p truestat' 2>&1)"
unit=/lib/systemd/system/truestat-exporter.service
verify=$(systemd-analyze verify "$unit" 2>&1) && rc=0 || rc=$?
check deb_unit "$([[ $rc == 0 && -z $verify ]] && grep -qx 'ExecStart=/usr/sbin/truestat --prometheus=127.0.0.1:9101' "$unit"; echo $?)" \
	"systemd-analyze verify: status $rc ${verify:-(nothing to say)}; $(grep '^ExecStart=' "$unit")"
enabled=$(systemctl --root=/ is-enabled truestat-exporter 2>&1 || true)
check deb_unit_disabled "$([[ $enabled == disabled ]]; echo $?)" "systemctl --root=/ is-enabled: $enabled"
check deb_rules "$([[ -s /usr/share/truestat/truestat.rules.yml ]]; echo $?)" "Prometheus rules in /usr/share/truestat"
dpkg --purge truestat >"$tmp/dpkg-purge" 2>&1 && rc=0 || rc=$?
check deb_purge "$rc" "dpkg --purge: $(tail -n 1 "$tmp/dpkg-purge")"
left=$(while read -r f; do [[ -e $f && ! -d $f ]] && echo "$f"; done <"$tmp/files" || true)
check deb_purged "$([[ -z $left ]]; echo $?)" "$(wc -l <"$tmp/files") paths installed, files left: ${left:-none}"
finish
