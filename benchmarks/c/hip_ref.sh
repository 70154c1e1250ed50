#!/usr/bin/env bash
# Build and run the C reference of rocpy's HIP benchmarks for the backend at
# hand: `nvidia` (HIP's NVIDIA headers over CUDA 11's runtime, the variables
# of .devkit/setup.sh or the README's build section) or `stub` (the stub's C
# sources).  Prints JSON.
#   bash benchmarks/c/hip_ref.sh nvidia|stub [--quick]
set -euo pipefail
cd "$(dirname "$0")/../.."
backend=${1:?usage: hip_ref.sh nvidia|stub [--quick]}; shift
out=build/hip-ref
mkdir -p "$out"
case "$backend" in
nvidia)
  inc=${ROCPY_ROCM_INCLUDE:-/usr/include}
  cuda=${ROCPY_CUDA_RUNTIME:?set ROCPY_CUDA_RUNTIME (the CUDA 11 runtime folder)}
  nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
  "$nvcc" -cubin -arch=sm_90 -x cu tests/kernels/empty.hip -o "$out/empty.cubin"
  ${CC:-gcc} -O2 -w -D__HIP_PLATFORM_NVIDIA__ -D__HIP_PLATFORM_NVCC__ \
    -include library_types.h -I"$cuda/include" ${ROCPY_CUDA_EXTRA_INCLUDE:+-I"$ROCPY_CUDA_EXTRA_INCLUDE"} \
    -I"$inc" benchmarks/c/hip_ref.c -o "$out/hip_ref" \
    -L"$cuda/lib" -l:libcudart.so.11.0 -Wl,-rpath,"$cuda/lib" -lcuda
  "$out/hip_ref" "$out/empty.cubin" "$@"
  ;;
stub)
  gen=build/rocpy-generated/stub_defaults.c
  [ -e "$gen" ] || ROCPY_BUILD_AMD=0 python3 setup.py -q build_ext --inplace
  inc=$(python3 -c "from rocpy._build.api import describe; print(describe('amd').install.include_dir)")
  HIP_PLATFORM=amd ${HIPCC:-hipcc} --genco --offload-arch=gfx90a tests/kernels/empty.hip -o "$out/empty.hsaco"
  ${CC:-gcc} -O2 -pthread -w -D_GNU_SOURCE -D__HIP_PLATFORM_AMD__ -D__HIP_PLATFORM_HCC__ \
    -I"$inc" -Irocpy/_native/stub benchmarks/c/hip_ref.c rocpy/_native/stub/*.c "$gen" \
    -o "$out/hip_ref_stub"
  "$out/hip_ref_stub" "$out/empty.hsaco" "$@"
  ;;
*) echo "unknown backend $backend" >&2; exit 2 ;;
esac
