/* rocpy._hot: compiled methods: Event.record / Event.query / Stream.query,
 * Buffer.copy_from / copy_to, Kernel.launch and HSA Signal.load / store / silent_store
 * (hot_signal.c) with no Python frame.
 *
 * `Method(kind, fn, fallback, ...)` is a descriptor put on the class in place of the
 * Python method (rocpy/hip/_methods.py, rocpy/hsa/signal.py install them where rocpy._hot
 * is in use).  The copies are the compiled async copy (copy_async_core, hot_calls.c) with
 * a stream, the compiled synchronous one without, everything else their Python definition.
 *
 * The type is a method descriptor with vectorcall (Py_TPFLAGS_METHOD_DESCRIPTOR): for
 * `obj.method(...)` CPython calls `descr(obj, ...)` directly, with no bound object made
 * per call; reading `obj.method` alone gives a builtin bound to the instance, as before.
 * Either way the call does the common case itself (an open object, a ready lane, a status
 * of success or not-ready) and hands every other case, self not of the class included, to
 * `fallback`, the Python definition, unchanged: so the exceptions are the Python path's by
 * construction.  Read from the class it is the Python function itself (docstring,
 * signature, `inspect`).
 */
#include "hot_method.h"

MethodState method_state[N_KINDS];
#define state method_state

typedef struct {
    PyObject_HEAD
    int kind;
    hot_vectorcallfunc vectorcall;
} Method;

static PyTypeObject *MethodType;

PyObject *method_aux(int kind, int i, PyObject *obj)
{
    return member_read(&state[kind].aux[i], obj);
}

/* fn(*first, *args, **kwnames): first is self, or NULL (a descriptor called with nothing) */
static PyObject *call_python(PyObject *fn, PyObject *first, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0, k = first ? 1 : 0;
    PyObject *t = PyTuple_New(k + nargs), *kw = NULL, *r = NULL;
    if (!t)
        return NULL;
    if (first) {
        Py_INCREF(first);
        PyTuple_SetItem(t, 0, first);
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        Py_INCREF(args[i]);
        PyTuple_SetItem(t, k + i, args[i]);
    }
    if (nkw) {
        if (!(kw = PyDict_New()))
            goto out;
        for (Py_ssize_t i = 0; i < nkw; i++)
            if (PyDict_SetItem(kw, PyTuple_GetItem(kwnames, i), args[nargs + i]) < 0)
                goto out;
    }
    r = PyObject_Call(fn, t, kw);
out:
    Py_DECREF(t);
    Py_XDECREF(kw);
    return r;
}

PyObject *method_fallback(int kind, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
    return call_python(state[kind].fallback, self, args, nargs, kwnames);
}
#define call_fallback method_fallback

/* The handle `_h` (None when closed: 0 here) and `_addr` of an Event. */
int event_addr(PyObject *ev, int kind, void **addr)
{
    PyObject *h = member_read(&mem_h, ev);
    if (!h)
        return -1;
    int open = h != Py_None;
    Py_DECREF(h);
    if (!open)
        return 0;
    PyObject *a = method_aux(kind, 0, ev);
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
        if ((PyObject *)Py_TYPE(s) == state[EVENT_RECORD].extra) {
            PyObject *h = member_read(&mem_h, s);
            if (!h)
                return NULL;
            int open = h != Py_None;
            Py_DECREF(h);
            if (open && !(lane_o = member_read(&mem_lane, s)))
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

/* pending.poll() where the list has entries (an empty list's poll does nothing); kind's
 * aux[1] is PendingList's `_entries` (STREAM_QUERY, STREAM_SYNC) */
int poll_pending(int kind, PyObject *pending)
{
    PyObject *entries = method_aux(kind, 1, pending);
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

/* An open stream's lane, ready for a fast case (lane_ready: its device current as rocpy
 * set it, no capture by rocpy, no pending callback errors): 1 and *lane_o (a new
 * reference), 0 not this case, -1 error.  Stream.query's and Stream.sync's. */
int stream_ready_lane(PyObject *self, PyObject **lane_o)
{
    PyObject *h = member_read(&mem_h, self);
    if (!h)
        return -1;
    int open = h != Py_None;
    Py_DECREF(h);
    if (!open)
        return 0;
    PyObject *o = member_read(&mem_lane, self);
    if (!o)
        return -1;
    Lane *lane = (Lane *)o;
    /* ready >= 0: no capture by rocpy either (Stream._divert makes it -1) */
    int r = Py_TYPE(o) == LaneType && lane->ready >= 0 ? lane_ready(lane, lane->ready) : 0;
    if (r <= 0) {
        Py_DECREF(o);
        return r;
    }
    *lane_o = o;
    return 1;
}

static PyObject *stream_query(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    PyObject *lane_o = NULL;
    int r = nargs || kwnames ? 0 : stream_ready_lane(self, &lane_o);
    if (r <= 0)
        return r < 0 ? NULL : call_fallback(STREAM_QUERY, self, args, nargs, kwnames);
    PyObject *held = NULL, *pending = NULL, *result = NULL;
    Lane *lane = (Lane *)lane_o;
    /* what is held before the query is complete if the query says so (Stream.query) */
    held = PyList_GetItem(lane->box, 0);
    if (!held)
        goto done;
    Py_INCREF(held);
    Py_ssize_t n = PyList_Size(held);
    void *sh = (void *)(uintptr_t)lane->addr;
    int st;
    lane->querying++;     /* meanwhile launches and copies hold again what they use (lane_hold_once) */
    Py_BEGIN_ALLOW_THREADS
    st = ((fn_p)state[STREAM_QUERY].fn)(sh);
    Py_END_ALLOW_THREADS
    lane->querying--;
    if (!(pending = method_aux(STREAM_QUERY, 0, self)))
        goto done;
    if (st) {
        if (poll_pending(STREAM_QUERY, pending) < 0)
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
    if (poll_pending(STREAM_QUERY, pending) < 0)
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
    PyObject *h = member_read(&mem_h, self);
    if (!h)
        return NULL;
    Py_DECREF(h);
    PyObject *launcher = h == Py_None ? NULL : method_aux(KERNEL_LAUNCH, 0, self);
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
static const fastkw impls[N_KINDS] = {
    event_query, event_record, stream_query, copy_from, copy_to, kernel_launch,
    signal_load, signal_store, signal_silent_store, stream_sync, event_sync,
};
#define DEF(name, i) {name, (PyCFunction)(void (*)(void))i, METH_FASTCALL | METH_KEYWORDS, NULL}
static PyMethodDef defs[N_KINDS] = {
    DEF("query", event_query), DEF("record", event_record), DEF("query", stream_query),
    DEF("copy_from", copy_from), DEF("copy_to", copy_to), DEF("launch", kernel_launch),
    DEF("load", signal_load), DEF("store", signal_store),
    DEF("silent_store", signal_silent_store), DEF("sync", stream_sync),
    DEF("sync", event_sync),
};

/* descr(self, *args, **kw): what CPython calls for `obj.method(...)` (a method
 * descriptor); a self of another class goes to the Python definition as it is */
static PyObject *method_vectorcall(PyObject *descr, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames)
{
    Py_ssize_t nargs = (Py_ssize_t)(nargsf & ~HOT_VECTORCALL_ARGUMENTS_OFFSET);
    int kind = ((Method *)descr)->kind;
    if (nargs < 1 || !PyObject_TypeCheck(args[0], state[kind].owner))
        return call_python(state[kind].fallback, NULL, args, nargs, kwnames);
    return impls[kind](args[0], args + 1, nargs - 1, kwnames);
}

/* descr(*args, **kw) through tp_call (PyObject_Call, functools.partial, ...) */
static PyObject *method_call(PyObject *descr, PyObject *args, PyObject *kw)
{
    Py_ssize_t n = PyTuple_Size(args), nkw = kw ? PyDict_Size(kw) : 0;
    PyObject **argv = PyMem_Malloc((size_t)(n + nkw + 1) * sizeof(PyObject *));
    PyObject *kwnames = nkw ? PyTuple_New(nkw) : NULL, *r = NULL;
    if (!argv || (nkw && !kwnames)) {
        PyMem_Free(argv);
        Py_XDECREF(kwnames);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++)
        argv[i] = PyTuple_GetItem(args, i);
    PyObject *key, *value;
    Py_ssize_t pos = 0, i = 0;
    while (nkw && PyDict_Next(kw, &pos, &key, &value)) {
        Py_INCREF(key);
        PyTuple_SetItem(kwnames, i, key);
        argv[n + i++] = value;
    }
    r = method_vectorcall(descr, argv, (size_t)n, kwnames);
    Py_XDECREF(kwnames);
    PyMem_Free(argv);
    return r;
}

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

static PyMemberDef method_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(Method, vectorcall), READONLY, NULL},
    {NULL}
};

static PyType_Slot method_slots[] = {
    {Py_tp_doc, "A compiled method (see rocpy/_native/hot/hot_method.c)."},
    {Py_tp_descr_get, method_get},
    {Py_tp_call, method_call},
    {Py_tp_members, method_members},
    {Py_tp_dealloc, method_dealloc},
    {0, NULL}
};

static PyType_Spec method_spec = {
    "rocpy._hot.Method", sizeof(Method), 0,
    Py_TPFLAGS_DEFAULT | HOT_TPFLAGS_HAVE_VECTORCALL | HOT_TPFLAGS_METHOD_DESCRIPTOR,
    method_slots
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

/* method(kind, fn, fallback, not_ready, aux, extra, owner) -> descriptor
 * kind 0 Event.query (aux: Event's _addr descriptor), 1 Event.record (aux: the same,
 * extra: the Stream type), 2 Stream.query (aux: the stream's _pending descriptor, extra:
 * PendingList's _entries descriptor), 3 Buffer.copy_from and 4 Buffer.copy_to (fn:
 * hipMemcpyAsync; aux and extra unused: None), 5 Kernel.launch (fn unused: 0; aux:
 * Kernel's _launcher descriptor), 6 Signal.load, 7 Signal.store, 8 Signal.silent_store
 * (fn: the default order's function; aux: the (_h, _bad, _hv) descriptors;
 * extra: {order: function address}), 9 Stream.sync (fn: rocpy_wait; aux: the (_pending,
 * _entries, _cb_seen, _more_errors) descriptors; extra: (captures, abandoned, spin_ns,
 * slice_ns)), 10 Event.sync (fn: rocpy_wait; aux: the (Event._addr, Event._dev,
 * Device._index) descriptors; extra: as 9's); owner: the class (the fast case takes its
 * instances).  Registering a kind again replaces its state. */
PyObject *make_method(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(7, "method");
    long kind = PyLong_AsLong(args[0]);
    if (kind < 0 || kind >= N_KINDS) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "method: kind is 0 to 10");
        return NULL;
    }
    PTR_ARG(1, fn);
    int not_ready = (int)PyLong_AsLong(args[3]);
    if (not_ready == -1 && PyErr_Occurred())
        return NULL;
    if (!PyType_Check(args[6])) {
        PyErr_SetString(PyExc_TypeError, "method: owner must be a class");
        return NULL;
    }
    MethodState *s = &state[kind];
    PyObject *aux = args[4], *extra = args[5];
    if (kind == STREAM_SYNC || kind == EVENT_SYNC) {
        Py_ssize_t n_aux = kind == STREAM_SYNC ? 4 : 3;
        if (!(PyTuple_Check(aux) && PyTuple_Size(aux) == n_aux && PyTuple_Check(extra) &&
              PyTuple_Size(extra) == 4 && PyList_Check(PyTuple_GetItem(extra, 0)) &&
              PyList_Check(PyTuple_GetItem(extra, 1)) &&
              PyLong_Check(PyTuple_GetItem(extra, 2)) &&
              PyLong_Check(PyTuple_GetItem(extra, 3)))) {
            PyErr_SetString(PyExc_TypeError, "method: Stream.sync (Event.sync) takes 4 (3) "
                                             "descriptors and (captures, abandoned, spin_ns, "
                                             "slice_ns)");
            return NULL;
        }
        for (int i = 0; i < n_aux; i++)
            if (member_bind(&s->aux[i], PyTuple_GetItem(aux, i)) < 0)
                return NULL;
        s->spin_ns = PyLong_AsUnsignedLongLong(PyTuple_GetItem(extra, 2));
        s->slice_ns = PyLong_AsUnsignedLongLong(PyTuple_GetItem(extra, 3));
        if (PyErr_Occurred())
            return NULL;
    } else if (kind >= SIGNAL_LOAD) {
        if (!(PyTuple_Check(aux) && PyTuple_Size(aux) == 3 && PyDict_Check(extra))) {
            PyErr_SetString(PyExc_TypeError, "method: a Signal kind takes (_h, _bad, _hv) "
                                             "descriptors and a dict");
            return NULL;
        }
        for (int i = 0; i < 3; i++)
            if (member_bind(&s->aux[i], PyTuple_GetItem(aux, i)) < 0)
                return NULL;
    } else if (kind <= STREAM_QUERY || kind == KERNEL_LAUNCH) {
        if (member_bind(&s->aux[0], aux) < 0 ||
            (kind == STREAM_QUERY && member_bind(&s->aux[1], extra) < 0))
            return NULL;
    }
    Py_INCREF(args[2]);
    HOT_XSETREF(s->fallback, args[2]);
    Py_INCREF(extra);
    HOT_XSETREF(s->extra, extra);
    Py_INCREF(args[6]);
    HOT_XSETREF(s->owner, (PyTypeObject *)args[6]);
    s->fn = fn;
    s->not_ready = not_ready;
    Method *self = PyObject_New(Method, MethodType);
    if (!self)
        return NULL;
    self->kind = (int)kind;
    self->vectorcall = method_vectorcall;
    return (PyObject *)self;
}
