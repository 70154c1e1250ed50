#!/usr/bin/env bash
# Run the raw tests (tests/raw: the HSA and the HIP half) against a sanitized
# build of the stub runtime.
#
#   tools/sanitize.sh asan [pytest args...]   AddressSanitizer + UBSan
#   tools/sanitize.sh tsan [pytest args...]   ThreadSanitizer
#   ROCPY_SANITIZE_TESTS="tests/reliability" tools/sanitize.sh asan   other test paths
#
# The stub is built (ROCPY_STUB_SANITIZE, honoured by rocpy/_build) in a copy
# of the tree under $ROCPY_SANITIZE_DIR (default /tmp/rocpy-sanitize-MODE),
# so the working tree's own build is left alone, and the tests run there
# with the sanitizer runtime preloaded into Python.  ASan runs under the
# usual python3; gcc 12's TSan crashes at start in pyenv's interpreter, so
# TSan uses a venv made from /usr/bin/python3.  Exit status: non-zero if the
# tests fail or any sanitizer report appears; the log is MODE.log there.
set -euo pipefail

mode=${1:-}
[[ $mode == asan || $mode == tsan ]] || { echo "usage: $0 asan|tsan [pytest args...]" >&2; exit 2; }
shift
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${ROCPY_SANITIZE_DIR:-${TMPDIR:-/tmp}/rocpy-sanitize-$mode}
mkdir -p "$work"
rm -f "$work"/report.*   # sanitizer reports, one file per process (pytest's capture would hide them)

case $mode in
asan)
    sanitize=address,undefined
    runtime=$(gcc -print-file-name=libasan.so)
    python=$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')
    export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:log_path=$work/report:${ASAN_OPTIONS:-}
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=0:log_path=$work/report:${UBSAN_OPTIONS:-}
    ;;
tsan)
    sanitize=thread
    runtime=$(gcc -print-file-name=libtsan.so)
    venv=$work/venv
    if [[ ! -x $venv/bin/python ]]; then
        /usr/bin/python3 -m venv "$venv"
        "$venv/bin/python" -m pip install -q cffi pycparser pyelftools pytest numpy msgpack setuptools
    fi
    python=$venv/bin/python
    supp=$repo/tools/tsan.supp
    export TSAN_OPTIONS=halt_on_error=0:report_signal_unsafe=0:second_deadlock_stack=1:suppressions=$supp:log_path=$work/report:${TSAN_OPTIONS:-}
    ;;
esac

# A copy of the tracked and untracked (not ignored) files: no build outputs.
src=$work/src
rm -rf "$src"
mkdir -p "$src"
(cd "$repo" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -xf - -C "$src"

echo "== building the stub with -fsanitize=$sanitize in $src"
(cd "$src" && ROCPY_BUILD_AMD=0 ROCPY_STUB_SANITIZE=$sanitize "$python" setup.py -q build_ext --inplace \
    >"$work/build.log" 2>&1) || { cat "$work/build.log"; exit 1; }

# The compiler the test fixtures run must not inherit the sanitizer runtime
# (a shell started with libtsan preloaded crashes), so the wrapper is Python.
hipcc=$(command -v "${HIPCC:-hipcc}" || true)
if [[ -n $hipcc ]]; then
    cat >"$work/hipcc" <<WRAPPER
#!$python
import os, sys
env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
os.execve("$hipcc", ["$hipcc"] + sys.argv[1:], env)
WRAPPER
    chmod +x "$work/hipcc"
    export HIPCC=$work/hipcc
fi

log=$work/$mode.log
tests=${ROCPY_SANITIZE_TESTS:-tests/raw}
echo "== running $tests with $runtime preloaded (log: $log)"
set +e
(cd "$src" && LD_PRELOAD=$runtime ROCPY_BACKEND=stub PYTHONPATH=$src \
    "$python" -m pytest -q -p no:cacheprovider $tests "$@") >"$log" 2>&1
status=$?
set -e
tail -n 3 "$log"
reports=$(cat "$work"/report.* 2>/dev/null | grep -cE "ERROR: AddressSanitizer|runtime error:|WARNING: ThreadSanitizer|ERROR: ThreadSanitizer" || true)
echo "== $mode: pytest exit $status, $reports sanitizer report(s) (files: $work/report.*)"
if [[ $reports != 0 ]]; then
    cat "$work"/report.* | head -n 150
fi
[[ $status == 0 && $reports == 0 ]]
