/* rocpy._hot: Event.record / Event.query / Stream.query with no Python frame.
 *
 * `Method(kind, fn, fallback, ...)` is a descriptor put on the class in place of the
 * Python method (rocpy/hip/event.py, stream.py install it where rocpy._hot is in use).
 * Buffer.copy_from / copy_to are two more kinds: the compiled async copy
 * (copy_async_core, hot_calls.c) with a stream, everything else their Python definition.
 * Reading it from an instance gives a builtin bound to the instance; the call does the
 * common case itself (an open object, a ready lane, a status of success or not-ready)
 * and hands every other case to `fallback`, the Python definition, unchanged: so the
 * exceptions are the Python path's by construction.  Read from the class it is the
 * Python function itself (docstring, signature, `inspect`).
 */
#include "hot_launch.h"

enum { EVENT_QUERY, EVENT_RECORD, STREAM_QUERY, COPY_FROM, COPY_TO, KERNEL_LAUNCH, N_KINDS };

typedef struct {
    void *fn;                  /* the runtime function */
    PyObject *fallback;        /* the Python definition: fallback(self, *args, **kwargs) */
    int not_ready;             /* hipErrorNotReady of the backend */
    PyObject *aux;             /* EVENT_QUERY/RECORD: Event's `_addr` member descriptor;
                                  STREAM_QUERY: the stream's `_pending` descriptor;
                                  KERNEL_LAUNCH: Kernel's `_launcher` descriptor */
    PyObject *stream_type;     /* EVENT_RECORD: the Stream type the fast case takes */
    PyObject *entries;         /* STREAM_QUERY: PendingList's `_entries` descriptor */
} MethodState;

static MethodState state[N_KINDS];

typedef struct {
    PyObject_HEAD
    int kind;
} Method;

static PyTypeObject *MethodType;

static PyObject *member_get(PyObject *descr, PyObject *obj)
{
    descrgetfunc get = (descrgetfunc)PyType_GetSlot(Py_TYPE(descr), Py_tp_descr_get);
    return get(descr, obj, (PyObject *)Py_TYPE(obj));
}

/* fallback(self, *args, **kwnames) */
static PyObject *call_fallback(int kind, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames)
{
    Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
    PyObject *t = PyTuple_New(1 + nargs), *kw = NULL, *r = NULL;
    if (!t)
        return NULL;
    Py_INCREF(self);
    PyTuple_SetItem(t, 0, self);
    for (Py_ssize_t i = 0; i < nargs; i++) {
        Py_INCREF(args[i]);
        PyTuple_SetItem(t, 1 + i, args[i]);
    }
    if (nkw) {
        if (!(kw = PyDict_New()))
            goto out;
        for (Py_ssize_t i = 0; i < nkw; i++)
            if (PyDict_SetItem(kw, PyTuple_GetItem(kwnames, i), args[nargs + i]) < 0)
                goto out;
    }
    r = PyObject_Call(state[kind].fallback, t, kw);
out:
    Py_DECREF(t);
    Py_XDECREF(kw);
    return r;
}

/* The handle `_h` (None when closed: 0 here) and `_addr` of an Event. */
static int event_addr(PyObject *ev, int kind, void **addr)
{
    PyObject *h = slot_get(descr_h, get_h, ev, str_h);
    if (!h)
        return -1;
    int open = h != Py_None;
    Py_DECREF(h);
    if (!open)
        return 0;
    PyObject *a = member_get(state[kind].aux, ev);
    if (!a)
        return -1;
    *addr = PyLong_Check(a) ? PyLong_AsVoidPtr(a) : NULL;
    Py_DECREF(a);
    if (PyErr_Occurred())
        return -1;
    return *addr != NULL;
}

static PyObject *event_query(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    void *ev;
    int r = nargs || kwnames ? 0 : event_addr(self, EVENT_QUERY, &ev);
    if (r <= 0)
        return r < 0 ? NULL : call_fallback(EVENT_QUERY, self, args, nargs, kwnames);
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = ((fn_p)state[EVENT_QUERY].fn)(ev);
    Py_END_ALLOW_THREADS
    if (!st)
        Py_RETURN_TRUE;
    if (st == state[EVENT_QUERY].not_ready)
        Py_RETURN_FALSE;
    return raise_status(st, "hipEventQuery");
}

static PyObject *event_record(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    void *ev;
    int r = nargs != 1 || kwnames ? 0 : event_addr(self, EVENT_RECORD, &ev);
    PyObject *lane_o = NULL;
    if (r > 0) {
        PyObject *s = args[0];
        r = 0;
        if ((PyObject *)Py_TYPE(s) == state[EVENT_RECORD].stream_type) {
            PyObject *h = slot_get(descr_h, get_h, s, str_h);
            if (!h)
                return NULL;
            int open = h != Py_None;
            Py_DECREF(h);
            if (open && !(lane_o = slot_get(descr_lane, get_lane, s, str_lane)))
                return NULL;
            r = open && Py_TYPE(lane_o) == LaneType && ((Lane *)lane_o)->ready >= 0;
        }
    }
    if (r <= 0) {
        Py_XDECREF(lane_o);
        return r < 0 ? NULL : call_fallback(EVENT_RECORD, self, args, nargs, kwnames);
    }
    void *sh = (void *)(uintptr_t)((Lane *)lane_o)->addr;
    Py_DECREF(lane_o);
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = ((fn_pp)state[EVENT_RECORD].fn)(ev, sh);
    Py_END_ALLOW_THREADS
    if (st)
        return raise_status(st, "hipEventRecord");
    Py_INCREF(self);
    return self;
}

/* pending.poll() where the list has entries (an empty list's poll does nothing) */
static int poll_pending(PyObject *pending)
{
    PyObject *entries = member_get(state[STREAM_QUERY].entries, pending);
    if (!entries)
        return -1;
    Py_ssize_t n = PyObject_Length(entries);
    Py_DECREF(entries);
    if (n <= 0)
        return (int)n;
    PyObject *r = PyObject_CallMethod(pending, "poll", NULL);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static PyObject *stream_query(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    if (nargs || kwnames)
        return call_fallback(STREAM_QUERY, self, args, nargs, kwnames);
    PyObject *h = slot_get(descr_h, get_h, self, str_h);
    if (!h)
        return NULL;
    int open = h != Py_None;
    Py_DECREF(h);
    if (!open)
        return call_fallback(STREAM_QUERY, self, args, nargs, kwnames);
    PyObject *lane_o = slot_get(descr_lane, get_lane, self, str_lane);
    if (!lane_o)
        return NULL;
    PyObject *held = NULL, *pending = NULL, *result = NULL;
    Lane *lane = (Lane *)lane_o;
    /* ready >= 0: no capture by rocpy either (Stream._divert makes it -1) */
    int r = Py_TYPE(lane_o) == LaneType && lane->ready >= 0 ? lane_ready(lane, lane->ready) : 0;
    if (r <= 0) {
        Py_DECREF(lane_o);
        return r < 0 ? NULL : call_fallback(STREAM_QUERY, self, args, nargs, kwnames);
    }
    /* what is held before the query is complete if the query says so (Stream.query) */
    held = PyList_GetItem(lane->box, 0);
    if (!held)
        goto done;
    Py_INCREF(held);
    Py_ssize_t n = PyList_Size(held);
    void *sh = (void *)(uintptr_t)lane->addr;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = ((fn_p)state[STREAM_QUERY].fn)(sh);
    Py_END_ALLOW_THREADS
    if (!(pending = member_get(state[STREAM_QUERY].aux, self)))
        goto done;
    if (st) {
        if (poll_pending(pending) < 0)
            goto done;
        if (st == state[STREAM_QUERY].not_ready) {
            result = Py_False;
            Py_INCREF(result);
        } else {
            raise_status(st, "hipStreamQuery");
        }
        goto done;
    }
    if (n > 0 && PyList_SetSlice(held, 0, n, NULL) < 0)
        goto done;
    if (poll_pending(pending) < 0)
        goto done;
    result = Py_True;
    Py_INCREF(result);
done:
    Py_XDECREF(pending);
    Py_XDECREF(held);
    Py_DECREF(lane_o);
    return result;
}

/* buf.copy_from(other, stream) / buf.copy_to(other, stream): the stream positional or
 * by keyword: copy_async_core; without one (or stream=None), copy_sync_core; every case
 * they decline, the Python definition. */
static PyObject *buffer_copy(int kind, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    PyObject *stream = NULL;
    if (nargs == 2 && !kwnames)
        stream = args[1];
    else if (nargs == 1 && kwnames && PyTuple_Size(kwnames) == 1) {
        PyObject *k = PyTuple_GetItem(kwnames, 0);
        if (PyUnicode_CompareWithASCIIString(k, "stream") == 0)
            stream = args[1];
    }
    int r;
    if (stream && stream != Py_None)
        r = copy_async_core(state[kind].fn, self, args[0], kind == COPY_TO, stream);
    else if ((nargs == 1 && !kwnames) || stream == Py_None)
        r = copy_sync_core(self, args[0], kind == COPY_TO);
    else
        r = 0;
    if (r < 0)
        return NULL;
    if (r == 0)
        return call_fallback(kind, self, args, nargs, kwnames);
    if (kind == COPY_TO) {
        Py_INCREF(args[0]);
        return args[0];
    }
    Py_RETURN_NONE;
}

static PyObject *copy_from(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    return buffer_copy(COPY_FROM, self, args, nargs, kwnames);
}

static PyObject *copy_to(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
    return buffer_copy(COPY_TO, self, args, nargs, kwnames);
}

/* kernel.launch(grid, block, args=(), stream=None, shared_mem=0): the kernel's compiled
 * Launcher called directly (no Python frame for Kernel.launch); keywords other than these,
 * a closed kernel or one without a Launcher (made with the compiled path off): the Python
 * definition, which raises what is wrong. */
static const char *const launch_names[5] = {"grid", "block", "args", "stream", "shared_mem"};

static PyObject *kernel_launch(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames)
{
    static PyObject *zero;
    if (!zero && !(zero = PyLong_FromLong(0)))
        return NULL;
    PyObject *argv[6] = {self, NULL, NULL, NULL, Py_None, zero};
    Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
    if (nargs > 5)
        return call_fallback(KERNEL_LAUNCH, self, args, nargs, kwnames);
    for (Py_ssize_t i = 0; i < nargs; i++)
        argv[1 + i] = args[i];
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *k = PyTuple_GetItem(kwnames, i);
        int slot = -1;
        for (int j = 0; j < 5; j++)
            if (PyUnicode_CompareWithASCIIString(k, launch_names[j]) == 0)
                slot = j;
        if (slot < 0 || slot < nargs || (slot < 3 && argv[1 + slot]))   /* Python raises */
            return call_fallback(KERNEL_LAUNCH, self, args, nargs, kwnames);
        argv[1 + slot] = args[nargs + i];
    }
    if (!argv[1] || !argv[2])
        return call_fallback(KERNEL_LAUNCH, self, args, nargs, kwnames);
    if (!argv[3]) {
        static PyObject *empty;
        if (!empty && !(empty = PyTuple_New(0)))
            return NULL;
        argv[3] = empty;
    }
    PyObject *h = slot_get(descr_h, get_h, self, str_h);
    if (!h)
        return NULL;
    Py_DECREF(h);
    PyObject *launcher = h == Py_None ? NULL : member_get(state[KERNEL_LAUNCH].aux, self);
    if (!launcher) {
        PyErr_Clear();
        return call_fallback(KERNEL_LAUNCH, self, args, nargs, kwnames);
    }
    PyObject *r;
    if (Py_TYPE(launcher) == LauncherType)
        r = launcher_launch((Launcher *)launcher, argv, 6);
    else
        r = call_fallback(KERNEL_LAUNCH, self, args, nargs, kwnames);
    Py_DECREF(launcher);
    return r;
}

typedef PyObject *(*fastkw)(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);
static PyMethodDef defs[N_KINDS] = {
    {"query", (PyCFunction)(void (*)(void))event_query, METH_FASTCALL | METH_KEYWORDS, NULL},
    {"record", (PyCFunction)(void (*)(void))event_record, METH_FASTCALL | METH_KEYWORDS, NULL},
    {"query", (PyCFunction)(void (*)(void))stream_query, METH_FASTCALL | METH_KEYWORDS, NULL},
    {"copy_from", (PyCFunction)(void (*)(void))copy_from, METH_FASTCALL | METH_KEYWORDS, NULL},
    {"copy_to", (PyCFunction)(void (*)(void))copy_to, METH_FASTCALL | METH_KEYWORDS, NULL},
    {"launch", (PyCFunction)(void (*)(void))kernel_launch, METH_FASTCALL | METH_KEYWORDS, NULL},
};

static PyObject *method_get(PyObject *self, PyObject *obj, PyObject *type)
{
    int kind = ((Method *)self)->kind;
    if (!obj || obj == Py_None) {
        Py_INCREF(state[kind].fallback);
        return state[kind].fallback;
    }
    return PyCFunction_NewEx(&defs[kind], obj, NULL);
}

static void method_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

static PyType_Slot method_slots[] = {
    {Py_tp_doc, "A compiled method (see rocpy/_native/hot/hot_method.c)."},
    {Py_tp_descr_get, method_get},
    {Py_tp_dealloc, method_dealloc},
    {0, NULL}
};

static PyType_Spec method_spec = {
    "rocpy._hot.Method", sizeof(Method), 0, Py_TPFLAGS_DEFAULT, method_slots
};

/* The module's `Method` type (at import, from hot.c). */
int method_type_add(PyObject *m)
{
    MethodType = (PyTypeObject *)PyType_FromSpec(&method_spec);
    if (!MethodType || PyModule_AddObject(m, "Method", (PyObject *)MethodType) < 0)
        return -1;
    Py_INCREF((PyObject *)MethodType);
    return 0;
}

/* method(kind, fn, fallback, not_ready, aux, stream_type_or_entries) -> descriptor
 * kind 0 Event.query (aux: Event's _addr descriptor), 1 Event.record (aux: the same,
 * then the Stream type), 2 Stream.query (aux: the stream's _pending descriptor, then
 * PendingList's _entries descriptor), 3 Buffer.copy_from and 4 Buffer.copy_to (fn:
 * hipMemcpyAsync; aux and extra unused: None), 5 Kernel.launch (fn unused: 0; aux:
 * Kernel's _launcher descriptor).  Registering a kind again replaces its state. */
PyObject *make_method(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(6, "method");
    long kind = PyLong_AsLong(args[0]);
    if (kind < 0 || kind >= N_KINDS) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "method: kind is 0 to 5");
        return NULL;
    }
    PTR_ARG(1, fn);
    int not_ready = (int)PyLong_AsLong(args[3]);
    if (not_ready == -1 && PyErr_Occurred())
        return NULL;
    if (((kind <= STREAM_QUERY || kind == KERNEL_LAUNCH) &&
         !PyType_GetSlot(Py_TYPE(args[4]), Py_tp_descr_get)) ||
        (kind == STREAM_QUERY && !PyType_GetSlot(Py_TYPE(args[5]), Py_tp_descr_get))) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "method: aux must be a member descriptor");
        return NULL;
    }
    MethodState *s = &state[kind];
    Py_INCREF(args[2]);
    HOT_XSETREF(s->fallback, args[2]);
    Py_INCREF(args[4]);
    HOT_XSETREF(s->aux, args[4]);
    Py_INCREF(args[5]);
    if (kind == STREAM_QUERY)
        HOT_XSETREF(s->entries, args[5]);
    else
        HOT_XSETREF(s->stream_type, args[5]);
    s->fn = fn;
    s->not_ready = not_ready;
    Method *self = PyObject_New(Method, MethodType);
    if (!self)
        return NULL;
    self->kind = (int)kind;
    return (PyObject *)self;
}
