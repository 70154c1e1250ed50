"""rocpy's public surface: what ``__all__`` promises exists, under one name each."""
from __future__ import annotations

import rocpy


def test_all_names_resolve():
    missing = [n for n in rocpy.__all__ if not hasattr(rocpy, n)]
    assert missing == []


def test_lazy_hip_names_are_all_listed_in_all():
    # __all__ spells them out (type checkers read only a literal list); __getattr__ uses _HIP_NAMES
    assert set(rocpy._HIP_NAMES) <= set(rocpy.__all__)
    assert len(rocpy.__all__) == len(set(rocpy.__all__))
