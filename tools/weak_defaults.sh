#!/usr/bin/env bash
# The stub's functions still answered by the generated weak default (the
# header-wide generic failure of the generated stub_defaults*.c, one file per
# library) in a build tree: those the stub_defaults*.o define weakly that no
# other object of the build defines.
#
#   tools/weak_defaults.sh [BUILD_DIR [NAMES_FILE]]
#       BUILD_DIR: the setup.py build folder (default: build); NAMES_FILE: one
#       function name a line (e.g. the names hipamd exports, from
#       hipamd/src/hip_hcc.map.in at a tag): only those are listed.
# Prints one name a line; the exit status is 0.
set -euo pipefail
build=${1:-build}
names=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
find "$build" -name 'stub_defaults*.o' > "$tmp/defaults"
[ -s "$tmp/defaults" ] || { echo "rocpy: no stub_defaults*.o under $build: build the stub first" >&2; exit 1; }
xargs nm < "$tmp/defaults" | awk '$2 == "W" {print $3}' | sort -u > "$tmp/weak"
find "$build" -name '*.o' ! -name 'stub_defaults*.o' -exec nm {} + |
  awk '$2 == "T" {print $3}' | sort -u > "$tmp/strong"
comm -23 "$tmp/weak" "$tmp/strong" > "$tmp/left"
if [ -n "$names" ]; then sort -u "$names" | comm -12 "$tmp/left" -; else cat "$tmp/left"; fi
