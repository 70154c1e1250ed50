/* rocpy._hot: Stream.sync's and Event.sync's common case in compiled code (method kinds
 * of hot_method.c).
 *
 * The case: an open stream whose lane is ready (hot_lane.c `lane_ready`: its device
 * current as rocpy set it, no capture by rocpy, no pending callback errors), no wait of
 * rocpy's interrupted earlier (`_wait._abandoned` empty), no capture begun by rocpy
 * (`_wait.captures[0]` 0), no host callback or graph host node to report (`_cb_seen`
 * False, `_more_errors` empty), and a wait that ends within the first spin: the query
 * spin of `rocpy_wait` (_native/fast/wait.c, called by address from the backend's
 * module), with the GIL released, exactly as Stream.sync's first call of it.  Anything
 * else, a spin that ran out included, is Stream.sync itself (Python, the fallback),
 * which then waits the whole way (long spin, helper thread, Ctrl-C between slices):
 * so the errors and their messages are Python's, and a long wait costs one extra
 * spin-length of querying at most (`_wait.SPIN_NS`, 2 ms, out of a wait past it).
 *
 * What is held before the wait is detached first (`_OrderedHandle._take`) and dropped
 * once the wait succeeded; on failure it is held again (`_restore`): what other threads
 * enqueue meanwhile is never dropped. */
#include "hot_method.h"

#define SYNC_STREAM_KIND 0          /* ROCPY_WAIT_STREAM (_native/fast/wait.h) */
#define SYNC_EVENT_KIND 1           /* ROCPY_WAIT_EVENT */

typedef int (*wait_fn)(void **job, int kind, void *handle, int device, uint64_t spin_ns,
                       uint64_t slice_ns, int *status);

/* extra = (captures, abandoned, spin_ns, slice_ns): checked by make_method */
static int sync_waits_elsewhere(PyObject *extra)
{
    PyObject *captures = PyTuple_GetItem(extra, 0), *abandoned = PyTuple_GetItem(extra, 1);
    PyObject *c0 = PyList_GetItem(captures, 0);   /* borrowed */
    if (!c0 || !PyLong_CheckExact(c0)) {
        PyErr_Clear();
        return 1;
    }
    long c = PyLong_AsLong(c0);
    if (c == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 1;
    }
    return c != 0 || PyList_Size(abandoned) != 0;
}

/* 1 when `_cb_seen` is False and `_more_errors` an empty list, 0 otherwise, -1 error */
static int no_callbacks_to_report(PyObject *self)
{
    PyObject *seen = method_aux(STREAM_SYNC, 2, self);
    if (!seen)
        return -1;
    int quiet = seen == Py_False;
    Py_DECREF(seen);
    if (!quiet)
        return 0;
    PyObject *more = method_aux(STREAM_SYNC, 3, self);
    if (!more)
        return -1;
    quiet = PyList_CheckExact(more) && PyList_Size(more) == 0;
    Py_DECREF(more);
    return quiet;
}

/* The stream's `_pending.poll()` where it has entries. */
static int sync_poll_pending(PyObject *self)
{
    PyObject *pending = method_aux(STREAM_SYNC, 0, self);
    if (!pending)
        return -1;
    int r = poll_pending(STREAM_SYNC, pending);
    Py_DECREF(pending);
    return r;
}

/* Hold again, at the batch's front, what the wait had detached. */
static int restore_held(Lane *lane, PyObject *taken)
{
    PyObject *u = PyList_GetItem(lane->box, 0);   /* borrowed */
    return u ? PyList_SetSlice(u, 0, 0, taken) : -1;
}

PyObject *stream_sync(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames)
{
    MethodState *s = &method_state[STREAM_SYNC];
    PyObject *lane_o = NULL;
    int r = nargs || kwnames || sync_waits_elsewhere(s->extra) ? 0
                                                               : stream_ready_lane(self, &lane_o);
    if (r > 0)
        r = no_callbacks_to_report(self);
    if (r <= 0) {
        Py_XDECREF(lane_o);
        return r < 0 ? NULL : method_fallback(STREAM_SYNC, self, args, nargs, kwnames);
    }
    Lane *lane = (Lane *)lane_o;
    PyObject *taken = NULL, *result = NULL;
    PyObject *u = PyList_GetItem(lane->box, 0);   /* borrowed */
    if (!u)
        goto done;
    if (PyList_Size(u) > 0) {                     /* _take: the box gets a new batch */
        PyObject *fresh = PyList_New(0);
        if (!fresh)
            goto done;
        Py_INCREF(u);
        taken = u;
        if (PyList_SetItem(lane->box, 0, fresh) < 0)
            goto done;
    }
    uint64_t spin_ns = s->spin_ns, slice_ns = s->slice_ns;
    void *job = NULL, *sh = (void *)(uintptr_t)lane->addr;
    int dev = lane->dev, status = 0, w;
    Py_BEGIN_ALLOW_THREADS
    w = ((wait_fn)s->fn)(&job, SYNC_STREAM_KIND, sh, dev, spin_ns, slice_ns, &status);
    Py_END_ALLOW_THREADS
    if (w != 0 || status) {
        if (taken && restore_held(lane, taken) < 0)
            goto done;
        if (w != 0)           /* still running after the spin: the whole wait in Python */
            result = method_fallback(STREAM_SYNC, self, args, nargs, kwnames);
        else
            raise_status(status, "hipStreamSynchronize");
        goto done;
    }
    Py_CLEAR(taken);
    if (sync_poll_pending(self) < 0)
        goto done;
    /* callbacks that failed meanwhile: Stream._check_callbacks raises their CallbackError */
    r = lane_ready(lane, lane->ready);
    if (r < 0)
        goto done;
    if (r == 0) {
        PyObject *x = PyObject_CallMethod(self, "_check_callbacks", NULL);
        if (!x)
            goto done;
        Py_DECREF(x);
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    Py_XDECREF(taken);
    Py_DECREF(lane_o);
    return result;
}

/* Event.sync (event.py), the same way: an open event, no wait of rocpy's interrupted
 * earlier, no capture begun by rocpy, and a wait that ends within the first query spin
 * (rocpy_wait on the event, GIL released, as `_wait.wait`'s first call of it).  A spin
 * that ran out, and every other case, is Event.sync itself (which then waits the whole
 * way: long spin unless the event blocks, helper thread, Ctrl-C between slices). */
PyObject *event_sync(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames)
{
    MethodState *s = &method_state[EVENT_SYNC];
    void *ev = NULL;
    int r = nargs || kwnames || sync_waits_elsewhere(s->extra) ? 0
                                                               : event_addr(self, EVENT_SYNC, &ev);
    long dev = -1;
    if (r > 0) {
        PyObject *d = method_aux(EVENT_SYNC, 1, self);
        PyObject *i = d ? method_aux(EVENT_SYNC, 2, d) : NULL;
        Py_XDECREF(d);
        if (!i)
            return NULL;
        dev = PyLong_CheckExact(i) ? PyLong_AsLong(i) : -1;
        Py_DECREF(i);
        if (dev == -1 && PyErr_Occurred())
            return NULL;
        r = dev >= 0;
    }
    if (r <= 0)
        return r < 0 ? NULL : method_fallback(EVENT_SYNC, self, args, nargs, kwnames);
    uint64_t spin_ns = s->spin_ns, slice_ns = s->slice_ns;
    void *job = NULL;
    int status = 0, w;
    Py_BEGIN_ALLOW_THREADS
    w = ((wait_fn)s->fn)(&job, SYNC_EVENT_KIND, ev, (int)dev, spin_ns, slice_ns, &status);
    Py_END_ALLOW_THREADS
    if (w != 0)               /* still running after the spin: the whole wait in Python */
        return method_fallback(EVENT_SYNC, self, args, nargs, kwnames);
    if (status)
        return raise_status(status, "hipEventSynchronize");
    Py_RETURN_NONE;
}
