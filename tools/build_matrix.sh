#!/usr/bin/env bash
# The build under each line of the parsers rocpy supports: pycparser 2.2x with
# cffi 1.x, and pycparser 3.x with cffi 2.x (pycparser 3 changed its AST:
# c_ast.Enum takes an underlying type; cffi 2 runs on either).  For each, a
# venv under $WORK/<name> gets them from PyPI, then tools/other_headers.sh
# builds the stub with it in a scratch copy against the installed headers and
# runs tests/build there (every hazard, layout and declaration check).
#
#   tools/build_matrix.sh                      both lines
#   tools/build_matrix.sh "cffi==1.16.0 pycparser==2.21"   one set of pins
#
# WORK is $ROCPY_BUILD_MATRIX_DIR, default ${TMPDIR:-/tmp}/rocpy-build-matrix;
# PYTHON the interpreter the venvs are made from (default python3).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${ROCPY_BUILD_MATRIX_DIR:-${TMPDIR:-/tmp}/rocpy-build-matrix}
[ $# -gt 0 ] || set -- "cffi>=1.16,<2 pycparser>=2.21,<3" "cffi>=2 pycparser>=3"
include=$(cd "$repo" && "${PYTHON:-python3}" -c \
  'from rocpy._build.api import describe; print(describe("amd").install.include_dir)')

for pins in "$@"; do
  name=$(echo "$pins" | tr -c 'A-Za-z0-9.\n' '_')
  venv=$work/$name
  rm -rf "$venv"
  "${PYTHON:-python3}" -m venv "$venv" || {
    echo "rocpy: cannot make a venv (Debian: apt-get install python3-venv)" >&2; exit 1; }
  # shellcheck disable=SC2086  # the pins are separate words
  "$venv/bin/python" -m pip install -q $pins pyelftools "setuptools>=77" wheel pytest numpy msgpack zstandard
  echo "rocpy: $("$venv/bin/python" -c 'import cffi, pycparser; print("cffi", cffi.__version__, "pycparser", pycparser.__version__)')"
  PYTHON=$venv/bin/python ROCPY_OTHER_HEADERS_DIR=$venv/tree bash "$repo/tools/other_headers.sh" "$include" tests/build
done
