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

static PyObject *copy_stream_type, *copy_array_type;

/* The registered endpoint tables, read once at registration (a few exact types: a
 * pointer compare per end instead of a dict or set lookup per call): rocpy's buffer
 * types with their side (_copy.py `ENDPOINT_SIDE`: 1 device, 0 host, -1 either) and
 * the bytes-like host types (held through a memoryview, as the Python path does). */
#define COPY_MAX_TYPES 8
static PyObject *side_types[COPY_MAX_TYPES], *bytes_types[COPY_MAX_TYPES];
static int side_of[COPY_MAX_TYPES], n_side, n_bytes;

static int set_side_types(PyObject *sides)
{
    if (!PyDict_Check(sides) || PyDict_Size(sides) > COPY_MAX_TYPES) {
        PyErr_SetString(PyExc_TypeError, "the buffer sides are a dict of at most 8 types");
        return -1;
    }
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    int n = 0, sd[COPY_MAX_TYPES];
    PyObject *ts[COPY_MAX_TYPES];
    while (PyDict_Next(sides, &pos, &k, &v)) {
        long s = PyLong_AsLong(v);
        if ((s == -1 && PyErr_Occurred()) || !PyType_Check(k) || s < -1 || s > 1) {
            PyErr_Clear();
            PyErr_SetString(PyExc_TypeError, "the buffer sides map types to 1, 0 or -1");
            return -1;
        }
        Py_INCREF(k);
        ts[n] = k;
        sd[n++] = (int)s;
    }
    for (int i = 0; i < n_side; i++)
        Py_CLEAR(side_types[i]);
    for (int i = 0; i < n; i++) {
        side_types[i] = ts[i];
        side_of[i] = sd[i];
    }
    n_side = n;
    return 0;
}

/* The index of a rocpy buffer's exact type in side_types, or -1 (not a buffer). */
static int buffer_type(PyObject *o)
{
    PyObject *tp = (PyObject *)Py_TYPE(o);
    for (int i = 0; i < n_side; i++)
        if (side_types[i] == tp)
            return i;
    return -1;
}

/* register_copy_types(stream_type, buffer_sides, array_type, bytes_types): the exact
 * types the compiled copies take: rocpy buffers ({type: side}), numpy.ndarray (held
 * itself, as the Python path holds it) and bytes-like types (a set or frozenset). */
PyObject *register_copy_types(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(4, "register_copy_types");
    if (!PyAnySet_Check(args[3]) || PySet_Size(args[3]) > COPY_MAX_TYPES) {
        PyErr_SetString(PyExc_TypeError, "register_copy_types: bytes_types is a set of types");
        return NULL;
    }
    if (set_side_types(args[1]) < 0)
        return NULL;
    PyObject *it = PyObject_GetIter(args[3]), *k;
    if (!it)
        return NULL;
    for (int i = 0; i < n_bytes; i++)
        Py_CLEAR(bytes_types[i]);
    n_bytes = 0;
    while ((k = PyIter_Next(it)))
        bytes_types[n_bytes++] = k;      /* the new reference is kept */
    Py_DECREF(it);
    if (PyErr_Occurred())
        return NULL;
    Py_INCREF(args[0]);
    HOT_XSETREF(copy_stream_type, args[0]);
    Py_INCREF(args[2]);
    HOT_XSETREF(copy_array_type, args[2]);
    Py_RETURN_NONE;
}

/* The explicit hipMemcpyKind where both sides are known (HtoH 0, HtoD 1, DtoH 2, DtoD 3:
 * src * 2 + dst), else hipMemcpyDefault (4): _copy.py `memcpy_kind`, the one rule. */
static int memcpy_kind(int src_side, int dst_side)
{
    return src_side < 0 || dst_side < 0 ? 4 : src_side * 2 + dst_side;
}

/* An open rocpy buffer's address and size (its exact type checked by the caller): 1, or
 * 0 when not open or not plain ints (Python decides), -1 error. */
static int buffer_range(PyObject *b, unsigned long long *addr, Py_ssize_t *nbytes)
{
    PyObject *h = member_read(&mem_h, b);
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

/* A host array's address and size through the buffer protocol: 1 with `view` open (the
 * caller releases it: the export keeps a bytearray from resizing while the GIL is
 * released), or 0 when this is not the simple case (Python decides, and raises what is
 * wrong): not one of the registered exact types, not C-contiguous (a source is made
 * contiguous by the Python path), read-only as a destination, Python objects in it,
 * empty.  Needs the buffer protocol of the limited API (3.11); before that, always 0. */
#if Py_LIMITED_API >= 0x030B0000
typedef Py_buffer HostView;
#define host_view_release(v) PyBuffer_Release(v)
#else
/* the 3.10 limited API has no buffer protocol: host_range never opens one */
typedef struct { void *buf; Py_ssize_t len; } HostView;
#define host_view_release(v) ((void)(v))
#endif

static int host_range(PyObject *o, int writable, HostView *view, int *is_array)
{
#if Py_LIMITED_API >= 0x030B0000
    PyObject *tp = (PyObject *)Py_TYPE(o);
    int known = copy_array_type && tp == copy_array_type;
    *is_array = known;
    for (int i = 0; !known && i < n_bytes; i++)
        known = bytes_types[i] == tp;
    if (!known)
        return 0;
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(o, view, flags) < 0) {
        PyErr_Clear();
        return 0;
    }
    if (view->len > 0 && view->buf != NULL && (!view->format || !strchr(view->format, 'O')))
        return 1;
    PyBuffer_Release(view);
    return 0;
#else
    (void)o; (void)writable; (void)view; (void)is_array;
    return 0;
#endif
}

/* A copy between a rocpy buffer `buf` and `other` (another open buffer, or a host array
 * host_range takes) of the same nonzero size: both ends resolved once, for the async and
 * the synchronous copy alike. */
typedef struct {
    void *dst, *src;
    size_t n;
    int kind;           /* memcpy_kind of the two sides */
    int other_buffer;   /* other is a rocpy buffer (else a host array, `view` open) */
    int other_array;    /* other is a numpy array */
    HostView view;
} CopyEnds;

/* 1 resolved (release with ends_release), 0 not this case (nothing held), -1 error. */
static int copy_ends(PyObject *buf, PyObject *other, int to_other, CopyEnds *e)
{
    int bt = buffer_type(buf);
    if (bt < 0)
        return 0;
    unsigned long long a, b;
    Py_ssize_t na, nb;
    int r = buffer_range(buf, &a, &na);
    if (r <= 0)
        return r;
    int ot = buffer_type(other), os;
    e->other_buffer = ot >= 0;
    e->other_array = 0;
    if (ot >= 0) {
        r = buffer_range(other, &b, &nb);
        if (r <= 0)
            return r;
        os = side_of[ot];
    } else {
        if (host_range(other, to_other, &e->view, &e->other_array) <= 0)
            return 0;
        b = (unsigned long long)(uintptr_t)e->view.buf;
        nb = e->view.len;
        os = 0;
    }
    if (na != nb || na == 0) {
        if (!e->other_buffer)
            host_view_release(&e->view);
        return 0;
    }
    int bs = side_of[bt];
    e->n = (size_t)na;
    e->kind = to_other ? memcpy_kind(bs, os) : memcpy_kind(os, bs);
    e->dst = (void *)(uintptr_t)(to_other ? b : a);
    e->src = (void *)(uintptr_t)(to_other ? a : b);
    return 1;
}

static void ends_release(CopyEnds *e)
{
    if (!e->other_buffer)
        host_view_release(&e->view);
}

/* copy_async(fn, buf, other, to_other, stream) -> bool
 * buf.copy_to(other, stream) (to_other) or buf.copy_from(other, stream), where other is
 * an open rocpy buffer or a host array (numpy.ndarray, bytes, bytearray, memoryview: see
 * host_range) of the same nonzero size, on a Stream whose lane is ready: hipMemcpyAsync
 * with the explicit kind where both sides are known (memcpy_kind), the rocpy buffers
 * remember the stream, the lane holds (buf, other) or (buf, what holds the host memory)
 * (lane_hold_once), as _copy.py `_copy` does.
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
    CopyEnds e;
    int r = copy_ends(buf, other, to_other, &e);
    if (r <= 0)
        return r;
    int result = -1;
    PyObject *lane_o = NULL, *keep = NULL;
    PyObject *h = member_read(&mem_h, stream);
    if (!h)
        goto done;
    Py_DECREF(h);
    if (h == Py_None)
        goto not_here;
    lane_o = member_read(&mem_lane, stream);
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
    /* what holds a host end: the array itself, or a memoryview export of a bytes-like */
    if (e.other_buffer || e.other_array) {
        keep = other;
        Py_INCREF(keep);
    } else if (!(keep = PyMemoryView_FromObject(other))) {
        goto done;
    }
    void *sh = (void *)(uintptr_t)lane->addr;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = ((fn_ppsip)fn)(e.dst, e.src, e.n, e.kind, sh);
    Py_END_ALLOW_THREADS
    if (st) {
        raise_status(st, "hipMemcpyAsync");
        goto done;
    }
    PyObject *w = member_read(&mem_weak, stream);   /* exactly the registered Stream */
    if (!w)
        goto done;
    r = member_write(&mem_last, buf, w);
    if (r == 0 && e.other_buffer)
        r = member_write(&mem_last, other, w);
    Py_DECREF(w);
    if (r < 0 || lane_hold_once(lane, stream, buf, keep) < 0)
        goto done;
    result = 1;
    goto done;
not_here:
    result = 0;
done:
    ends_release(&e);
    Py_XDECREF(keep);
    Py_XDECREF(lane_o);
    return result;
}

/* ---- synchronous copies ---------------------------------------------------------------- */

static void *sync_memcpy;                         /* hipMemcpy */
static PyObject *sync_tls, *sync_captures;        /* rocpy.hip._api._tls, _wait.captures */
static PyObject *str_device;   /* interned at registration */

/* register_sync_copy(hipMemcpy address, _api._tls, _wait.captures, buffer_sides) */
PyObject *register_sync_copy(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(4, "register_sync_copy");
    PTR_ARG(0, fn);
    if (!PyList_Check(args[2]) || !PyDict_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "register_sync_copy: captures is a list, sides a dict");
        return NULL;
    }
    if (!str_device && !(str_device = PyUnicode_InternFromString("device")))
        return NULL;
    if (set_side_types(args[3]) < 0)
        return NULL;
    Py_INCREF(args[1]);
    HOT_XSETREF(sync_tls, args[1]);
    Py_INCREF(args[2]);
    HOT_XSETREF(sync_captures, args[2]);
    sync_memcpy = fn;
    Py_RETURN_NONE;
}

/* An int attribute (the member's where registered), or -1 (missing, not an int: the
 * caller declines). */
static long int_attr(PyObject *o, PyObject *name, Member *m)
{
    PyObject *v = m ? member_read(m, o) : PyObject_GetAttr(o, name);
    long r = v && PyLong_CheckExact(v) ? PyLong_AsLong(v) : -1;
    Py_XDECREF(v);
    if (PyErr_Occurred())
        PyErr_Clear();
    return r;
}

/* buf.copy_to(other) / buf.copy_from(other) with no stream: 1 done, 0 not this case
 * (nothing done: _copy.py `on_null` handles it), -1 error.  The case: the ends as
 * copy_async takes them (copy_ends), the device (buf's, else other's) current on this
 * thread as rocpy set it (`use_device`), no capture by rocpy, and nothing rocpy enqueued
 * on that device pending (hot_idle.c): then `on_null` would neither wait first nor find
 * anything held on the null stream, and hipMemcpy is the whole call.  A host end's
 * buffer export stays open across the call (nothing else holds it). */
int copy_sync_core(PyObject *buf, PyObject *other, int to_other)
{
    if (!sync_memcpy)
        return 0;
    PyObject *c0 = PyList_GetItem(sync_captures, 0);   /* borrowed */
    if (!c0 || !PyLong_CheckExact(c0) || PyLong_AsLong(c0) != 0) {
        PyErr_Clear();
        return 0;
    }
    CopyEnds e;
    int r = copy_ends(buf, other, to_other, &e);
    if (r <= 0)
        return r;
    int result = 0;
    long dev = int_attr(buf, NULL, &mem_dev_index);
    if (dev < 0 && e.other_buffer)
        dev = int_attr(other, NULL, &mem_dev_index);
    if (dev < 0 || dev >= HOT_MAX_DEV || !idle_is((int)dev) ||
        int_attr(sync_tls, str_device, NULL) != dev)
        goto done;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = ((fn_ppsi)sync_memcpy)(e.dst, e.src, e.n, e.kind);
    Py_END_ALLOW_THREADS
    if (st) {
        raise_status(st, "hipMemcpy");
        result = -1;
    } else {
        result = 1;
    }
done:
    ends_release(&e);
    return result;
}
