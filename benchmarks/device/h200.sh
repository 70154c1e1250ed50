#!/usr/bin/env bash
# One run on a GPU machine without network access (an NVIDIA H200 here):
# build the nvidia backend from the carried kit, run the conformance tests on
# it, run the benchmarks, write everything under the folder given.
#
#   bash ../shared/tools/device-kit.sh fetch .devkit      # once, where pip works
#   bash benchmarks/device/h200.sh OUTDIR [pytest args]   # on the GPU machine
#
# OUTDIR receives: build.log (machine, build, backend), conformance.{log,xml},
# reliability.{log,xml} (the misuse, kernel and thread tests on the real runtime),
# hip_ref.json (the C reference), hip_overhead.json, bench.json + bench.png
# (rocpy bench --compare), info.json (rocpy info).
set -uo pipefail
out=${1:?usage: h200.sh OUTDIR [pytest args]}; shift || true
mkdir -p "$out"
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
eval "$(bash .devkit/setup.sh 2>/dev/null)"
export ROCPY_BUILD_NVIDIA=1 ROCPY_BUILD_AMD=0 ROCPY_BACKEND=nvidia
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 --version
  python3 setup.py -q build_ext --inplace 2>&1 | grep -E "error|Error" || true
  ls rocpy/*.so
  python3 -c "import rocpy; print(rocpy.backend())"
} > "$out/build.log" 2>&1
suites=$(for d in tests/raw/hip tests/conformance tests/hip; do [ -d "$d" ] && echo "$d"; done)
timeout 300 python3 -m pytest -q -p no:cacheprovider -rs --junitxml="$out/conformance.xml" \
  $suites "$@" > "$out/conformance.log" 2>&1
timeout 300 python3 -m pytest -q -p no:cacheprovider -rs --junitxml="$out/reliability.xml" \
  tests/reliability "$@" > "$out/reliability.log" 2>&1
timeout 120 bash benchmarks/c/hip_ref.sh nvidia > "$out/hip_ref.json" 2>>"$out/build.log"
timeout 180 python3 benchmarks/bench_hip_overhead.py --json "$out/hip_overhead.json" >> "$out/build.log" 2>&1
timeout 300 python3 -m rocpy bench --compare --plain --no-progress \
  --json "$out/bench.json" --plot "$out/bench.png" >> "$out/build.log" 2>&1
timeout 60 python3 -m rocpy info --json > "$out/info.json" 2>>"$out/build.log"
tail -3 "$out/conformance.log" "$out/reliability.log"
exit 0
