"""rocpy_features.h: what the headers declare, as macros for the stub's C.

Checked against the C compiler and the independent census over the installed
headers and the synthetic tree: every ``ROCPY_HAVE_`` name exists (a use of it
compiles), every function, enum constant and struct the census finds has one,
members that differ between HIP releases are there exactly when a use of
them compiles, and each ``ROCPY_ARG_`` spelling is the one the headers accept.
"""
from __future__ import annotations

import os
import re

import pytest

from header_census import census
from rocpy._build.api import describe
from rocpy._build.features import PROBES, Probe, ProbeFailed, probe, write_feature_header
from rocpy._build.preprocess import failing_lines, preprocess, wrapper_source

SYNTHETIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "synthetic")
_DEFINE = re.compile(r"^#define (ROCPY_\w+) (.*)$", re.M)

# names whose presence differs between HIP 5.2, 5.7, 6.x and 7.x (the stub tests them)
VARYING = ["hipDeviceProp_t__gcnArch", "hipPointerAttribute_t__memoryType",
           "hipPointerAttribute_t__type", "hipGraphNodeTypeMemcpy1D", "hipDeviceProp_tR0600",
           "hipMemoryTypeUnregistered", "hipGetDevicePropertiesR0600",
           "hipDeviceProp_t__totalGlobalMem", "synth_event_t__reserved", "hipDeviceProp_t__name"]


@pytest.fixture(scope="module", params=["installed", "synthetic"])
def tree(request, tmp_path_factory):
    """(api, folder holding rocpy_features.h, its #defines) for one header tree."""
    api = describe("amd") if request.param == "installed" else describe("amd", SYNTHETIC)
    folder = str(tmp_path_factory.mktemp(f"features-{request.param}"))
    path = write_feature_header(api, folder)
    return api, folder, dict(_DEFINE.findall(open(path).read()))


def _compile(api, folder: str, body: list[str]) -> set[int]:
    """Lines of ``body`` (0-based) that fail, in a function after the headers and the
    feature header."""
    plat = api.platform
    head = wrapper_source(plat.headers) + '#include "rocpy_features.h"\nvoid rocpy_check(void) {\n'
    bad = failing_lines(head + "\n".join(body) + "\n}\n", api.include_dirs + [folder],
                        plat.defines)
    first = head.count("\n") + 1
    return {line - first for line in bad}


def _spelling(api, name: str) -> str:
    """How C names the type ``name`` (a typedef, or a struct/union/enum tag)."""
    d = api.decls
    if name in d.typedefs or name in api.consts.type_aliases:
        return name
    for kind, tags in (("struct", d.structs), ("union", d.unions), ("enum", d.enums)):
        if name in tags:
            return f"{kind} {name}"
    raise AssertionError(f"{name} is neither a type nor a tag")


def _use(api, name: str) -> str:
    """A statement that compiles only if ``name`` (a ROCPY_HAVE_ suffix) exists."""
    if "__" in name and not name.startswith("__"):
        owner, member = name.split("__", 1)
        return f"{{ {_spelling(api, owner)} *s = 0; (void)s->{member}; }}"
    if name in api.functions or name in api.consts.function_aliases:
        return f"(void)&{name};"
    if name in api.decls.enum_constants:
        return f"(void){name};"
    return f"{{ {_spelling(api, name)} *p = 0; (void)p; }}"


def test_every_name_defined_exists(tree):
    api, folder, defines = tree
    names = [m[len("ROCPY_HAVE_"):] for m in defines if m.startswith("ROCPY_HAVE_")]
    assert len(names) > 20
    body = [_use(api, n) for n in names]
    bad = _compile(api, folder, body)
    assert not bad, [names[i] for i in sorted(bad)][:20]


def test_the_census_finds_nothing_undefined(tree):
    api, _, defines = tree
    pre = preprocess(api.platform.headers, api.include_dirs, api.platform.defines)
    ref = census(pre.text, pre.macros)
    for kind in ("functions", "enum_constants", "structs", "enums"):
        missing = sorted(n for n in getattr(ref, kind) if f"ROCPY_HAVE_{n}" not in defines)
        assert not missing, (kind, missing[:20])


def _compiles_somehow(api, folder: str, name: str) -> bool:
    """Whether some use of ``name`` compiles, knowing nothing of what it is (a member
    ``T__m`` of typedef ``T``; a function or constant; a type)."""
    if "__" in name:
        owner, member = name.split("__", 1)
        uses = [f"{{ {owner} *s = 0; (void)s->{member}; }}"]
    else:
        uses = [f"(void){name};", f"{{ {name} *p = 0; (void)p; }}"]
    return any(not _compile(api, folder, [u]) for u in uses)


def test_varying_names_are_defined_exactly_where_they_compile(tree):
    api, folder, defines = tree
    exists = [_compiles_somehow(api, folder, n) for n in VARYING]
    assert [f"ROCPY_HAVE_{n}" in defines for n in VARYING] == exists
    assert any(exists) and not all(exists)


def test_members_of_anonymous_unions_and_renamed_types(tmp_path):
    path = write_feature_header(describe("amd", SYNTHETIC), str(tmp_path))
    defines = dict(_DEFINE.findall(open(path).read()))
    # 6.x's renaming macro: hipDeviceProp_t is hipDeviceProp_tR0600, members under both names
    assert {"ROCPY_HAVE_hipDeviceProp_t__totalGlobalMem",
            "ROCPY_HAVE_hipDeviceProp_tR0600__totalGlobalMem", "ROCPY_HAVE_hipGetDeviceProperties",
            "ROCPY_HAVE_synth_event_t__reserved", "ROCPY_HAVE_synth_event_s__memory_fault",
            "ROCPY_HAVE_synth_mode_alias_t", "ROCPY_HAVE_SYNTH_MODE_B"} <= set(defines)
    assert "ROCPY_HAVE_hipDeviceProp_t__gcnArch" not in defines


def test_probed_parameters_take_the_headers_spelling(tree):
    api, folder, defines = tree
    declared = [p for p in PROBES if p.function in api.functions]
    assert declared
    assert not _compile(api, folder, [p.declaration.format(p.macro) for p in declared])
    # a wrong spelling does not compile, so the probe could have failed: the check is real
    for p in declared:
        other = next(c for c in p.candidates if c != defines[p.macro])
        assert _compile(api, folder, [p.declaration.format(other)]), p.function
    if api.install.include_dir == SYNTHETIC:       # HIP 7.0's spellings
        assert defines["ROCPY_ARG_hipCtxGetApiVersion__apiVersion"] == "unsigned int *"
        assert defines["ROCPY_ARG_hipMemcpyHtoD__src"] == "const void *"
        # not declared there: the first candidate, which any definition may use
        assert defines["ROCPY_ARG_hipMemcpyHtoDAsync__src"] == "void *"


def test_parameter_counts_follow_the_declarations(tree):
    api, folder, defines = tree
    counts = {m[len("ROCPY_NPARAMS_"):]: int(v) for m, v in defines.items()
              if m.startswith("ROCPY_NPARAMS_")}
    assert counts and counts.keys() <= set(api.functions)
    # the compiler agrees: redeclared with the parameters counted it compiles, with one
    # more it conflicts
    sample = sorted(n for n, f in api.functions.items()
                    if n in counts and counts[n] and not f.inline)[:40]
    assert sample

    def redeclare(n: str, extra: str = "") -> str:
        f = api.functions[n]
        params = ", ".join([decl for decl, _ in f.params] + ([extra] if extra else []))
        return f"{{ extern {f.result} {n}({params}); }}"
    assert not _compile(api, folder, [redeclare(n) for n in sample])
    assert len(_compile(api, folder, [redeclare(n, "int rocpy_extra") for n in sample])) == len(sample)
    if api.install.include_dir == SYNTHETIC:       # HIP 6.4's declaration of it
        assert counts["hipDeviceGetTexture1DLinearMaxWidth"] == 2
    else:
        assert counts["hipMemcpyAsync"] == 5


def test_a_probe_no_candidate_fits_names_the_function():
    api = describe("amd", SYNTHETIC)
    p = Probe("hipCtxGetApiVersion", "apiVersion",
              "hipError_t hipCtxGetApiVersion(hipCtx_t ctx, {} apiVersion);", ("long *", "char *"))
    with pytest.raises(ProbeFailed, match=r"hipCtxGetApiVersion's apiVersion.*features\.py"):
        probe(p, api)
