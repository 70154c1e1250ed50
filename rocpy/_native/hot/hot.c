/* rocpy._hot: the compiled hot path (issue 21).
 *
 * A plain CPython extension (stable ABI, Py_LIMITED_API 3.11, METH_FASTCALL)
 * that calls the runtime's functions through pointers taken from the loaded
 * backend's cffi module (`ffi.addressof(lib, name)`), so one build serves the
 * stub, amd and nvidia backends and links no runtime itself.
 *
 * What it does is only the *fast subset* of what the Python code does: exact
 * ints, tuples of exact ints, None, rocpy buffers' integer .ptr, exact floats,
 * numpy scalars of exactly a parameter's size, exact bytes.  Anything else
 * (and every error) goes to the Python implementation, which stays the one
 * place where validation and messages are defined.  So the compiled path and
 * the fallback raise the same exceptions by construction; the differential
 * tests (tests/hip/test_hotpath.py) prove the bytes are identical.
 *
 * Objects:
 *   Lane      the stream's hot state (handle address, "ready" device index,
 *             callback errors, keep-alive box, fence limit): the one enqueue
 *             interface (rocpy/hip/_lane.py documents it; a pure-Python class
 *             with the same attributes replaces it where this module is missing)
 *   Launcher  a kernel's launch state: function pointers, parameter spec,
 *             the geometry cache (by value, immutable keys only)
 *   Method    compiled methods: Event.record/query, Stream.query, Buffer copies,
 *             Kernel.launch, HSA Signal loads/stores (hot_method.c, hot_signal.c)
 *   call_*    thin typed trampolines for the other hot calls (records, queries,
 *             async copies and fills, HSA signal ops)
 */
#include "hot.h"

PyObject *error_factory;   /* hip_error(status, call) -> exception instance */
PyObject *str_h, *str_lane, *str_pending, *str_fence, *str_ptr;   /* interned names */
PyObject *str_nbytes, *str_weak, *str_last;

/* Slot reads through the classes' own member descriptors (Handle._h, Stream._lane),
 * registered by rocpy/_hotpath.py: the descriptor's __get__ directly, without the
 * generic attribute lookup; by name where none is registered. */
PyObject *descr_h, *descr_lane;
descrgetfunc get_h, get_lane;

PyObject *slot_get(PyObject *descr, descrgetfunc get, PyObject *obj, PyObject *name)
{
    if (descr && get)
        return get(descr, obj, (PyObject *)Py_TYPE(obj));
    return PyObject_GetAttr(obj, name);
}

Member mem_nbytes, mem_last, mem_weak, mem_pending, mem_dev_index;

PyObject *member_read(Member *m, PyObject *obj)
{
    if (m->get && PyObject_TypeCheck(obj, m->owner))
        return m->get(m->descr, obj, (PyObject *)Py_TYPE(obj));
    return PyObject_GetAttr(obj, m->name);
}

int member_write(Member *m, PyObject *obj, PyObject *value)
{
    if (m->set && PyObject_TypeCheck(obj, m->owner))
        return m->set(m->descr, obj, value);
    return PyObject_SetAttr(obj, m->name, value);
}

/* register_members(Buffer._nbytes, Buffer._last, Stream._weak, CallbackErrors.pending,
 *                  Buffer._dev_index):
 * their member descriptors (each read or written on objects of exactly those classes,
 * which the callers check; a descriptor also checks the type itself) */
static PyObject *register_members(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(5, "register_members");
    Member *ms[5] = {&mem_nbytes, &mem_last, &mem_weak, &mem_pending, &mem_dev_index};
    for (int i = 0; i < 5; i++) {
        descrgetfunc g = (descrgetfunc)PyType_GetSlot(Py_TYPE(args[i]), Py_tp_descr_get);
        descrsetfunc st = (descrsetfunc)PyType_GetSlot(Py_TYPE(args[i]), Py_tp_descr_set);
        PyObject *owner = g && st ? PyObject_GetAttrString(args[i], "__objclass__") : NULL;
        int ok = owner && PyType_Check(owner);
        Py_XDECREF(owner);
        if (!ok) {
            PyErr_Clear();
            PyErr_SetString(PyExc_TypeError, "register_members takes five member descriptors");
            return NULL;
        }
    }
    for (int i = 0; i < 5; i++) {
        PyObject *owner = PyObject_GetAttrString(args[i], "__objclass__");
        if (!owner)
            return NULL;
        HOT_XSETREF(ms[i]->owner, (PyTypeObject *)owner);   /* the reference is kept */
        Py_INCREF(args[i]);
        HOT_XSETREF(ms[i]->descr, args[i]);
        ms[i]->get = (descrgetfunc)PyType_GetSlot(Py_TYPE(args[i]), Py_tp_descr_get);
        ms[i]->set = (descrsetfunc)PyType_GetSlot(Py_TYPE(args[i]), Py_tp_descr_set);
    }
    Py_RETURN_NONE;
}

PyObject *raise_status(int st, const char *call)
{
    if (!error_factory) {
        PyErr_Format(PyExc_RuntimeError, "%s failed with status %d", call, st);
        return NULL;
    }
    PyObject *exc = PyObject_CallFunction(error_factory, "is", st, call);
    if (exc) {
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        Py_DECREF(exc);
    }
    return NULL;
}

int as_ptr(PyObject *o, void **out)
{
    if (!PyLong_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "rocpy._hot: an address is an int");
        return -1;
    }
    *out = PyLong_AsVoidPtr(o);
    return (*out == NULL && PyErr_Occurred()) ? -1 : 0;
}

static PyObject *register_slots(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(2, "register_slots");
    descrgetfunc gh = (descrgetfunc)PyType_GetSlot(Py_TYPE(args[0]), Py_tp_descr_get);
    descrgetfunc gl = (descrgetfunc)PyType_GetSlot(Py_TYPE(args[1]), Py_tp_descr_get);
    if (!gh || !gl) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "register_slots takes two member descriptors");
        return NULL;
    }
    Py_INCREF(args[0]);
    Py_INCREF(args[1]);
    Py_XDECREF(descr_h);
    Py_XDECREF(descr_lane);
    descr_h = args[0];
    descr_lane = args[1];
    get_h = gh;
    get_lane = gl;
    Py_RETURN_NONE;
}

static PyObject *set_error_factory(PyObject *m, PyObject *f)
{
    PyObject *old = error_factory;
    Py_INCREF(f);
    error_factory = f;
    Py_XDECREF(old);
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"call_p", (PyCFunction)(void (*)(void))call_p, METH_FASTCALL,
     "call_p(fn, a) -> status: int fn(void *)"},
    {"call_pp", (PyCFunction)(void (*)(void))call_pp, METH_FASTCALL,
     "call_pp(fn, a, b) -> status: int fn(void *, void *)"},
    {"call_ppu", (PyCFunction)(void (*)(void))call_ppu, METH_FASTCALL,
     "call_ppu(fn, a, b, u) -> status: int fn(void *, void *, unsigned)"},
    {"call_memcpy_async", (PyCFunction)(void (*)(void))call_memcpy_async, METH_FASTCALL,
     "call_memcpy_async(fn, dst, src, nbytes, kind, stream) -> status"},
    {"call_memset_async", (PyCFunction)(void (*)(void))call_memset_async, METH_FASTCALL,
     "call_memset_async(fn, dst, value, count, stream) -> status"},
    {"call_signal_load", (PyCFunction)(void (*)(void))call_signal_load, METH_FASTCALL,
     "call_signal_load(fn, handle) -> value: int64_t fn(uint64_t)"},
    {"call_signal_store", (PyCFunction)(void (*)(void))call_signal_store, METH_FASTCALL,
     "call_signal_store(fn, handle, value): void fn(uint64_t, int64_t)"},
    {"register_copy_types", (PyCFunction)(void (*)(void))register_copy_types, METH_FASTCALL,
     "register_copy_types(stream_type, buffer_types, array_type, bytes_types): what copy_async takes"},
    {"copy_async", (PyCFunction)(void (*)(void))copy_async, METH_FASTCALL,
     "copy_async(fn, buf, other, to_other, stream) -> bool: see hot.c"},
    {"method", (PyCFunction)(void (*)(void))make_method, METH_FASTCALL,
     "method(kind, fn, fallback, not_ready, aux, extra, owner): a compiled method (hot_method.c)"},
    {"register_slots", (PyCFunction)(void (*)(void))register_slots, METH_FASTCALL,
     "register_slots(Handle.__dict__['_h'], Stream's '_lane' descriptor)"},
    {"mark", py_idle_mark, METH_O, "mark(dev): rocpy enqueued work on device dev (hot_idle.c)"},
    {"marks", py_idle_marks, METH_O, "marks(dev) -> int: enqueues counted on device dev"},
    {"cover", (PyCFunction)(void (*)(void))py_idle_cover, METH_FASTCALL,
     "cover(dev, n): a null-stream wait begun at marks(dev) == n completed"},
    {"idle", py_idle_is, METH_O, "idle(dev) -> bool: nothing rocpy enqueued there is pending"},
    {"register_sync_copy", (PyCFunction)(void (*)(void))register_sync_copy, METH_FASTCALL,
     "register_sync_copy(hipMemcpy address, threading.local of the current device, "
     "_wait.captures, {buffer type: endpoint kind}): what the compiled synchronous copy uses"},
    {"register_members", (PyCFunction)(void (*)(void))register_members, METH_FASTCALL,
     "register_members(Buffer._nbytes, Buffer._last, Stream._weak, CallbackErrors.pending)"},
    {"set_error_factory", set_error_factory, METH_O,
     "set_error_factory(f): f(status, call) makes the exception a failed launch raises"},
    {NULL}
};

static int hot_exec(PyObject *m)
{
    if (!(str_h = PyUnicode_InternFromString("_h")) ||
        !(str_lane = PyUnicode_InternFromString("_lane")) ||
        !(str_pending = PyUnicode_InternFromString("pending")) ||
        !(str_fence = PyUnicode_InternFromString("_fence")) ||
        !(str_ptr = PyUnicode_InternFromString("ptr")) ||
        !(str_nbytes = PyUnicode_InternFromString("_nbytes")) ||
        !(str_weak = PyUnicode_InternFromString("_weak")) ||
        !(str_last = PyUnicode_InternFromString("_last")) ||
        !(mem_dev_index.name = PyUnicode_InternFromString("_dev_index")))
        return -1;
    mem_nbytes.name = str_nbytes;
    mem_last.name = str_last;
    mem_weak.name = str_weak;
    mem_pending.name = str_pending;
    LaneType = (PyTypeObject *)PyType_FromSpec(&lane_spec);
    if (!LaneType || PyModule_AddObject(m, "Lane", (PyObject *)LaneType) < 0)
        return -1;
    Py_INCREF((PyObject *)LaneType);
    LauncherType = (PyTypeObject *)PyType_FromSpec(&launcher_spec);
    if (!LauncherType || PyModule_AddObject(m, "Launcher", (PyObject *)LauncherType) < 0)
        return -1;
    Py_INCREF((PyObject *)LauncherType);
    return method_type_add(m);
}

static PyModuleDef_Slot hot_slots[] = {{Py_mod_exec, hot_exec}, {0, NULL}};

static struct PyModuleDef hot_module = {
    PyModuleDef_HEAD_INIT, "rocpy._hot",
    "rocpy's compiled hot path (see rocpy/_native/hot/hot.c).", 0, module_methods, hot_slots
};

PyMODINIT_FUNC PyInit__hot(void)
{
    return PyModuleDef_Init(&hot_module);
}

