"""``rocpy_features.h``: what the headers the build uses declare, for the stub's C.

The stub's C compiles against HIP 5.2 to 7.x by testing for features, never
for a version number (as cryptography's ``_cffi_src`` does for OpenSSL).  The
header defines, from what the pipeline parsed:

* ``ROCPY_HAVE_<name>`` for every function (renaming aliases included), enum
  constant, typedef and struct/union/enum tag the headers declare;
* ``ROCPY_HAVE_<type>__<member>`` for every member of a struct or union,
  under its tag, its typedef names and its renaming aliases (members of
  anonymous inner structs and unions count as the outer type's);
* ``ROCPY_NPARAMS_<function>`` for every declared function that is not
  variadic: how many parameters the headers give it (HIP 6.4's headers declare
  ``hipDeviceGetTexture1DLinearMaxWidth(hipMemPool_t *, int)``, hipamd defines
  three parameters: the stub's definition follows the declaration);
* ``ROCPY_ARG_<function>__<parameter>`` for the parameters whose type changed
  between releases: the spelling the headers accept, decided by compiling a
  redeclaration per candidate (a conflicting one does not compile); the
  first candidate where the function is not declared.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .preprocess import failing_lines, wrapper_source

if TYPE_CHECKING:
    from .api import Api

HEADER_NAME = "rocpy_features.h"


@dataclass(frozen=True)
class Probe:
    """One parameter whose spelling differs between releases."""

    function: str
    parameter: str
    declaration: str                 # the prototype, ``{}`` where the candidate goes
    candidates: tuple[str, ...]      # the first one the headers accept wins

    @property
    def macro(self) -> str:
        return f"ROCPY_ARG_{self.function}__{self.parameter}"


PROBES = (
    # HIP 7.0 declares `unsigned int *apiVersion` (5.x and 6.x: `int *`)
    Probe("hipCtxGetApiVersion", "apiVersion",
          "hipError_t hipCtxGetApiVersion(hipCtx_t ctx, {} apiVersion);",
          ("int *", "unsigned int *")),
    # HIP 7.0 made the host source const (5.x and 6.x: `void *src`)
    Probe("hipMemcpyHtoD", "src",
          "hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, {} src, size_t sizeBytes);",
          ("void *", "const void *")),
    Probe("hipMemcpyHtoDAsync", "src",
          "hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, {} src, size_t sizeBytes, "
          "hipStream_t stream);",
          ("void *", "const void *")),
    # HIP 6.x/7.x hiprtc: `const char *const *` arrays (5.x: `const char **`)
    Probe("hiprtcCreateProgram", "headers",
          "hiprtcResult hiprtcCreateProgram(hiprtcProgram *prog, const char *src, "
          "const char *name, int numHeaders, {0} headers, {0} includeNames);",
          ("const char **", "const char *const *")),
    # HIP 5.7 declares the graph external-semaphore GetParams outputs const
    Probe("hipGraphExternalSemaphoresSignalNodeGetParams", "params_out",
          "hipError_t hipGraphExternalSemaphoresSignalNodeGetParams(hipGraphNode_t hNode, "
          "{} params_out);",
          ("hipExternalSemaphoreSignalNodeParams *",
           "const hipExternalSemaphoreSignalNodeParams *")),
    Probe("hipGraphExternalSemaphoresWaitNodeGetParams", "params_out",
          "hipError_t hipGraphExternalSemaphoresWaitNodeGetParams(hipGraphNode_t hNode, "
          "{} params_out);",
          ("hipExternalSemaphoreWaitNodeParams *", "const hipExternalSemaphoreWaitNodeParams *")),
    # HIP 7.0 takes hipMemsetParams for the driver memset nodes (6.x: HIP_MEMSET_NODE_PARAMS)
    Probe("hipDrvGraphAddMemsetNode", "memsetParams",
          "hipError_t hipDrvGraphAddMemsetNode(hipGraphNode_t *phGraphNode, hipGraph_t hGraph, "
          "const hipGraphNode_t *dependencies, size_t numDependencies, {} memsetParams, "
          "hipCtx_t ctx);",
          ("const HIP_MEMSET_NODE_PARAMS *", "const hipMemsetParams *")),
    Probe("hipDrvGraphExecMemsetNodeSetParams", "memsetParams",
          "hipError_t hipDrvGraphExecMemsetNodeSetParams(hipGraphExec_t hGraphExec, "
          "hipGraphNode_t hNode, {} memsetParams, hipCtx_t ctx);",
          ("const HIP_MEMSET_NODE_PARAMS *", "const hipMemsetParams *")),
    Probe("hiprtcCompileProgram", "options",
          "hiprtcResult hiprtcCompileProgram(hiprtcProgram prog, int numOptions, {} options);",
          ("const char **", "const char *const *")),
)


class ProbeFailed(RuntimeError):
    """No candidate spelling of a probed parameter compiles against the headers."""


def probe(p: Probe, api: Api) -> str:
    """The first candidate of ``p`` that ``api``'s headers accept.

    Where the headers do not declare the function, the first candidate (the
    stub's definition of it is then a plain function).
    """
    if p.function not in api.functions:
        return p.candidates[0]
    plat = api.platform
    head = wrapper_source(plat.all_headers)
    line = head.count("\n") + 1
    for candidate in p.candidates:
        if line not in failing_lines(head + p.declaration.format(candidate) + "\n",
                                     api.include_dirs, plat.defines):
            return candidate
    raise ProbeFailed(
        f"rocpy: none of {', '.join(repr(c) for c in p.candidates)} is the type of "
        f"{p.function}'s {p.parameter} in the headers under {', '.join(api.include_dirs)}: "
        f"add the new spelling to rocpy/_build/features.py")


def have_names(api: Api) -> set[str]:
    """Every function, enum constant, type name and tag the headers declare."""
    decls = api.decls
    return (set(api.functions) | set(api.consts.function_aliases) | decls.enum_constants
            | decls.typedefs | set(api.consts.type_aliases) | decls.structs | decls.unions
            | decls.enums)


def member_names(api: Api) -> dict[str, set[str]]:
    """Type name (tag, typedef or renaming alias) -> its member names."""
    members = {name: set(m) for name, m in api.decls.members.items()}
    for alias, target in api.consts.type_aliases.items():
        if target in members:
            members[alias] = members[target]
    return members


_IDENT = re.compile(r"^[A-Za-z_]\w*$")


def feature_header(api: Api, arg_types: dict[str, str]) -> str:
    """The text of ``rocpy_features.h`` for ``api`` and the probed ``arg_types``."""
    lines = [f"/* Generated by rocpy/_build/features.py from the headers in "
             f"{api.install.include_dir}: do not edit. */",
             "#ifndef ROCPY_FEATURES_H", "#define ROCPY_FEATURES_H"]
    lines += [f"#define ROCPY_HAVE_{n} 1" for n in sorted(have_names(api)) if _IDENT.match(n)]
    for name, members in sorted(member_names(api).items()):
        lines += [f"#define ROCPY_HAVE_{name}__{m} 1" for m in sorted(members)]
    lines += [f"#define ROCPY_NPARAMS_{n} {len(f.params)}" for n, f in sorted(api.functions.items())
              if not f.variadic and _IDENT.match(n)]
    lines += [f"#define {macro} {spelling}" for macro, spelling in sorted(arg_types.items())]
    lines.append("#endif")
    return "\n".join(lines) + "\n"


def write_feature_header(api: Api, directory: str) -> str:
    """Probe the signatures, write ``rocpy_features.h`` into ``directory``, return its path."""
    arg_types = {p.macro: probe(p, api) for p in PROBES}
    path = os.path.join(directory, HEADER_NAME)
    text = feature_header(api, arg_types)
    old = open(path).read() if os.path.exists(path) else None
    if old != text:    # unchanged: keep the date, so nothing recompiles for it
        with open(path, "w") as f:
            f.write(text)
    return path
