#!/usr/bin/env bash
# Build and run the C reference of benchmarks/bench_peer.py (peer copies between
# devices 0 and 1) for the backend at hand: `nvidia` (HIP's NVIDIA headers over
# CUDA 11's runtime, the variables of .devkit/setup.sh or the README's build
# section; needs two GPUs) or `stub` (the stub's C sources, started with two
# devices: ROCPY_STUB_DEVICES=2 unless set).  Prints JSON.
#   bash benchmarks/c/peer_ref.sh nvidia|stub [--quick]
set -euo pipefail
# the stub runs tests/kernels' empty/vadd/fill as its built-in emulations only when asked
export ROCPY_STUB_BUILTINS="${ROCPY_STUB_BUILTINS:-empty,vadd,fill}"
cd "$(dirname "$0")/../.."
backend=${1:?usage: peer_ref.sh nvidia|stub [--quick]}; shift
. benchmarks/c/ref_build.sh
ref_build peer_ref "$backend"
if [ "$backend" = stub ]; then
  export ROCPY_STUB_DEVICES=${ROCPY_STUB_DEVICES:-2}
fi
"$ref_bin" "$@"
