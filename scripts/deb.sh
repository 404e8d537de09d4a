#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# deb.sh VERSION OUTDIR: truestat's Debian package, OUTDIR/truestat_VERSION_ARCH.deb,
# built with Debian's own tools from a staged `make install`: the binary
# (stripped; its libraries' package names from dpkg-shlibdeps), the man
# page, the bash completion, the JSON Schema, the exporter's systemd unit
# (not enabled: no maintainer script) and its Prometheus rules. Run from the
# top of the tree after `make truestat` (make deb does both).
set -euo pipefail

need() {
	command -v "$1" >/dev/null && return 0
	echo "make deb: $1 is missing: apt-get install $2 (or: make deps-package)" >&2
	exit 1
}
need dpkg-deb dpkg
need dpkg-shlibdeps dpkg-dev
[[ $# -eq 2 && -n $1 ]] || { echo "usage: scripts/deb.sh VERSION OUTDIR" >&2; exit 2; }
version=$1 out=$2
arch=$(dpkg --print-architecture)
top=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root

make -s install DESTDIR="$root" PREFIX=/usr UNITDIR="$root/lib/systemd/system"
strip --remove-section=.comment --remove-section=.note "$root/usr/sbin/truestat"
gzip -9n "$root/usr/share/man/man8/truestat.8"

doc=$root/usr/share/doc/truestat
cat >"$doc/copyright" <<'COPY'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: truestat

Files: *
Copyright: 2025-2026 the truestat authors
License: GPL-2.0-only
 On Debian systems, the full text of the GNU General Public License
 version 2 is in /usr/share/common-licenses/GPL-2.
COPY
commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo "none: not a git tree")
{
	echo "truestat ($version) unstable; urgency=medium"
	echo
	echo "  * Built from commit $commit."
	echo
	echo " -- truestat maintainers <truestat@users.noreply.github.com>  $(date -R)"
} | gzip -9n >"$doc/changelog.gz"

# dpkg-shlibdeps reads a debian/control: a minimal one beside the binary
mkdir -p "$work/debian" "$root/DEBIAN"
printf 'Source: truestat\n\nPackage: truestat\nArchitecture: any\n' >"$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O "root/usr/sbin/truestat" 2>/dev/null |
	sed -n 's/^shlibs:Depends=//p')
[[ -n $depends ]] || { echo "make deb: dpkg-shlibdeps found no libraries for truestat" >&2; exit 1; }

cat >"$root/DEBIAN/control" <<CTRL
Package: truestat
Version: $version
Architecture: $arch
Maintainer: truestat maintainers <truestat@users.noreply.github.com>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $depends
Section: admin
Priority: optional
Description: block I/O latency tracer: OS queue, device service, real concurrency
 truestat traces the block layer with eBPF (CO-RE, one binary for every
 kernel with BTF, 5.10 and later) and prints, per disk and direction, how
 long requests waited in the OS, how long the device served them and how
 many it worked on at once, time-weighted: what iostat's %util, svctm and
 await cannot tell apart. Also a Prometheus exporter (systemd unit
 truestat-exporter, not enabled).
CTRL
(cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z |
	xargs -0 md5sum) >"$root/DEBIAN/md5sums"
mkdir -p "$out"
dpkg-deb --root-owner-group -Zxz --build "$root" "$out/truestat_${version}_$arch.deb" >/dev/null
echo "$out/truestat_${version}_$arch.deb"
