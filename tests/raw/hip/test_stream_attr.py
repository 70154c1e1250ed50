"""hipStreamGet/Set/CopyAttributes, hipStreamGetId, hipEventRecordWithFlags
(7.x headers; hipamd hip_stream.cpp, hip_event.cpp hipEventRecord_common;
stub: rocpy/_native/stub/hip_stream_attr.c, hip_event.c)."""
from __future__ import annotations

import pytest

from .helpers import PER_THREAD, check, event, ffi, hipamd, lib, ok, stream

pytestmark = [hipamd, pytest.mark.skipif(not hasattr(lib, "hipStreamGetAttribute"),
                                         reason="stream attributes: 7.x headers")]
N = ffi.NULL


def get(s, attr):
    v = ffi.new("hipLaunchAttributeValue *")
    status = lib.hipStreamGetAttribute(s, attr, v)
    return status, v


def set_policy(s, policy):
    v = ffi.new("hipLaunchAttributeValue *")
    v.syncPolicy = policy
    return lib.hipStreamSetAttribute(s, lib.hipLaunchAttributeSynchronizationPolicy, v)


def test_sync_policy_is_stored_read_back_and_copied():
    a, b = stream(), stream()
    status, v = get(a, lib.hipLaunchAttributeSynchronizationPolicy)
    ok(status)
    assert v.syncPolicy == lib.hipSyncPolicyAuto                       # never set
    ok(set_policy(a, lib.hipSyncPolicyBlockingSync))
    assert get(a, lib.hipLaunchAttributeSynchronizationPolicy)[1].syncPolicy == \
        lib.hipSyncPolicyBlockingSync
    assert get(b, lib.hipLaunchAttributeSynchronizationPolicy)[1].syncPolicy == lib.hipSyncPolicyAuto
    ok(lib.hipStreamCopyAttributes(b, a))
    assert get(b, lib.hipLaunchAttributeSynchronizationPolicy)[1].syncPolicy == \
        lib.hipSyncPolicyBlockingSync
    # the null stream and the per-thread stream have attributes too
    ok(set_policy(N, lib.hipSyncPolicySpin))
    assert get(N, lib.hipLaunchAttributeSynchronizationPolicy)[1].syncPolicy == lib.hipSyncPolicySpin
    ok(set_policy(N, lib.hipSyncPolicyAuto))
    ok(lib.hipStreamCopyAttributes(PER_THREAD, a))
    for s in (a, b):
        ok(lib.hipStreamDestroy(s))


def test_priority_is_the_creation_priority():
    lo, hi = ffi.new("int *"), ffi.new("int *")
    ok(lib.hipDeviceGetStreamPriorityRange(lo, hi))
    s = ffi.new("hipStream_t *")
    ok(lib.hipStreamCreateWithPriority(s, 0, hi[0]))
    status, v = get(s[0], lib.hipLaunchAttributePriority)
    ok(status)
    assert v.priority == hi[0]
    assert get(N, lib.hipLaunchAttributePriority)[1].priority == 0
    ok(lib.hipStreamDestroy(s[0]))


def test_attribute_errors():
    s = stream()
    dead = stream()
    ok(lib.hipStreamDestroy(dead))
    v = ffi.new("hipLaunchAttributeValue *")
    v.syncPolicy = lib.hipSyncPolicyYield
    A = lib.hipLaunchAttributeSynchronizationPolicy
    check(lib.hipStreamSetAttribute(s, A, N), "hipErrorInvalidValue")
    check(lib.hipStreamGetAttribute(s, A, N), "hipErrorInvalidValue")
    check(lib.hipStreamSetAttribute(dead, A, v), "hipErrorInvalidHandle")
    check(lib.hipStreamGetAttribute(dead, A, v), "hipErrorInvalidHandle")
    check(lib.hipStreamCopyAttributes(dead, s), "hipErrorInvalidHandle")
    check(lib.hipStreamCopyAttributes(s, dead), "hipErrorInvalidHandle")
    for bad in (0, 5):
        v.syncPolicy = bad
        check(lib.hipStreamSetAttribute(s, A, v), "hipErrorInvalidValue")
    # only the policy is settable; the access policy window is neither
    # stored nor returned by hipamd
    check(lib.hipStreamSetAttribute(s, lib.hipLaunchAttributePriority, v), "hipErrorInvalidValue")
    check(lib.hipStreamSetAttribute(s, lib.hipLaunchAttributeAccessPolicyWindow, v),
          "hipErrorInvalidValue")
    check(lib.hipStreamGetAttribute(s, lib.hipLaunchAttributeAccessPolicyWindow, v),
          "hipErrorInvalidValue")
    # a capturing stream: refused, and the capture is invalidated
    ok(lib.hipStreamBeginCapture(s, lib.hipStreamCaptureModeRelaxed))
    v.syncPolicy = lib.hipSyncPolicyYield
    check(lib.hipStreamSetAttribute(s, A, v), "hipErrorStreamCaptureUnsupported")
    g = ffi.new("hipGraph_t *")
    check(lib.hipStreamEndCapture(s, g), "hipErrorStreamCaptureInvalidated")
    ok(lib.hipStreamDestroy(s))


def test_stream_ids_are_unique_and_increasing():
    ids = []
    streams = [stream() for _ in range(3)]
    out = ffi.new("unsigned long long *")
    for s in streams:
        ok(lib.hipStreamGetId(s, out))
        ids.append(out[0])
    assert ids == sorted(ids) and len(set(ids)) == 3
    ok(lib.hipStreamGetId(N, out))
    null_id = out[0]
    assert null_id not in ids
    ok(lib.hipStreamGetId(N, out))
    assert out[0] == null_id                                   # the same null stream
    ok(lib.hipStreamGetId(PER_THREAD, out))
    assert out[0] not in ids and out[0] != null_id
    check(lib.hipStreamGetId(streams[0], N), "hipErrorInvalidValue")
    for s in streams:
        ok(lib.hipStreamDestroy(s))
    check(lib.hipStreamGetId(streams[0], out), "hipErrorInvalidHandle")


def test_event_record_with_flags():
    e, s = event(), stream()
    ok(lib.hipEventRecordWithFlags(e, s, lib.hipEventRecordDefault))
    ok(lib.hipEventSynchronize(e))
    ok(lib.hipEventRecordWithFlags(e, s, lib.hipEventRecordExternal))
    ok(lib.hipEventSynchronize(e))
    ok(lib.hipEventQuery(e))
    # hipEventRecord_common: the flags first, then the event, then the stream
    dead = stream()
    ok(lib.hipStreamDestroy(dead))
    check(lib.hipEventRecordWithFlags(N, dead, 2), "hipErrorInvalidValue")
    check(lib.hipEventRecordWithFlags(N, s, 0), "hipErrorInvalidHandle")
    check(lib.hipEventRecordWithFlags(e, dead, 0), "hipErrorContextIsDestroyed")  # as hipEventRecord
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipEventDestroy(e))


def node_types(g):
    n = ffi.new("size_t *")
    ok(lib.hipGraphGetNodes(g, N, n))
    nodes = ffi.new("hipGraphNode_t[]", n[0])
    ok(lib.hipGraphGetNodes(g, nodes, n))
    t = ffi.new("hipGraphNodeType *")
    out = []
    for i in range(n[0]):
        ok(lib.hipGraphNodeGetType(nodes[i], t))
        out.append(t[0])
    return out


@pytest.mark.parametrize("flags,record_nodes", [(0, 0), (1, 1)], ids=["default", "external"])
def test_event_record_in_a_capture(flags, record_nodes):
    e, s = event(), stream()
    g = ffi.new("hipGraph_t *")
    ok(lib.hipStreamBeginCapture(s, lib.hipStreamCaptureModeGlobal))
    ok(lib.hipEventRecordWithFlags(e, s, flags))
    ok(lib.hipStreamEndCapture(s, g))
    # an external record is a node of the graph; a default one only joins streams
    assert node_types(g[0]).count(lib.hipGraphNodeTypeEventRecord) == record_nodes
    ok(lib.hipGraphDestroy(g[0]))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipEventDestroy(e))
