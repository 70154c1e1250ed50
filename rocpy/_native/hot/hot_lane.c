/* rocpy._hot: Lane, a stream's hot state (the enqueue interface, rocpy/hip/_lane.py). */
#include "hot.h"

/* ---- Lane: the stream's hot state ------------------------------------------------ */


PyTypeObject *LaneType;

static int lane_traverse(Lane *self, visitproc visit, void *arg)
{
    Py_VISIT(self->errors);
    Py_VISIT(self->box);
    Py_VISIT((PyObject *)Py_TYPE((PyObject *)self));
    return 0;
}

static int lane_clear(Lane *self)
{
    Py_CLEAR(self->errors);
    Py_CLEAR(self->box);
    return 0;
}

static void lane_dealloc(Lane *self)
{
    PyTypeObject *tp = Py_TYPE((PyObject *)self);
    PyObject_GC_UnTrack(self);
    lane_clear(self);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

static PyMemberDef lane_members[] = {
    {"addr", T_ULONGLONG, offsetof(Lane, addr), 0, "the stream handle as an int"},
    {"dev", T_INT, offsetof(Lane, dev), 0, "the stream's device index (what an enqueue marks)"},
    {"ready", T_INT, offsetof(Lane, ready), 0,
     "the device index when an enqueue needs nothing first (no current device to set, "
     "no capture by rocpy), else -1"},
    {"errors", T_OBJECT, offsetof(Lane, errors), 0, "the stream's CallbackErrors"},
    {"box", T_OBJECT, offsetof(Lane, box), 0, "one-item list: what unfenced work uses"},
    {"limit", T_PYSSIZET, offsetof(Lane, limit), 0, "items held before a fence"},
    {"querying", T_PYSSIZET, offsetof(Lane, querying), 0,
     "queries in progress (Stream.query): a launch then holds what it uses again"},
    {NULL}
};

static PyType_Slot lane_slots[] = {
    {Py_tp_doc, "A stream's hot state (see rocpy/hip/_lane.py)."},
    {Py_tp_members, lane_members},
    {Py_tp_traverse, lane_traverse},
    {Py_tp_clear, lane_clear},
    {Py_tp_dealloc, lane_dealloc},
    {Py_tp_new, PyType_GenericNew},
    {0, NULL}
};

PyType_Spec lane_spec = {
    "rocpy._hot.Lane", sizeof(Lane), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, lane_slots
};

/* 1: an enqueue may go ahead in C; 0: the Python path must handle it (pending
 * callback errors, another device, binding, capture); -1: error. */
int lane_ready(Lane *lane, int dev_index)
{
    if (lane->ready != dev_index || !lane->errors || !lane->box)
        return 0;
    PyObject *pending = member_read(&mem_pending, lane->errors);
    if (!pending)
        return -1;
    Py_ssize_t n = PyList_CheckExact(pending) ? PyList_Size(pending) : PyObject_Length(pending);
    Py_DECREF(pending);
    if (n < 0)
        return -1;
    return n == 0;
}

/* Hold `item` (stolen) until the work enqueued so far completes; fence at the limit. */
int lane_hold(Lane *lane, PyObject *stream, PyObject *item)
{
    PyObject *u = PyList_GetItem(lane->box, 0);   /* borrowed */
    if (!u) {
        Py_DECREF(item);
        return -1;
    }
    Py_INCREF(u);
    idle_mark(lane->dev);
    int r = PyList_Append(u, item);
    Py_DECREF(item);
    if (r == 0 && PyList_Size(u) >= lane->limit) {
        PyObject *res = PyObject_CallMethodObjArgs(stream, str_fence, NULL);
        if (!res)
            r = -1;
        Py_XDECREF(res);
    }
    Py_DECREF(u);
    return r;
}


/* Hold `a` (b NULL) or the pair (a, b) until the work enqueued so far completes, as
 * lane_hold does; nothing new when the unfenced batch's last item already is that (the
 * same objects: the repeated copy or launch of a loop), since a held item stays held
 * until a fence recorded after all the work enqueued before that fence; the device is
 * still marked (hot_idle.c).  Not while a query runs on another thread
 * (lane->querying): a query that finds the stream complete drops what was held when it
 * began, the item this work would rely on included (Stream.query).  The one rule for
 * copies and launches (_stream_order.py `_hold_once` is the Python twin). */
int lane_hold_once(Lane *lane, PyObject *stream, PyObject *a, PyObject *b)
{
    PyObject *u = PyList_GetItem(lane->box, 0);   /* borrowed */
    if (!u)
        return -1;
    Py_ssize_t n = PyList_Size(u);
    if (n > 0 && lane->querying == 0) {
        PyObject *last = PyList_GetItem(u, n - 1);   /* borrowed */
        if (!b ? last == a
               : last && PyTuple_CheckExact(last) && PyTuple_Size(last) == 2 &&
                 PyTuple_GetItem(last, 0) == a && PyTuple_GetItem(last, 1) == b) {
            idle_mark(lane->dev);
            return 0;
        }
    }
    PyObject *item = b ? PyTuple_Pack(2, a, b) : a;
    if (!item)
        return -1;
    if (!b)
        Py_INCREF(item);
    return lane_hold(lane, stream, item);
}
