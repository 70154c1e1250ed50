#!/usr/bin/env bash
# Build and run the C reference of rocpy's HIP benchmarks for the backend at
# hand: `nvidia` (HIP's NVIDIA headers over CUDA 11's runtime, the variables
# of .devkit/setup.sh or the README's build section) or `stub` (the stub's C
# sources).  Prints JSON.
#   bash benchmarks/c/hip_ref.sh nvidia|stub [--quick]
set -euo pipefail
# the stub runs tests/kernels' empty/vadd/fill as its built-in emulations only when asked
export ROCPY_STUB_BUILTINS="${ROCPY_STUB_BUILTINS:-empty,vadd,fill}"
cd "$(dirname "$0")/../.."
backend=${1:?usage: hip_ref.sh nvidia|stub [--quick]}; shift
. benchmarks/c/ref_build.sh
ref_build hip_ref "$backend"
if [ "$backend" = nvidia ]; then
  # its launch loops as a library too: `rocpy bench --compare` times them in-process
  (ref_build hip_ref_loops nvidia-shared) >&2 || echo "hip_ref.sh: hip_ref_loops not built" >&2
  kernel=$out/empty.cubin
  "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" -cubin -arch=sm_90 -x cu tests/kernels/empty.hip -o "$kernel"
else
  kernel=$out/empty.hsaco
  HIP_PLATFORM=amd ${HIPCC:-hipcc} --genco --offload-arch=gfx90a tests/kernels/empty.hip -o "$kernel"
fi
"$ref_bin" "$kernel" "$@"
