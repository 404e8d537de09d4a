#!/usr/bin/env bash
# Installs the Debian packages truestat builds, runs and tests with, when
# one is missing; arguments name more (tests/vm adds qemu's). Quiet and
# idempotent: prints nothing when all are there.
set -euo pipefail

pkgs=(clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev pkg-config make gcc
	libcmocka-dev fio blktrace util-linux fdisk python3 curl prometheus
	libclang-rt-14-dev libfuzzer-14-dev libfuse3-dev fuse3
	python3-jsonschema groff-base valgrind libxml2-utils librsvg2-bin
	sysstat libbpf-tools "$@")

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "truestat: missing packages: ${missing[*]} (run 'make deps' as root)" >&2
	exit 1
fi
echo "  DEPS     installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
