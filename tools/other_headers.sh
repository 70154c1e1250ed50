#!/usr/bin/env bash
# Build the stub against another ROCm release's headers and run tests on that
# build, leaving the tree's own build alone.
#
#   tools/other_headers.sh debian13 [pytest args...]
#       Debian 13's libamdhip64-dev and libhsa-runtime-dev (HIP 5.7, HSA 6.1):
#       the .debs downloaded with apt from trixie (a private sources list, lists
#       and cache under the work folder; /etc/apt is only read, for the mirror)
#       and unpacked; only their headers are used
#   tools/other_headers.sh debian-sid [pytest args...]
#       the same from Debian unstable (HIP and HSA 6.4.3 in December 2026: the
#       newest ROCm a package registry holds; it moves with sid)
#   tools/other_headers.sh INCLUDE_DIR [pytest args...]
#       a folder holding hsa/ and hip/ (an /opt/rocm-X/include, or a tree
#       assembled from ROCm's sources)
#
# The tree's tracked and untracked (not ignored) files are copied to
# $WORK/src and built there with ROCPY_ROCM_INCLUDE=<the headers> and
# ROCPY_BUILD_AMD=0 (the stub only: there are no libraries to link), then
# pytest runs there on the stub (default: tests/build, which also checks every
# struct layout and declaration against those headers).
# WORK is $ROCPY_OTHER_HEADERS_DIR, default ${TMPDIR:-/tmp}/rocpy-other-headers-<name>;
# PYTHON the interpreter (default python3; it needs the build and test packages).
# Exit status: the build's or pytest's.
set -euo pipefail

what=${1:?usage: tools/other_headers.sh debian13|debian-sid|INCLUDE_DIR [pytest args...]}
shift
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
py=$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')
name=$(basename "$what")
work=${ROCPY_OTHER_HEADERS_DIR:-${TMPDIR:-/tmp}/rocpy-other-headers-$name}
mkdir -p "$work"

debian_mirror() {
  # the Debian mirror this machine's apt already uses (not its security archive)
  local uri
  uri=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
        tr ' ' '\n' | grep -v -e security -e '^$' | head -n1 || true)
  [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $0 !~ /security/ {
      for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' \
      /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true)
  echo "${ROCPY_DEBIAN_MIRROR:-$uri}"
}

debian_headers() {  # $1 suite -> prints the include dir of its unpacked ROCm headers
  local suite=$1 apt=$work/apt mirror keyring
  command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || {
    echo "rocpy: apt-get and dpkg-deb are needed to download Debian's headers" >&2; exit 1; }
  mirror=$(debian_mirror)
  [ -n "$mirror" ] || { echo "rocpy: no Debian mirror in /etc/apt: set ROCPY_DEBIAN_MIRROR" >&2; exit 1; }
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  [ -e "$keyring" ] || { echo "rocpy: $keyring is missing: apt-get install debian-archive-keyring" >&2; exit 1; }
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs"
  echo "deb [signed-by=$keyring] $mirror $suite main" > "$apt/sources.list"
  : > "$apt/status"
  local opts=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o Dir::Etc::sourceparts=-
              -o "Dir::State::Lists=$apt/lists" -o "Dir::State::status=$apt/status"
              -o "Dir::Cache=$apt/cache" -o APT::Sandbox::User=root -q)
  apt-get "${opts[@]}" update >&2
  rm -rf "$apt/debs"/* "$work/root"
  (cd "$apt/debs" && apt-get "${opts[@]}" download libamdhip64-dev libhsa-runtime-dev >&2)
  for deb in "$apt/debs"/*.deb; do
    echo "rocpy: headers from $(basename "$deb")" >&2
    dpkg-deb -x "$deb" "$work/root"
  done
  echo "$work/root/usr/include"
}

case $what in
debian13) include=$(debian_headers trixie) ;;
debian-sid) include=$(debian_headers sid) ;;
*) include=$(cd "$what" && pwd) ;;
esac
[ -e "$include/hsa/hsa.h" ] && [ -e "$include/hip/hip_runtime_api.h" ] || {
  echo "rocpy: $include has no hsa/hsa.h and hip/hip_runtime_api.h" >&2; exit 1; }

src=$work/src
rm -rf "$src"
mkdir -p "$src"
(cd "$repo" && git ls-files -z -co --exclude-standard | tar --null -cf - -T -) | tar -xf - -C "$src"
cd "$src"
# ROCPY_TEST_HEADERS: tests/build/test_other_versions.py runs the pipeline over them too
export ROCPY_ROCM_INCLUDE=$include ROCPY_TEST_HEADERS=$include ROCPY_BUILD_AMD=0 ROCPY_BACKEND=stub \
  PYTHONPATH=$src
echo "rocpy: building the stub against $include in $src"
"$py" setup.py -q build_ext --inplace > "$work/build.log" 2>&1 || {
  tail -n 40 "$work/build.log" >&2; echo "rocpy: the build against $include failed ($work/build.log)" >&2; exit 1; }
[ $# -gt 0 ] || set -- tests/build
"$py" -m pytest -q -p no:cacheprovider "$@"
