"""Facts taken from ROCm/hip-tests (``catch/unit``, tag rocm-6.2.0): one API
call and the status hip-tests expects, with the file and line it comes from.

A fact's expectation is a status name, or ``{release: name}`` where the
answer changed between releases (tests/rocm_versions.py picks the value).
Where hip-tests and clr disagree, clr's code is what the stub follows and the
fact says so in its note; hip-tests' own value is kept in ``hiptests``.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from rocm_versions import expect

from .helpers import check, event, ffi, lib, ok, stream


@dataclass(frozen=True)
class Fact:
    where: str                                  # "stream/hipStreamDestroy.cc:35"
    call: Callable[["Env"], int | str]      # a status, or "hipSuccess" / what went wrong
    expected: str | Mapping[tuple[int, int], str]
    note: str = ""
    hiptests: str | None = None                 # hip-tests' value where clr differs

    def check(self, env: "Env") -> None:
        want = self.expected if isinstance(self.expected, str) else expect(self.expected)
        got = self.call(env)
        if isinstance(got, str):            # a fact about a value, not a status
            assert got == want, f"{self.where}: {got}"
        else:
            check(got, want)


class Env:
    """Handles a fact needs, created on demand and released after it."""

    def __init__(self) -> None:
        self._release: list[Callable[[], Any]] = []

    def stream(self, flags: int = 0):
        s = stream(flags)
        self._release.append(lambda: lib.hipStreamDestroy(s))
        return s

    def dead_stream(self):
        s = stream()
        ok(lib.hipStreamDestroy(s))
        return s

    def event(self, flags: int = 0):
        e = event(flags)
        self._release.append(lambda: lib.hipEventDestroy(e))
        return e

    def dead_event(self):
        e = event()
        ok(lib.hipEventDestroy(e))
        return e

    def graph(self):
        g = ffi.new("hipGraph_t *")
        ok(lib.hipGraphCreate(g, 0))
        self._release.append(lambda: lib.hipGraphDestroy(g[0]))
        return g[0]

    def empty_node(self, graph):
        n = ffi.new("hipGraphNode_t *")
        ok(lib.hipGraphAddEmptyNode(n, graph, ffi.NULL, 0))
        return n[0]

    def exec_of(self, graph):
        e = ffi.new("hipGraphExec_t *")
        ok(lib.hipGraphInstantiate(e, graph, ffi.NULL, ffi.NULL, 0))
        self._release.append(lambda: lib.hipGraphExecDestroy(e[0]))
        return e[0]

    def blocked(self, s=None):
        """A stream (``s``, else a new one) held busy by a host function until
        the fact is done: the stand-in for hip-tests' long-running kernel."""
        s = self.stream() if s is None else s
        gate = threading.Event()

        def wait(_user):
            gate.wait(30)
        fn = ffi.callback("void(void *)", wait)
        ok(lib.hipLaunchHostFunc(s, fn, ffi.NULL))
        self._release.append(lambda: (gate.set(), lib.hipStreamSynchronize(s), fn))
        return s

    def device_count(self) -> int:
        n = ffi.new("int *")
        ok(lib.hipGetDeviceCount(n))
        return n[0]

    def later(self, fn: Callable[[], Any]) -> None:
        self._release.append(fn)

    def close(self) -> None:
        for fn in reversed(self._release):
            fn()
        self._release.clear()
        lib.hipGetLastError()


def ids(facts: list[Fact]) -> list[str]:
    return [f.where for f in facts]
