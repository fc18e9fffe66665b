#!/bin/sh
# musl's aarch64 loader and libc for running sundeck-linux-arm64-musl under qemu-user
# (test/integration/install/arm64.test.ts), on an x64 Debian 12 without a foreign architecture enabled: the arm64
# `musl` package of bookworm is downloaded with apt against a private package list and its libc, which is also its
# loader, is unpacked to $DEST/lib/ld-musl-aarch64.so.1 (qemu's -L root), not installed. Kept when present.
#   usage: sh scripts/test-musl-arm64.sh [DEST]   (default /opt/sundeck-test/musl-arm64)
set -eu
DEST=${1:-/opt/sundeck-test/musl-arm64}
if [ -s "$DEST/lib/ld-musl-aarch64.so.1" ]; then
  echo "musl arm64 in $DEST"
  exit 0
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/musl-arm64.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
# shellcheck source=scripts/lib/apt-download.sh
. "$(dirname "$0")/lib/apt-download.sh"
apt_download "$WORK" \
  "deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" \
  musl:arm64 -o APT::Architecture=arm64 -o APT::Architectures=arm64
dpkg -x "$WORK"/deb/musl_*_arm64.deb "$WORK/x"
mkdir -p "$DEST/lib"
# musl's libc is its loader too (the package links /lib/ld-musl-aarch64.so.1 to it): the one file is all it takes
cp "$WORK/x/lib/aarch64-linux-musl/libc.so" "$DEST/lib/ld-musl-aarch64.so.1.new"
mv -f "$DEST/lib/ld-musl-aarch64.so.1.new" "$DEST/lib/ld-musl-aarch64.so.1"
echo "musl arm64 $(dpkg-deb -f "$WORK"/deb/musl_*_arm64.deb Version) in $DEST"
