# Sourced by hip_ref.sh and peer_ref.sh (from the repository root, under
# `set -euo pipefail`): `ref_build NAME BACKEND` compiles benchmarks/c/NAME.c
# for BACKEND into $out and sets $ref_bin to the program (nvidia-shared: a library).
#   nvidia  HIP's NVIDIA headers over the CUDA runtime in $ROCPY_CUDA_RUNTIME
#           (the variables of .devkit/setup.sh or the README's build section;
#           whichever libcudart.so.N it holds, as rocpy/_build/backends.py links)
#   stub    the stub's C sources and its generated weak defaults
out=build/hip-ref
mkdir -p "$out"

cudart() {   # the newest libcudart.so.* in folder $1, for -l:
  (cd "$1" && ls libcudart.so.* | sort -V | tail -1)
}

ref_build() {
  local name=$1 backend=$2 inc gen cuda
  case "$backend" in
  nvidia)
    inc=${ROCPY_ROCM_INCLUDE:-/usr/include}
    cuda=${ROCPY_CUDA_RUNTIME:?set ROCPY_CUDA_RUNTIME (a CUDA runtime folder: include/, lib/)}
    ref_bin=$out/$name
    ${CC:-gcc} -O2 -w -D__HIP_PLATFORM_NVIDIA__ -D__HIP_PLATFORM_NVCC__ \
      -include library_types.h -I"$cuda/include" ${ROCPY_CUDA_EXTRA_INCLUDE:+-I"$ROCPY_CUDA_EXTRA_INCLUDE"} \
      -I"$inc" "benchmarks/c/$name.c" -o "$ref_bin" \
      -L"$cuda/lib" -l:"$(cudart "$cuda/lib")" -Wl,-rpath,"$cuda/lib" -lcuda
    ;;
  nvidia-shared)   # a library of NAME.c's functions (hip_ref_loops: lib$NAME.so)
    inc=${ROCPY_ROCM_INCLUDE:-/usr/include}
    cuda=${ROCPY_CUDA_RUNTIME:?set ROCPY_CUDA_RUNTIME (a CUDA runtime folder: include/, lib/)}
    ref_bin=$out/lib$name.so
    ${CC:-gcc} -O2 -w -shared -fPIC -D__HIP_PLATFORM_NVIDIA__ -D__HIP_PLATFORM_NVCC__ \
      -include library_types.h -I"$cuda/include" ${ROCPY_CUDA_EXTRA_INCLUDE:+-I"$ROCPY_CUDA_EXTRA_INCLUDE"} \
      -I"$inc" "benchmarks/c/$name.c" -o "$ref_bin" \
      -L"$cuda/lib" -l:"$(cudart "$cuda/lib")" -Wl,-rpath,"$cuda/lib" -lcuda
    ;;
  stub)
    gen=build/rocpy-generated/stub_defaults.c
    [ -e "$gen" ] && [ -e build/rocpy-generated/rocpy_features.h ] || ROCPY_BUILD_AMD=0 python3 setup.py -q build_ext --inplace
    inc=$(python3 -c "from rocpy._build.api import describe; print(describe('amd').install.include_dir)")
    ref_bin=$out/${name}_stub
    ${CC:-gcc} -O2 -pthread -w -D_GNU_SOURCE -D__HIP_PLATFORM_AMD__ -D__HIP_PLATFORM_HCC__ \
      -I"$inc" -Irocpy/_native/stub -Ibuild/rocpy-generated "benchmarks/c/$name.c" rocpy/_native/stub/*.c "$gen" \
      -o "$ref_bin"
    ;;
  *) echo "unknown backend $backend" >&2; exit 2 ;;
  esac
}
