# shellcheck shell=sh
# Sourced by scripts/test-*.sh: download one Debian package with apt against a private package list, without touching
# the host's apt sources, state or architectures (nothing is installed).
#   apt_download WORK "deb [...] http://deb.debian.org/debian SUITE main" PACKAGE [extra apt-get options...]
# leaves the .deb in WORK/deb; WORK is a scratch directory the caller removes.
apt_download() {
  _work=$1
  _source=$2
  _package=$3
  shift 3
  mkdir -p "$_work/lists/partial" "$_work/cache/archives/partial" "$_work/deb"
  echo "$_source" >"$_work/sources.list"
  : >"$_work/status"
  set -- -o Dir::Etc::SourceList="$_work/sources.list" -o Dir::Etc::SourceParts=/dev/null \
    -o Dir::State::Lists="$_work/lists" -o Dir::Cache="$_work/cache" -o Dir::State::status="$_work/status" \
    -o APT::Sandbox::User=root "$@"
  apt-get "$@" update -qq
  (cd "$_work/deb" && apt-get "$@" download "$_package" >/dev/null)
}
