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

Member mem_h, mem_lane, mem_nbytes, mem_last, mem_weak, mem_pending, mem_dev_index;

/* CPython's member descriptor (PyMemberDescrObject, Include/descrobject.h: PyDescr_COMMON
 * and the PyMemberDef it was made from), the same from 3.3 to 3.14 though outside the
 * limited API.  member_bind reads a slot's offset from it only after checking that what
 * it finds there is this descriptor's own (its class, its name object, the def's name),
 * so a different layout means the descriptor path, never a wrong read. */
typedef struct {
    const char *name;
    int type;
    Py_ssize_t offset;
    int flags;
    const char *doc;
} MemberDefLayout;

typedef struct {
    PyObject_HEAD
    PyTypeObject *d_type;
    PyObject *d_name;
    PyObject *d_qualname;
    MemberDefLayout *d_member;
} MemberDescrLayout;

#define HOT_T_OBJECT_EX 16   /* what __slots__ make (structmember.h T_OBJECT_EX) */
#define HOT_READONLY 1

static PyObject *member_descriptor_type;   /* type(object's __slots__ member) */

static Py_ssize_t slot_offset(PyObject *descr, PyObject *owner, PyObject *name)
{
    if ((PyObject *)Py_TYPE(descr) != member_descriptor_type || !PyUnicode_Check(name))
        return 0;
    MemberDescrLayout *d = (MemberDescrLayout *)descr;
    if ((PyObject *)d->d_type != owner || d->d_name != name || !d->d_member)
        return 0;
    const char *s = PyUnicode_AsUTF8AndSize(name, NULL);
    if (!s) {
        PyErr_Clear();
        return 0;
    }
    MemberDefLayout *def = d->d_member;
    PyObject *size = PyObject_GetAttrString(owner, "__basicsize__");
    Py_ssize_t basic = size ? PyLong_AsSsize_t(size) : -1;
    Py_XDECREF(size);
    if (basic < 0) {
        PyErr_Clear();
        return 0;
    }
    if (!def->name || strcmp(def->name, s) != 0 || def->type != HOT_T_OBJECT_EX ||
        (def->flags & HOT_READONLY) || def->offset < (Py_ssize_t)sizeof(PyObject) ||
        def->offset % (Py_ssize_t)sizeof(PyObject *) != 0 ||
        def->offset > basic - (Py_ssize_t)sizeof(PyObject *))
        return 0;
    return def->offset;
}

/* Take `descr` (a descriptor with __get__ and __set__, __objclass__ and __name__) as m's
 * slot: 0, or -1 with TypeError. */
int member_bind(Member *m, PyObject *descr)
{
    descrgetfunc g = (descrgetfunc)PyType_GetSlot(Py_TYPE(descr), Py_tp_descr_get);
    descrsetfunc st = (descrsetfunc)PyType_GetSlot(Py_TYPE(descr), Py_tp_descr_set);
    PyErr_Clear();
    PyObject *owner = g && st ? PyObject_GetAttrString(descr, "__objclass__") : NULL;
    PyObject *name = owner ? PyObject_GetAttrString(descr, "__name__") : NULL;
    if (!owner || !PyType_Check(owner) || !name || !PyUnicode_Check(name)) {
        Py_XDECREF(owner);
        Py_XDECREF(name);
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "rocpy._hot: a slot is given by its member "
                                         "descriptor");
        return -1;
    }
    for (int i = 0; i < MEMBER_KIN; i++)
        Py_CLEAR(m->kin[i]);
    m->offset = slot_offset(descr, owner, name);
    PyUnicode_InternInPlace(&name);
    HOT_XSETREF(m->owner, (PyTypeObject *)owner);   /* the references are kept */
    HOT_XSETREF(m->name, name);
    Py_INCREF(descr);
    HOT_XSETREF(m->descr, descr);
    m->get = g;
    m->set = st;
    return 0;
}

/* Remember obj's class, of the owner's family, for member_direct (while there is room). */
static void member_kin(Member *m, PyObject *obj)
{
    PyTypeObject *t = Py_TYPE(obj);
    if (!m->offset || t == m->owner)
        return;
    for (int i = 0; i < MEMBER_KIN; i++) {
        if (m->kin[i] == t)
            return;
        if (!m->kin[i]) {
            Py_INCREF((PyObject *)t);
            m->kin[i] = t;
            return;
        }
    }
}

/* A new reference to obj's slot (an AttributeError where it is unset, as the descriptor
 * raises): directly where member_bind found its offset, else through the descriptor; an
 * object not of the owner class (or before registration) by name. */
PyObject *member_read_any(Member *m, PyObject *obj)
{
    if (m->owner && PyObject_TypeCheck(obj, m->owner)) {
        member_kin(m, obj);
        if (m->offset) {
            PyObject *v = *(PyObject **)((char *)obj + m->offset);
            if (v) {
                Py_INCREF(v);
                return v;
            }
        }
        return m->get(m->descr, obj, (PyObject *)Py_TYPE(obj));
    }
    return PyObject_GetAttr(obj, m->name);
}

int member_write_any(Member *m, PyObject *obj, PyObject *value)
{
    if (m->owner && PyObject_TypeCheck(obj, m->owner)) {
        member_kin(m, obj);
        if (m->offset && value) {
            PyObject **slot = (PyObject **)((char *)obj + m->offset);
            PyObject *old = *slot;
            Py_INCREF(value);
            *slot = value;
            Py_XDECREF(old);
            return 0;
        }
        return m->set(m->descr, obj, value);
    }
    return PyObject_SetAttr(obj, m->name, value);
}

/* register_members(Buffer._nbytes, Buffer._last, Stream._weak, CallbackErrors.pending,
 *                  Buffer._dev_index): their member descriptors */
static PyObject *register_members(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(5, "register_members");
    Member *ms[5] = {&mem_nbytes, &mem_last, &mem_weak, &mem_pending, &mem_dev_index};
    for (int i = 0; i < 5; i++)
        if (member_bind(ms[i], args[i]) < 0)
            return NULL;
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

/* slot_offset(descr) -> int: where member_bind would read descr's slot directly (0: through
 * the descriptor); slot_offsets() -> {name: offset} of the registered slots.  For tests. */
static PyObject *py_slot_offset(PyObject *m, PyObject *descr)
{
    Member probe = {0};
    if (member_bind(&probe, descr) < 0)
        return NULL;
    Py_ssize_t off = probe.offset;
    Py_XDECREF(probe.descr);
    Py_XDECREF((PyObject *)probe.owner);
    Py_XDECREF(probe.name);
    return PyLong_FromSsize_t(off);
}

static PyObject *py_slot_offsets(PyObject *m, PyObject *unused)
{
    Member *ms[7] = {&mem_h, &mem_lane, &mem_nbytes, &mem_last, &mem_weak, &mem_pending,
                     &mem_dev_index};
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < 7; i++) {
        if (!ms[i]->descr)
            continue;
        PyObject *v = PyLong_FromSsize_t(ms[i]->offset);
        if (!v || PyDict_SetItem(d, ms[i]->name, v) < 0) {
            Py_XDECREF(v);
            Py_CLEAR(d);
            break;
        }
        Py_DECREF(v);
    }
    return d;
}

/* register_slots(Handle._h, the stream's _lane): their member descriptors */
static PyObject *register_slots(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(2, "register_slots");
    if (member_bind(&mem_h, args[0]) < 0 || member_bind(&mem_lane, args[1]) < 0)
        return NULL;
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
    {"slot_offset", py_slot_offset, METH_O,
     "slot_offset(member descriptor) -> int: where its slot is read directly (0: not)"},
    {"slot_offsets", py_slot_offsets, METH_NOARGS,
     "slot_offsets() -> {name: offset}: the registered slots (register_slots/_members)"},
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
    PyObject *types = PyImport_ImportModule("types");
    member_descriptor_type = types ? PyObject_GetAttrString(types, "MemberDescriptorType")
                                   : NULL;
    Py_XDECREF(types);
    if (!member_descriptor_type)
        return -1;
    mem_h.name = str_h;
    mem_lane.name = str_lane;
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

