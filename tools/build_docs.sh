#!/usr/bin/env bash
# Build the Sphinx docs (docs/) with warnings as errors, as CI does (.ci/run).
#
#   bash tools/build_docs.sh [OUTDIR]      # default /tmp/rocpy-docs
#
# Installs the `docs` extra of pyproject.toml into .venv first (its list, read
# from there: no second list here), without reinstalling rocpy itself.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/rocpy-docs}
VPY=${PYTHON:-.venv/bin/python}
mapfile -t reqs < <("$VPY" -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["docs"]))')
"$VPY" -m pip install -q "${reqs[@]}"
"$VPY" -m sphinx -W --keep-going -q -b html docs "$out"
echo "rocpy: docs built in $out"
