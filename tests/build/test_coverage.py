"""Every function, struct, enum and constant of the headers is reachable.

The reference is an independent scan of the preprocessed headers
(header_census.py: no pycparser); at least 99% of each kind must be in the
compiled module, and every miss must be listed here with its reason.
"""
from __future__ import annotations

import pytest

from built_modules import backend_modules
from header_census import census

# name -> why it is not reachable (none today; keep the reason when adding one)
EXPLAINED_MISSES: dict[str, str] = {}


def _ratio(found: set[str], wanted: set[str]) -> float:
    return len(found & wanted) / len(wanted) if wanted else 1.0


@pytest.fixture(scope="module")
def reference(installed_preprocessed):
    return census(installed_preprocessed.text, installed_preprocessed.macros)


@pytest.mark.parametrize("mod", backend_modules())
def test_functions_enums_constants(mod, reference):
    names = set(dir(mod.lib))
    for kind in ("functions", "enum_constants", "constants"):
        wanted = getattr(reference, kind)
        missing = sorted(wanted - names - set(EXPLAINED_MISSES))
        assert wanted, f"the census found no {kind}: the scanner is broken"
        assert _ratio(names, wanted) >= 0.99, f"{kind} missing: {missing}"
        assert not missing, f"unexplained {kind} missing: {missing}"


def _reachable_types(ffi, keyword: str, names: set[str]) -> set[str]:
    ok = set()
    for n in names:
        try:
            ffi.typeof(f"{keyword} {n}")
        except ffi.error:       # undefined there: counted missing (anything else is a bug)
            continue
        ok.add(n)
    return ok


@pytest.mark.parametrize("mod", backend_modules())
def test_structs_and_enums(mod, reference):
    for keyword, wanted in (("struct", reference.structs), ("enum", reference.enums)):
        found = _reachable_types(mod.ffi, keyword, wanted)
        missing = sorted(wanted - found - set(EXPLAINED_MISSES))
        assert len(wanted) > 10
        assert _ratio(found, wanted) >= 0.99 and not missing, f"{keyword}s missing: {missing}"


def test_pipeline_counts_match_the_census(installed_api, reference):
    # the two methods agree on what the headers declare
    assert set(installed_api.functions) == reference.functions
    assert installed_api.decls.structs == reference.structs
    assert installed_api.decls.enum_constants == reference.enum_constants


def test_no_libc_leaks_into_the_declarations(installed_api):
    for name in ("malloc", "memcpy", "printf", "pthread_create", "free"):
        assert name not in installed_api.functions
    assert "FILE" not in installed_api.decls.typedefs
