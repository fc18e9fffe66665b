#!/bin/sh
# Sundeck installer: curl -fsSL <base>/install.sh | sh [-s -- OPTIONS]
#
#   --version V      install release V (files under <base>/v<V>/) instead of the latest (<base>/)
#   --prefix DIR     where the binary goes (default /usr/local/bin)
#   --config PATH    server config; written by `sundeck init` when missing (default /etc/sundeck/config.yaml)
#   --no-service     do not write or enable the systemd unit
#   --base-url URL   where the release files are (also SUNDECK_INSTALL_BASE_URL)
#   --uninstall      remove the binary and the unit; keeps config and data unless --purge
#
# Every system path can be moved for tests and unusual layouts: SUNDECK_INSTALL_ROOT (prefix of every default path),
# SUNDECK_DATA_DIR, SUNDECK_APPS_DIR, SUNDECK_UNIT_DIR, SUNDECK_SYSTEMCTL, SUNDECK_SYSTEMD_RUNDIR, SUNDECK_SERVICE_USER.
# Any failure exits non-zero with one line on stderr. See docs/install.md.
set -eu

# filled in by scripts/release.ts from SUNDECK_RELEASE_BASE_URL; empty means --base-url is required
DEFAULT_BASE_URL="@BASE_URL@"
case $DEFAULT_BASE_URL in @*) DEFAULT_BASE_URL="" ;; esac

die() {
  printf 'install.sh: %s\n' "$*" >&2
  exit 1
}
say() { printf '%s\n' "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }

ROOT=${SUNDECK_INSTALL_ROOT:-}
VERSION=""
PREFIX="$ROOT/usr/local/bin"
CONFIG="$ROOT/etc/sundeck/config.yaml"
BASE_URL=${SUNDECK_INSTALL_BASE_URL:-$DEFAULT_BASE_URL}
NO_SERVICE=0
UNINSTALL=0
PURGE=0

need_value() {
  if [ $# -lt 2 ] || [ -z "$2" ]; then die "$1 needs a value"; fi
}
while [ $# -gt 0 ]; do
  case $1 in
    --version) need_value "$@"; VERSION=$2; shift 2 ;;
    --version=*) VERSION=${1#*=}; shift ;;
    --prefix) need_value "$@"; PREFIX=$2; shift 2 ;;
    --prefix=*) PREFIX=${1#*=}; shift ;;
    --config) need_value "$@"; CONFIG=$2; shift 2 ;;
    --config=*) CONFIG=${1#*=}; shift ;;
    --base-url) need_value "$@"; BASE_URL=$2; shift 2 ;;
    --base-url=*) BASE_URL=${1#*=}; shift ;;
    --no-service) NO_SERVICE=1; shift ;;
    --uninstall) UNINSTALL=1; shift ;;
    --purge) PURGE=1; shift ;;
    -h | --help) sed -n '2,15p' "$0" 2>/dev/null | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
[ "$PURGE" = 0 ] || [ "$UNINSTALL" = 1 ] || die "--purge goes with --uninstall"
VERSION=${VERSION#v}

BIN="$PREFIX/sundeck"
CONFIG_DIR=$(dirname "$CONFIG")
UNIT_DIR=${SUNDECK_UNIT_DIR:-$ROOT/etc/systemd/system}
UNIT="$UNIT_DIR/sundeck.service"
SYSTEMCTL=${SUNDECK_SYSTEMCTL:-systemctl}
SERVICE_USER=${SUNDECK_SERVICE_USER:-sundeck}

# a value of the config `sundeck init` wrote: `key: "value"` or `key: value` at the top level
config_value() {
  [ -f "$CONFIG" ] || return 0
  sed -n "s/^$1: *\"\{0,1\}\([^\"]*\)\"\{0,1\} *\$/\1/p" "$CONFIG" | head -n 1
}
DATA_DIR=${SUNDECK_DATA_DIR:-$(config_value data_dir)}
DATA_DIR=${DATA_DIR:-$ROOT/var/lib/sundeck}
APPS_DIR=${SUNDECK_APPS_DIR:-$(config_value apps_dir)}
APPS_DIR=${APPS_DIR:-$ROOT/etc/sundeck/apps}

has_systemd() {
  [ -d "${SUNDECK_SYSTEMD_RUNDIR:-/run/systemd/system}" ] && command -v "$SYSTEMCTL" >/dev/null 2>&1
}
# users and ownership are only touched on a real install as root
manage_users() { [ -z "$ROOT" ] && [ "$(id -u)" = 0 ]; }

uninstall() {
  if [ -f "$UNIT" ]; then
    if has_systemd; then
      "$SYSTEMCTL" disable --now sundeck.service >/dev/null 2>&1 || true
    fi
    rm -f "$UNIT"
    if has_systemd; then "$SYSTEMCTL" daemon-reload >/dev/null 2>&1 || true; fi
    say "removed $UNIT"
  fi
  rm -f "$BIN" "$BIN.previous"
  say "removed $BIN"
  if [ "$PURGE" = 1 ]; then
    rm -rf "$DATA_DIR" "$APPS_DIR"
    rm -f "$CONFIG" "$CONFIG_DIR/install-source"
    rmdir "$CONFIG_DIR" 2>/dev/null || true
    if manage_users && id "$SERVICE_USER" >/dev/null 2>&1; then userdel "$SERVICE_USER" >/dev/null 2>&1 || true; fi
    say "purged $CONFIG, $DATA_DIR and $APPS_DIR"
  else
    say "kept $CONFIG, $DATA_DIR and $APPS_DIR (--uninstall --purge removes them)"
  fi
  # apps keep running in Docker either way
  say "apps' containers are left running; stop them with docker compose in each app directory"
}

if [ "$UNINSTALL" = 1 ]; then
  uninstall
  exit 0
fi

[ -n "$BASE_URL" ] || die "no release location: pass --base-url URL or set SUNDECK_INSTALL_BASE_URL"
BASE_URL=${BASE_URL%/}
if [ -n "$VERSION" ]; then FROM="$BASE_URL/v$VERSION"; else FROM=$BASE_URL; fi

# what this machine runs: linux, x64 or arm64, glibc or musl
[ "$(uname -s)" = Linux ] || die "sundeck runs on Linux; this is $(uname -s)"
case $(uname -m) in
  x86_64 | amd64) ARCH=x64 ;;
  aarch64 | arm64) ARCH=arm64 ;;
  *) die "no sundeck build for $(uname -m) (x86_64 and aarch64 only)" ;;
esac
# musl: its loader is there and no glibc libc.so.6 is (a glibc system with the musl package installed stays glibc)
is_musl() {
  ls /lib/ld-musl-*.so.1 >/dev/null 2>&1 || return 1
  for f in /lib/libc.so.6 /lib64/libc.so.6 /lib/*-linux-gnu/libc.so.6 /usr/lib/libc.so.6 /usr/lib64/libc.so.6 /usr/lib/*-linux-gnu/libc.so.6; do
    if [ -e "$f" ]; then return 1; fi
  done
  return 0
}
LIBC=""
if is_musl; then LIBC=-musl; fi
NAME=${SUNDECK_INSTALL_TARGET:-sundeck-linux-$ARCH$LIBC}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/sundeck-install.XXXXXX") || die "cannot make a temporary directory"
trap 'rm -rf "$TMP"' EXIT INT TERM

fetch() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsL --retry 2 -o "$2" "$1" 2>/dev/null || die "download of $1 failed"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1" 2>/dev/null || die "download of $1 failed"
  else
    die "neither curl nor wget is installed"
  fi
}
sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  else
    die "neither sha256sum nor shasum is installed"
  fi
}
# download a release file into $TMP and check it against SHA256SUMS
fetch_verified() {
  fetch "$FROM/$1" "$TMP/$1"
  want=$(awk -v f="$1" '$2 == f || $2 == "*" f { print $1; exit }' "$TMP/SHA256SUMS")
  [ -n "$want" ] || die "$1 is not listed in SHA256SUMS"
  got=$(sha256 "$TMP/$1")
  [ "$want" = "$got" ] || die "checksum mismatch for $1 (expected $want, got $got): refusing to install"
}

say "sundeck: installing $NAME${VERSION:+ $VERSION} from $FROM"
fetch "$FROM/SHA256SUMS" "$TMP/SHA256SUMS"
fetch_verified "$NAME"
chmod 755 "$TMP/$NAME"
if ! "$TMP/$NAME" version >/dev/null 2>&1; then
  [ -z "$LIBC" ] || die "the downloaded $NAME does not run here; musl systems need libstdc++ and libgcc (Alpine: apk add libstdc++ libgcc)"
  die "the downloaded $NAME does not run on this machine"
fi

# the binary: unchanged, or swapped in atomically with the old one kept as sundeck.previous
mkdir -p "$PREFIX" || die "cannot create $PREFIX"
CHANGED=0
if [ -f "$BIN" ] && [ "$(sha256 "$BIN")" = "$(sha256 "$TMP/$NAME")" ]; then
  say "$BIN is already this build"
else
  if [ -f "$BIN" ]; then cp -p "$BIN" "$BIN.previous" || die "cannot keep $BIN.previous"; fi
  if ! { cp "$TMP/$NAME" "$BIN.new.$$" && chmod 755 "$BIN.new.$$" && mv -f "$BIN.new.$$" "$BIN"; }; then
    rm -f "$BIN.new.$$"
    die "cannot write $BIN"
  fi
  CHANGED=1
fi
say "installed $("$BIN" version) at $BIN"

# Docker and Compose: sundeck starts without them (and says so), so their absence is a warning
if ! command -v docker >/dev/null 2>&1; then
  warn "docker is not installed; apps cannot be deployed until it is (Debian/Ubuntu: apt-get install docker.io docker-compose-v2, or see https://docs.docker.com/engine/install/)"
elif ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null 2>&1; then
  warn "docker compose is not installed (Debian/Ubuntu: apt-get install docker-compose-v2, or see https://docs.docker.com/compose/install/)"
fi

# the config: written once, never overwritten
if [ -f "$CONFIG" ]; then
  say "keeping $CONFIG"
else
  mkdir -p "$CONFIG_DIR" || die "cannot create $CONFIG_DIR"
  "$BIN" init --config "$CONFIG" --data-dir "$DATA_DIR" --apps-dir "$APPS_DIR" >/dev/null || die "sundeck init failed"
  say "wrote $CONFIG (0600) with a fresh master secret"
fi
mkdir -p "$DATA_DIR" "$APPS_DIR" || die "cannot create $DATA_DIR or $APPS_DIR"
chmod 700 "$DATA_DIR"
# `sundeck upgrade` fetches from where this install came from
printf '%s\n' "$BASE_URL" >"$CONFIG_DIR/install-source"

service() {
  fetch_verified sundeck.service
  if manage_users; then
    if ! id "$SERVICE_USER" >/dev/null 2>&1; then
      useradd --system --user-group --home-dir "$DATA_DIR" --no-create-home --shell /usr/sbin/nologin "$SERVICE_USER" ||
        die "cannot create the user $SERVICE_USER"
    fi
    # the Docker socket is reached through the docker group
    if getent group docker >/dev/null 2>&1; then usermod -a -G docker "$SERVICE_USER" || die "cannot add $SERVICE_USER to the docker group"; fi
    chown -R "$SERVICE_USER:" "$DATA_DIR" "$APPS_DIR"
    chown "root:$SERVICE_USER" "$CONFIG" && chmod 640 "$CONFIG"
  fi
  group=$(id -gn "$SERVICE_USER" 2>/dev/null || printf '%s' "$SERVICE_USER")
  sed -e "s|@BIN@|$BIN|g" -e "s|@CONFIG@|$CONFIG|g" -e "s|@USER@|$SERVICE_USER|g" -e "s|@GROUP@|$group|g" \
    -e "s|@DATA_DIR@|$DATA_DIR|g" -e "s|@APPS_DIR@|$APPS_DIR|g" "$TMP/sundeck.service" >"$TMP/unit"
  mkdir -p "$UNIT_DIR" || die "cannot create $UNIT_DIR"
  if [ -f "$UNIT" ] && cmp -s "$TMP/unit" "$UNIT"; then
    say "keeping $UNIT"
  else
    if ! { cp "$TMP/unit" "$UNIT.new.$$" && chmod 644 "$UNIT.new.$$" && mv -f "$UNIT.new.$$" "$UNIT"; }; then
      rm -f "$UNIT.new.$$"
      die "cannot write $UNIT"
    fi
    say "wrote $UNIT"
    CHANGED=1
  fi
  "$SYSTEMCTL" daemon-reload || die "systemctl daemon-reload failed"
  "$SYSTEMCTL" enable sundeck.service >/dev/null 2>&1 || die "systemctl enable sundeck.service failed"
  if [ "$CHANGED" = 1 ]; then action=restart; else action=start; fi
  "$SYSTEMCTL" "$action" sundeck.service || die "sundeck.service did not start: journalctl -u sundeck.service"
  say "sundeck.service is enabled and running"
}

if [ "$NO_SERVICE" = 1 ]; then
  say "no service installed (--no-service); run it with: $BIN serve --config $CONFIG"
elif has_systemd; then
  service
else
  say "systemd is not running here, so no service was installed; run it with: $BIN serve --config $CONFIG"
fi

ADDR=$(config_value management_addr)
case $ADDR in "" | 0.0.0.0) ADDR=127.0.0.1 ;; esac
PORT=$(config_value management_port)
DOMAIN=$(config_value domain)
say ""
say "Dashboard: http://$ADDR:${PORT:-8443} (from your machine: ssh -L ${PORT:-8443}:$ADDR:${PORT:-8443} this-server)"
if [ -n "$DOMAIN" ]; then say "           https://$DOMAIN once its DNS points here"; fi
say "First run: open the dashboard and create the super-admin in the first-run form,"
say "           or: $BIN users create --config $CONFIG --username admin --role super_admin"
