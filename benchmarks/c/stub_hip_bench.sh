#!/usr/bin/env bash
# Build and run the stub's HIP C benchmark: the stub's C sources and the
# generated weak defaults (build/rocpy-generated/stub_defaults.c, written by
# `python setup.py build_ext`), the empty kernel compiled with hipcc.
#   bash benchmarks/c/stub_hip_bench.sh [--json]
set -euo pipefail
# the stub runs tests/kernels' empty/vadd/fill as its built-in emulations only when asked
export ROCPY_STUB_BUILTINS="${ROCPY_STUB_BUILTINS:-empty,vadd,fill}"
cd "$(dirname "$0")/../.."
out=build/stub-hip-bench
mkdir -p "$out"
gen=build/rocpy-generated/stub_defaults.c
[ -e "$gen" ] && [ -e build/rocpy-generated/rocpy_features.h ] || ROCPY_BUILD_AMD=0 python3 setup.py -q build_ext --inplace
inc=$(python3 -c "from rocpy._build.locate import find_rocm; from rocpy._build.api import PLATFORMS; print(find_rocm(tuple(PLATFORMS['amd'].headers)).include_dir)")
HIP_PLATFORM=amd ${HIPCC:-hipcc} --genco --offload-arch=gfx90a tests/kernels/empty.hip -o "$out/empty.hsaco"
${CC:-gcc} -std=c11 -D_GNU_SOURCE -O2 -pthread -Wall -Wextra -Wno-unused-parameter -Wno-deprecated-declarations \
  -D__HIP_PLATFORM_AMD__ -D__HIP_PLATFORM_HCC__ -I"$inc" -Irocpy/_native/stub -Ibuild/rocpy-generated \
  benchmarks/c/stub_hip_bench.c rocpy/_native/stub/*.c "$gen" -o "$out/stub_hip_bench"
"$out/stub_hip_bench" "$out/empty.hsaco" "$@"
