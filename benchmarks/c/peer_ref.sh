#!/usr/bin/env bash
# Build and run the C reference of benchmarks/bench_peer.py (peer copies between
# devices 0 and 1) for the backend at hand: `nvidia` (HIP's NVIDIA headers over
# CUDA 11's runtime, the variables of .devkit/setup.sh or the README's build
# section; needs two GPUs) or `stub` (the stub's C sources, started with two
# devices: ROCPY_STUB_DEVICES=2 unless set).  Prints JSON.
#   bash benchmarks/c/peer_ref.sh nvidia|stub [--quick]
set -euo pipefail
cd "$(dirname "$0")/../.."
backend=${1:?usage: peer_ref.sh nvidia|stub [--quick]}; shift
out=build/hip-ref
mkdir -p "$out"
case "$backend" in
nvidia)
  inc=${ROCPY_ROCM_INCLUDE:-/usr/include}
  cuda=${ROCPY_CUDA_RUNTIME:?set ROCPY_CUDA_RUNTIME (the CUDA 11 runtime folder)}
  ${CC:-gcc} -O2 -w -D__HIP_PLATFORM_NVIDIA__ -D__HIP_PLATFORM_NVCC__ \
    -include library_types.h -I"$cuda/include" ${ROCPY_CUDA_EXTRA_INCLUDE:+-I"$ROCPY_CUDA_EXTRA_INCLUDE"} \
    -I"$inc" benchmarks/c/peer_ref.c -o "$out/peer_ref" \
    -L"$cuda/lib" -l:libcudart.so.11.0 -Wl,-rpath,"$cuda/lib" -lcuda
  "$out/peer_ref" "$@"
  ;;
stub)
  gen=build/rocpy-generated/stub_defaults.c
  [ -e "$gen" ] || ROCPY_BUILD_AMD=0 python3 setup.py -q build_ext --inplace
  inc=$(python3 -c "from rocpy._build.api import describe; print(describe('amd').install.include_dir)")
  ${CC:-gcc} -O2 -pthread -w -D_GNU_SOURCE -D__HIP_PLATFORM_AMD__ -D__HIP_PLATFORM_HCC__ \
    -I"$inc" -Irocpy/_native/stub benchmarks/c/peer_ref.c rocpy/_native/stub/*.c "$gen" \
    -o "$out/peer_ref_stub"
  ROCPY_STUB_DEVICES=${ROCPY_STUB_DEVICES:-2} "$out/peer_ref_stub" "$@"
  ;;
*) echo "unknown backend $backend" >&2; exit 2 ;;
esac
