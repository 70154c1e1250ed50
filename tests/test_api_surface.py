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


# issue 24: one name per operation, cuda.core's where the concept is the same (CHANGELOG.md)
REMOVED = [
    ("hip.Stream", "synchronize"), ("hip.Event", "synchronize"), ("hip.Device", "synchronize"),
    ("hip.Context", "synchronize"), ("hsa.Queue", "synchronize"),
    ("hip.Event", "elapsed"), ("hip.Event", "done"), ("hip.Stream", "done"),
    ("hip.Stream", "null"), ("hip.Device", "null_stream"), ("hip.Context", "null_stream"),
    ("hip.Device", "count"), ("hsa.Queue", "type"),
]


def _owner(path):
    from rocpy import hip, hsa
    mod, cls = path.split(".")
    return getattr({"hip": hip, "hsa": hsa}[mod], cls)


def test_old_names_are_gone():
    left = [f"{c}.{n}" for c, n in REMOVED if hasattr(_owner(c), n)]
    assert left == []


def test_their_replacements_exist():
    from rocpy import hip, hsa
    for cls in (hip.Stream, hip.Event, hip.Device, hip.Context, hsa.Queue):
        assert callable(cls.sync), cls
    assert isinstance(hip.Device.__dict__["default_stream"], property)
    assert "__sub__" in vars(hip.Event)
