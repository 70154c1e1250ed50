set -uo pipefail
out=$OUT/run; mkdir -p $out
python3 -c "import numpy, pytest" 2>/dev/null || python3 -m pip install -q --no-index --no-deps --target /tmp/pyextra .whl/*.whl
export PYTHONPATH=/tmp/pyextra${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
eval "$(bash .devkit/setup.sh)"
export ROCPY_BUILD_NVIDIA=1 ROCPY_BUILD_AMD=0 ROCPY_BACKEND=nvidia CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 --version;
  python3 setup.py -q build_ext --inplace 2>&1 | grep -E "error|Error" | head -20; ls rocpy/*.so; } > $out/build.log 2>&1
python3 -c "import rocpy; print(rocpy.backend())" > $out/backend.txt 2>&1
python3 -m pytest -q -p no:cacheprovider -rs tests/raw/hip > $out/tests.log 2>&1
tail -80 $out/tests.log
