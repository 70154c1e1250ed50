/* rocpy._hot: runtime calls by address, and buffer-to-buffer async copies. */
#include "hot.h"

/* ---- the other hot calls: fn address first, then ints; the status comes back -------- */


PyObject *call_p(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(2, "call_p");
    PTR_ARG(0, fn);
    PTR_ARG(1, a);
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = ((fn_p)fn)(a);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(st);
}

PyObject *call_pp(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(3, "call_pp");
    PTR_ARG(0, fn);
    PTR_ARG(1, a);
    PTR_ARG(2, b);
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = ((fn_pp)fn)(a, b);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(st);
}

PyObject *call_ppu(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(4, "call_ppu");
    PTR_ARG(0, fn);
    PTR_ARG(1, a);
    PTR_ARG(2, b);
    unsigned long u = PyLong_AsUnsignedLong(args[3]);
    if (PyErr_Occurred())
        return NULL;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = ((fn_ppu)fn)(a, b, (unsigned)u);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(st);
}

/* memcpy_async(fn, dst, src, nbytes, kind, stream) */
PyObject *call_memcpy_async(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(6, "call_memcpy_async");
    PTR_ARG(0, fn);
    PTR_ARG(1, dst);
    PTR_ARG(2, src);
    size_t n = PyLong_AsSize_t(args[3]);
    if (n == (size_t)-1 && PyErr_Occurred())
        return NULL;
    int kind = (int)PyLong_AsLong(args[4]);
    if (kind == -1 && PyErr_Occurred())
        return NULL;
    PTR_ARG(5, s);
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = ((fn_ppsip)fn)(dst, src, n, kind, s);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(st);
}

/* memset_async(fn, dst, value, count, stream) */
PyObject *call_memset_async(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(5, "call_memset_async");
    PTR_ARG(0, fn);
    PTR_ARG(1, dst);
    int value = (int)PyLong_AsLong(args[2]);
    if (value == -1 && PyErr_Occurred())
        return NULL;
    size_t n = PyLong_AsSize_t(args[3]);
    if (n == (size_t)-1 && PyErr_Occurred())
        return NULL;
    PTR_ARG(4, s);
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = ((fn_pisp)fn)(dst, value, n, s);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(st);
}

/* signal_load(fn, handle) -> int64 (HSA loads do not block: the GIL stays held) */
PyObject *call_signal_load(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(2, "call_signal_load");
    PTR_ARG(0, fn);
    unsigned long long h = PyLong_AsUnsignedLongLong(args[1]);
    if (PyErr_Occurred())
        return NULL;
    return PyLong_FromLongLong(((fn_sig_load)fn)(h));
}

PyObject *call_signal_store(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(3, "call_signal_store");
    PTR_ARG(0, fn);
    unsigned long long h = PyLong_AsUnsignedLongLong(args[1]);
    if (PyErr_Occurred())
        return NULL;
    long long v = PyLong_AsLongLong(args[2]);
    if (v == -1 && PyErr_Occurred())
        return NULL;
    ((fn_sig_store)fn)(h, v);
    Py_RETURN_NONE;
}

/* ---- buffer copies ------------------------------------------------------------------- */

static PyObject *copy_stream_type, *copy_buffer_types, *copy_array_type, *copy_bytes_types;

/* register_copy_types(stream_type, buffer_sides, array_type, bytes_types): the exact
 * types copy_async takes: rocpy buffers ({type: 1 device, 0 host, -1 either (managed)},
 * _copy.py `ENDPOINT_SIDE`), numpy.ndarray (held itself, as the Python path holds it)
 * and bytes-like types (held through a memoryview, as the Python path does). */
PyObject *register_copy_types(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(4, "register_copy_types");
    if (!PyDict_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "register_copy_types: buffer_sides is a dict");
        return NULL;
    }
    PyObject **slots[4] = {&copy_stream_type, &copy_buffer_types, &copy_array_type,
                           &copy_bytes_types};
    for (int i = 0; i < 4; i++) {
        Py_INCREF(args[i]);
        HOT_XSETREF(*slots[i], args[i]);
    }
    Py_RETURN_NONE;
}

/* The side of a copy's end: 1 device, 0 host, -1 either (hipMemcpyDefault decides). */
static int buffer_side(PyObject *b)
{
    PyObject *v = PyDict_GetItem(copy_buffer_types, (PyObject *)Py_TYPE(b));   /* borrowed */
    long side = v ? PyLong_AsLong(v) : -1;
    if (side == -1 && PyErr_Occurred())
        PyErr_Clear();
    return (int)side;
}

/* The explicit hipMemcpyKind where both sides are known (HtoH 0, HtoD 1, DtoH 2, DtoD 3:
 * src * 2 + dst), else hipMemcpyDefault (4): _copy.py `memcpy_kind`, the one rule. */
static int memcpy_kind(int src_side, int dst_side)
{
    return src_side < 0 || dst_side < 0 ? 4 : src_side * 2 + dst_side;
}

/* An open rocpy buffer's address and size: 1, or 0 when not (Python decides), -1 error. */
static int buffer_range(PyObject *b, unsigned long long *addr, Py_ssize_t *nbytes)
{
    if (!copy_buffer_types || !PyDict_GetItem(copy_buffer_types, (PyObject *)Py_TYPE(b)))
        return 0;
    PyObject *h = slot_get(descr_h, get_h, b, str_h);
    if (!h)
        return -1;
    int ok = PyLong_CheckExact(h);
    if (ok)
        *addr = PyLong_AsUnsignedLongLong(h);
    Py_DECREF(h);
    if (!ok || PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    PyObject *n = member_read(&mem_nbytes, b);
    if (!n)
        return -1;
    *nbytes = PyLong_AsSsize_t(n);
    Py_DECREF(n);
    if (*nbytes < 0) {
        PyErr_Clear();
        return 0;
    }
    return 1;
}

/* A host array's address and size through the buffer protocol, and what the copy holds:
 * 1, or 0 when this is not the simple case (Python decides, and raises what is wrong):
 * not one of the registered exact types, not C-contiguous (a source is made contiguous
 * by the Python path), read-only as a destination, Python objects in it, empty.
 * Needs the buffer protocol of the limited API (3.11); before that, always 0. */
static int host_range(PyObject *o, int writable, unsigned long long *addr, Py_ssize_t *nbytes,
                      PyObject **keep)
{
#if Py_LIMITED_API >= 0x030B0000
    PyTypeObject *tp = Py_TYPE(o);
    int is_array = copy_array_type && (PyObject *)tp == copy_array_type;
    if (!is_array && (!copy_bytes_types || PySet_Contains(copy_bytes_types, (PyObject *)tp) != 1)) {
        PyErr_Clear();
        return 0;
    }
    Py_buffer view;
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(o, &view, flags) < 0) {
        PyErr_Clear();
        return 0;
    }
    int ok = view.len > 0 && view.buf != NULL && (!view.format || !strchr(view.format, 'O'));
    *addr = (unsigned long long)(uintptr_t)view.buf;
    *nbytes = view.len;
    PyBuffer_Release(&view);
    if (!ok)
        return 0;
    if (is_array) {
        Py_INCREF(o);
        *keep = o;
    } else if (!(*keep = PyMemoryView_FromObject(o))) {
        return -1;
    }
    return 1;
#else
    return 0;
#endif
}

/* copy_async(fn, buf, other, to_other, stream) -> bool
 * buf.copy_to(other, stream) (to_other) or buf.copy_from(other, stream), where other is
 * an open rocpy buffer or a host array (numpy.ndarray, bytes, bytearray, memoryview: see
 * host_range) of the same nonzero size, on a Stream whose lane is ready: hipMemcpyAsync
 * with the explicit kind where both sides are known (memcpy_kind), the rocpy buffers remember the stream, the lane holds
 * (buf, other) or (buf, what holds the host memory), as Buffer._copy_with does.
 * False: not that case, nothing done (the Python path handles it, and every error). */
PyObject *copy_async(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(5, "copy_async");
    PTR_ARG(0, fn);
    int to_other = PyObject_IsTrue(args[3]);
    if (to_other < 0)
        return NULL;
    int r = copy_async_core(fn, args[1], args[2], to_other, args[4]);
    if (r < 0)
        return NULL;
    return PyBool_FromLong(r);
}

/* copy_async's work: 1 done, 0 not this case (nothing done), -1 error. */
int copy_async_core(void *fn, PyObject *buf, PyObject *other, int to_other, PyObject *stream)
{
    if (!copy_stream_type || (PyObject *)Py_TYPE(stream) != copy_stream_type)
        return 0;
    unsigned long long a, b;
    Py_ssize_t na, nb;
    int r = buffer_range(buf, &a, &na);
    if (r <= 0)
        return r;
    PyObject *keep = NULL;       /* a host end: what holds its memory */
    r = buffer_range(other, &b, &nb);
    if (r == 0)
        r = host_range(other, to_other, &b, &nb, &keep);
    if (r <= 0)
        return r;
    int result = -1;
    PyObject *lane_o = NULL;
    if (na != nb || na == 0)
        goto not_here;
    PyObject *h = slot_get(descr_h, get_h, stream, str_h);
    if (!h)
        goto done;
    Py_DECREF(h);
    if (h == Py_None)
        goto not_here;
    lane_o = slot_get(descr_lane, get_lane, stream, str_lane);
    if (!lane_o)
        goto done;
    Lane *lane = (Lane *)lane_o;
    if (Py_TYPE(lane_o) != LaneType || lane->ready < 0)
        goto not_here;
    r = lane_ready(lane, lane->ready);
    if (r < 0)
        goto done;
    if (r == 0)
        goto not_here;
    void *dst = (void *)(uintptr_t)(to_other ? b : a), *src = (void *)(uintptr_t)(to_other ? a : b);
    void *sh = (void *)(uintptr_t)lane->addr;
    int bs = buffer_side(buf), os = keep ? 0 : buffer_side(other);
    int kind = to_other ? memcpy_kind(bs, os) : memcpy_kind(os, bs);
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = ((fn_ppsip)fn)(dst, src, (size_t)na, kind, sh);
    Py_END_ALLOW_THREADS
    if (st) {
        raise_status(st, "hipMemcpyAsync");
        goto done;
    }
    PyObject *w = member_read(&mem_weak, stream);
    if (!w)
        goto done;
    r = member_write(&mem_last, buf, w);
    if (r == 0 && !keep)
        r = member_write(&mem_last, other, w);
    Py_DECREF(w);
    if (r < 0)
        goto done;
    PyObject *item = PyTuple_Pack(2, buf, keep ? keep : other);
    if (!item || lane_hold(lane, stream, item) < 0)
        goto done;
    result = 1;
    goto done;
not_here:
    result = 0;
done:
    Py_XDECREF(lane_o);
    Py_XDECREF(keep);
    return result;
}

/* register_slots(handle_h, stream_lane): the member descriptors Handle._h and Stream._lane */

/* ---- synchronous copies ---------------------------------------------------------------- */

static void *sync_memcpy;                         /* hipMemcpy */
static PyObject *sync_tls, *sync_captures;        /* rocpy.hip._api._tls, _wait.captures */
static PyObject *str_device, *str_dev_index;   /* interned at registration */

/* register_sync_copy(hipMemcpy address, _api._tls, _wait.captures, buffer_sides) */
PyObject *register_sync_copy(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(4, "register_sync_copy");
    PTR_ARG(0, fn);
    if (!PyList_Check(args[2]) || !PyDict_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "register_sync_copy: captures is a list, sides a dict");
        return NULL;
    }
    if ((!str_device && !(str_device = PyUnicode_InternFromString("device"))) ||
        (!str_dev_index && !(str_dev_index = PyUnicode_InternFromString("_dev_index"))))
        return NULL;
    Py_INCREF(args[1]);
    HOT_XSETREF(sync_tls, args[1]);
    Py_INCREF(args[2]);
    HOT_XSETREF(sync_captures, args[2]);
    Py_INCREF(args[3]);
    HOT_XSETREF(copy_buffer_types, args[3]);
    sync_memcpy = fn;
    Py_RETURN_NONE;
}

/* An int attribute, or -1 (missing, not an int: the caller declines). */
static long int_attr(PyObject *o, PyObject *name)
{
    PyObject *v = PyObject_GetAttr(o, name);
    long r = v && PyLong_CheckExact(v) ? PyLong_AsLong(v) : -1;
    Py_XDECREF(v);
    if (PyErr_Occurred())
        PyErr_Clear();
    return r;
}

/* buf.copy_to(other) / buf.copy_from(other) with no stream: 1 done, 0 not this case
 * (nothing done: _copy.py `on_null` handles it), -1 error.  The case: the ends as
 * copy_async takes them, the device (buf's, else other's) current on this thread as
 * rocpy set it (`use_device`), no capture by rocpy, and nothing rocpy enqueued on that
 * device pending (hot_idle.c): then `on_null` would neither wait first nor find
 * anything held on the null stream, and hipMemcpy is the whole call. */
int copy_sync_core(PyObject *buf, PyObject *other, int to_other)
{
    if (!sync_memcpy)
        return 0;
    PyObject *c0 = PyList_GetItem(sync_captures, 0);   /* borrowed */
    if (!c0 || !PyLong_CheckExact(c0) || PyLong_AsLong(c0) != 0) {
        PyErr_Clear();
        return 0;
    }
    unsigned long long a, b;
    Py_ssize_t na, nb;
    int r = buffer_range(buf, &a, &na);
    if (r <= 0)
        return r;
    PyObject *keep = NULL;
    int other_is_buffer = 1;
    r = buffer_range(other, &b, &nb);
    if (r == 0) {
        other_is_buffer = 0;
        r = host_range(other, to_other, &b, &nb, &keep);
    }
    if (r <= 0)
        return r;
    int result = 0;
    if (na != nb || na == 0)
        goto done;
    long dev = int_attr(buf, str_dev_index);
    if (dev < 0 && other_is_buffer)
        dev = int_attr(other, str_dev_index);
    if (dev < 0 || dev >= HOT_MAX_DEV || !idle_is((int)dev) || int_attr(sync_tls, str_device) != dev)
        goto done;
    int bs = buffer_side(buf), os = other_is_buffer ? buffer_side(other) : 0;
    int kind = to_other ? memcpy_kind(bs, os) : memcpy_kind(os, bs);
    void *dst = (void *)(uintptr_t)(to_other ? b : a), *src = (void *)(uintptr_t)(to_other ? a : b);
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = ((fn_ppsi)sync_memcpy)(dst, src, (size_t)na, kind);
    Py_END_ALLOW_THREADS
    if (st) {
        raise_status(st, "hipMemcpy");
        result = -1;
    } else {
        result = 1;
    }
done:
    Py_XDECREF(keep);
    return result;
}
