#!/usr/bin/env bash
# Prepare this x86-64 Debian machine to build and test fastnb for aarch64:
# Debian's aarch64 cross compiler and qemu-user (apt), and a folder holding
# Debian's aarch64 CPython 3.11 with the libraries it needs, unpacked from
# their .deb files (not installed: the machine's own Python is untouched).
#
#   tools/aarch64_sysroot.sh DIR
#
# DIR/usr/include then holds the aarch64 Python headers that
# tools/build_dist.sh cross-compiles against (FASTNB_AARCH64_SYSROOT=DIR),
# and `qemu-aarch64 -L DIR DIR/usr/bin/python3.11` runs that Python (.ci/run
# tests the aarch64 wheel so). Needs root, apt and Debian's package
# registry; adds arm64 to dpkg's architectures.
set -euo pipefail
if [[ $# != 1 ]]; then
    echo "usage: $0 DIR" >&2
    exit 2
fi
root=$(mkdir -p "$1" && cd "$1" && pwd)

export DEBIAN_FRONTEND=noninteractive
dpkg --add-architecture arm64
apt-get update -qq
apt-get install -y -qq gcc-aarch64-linux-gnu qemu-user >/dev/null

debs=$(mktemp -d)
trap 'rm -rf "$debs"' EXIT
packages=(
    libc6 libgcc-s1 libstdc++6 libgomp1
    python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libpython3.11-dev
    libexpat1 zlib1g libffi8 libssl3 libbz2-1.0 liblzma5 libsqlite3-0 libuuid1
    libncursesw6 libtinfo6 libreadline8 libdb5.3 libgdbm6 libcrypt1 libnsl2 libtirpc3
)
(cd "$debs" && apt-get download -qq "${packages[@]/%/:arm64}" 2>/dev/null)
for deb in "$debs"/*.deb; do
    dpkg -x "$deb" "$root"
done
echo "aarch64_sysroot: $(qemu-aarch64 -L "$root" "$root/usr/bin/python3.11" -c \
    'import platform, sys; print(sys.version.split()[0], platform.machine())') in $root"
