"""rocpy.stub: the Python control surface of the stub runtime."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import rocpy

pytestmark = pytest.mark.skipif(not rocpy.backend().is_stub, reason="controls the stub only")


def test_register_needs_a_callable():
    from rocpy import stub
    with pytest.raises(TypeError, match="must be callable"):
        stub.register_kernel("k", 42)


def test_register_and_unregister_keep_handles_balanced():
    from rocpy import stub
    from rocpy.stub import control
    stub.register_kernel("rocpy_test_kernel", lambda d: 0)
    assert "rocpy_test_kernel" in control._handles
    stub.unregister_kernel("rocpy_test_kernel")
    assert "rocpy_test_kernel" not in control._handles


def test_inject_rejects_unknown_fault_and_negative_counts():
    from rocpy import stub
    with pytest.raises(ValueError, match="unknown fault 'disk'"):
        stub.inject("disk")
    with pytest.raises(ValueError, match=">= 0"):
        stub.inject("alloc", skip=-1)
    stub.inject("alloc", skip=5, count=1)
    stub.clear_faults()


def test_live_allocations_is_a_count():
    from rocpy import stub
    assert stub.live_allocations() >= 0


@pytest.mark.parametrize("env, expected", [
    ({"ROCPY_STUB_DEVICES": "3"}, 3),
    ({"ROCPY_STUB_DEVICES": "4", "HIP_VISIBLE_DEVICES": "2,0"}, 2),
    ({"ROCPY_STUB_DEVICES": "4", "ROCR_VISIBLE_DEVICES": "1,2,3", "HIP_VISIBLE_DEVICES": "0,1"}, 2),
    ({"ROCPY_STUB_DEVICES": "2", "HIP_VISIBLE_DEVICES": "0,7"}, 1),   # stops at the invalid id
    ({"ROCPY_STUB_DEVICES": "0"}, 0),
])
def test_device_count_follows_the_environment(env, expected):
    code = "from rocpy import stub; print(stub.device_count())"
    full = {k: v for k, v in os.environ.items() if not k.endswith("VISIBLE_DEVICES")}
    full.update(env, ROCPY_BACKEND="stub")
    out = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True)
    assert out.stdout.strip() == str(expected), out.stderr
