#!/usr/bin/env bash
# Install what rocpy needs and build it in place. Shared by .ci/run, the README
# and the Dockerfile.
#
#   bash tools/install.sh                 # Debian/Ubuntu: ROCm from the distribution
#   ROCM_PATH=/opt/rocm bash tools/install.sh   # a ROCm install already present
#
# With ROCM_PATH pointing at a ROCm tree (include/hsa, include/hip, lib/), no
# ROCm package is installed: distribution packages would conflict with it.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

apt_install() {
  command -v apt-get >/dev/null || { echo "rocpy: no apt-get; install $* yourself" >&2; return 0; }
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "$@"
}

if [ -n "${ROCM_PATH:-}" ] && [ -e "$ROCM_PATH/include/hsa/hsa.h" ]; then
  echo "rocpy: using the ROCm in $ROCM_PATH"
  apt_install gcc g++ make python3-dev python3-pip binutils
else
  # the headers and libraries, plus hipcc (which brings its clang, lld and
  # llvm tools) and the device libraries the tests compile kernels with
  apt_install gcc g++ make binutils libhsa-runtime-dev libamdhip64-dev hipcc \
    rocm-device-libs rocminfo
fi

$PY -m pip install -q --upgrade pip setuptools wheel
$PY -m pip install -q "cffi>=1.16" "pycparser>=2.21" "pyelftools>=0.29" "msgpack>=1.0" \
  "zstandard>=0.21" "numpy>=1.22" "pytest>=7" "hypothesis>=6" "rich>=13" "matplotlib>=3.6"
# build in place (editable), so tests run against the tree they live in
$PY -m pip install -q --no-build-isolation -e .
$PY -c "import rocpy; print('rocpy', rocpy.__version__, '-', rocpy.backend().reason)"
