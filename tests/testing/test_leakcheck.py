"""rocpy.testing.LeakCheck outside pytest's fixtures: the two failures it reports
(objects alive, stub allocations grown), in this process."""
from __future__ import annotations

import re

import pytest

import rocpy
from rocpy import debug
from rocpy.testing import LeakCheck, LeakError

needs_stub = pytest.mark.skipif(not rocpy.backend().is_stub, reason="counts the stub's allocations")


def test_an_object_alive_after_the_block_is_a_leak():
    from rocpy import hip
    kept = []
    with pytest.raises(LeakError, match=r"^rocpy objects still alive after the test: "
                                        r"\{'Stream': 1\}$"):
        with LeakCheck(timeout=0.2):
            kept.append(hip.Device(0).create_stream())
    kept.pop().close()
    debug.collect()
    assert debug.live_objects() == {}
    with LeakCheck(timeout=0.2):                  # the same work, cleaned up: no leak
        hip.Device(0).create_stream().close()


@needs_stub
def test_a_native_allocation_left_behind_is_a_leak():
    from rocpy.hip import ffi, lib
    p = ffi.new("void **")
    check = LeakCheck(timeout=0.2).start()
    assert lib.hipMalloc(p, 256) == 0
    with pytest.raises(LeakError) as e:
        check.finish()
    found = re.fullmatch(r"stub allocations: (\d+) before the test, (\d+) after", str(e.value))
    assert found and int(found[2]) == int(found[1]) + 1, str(e.value)
    assert lib.hipFree(p[0]) == 0
    LeakCheck(timeout=0.2, allocations=True).start().finish()   # nothing grows now


def test_an_exception_in_the_block_is_not_masked():
    from rocpy import hip
    kept = []
    with pytest.raises(KeyError):
        with LeakCheck(timeout=0.2):
            kept.append(hip.Device(0).create_stream())
            raise KeyError("the test's own failure")
    kept.pop().close()
