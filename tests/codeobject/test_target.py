"""Target IDs: parsing, ROCm's matching rules, selection from real bundles."""
from __future__ import annotations

import re

import pytest

from rocpy.codeobject import (CodeObjectError, InvalidTargetIdError, NoMatchingTargetError,
                              TargetId, load, parse_target_id)
from rocpy.codeobject.target import select_target


@pytest.mark.parametrize("text,expected", [
    ("gfx90a", TargetId("gfx90a")),
    ("gfx90a:xnack+", TargetId("gfx90a", xnack=True)),
    ("gfx90a:sramecc+:xnack-", TargetId("gfx90a", sramecc=True, xnack=False)),
    ("gfx90a:xnack-:sramecc-", TargetId("gfx90a", sramecc=False, xnack=False)),
    ("amdgcn-amd-amdhsa--gfx908:sramecc-", TargetId("gfx908", sramecc=False)),
    ("amdgcn-amd-amdhsa-gfx1030", TargetId("gfx1030")),
    ("gfx11-generic", TargetId("gfx11-generic")),
    ("amdgcn-amd-amdhsa--gfx9-4-generic:xnack+", TargetId("gfx9-4-generic", xnack=True)),
])
def test_parse(text, expected):
    assert parse_target_id(text) == expected


def test_canonical_string():
    assert str(parse_target_id("gfx90a:xnack-:sramecc+")) == "gfx90a:sramecc+:xnack-"
    assert str(TargetId("gfx1100")) == "gfx1100"
    assert TargetId("gfx90a").gfx == "gfx90a"


@pytest.mark.parametrize("text,problem", [
    ("", "not a processor name"),
    ("sm_80", "not a processor name"),
    ("gfx90a:xnack", "feature 'xnack'"),
    ("gfx90a:xnack+:xnack-", "xnack given twice"),
    ("gfx90a:sramecc*", "feature 'sramecc*'"),
    ("gfx90a:tgsplit+", "feature 'tgsplit+'"),
])
def test_parse_errors(text, problem):
    with pytest.raises(InvalidTargetIdError, match=re.escape(problem)) as info:
        parse_target_id(text)
    assert isinstance(info.value, (CodeObjectError, ValueError))


@pytest.mark.parametrize("code,device,ok", [
    ("gfx90a", "gfx90a:sramecc+:xnack-", True),           # any matches both
    ("gfx90a:xnack-", "gfx90a:sramecc+:xnack-", True),
    ("gfx90a:xnack+", "gfx90a:sramecc+:xnack-", False),
    ("gfx90a:sramecc-:xnack-", "gfx90a:sramecc+:xnack-", False),
    ("gfx90a:sramecc+:xnack+", "gfx90a:sramecc+:xnack+", True),
    ("gfx90a:xnack+", "gfx90a", False),                    # device lacks the setting
    ("gfx908", "gfx90a:sramecc+:xnack-", False),
    ("gfx1030", "gfx1030", True),
    ("gfx10-3-generic", "gfx1031", True),
    ("gfx11-generic", "gfx1030", False),
    ("gfx9-generic", "gfx90a:sramecc+:xnack-", False),      # gfx90a is not in gfx9-generic
    ("gfx9-4-generic:xnack-", "gfx942:sramecc+:xnack-", True),
])
def test_matches(code, device, ok):
    assert parse_target_id(code).matches(device) is ok
    assert parse_target_id(code).matches(parse_target_id(device)) is ok


def test_select_prefers_specific_over_generic():
    cands = tuple(map(parse_target_id, ["gfx11-generic", "gfx1100", "gfx1101"]))
    assert select_target(cands, "gfx1100") == 1
    assert select_target(cands, "gfx1102") == 0
    assert select_target(cands, "gfx90a") is None


def test_select_from_multi_target_bundle(artifacts):
    f = load(artifacts.get("hip-multi"))
    assert {str(t) for t in f.targets} >= {"gfx90a:xnack-", "gfx90a:xnack+"}
    for device, xnack in (("gfx90a:sramecc+:xnack-", False), ("gfx90a:sramecc-:xnack+", True)):
        co = f.select(device)
        assert co.target.processor == "gfx90a" and co.target.xnack is xnack
        assert "vadd" in co.kernels
    for arch in artifacts.hip_archs:
        if arch != "gfx90a":
            assert f.select(arch).target.processor == arch


def test_no_matching_target_lists_contents(artifacts):
    f = load(artifacts.get("hip-multi"))
    with pytest.raises(NoMatchingTargetError) as info:
        f.select("gfx1201")
    message = str(info.value)
    assert "gfx1201" in message and "gfx90a:xnack+" in message and "gfx90a:xnack-" in message
    assert info.value.device == "gfx1201"
    assert set(info.value.available) == {str(t) for t in f.targets}
    with pytest.raises(NoMatchingTargetError, match="gfx90a:xnack"):
        f.select("gfx90a")   # every gfx90a entry pins xnack; the device does not say


def test_bare_elf_target(artifacts):
    f = load(artifacts.get("cl-gfx90a-xnack-v3"))
    assert f.format == "elf" and f.entries == ()
    (target,) = f.targets
    assert target.processor == "gfx90a" and target.xnack is True
    assert f.select("gfx90a:sramecc+:xnack+") is f.code_object(0)
    with pytest.raises(NoMatchingTargetError):
        f.select("gfx90a:sramecc+:xnack-")
