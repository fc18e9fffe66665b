#!/bin/sh
# The compose v2 plugin for the container image's deploy test (test/integration/image/deploy.test.ts), on Debian 12,
# which packages only the Python v1: Debian 13's `docker-compose` package (v2, a Go binary needing libc6 >= 2.34) is
# downloaded with apt against a private package list and unpacked to $DEST, not installed: the host keeps its v1, the
# `docker compose` of the host stays absent, and the image test copies the plugin into the image. Kept when present.
#   usage: sh scripts/test-compose-v2.sh [DEST]   (default /opt/sundeck-test/compose-v2)
set -eu
DEST=${1:-/opt/sundeck-test/compose-v2}
if [ -x "$DEST/docker-compose" ] && "$DEST/docker-compose" version >/dev/null 2>&1; then
  "$DEST/docker-compose" version
  exit 0
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/compose-v2.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
# shellcheck source=scripts/lib/apt-download.sh
. "$(dirname "$0")/lib/apt-download.sh"
apt_download "$WORK" \
  "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" docker-compose
dpkg -x "$WORK"/deb/docker-compose_*.deb "$WORK/x"
mkdir -p "$DEST"
cp "$WORK/x/usr/libexec/docker/cli-plugins/docker-compose" "$DEST/docker-compose.new"
chmod 755 "$DEST/docker-compose.new"
mv -f "$DEST/docker-compose.new" "$DEST/docker-compose"
"$DEST/docker-compose" version
