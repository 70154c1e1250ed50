#!/usr/bin/env bash
# One run on a GPU machine without network access (an NVIDIA H200 here):
# build the nvidia backend from the carried kit, run the conformance tests on
# it, run the benchmarks, write everything under the folder given.
#
#   bash ../shared/tools/device-kit.sh fetch .devkit      # once, where pip works
#   bash benchmarks/device/h200.sh OUTDIR [pytest args]   # on the GPU machine
set -uo pipefail
out=${1:?usage: h200.sh OUTDIR [pytest args]}; shift || true
mkdir -p "$out"
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1
eval "$(bash .devkit/setup.sh)"
export ROCPY_BUILD_NVIDIA=1 ROCPY_BUILD_AMD=0 ROCPY_BACKEND=nvidia
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 --version
  python3 setup.py -q build_ext --inplace 2>&1 | grep -E "error|Error" || true
  ls rocpy/*.so
} 2>&1 | tee "$out/build.log"
python3 -c "import rocpy; print(rocpy.backend())" 2>&1 | tee "$out/backend.txt"
suites=$(for d in tests/raw/hip tests/conformance tests/hip; do [ -d "$d" ] && echo "$d"; done)
python3 -m pytest -q -p no:cacheprovider -rs --junitxml="$out/conformance.xml" \
  $suites "$@" 2>&1 | tail -80 | tee "$out/conformance.log"
for b in benchmarks/device/bench_*.py; do
  [ -e "$b" ] && python3 "$b" --json "$out/$(basename "$b" .py).json" 2>&1 | tee -a "$out/bench.log"
done
exit 0
