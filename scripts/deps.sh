#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# deps.sh [--demo | --test] [PKG...]: installs the Debian packages that are
# missing, from one of three sets, each holding the one before:
#   (none)   building and running truestat (make, make run, make install)
#   --demo   and make demo's simulated disk, its readers and its figures
#   --test   and everything make test and the tools beside it call
# Further arguments name more packages (tests/vm adds qemu's). Quiet and
# idempotent: prints nothing, and runs no apt-get, when all are there.
set -euo pipefail

build=(clang libbpf-dev bpftool libelf-dev zlib1g-dev libssl-dev libyaml-dev libcrypt-dev libprotobuf-c-dev protobuf-c-compiler pkg-config make gcc)
demo=(fio fuse3 libfuse3-dev python3)
# clang's own sanitizer and libFuzzer runtimes, for the default clang
clang_major() {
	local v
	if v=$(clang -dumpversion 2>/dev/null); then
		echo "${v%%.*}"
	else
		v=$(apt-cache depends clang 2>/dev/null | grep -om1 'clang-[0-9]*' || true)
		echo "${v#clang-}"
	fi
}
test_only() {
	local c
	c=$(clang_major)
	c=${c:-14}
	# unit tests, fuzzers; the tools compared with (scripts/compare.sh,
	# 12-witness, 68-compare) and the investigation make test runs; the
	# exporter; schema, man page, SVG; disks
	# and file systems; the Debian package (89-package); bench/overhead.sh;
	# the older kernels (tests/vm)
	echo libcmocka-dev "libclang-rt-$c-dev" "libfuzzer-$c-dev" \
		blktrace sysstat libbpf-tools sysbench \
		prometheus curl openssl \
		python3-jsonschema groff-base libxml2-utils librsvg2-bin valgrind \
		util-linux fdisk e2fsprogs dpkg-dev lintian \
		bc \
		qemu-system-x86 busybox-static xz-utils zstd mdadm dmsetup
}

pkgs=("${build[@]}")
case ${1:-} in
--demo) shift; pkgs+=("${demo[@]}") ;;
--test) shift; read -ra more <<<"$(test_only)"; pkgs+=("${demo[@]}" "${more[@]}") ;;
-*) echo "usage: scripts/deps.sh [--demo | --test] [PACKAGE...]" >&2; exit 2 ;;
esac
pkgs+=("$@")

# one dpkg-query for all: names it does not know are missing too
mapfile -t have < <(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${pkgs[@]}" 2>/dev/null |
	awk 'substr($1, 2, 1) == "i" { sub(/:.*/, "", $2); print $2 }')
missing=()
for p in "${pkgs[@]}"; do
	[[ " ${have[*]} " == *" $p "* ]] || missing+=("$p")
done
((${#missing[@]})) || exit 0

if ((EUID != 0)); then
	echo "truestat: missing packages: ${missing[*]} (run 'make deps' as root)" >&2
	exit 1
fi
echo "  DEPS     installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
