#!/usr/bin/env bash
# Install what rocpy needs and build it in place, in the checkout's virtual
# environment .venv. Shared by the README, .ci/run, the Dockerfile and
# tests/packaging/test_install_script.py.
#
#   bash tools/install.sh                       # Debian/Ubuntu: ROCm from the distribution
#   ROCM_PATH=/opt/rocm bash tools/install.sh   # a ROCm install already present
#
# Then: .venv/bin/rocpy info, .venv/bin/python -m pytest -q (nothing to activate).
#
# - System packages: only the missing ones, with apt-get (through sudo when not
#   root). With ROCM_PATH pointing at a ROCm tree (include/hsa, include/hip,
#   lib/), no ROCm package is installed: distribution packages would conflict.
# - Python: a venv .venv made with $PYTHON (default python3), so the system
#   Python stays untouched (PEP 668). With a venv active ($VIRTUAL_ENV), that
#   one is used and .venv is made a link to it.
# - No backend is selected here (a Docker build has no /dev/kfd): that happens
#   at first use, when the tests run.
# Every failure ends with one line "rocpy: install failed: ..." saying what is
# missing and how to get it.
set -euo pipefail
cd "$(dirname "$0")/.."

die() {
  echo "rocpy: install failed: $*" >&2
  exit 1
}

PY=${PYTHON:-python3}
command -v "$PY" >/dev/null ||
  die "no $PY found: install Python 3.10 or newer (Debian: apt-get install python3)"
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
  die "$("$PY" -V 2>&1) is too old: rocpy needs Python 3.10 or newer (set PYTHON=/path/to/python3.x)"

# ---- system packages ---------------------------------------------------------

installed() {  # a Debian package (or one of a glob) is installed
  dpkg-query -W -f='${db:Status-Status}\n' "$1" 2>/dev/null | grep -qx installed
}

is_system_python() {
  case "$(readlink -f "$(command -v "$PY")")" in /usr/bin/*) return 0 ;; *) return 1 ;; esac
}

python_has_headers() {
  "$PY" -c 'import os, sysconfig, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'
}

wanted=()   # Debian package names (or "rocm-device-libs*": resolved with apt-cache)
missing=()  # what is missing, in words, for machines without apt
command -v gcc >/dev/null || { wanted+=(gcc); missing+=("a C compiler (gcc)"); }
command -v g++ >/dev/null || { wanted+=(g++); missing+=("a C++ compiler and libstdc++ (g++, for hipcc)"); }
if [ -z "${VIRTUAL_ENV:-}" ] && [ ! -x .venv/bin/python ] &&
  ! "$PY" -c 'import ensurepip, venv' 2>/dev/null; then
  is_system_python || die "$PY cannot make a virtual environment (no ensurepip): install its venv module, or set PYTHON to a Python that has one"
  wanted+=(python3-venv)
  missing+=("Python's venv module (python3-venv)")
fi
if ! python_has_headers; then
  is_system_python || die "$PY has no development headers (Python.h): install them for that Python, or set PYTHON to a Python that has them"
  wanted+=(python3-dev)
  missing+=("Python's headers (python3-dev)")
fi

if [ -n "${ROCM_PATH:-}" ]; then
  if [ ! -e "$ROCM_PATH/include/hsa/hsa.h" ] || [ ! -e "$ROCM_PATH/include/hip/hip_runtime_api.h" ]; then
    die "ROCM_PATH=$ROCM_PATH has no include/hsa/hsa.h and include/hip/hip_runtime_api.h: point ROCM_PATH at a ROCm installation, or unset it to use Debian's ROCm packages"
  fi
  echo "rocpy: using the ROCm in $ROCM_PATH"
else
  # the headers and libraries, hipcc (with its clang, lld and llvm tools) and
  # the device libraries the tests compile kernels with
  [ -e /usr/include/hsa/hsa.h ] || { wanted+=(libhsa-runtime-dev); missing+=("the HSA runtime headers (libhsa-runtime-dev)"); }
  [ -e /usr/include/hip/hip_runtime_api.h ] || { wanted+=(libamdhip64-dev); missing+=("the HIP headers (libamdhip64-dev)"); }
  command -v hipcc >/dev/null || { wanted+=(hipcc); missing+=("hipcc"); }
  installed 'rocm-device-libs*' || { wanted+=('rocm-device-libs*'); missing+=("the ROCm device libraries (rocm-device-libs)"); }
  command -v rocminfo >/dev/null || { wanted+=(rocminfo); missing+=("rocminfo"); }
fi

# the installable name for each wanted one, by what apt-cache knows (never by a
# release number: Debian 13 calls the device libraries rocm-device-libs-17);
# "-" where nothing is needed (Debian 13's hipcc depends on its device libraries)
resolve() {
  case "$1" in
    *'*')
      local prefix=${1%\*}
      if [[ " ${wanted[*]} " == *" hipcc "* ]] &&
        apt-cache depends hipcc 2>/dev/null | grep -q "Depends: $prefix"; then
        echo -; return
      fi
      if apt-cache show "$prefix" >/dev/null 2>&1; then echo "$prefix"; return; fi
      apt-cache pkgnames "$prefix" 2>/dev/null | sort -V | tail -n 1
      ;;
    *) echo "$1" ;;
  esac
}

resolved() {  # the names to install, or nothing when apt knows one of them not
  local w n
  for w in "${wanted[@]}"; do
    n=$(resolve "$w")
    [ -n "$n" ] || { echo "rocpy: apt knows no package ${w%\*}" >&2; return 1; }
    [ "$n" = - ] || echo "$n"
  done
}

if [ ${#wanted[@]} -gt 0 ]; then
  command -v apt-get >/dev/null ||
    die "missing $(printf '%s; ' "${missing[@]}" | sed 's/; $//'): no apt-get here, install them with your package manager"
  SUDO=()
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
      # the names apt-cache gives (its lists need no root), else the generic ones
      mapfile -t names < <(resolved 2>/dev/null) || true
      [ ${#names[@]} -gt 0 ] || names=("${wanted[@]//\*/}")
      die "missing Debian packages ${names[*]} and no sudo: run as root: apt-get update && apt-get install -y --no-install-recommends ${names[*]}"
    fi
    SUDO=(sudo)
  fi
  echo "rocpy: installing ${wanted[*]//\*/} with apt-get"
  "${SUDO[@]}" apt-get update -q ||
    die "apt-get update failed (see above): check /etc/apt/sources.list and access to the Debian archive"
  resolved_names=$(resolved) ||
    die "apt knows no package named above: enable a release that has ROCm (Debian 12 or newer, main), or point ROCM_PATH at a ROCm installation"
  mapfile -t names <<<"$resolved_names"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${names[@]}" ||
    die "apt-get could not install ${names[*]} (see above)"
fi

# ---- the virtual environment and rocpy ----------------------------------------

if [ -n "${VIRTUAL_ENV:-}" ]; then
  if [ -e .venv ] && [ "$(readlink -f .venv)" != "$(readlink -f "$VIRTUAL_ENV")" ]; then
    die ".venv exists but the active virtual environment is $VIRTUAL_ENV: deactivate it, or remove .venv"
  fi
  [ -e .venv ] || ln -s "$VIRTUAL_ENV" .venv
  echo "rocpy: using the active virtual environment $VIRTUAL_ENV (.venv links to it)"
elif [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv ||
    die "$PY -m venv .venv failed (see above): install Python's venv module (Debian: apt-get install python3-venv)"
fi
VPY=.venv/bin/python

log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$VPY" -m pip install -q --upgrade pip || true   # an old pip still works
"$VPY" -m pip index versions setuptools >"$log" 2>&1 || {
  cat "$log" >&2
  die "pip cannot reach a package index (see above): check network access to PyPI, proxies and certificates, or pip's configuration (pip config list)"
}
# runtime, test and benchmark dependencies, all from pyproject.toml; the build
# requirements come from there too (pip's isolated build environment)
if ! "$VPY" -m pip install -q -e ".[test,bench]" 2>&1 | tee "$log"; then
  # build_ffi.py's own message ("rocpy: ROCm headers ... not found. Install ...")
  why=$(sed -n 's/^[[:space:]]*rocpy: //p' "$log" | head -n 1)
  [ -n "$why" ] && die "building rocpy failed: $why"
  grep -q "No matching distribution" "$log" &&
    die "pip found no $(sed -n 's/.*No matching distribution found for //p' "$log" | head -n 1) (see above): check network access to PyPI, or pip's configuration (pip config list)"
  die "installing rocpy into .venv failed (see the first error above)"
fi

# type checkers (mypy, pyright) cannot follow setuptools' editable finder (an import
# hook, used for this flat layout): a plain path entry, which they read, makes the
# checkout's rocpy (py.typed, the built _lib_*.pyi) visible to them too
site=$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') ||
  die "cannot find .venv's site-packages (see above)"
pwd >"$site/rocpy-checkout.pth" || die "cannot write rocpy-checkout.pth into $site (see above)"

"$VPY" - <<'EOF' || die "rocpy was built but cannot be imported from .venv (see above)"
import importlib.util
import rocpy
built = [n for n in ("amd", "nvidia", "stub") if importlib.util.find_spec(f"rocpy._lib_{n}")]
print(f"rocpy {rocpy.__version__} built in place ({', '.join(built)} backend modules); "
      "the backend is chosen at first use (rocpy.backend(), ROCPY_BACKEND)")
EOF
