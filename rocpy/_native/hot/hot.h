/* rocpy._hot's internal interface: what its files share (see hot.c). */
#ifndef ROCPY_HOT_H
#define ROCPY_HOT_H
#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030B0000
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "rocpy._hot packs kernel arguments little-endian, as the GPU reads them"
#endif

typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, void *, void **, void **);
typedef int (*fn_p)(void *);
typedef int (*fn_pp)(void *, void *);
typedef int (*fn_ppu)(void *, void *, unsigned);
typedef int (*fn_ppsip)(void *, const void *, size_t, int, void *);
typedef int (*fn_ppsi)(void *, const void *, size_t, int);
typedef int (*fn_pisp)(void *, int, size_t, void *);
typedef int64_t (*fn_sig_load)(uint64_t);
typedef void (*fn_sig_store)(uint64_t, int64_t);

/* hot.c: module state */
extern PyObject *error_factory;
extern PyObject *str_h, *str_lane, *str_pending, *str_fence, *str_ptr;
extern PyObject *str_nbytes, *str_weak, *str_last;

/* A slot of a class, read and written by the hot path: Handle._h, the stream's _lane,
 * Buffer._nbytes, _last and _dev_index, Stream._weak, CallbackErrors.pending (registered
 * by register_slots and register_members) and the compiled methods' aux slots.  Where the
 * class's member descriptor passed member_bind's layout checks, `offset` is the slot's
 * place in the object and an object of `owner` is read there directly; otherwise through
 * the descriptor; an object of another class (or anything before registration) by name. */
#define MEMBER_KIN 4      /* Member.kin's entries: member_direct compares each */
typedef struct {
    PyObject *descr;
    descrgetfunc get;
    descrsetfunc set;
    PyTypeObject *owner;      /* the descriptor's __objclass__ */
    PyObject *name;
    Py_ssize_t offset;        /* 0: no direct access */
    /* subclasses of owner whose objects were read here (strong references): checked by
     * identity inline, where PyObject_TypeCheck walks the MRO.  A type's MRO can change
     * (__bases__ assignment) only to a layout-compatible one, so the slot stays a
     * PyObject pointer at offset. */
    PyTypeObject *kin[MEMBER_KIN];
} Member;
extern Member mem_h, mem_lane, mem_nbytes, mem_last, mem_weak, mem_pending, mem_dev_index;
int member_bind(Member *m, PyObject *descr);
PyObject *member_read_any(Member *m, PyObject *obj);
int member_write_any(Member *m, PyObject *obj, PyObject *value);

/* The common case inline (every hot call reads several slots): an object of the owner
 * class or of a subclass already seen, read or written at the bound offset; any other
 * case, member_*_any. */
static inline int member_direct(const Member *m, PyTypeObject *t)
{
    return m->offset && (t == m->owner || t == m->kin[0] || t == m->kin[1] ||
                         t == m->kin[2] || t == m->kin[3]);
}

static inline PyObject *member_read(Member *m, PyObject *obj)
{
    if (member_direct(m, Py_TYPE(obj))) {
        PyObject *v = *(PyObject **)((char *)obj + m->offset);
        if (v) {
            Py_INCREF(v);
            return v;
        }
    }
    return member_read_any(m, obj);
}

static inline int member_write(Member *m, PyObject *obj, PyObject *value)
{
    if (value && member_direct(m, Py_TYPE(obj))) {
        PyObject **slot = (PyObject **)((char *)obj + m->offset), *old = *slot;
        if (old != value) {      /* a loop's copies write the same stream each time */
            Py_INCREF(value);
            *slot = value;
            Py_XDECREF(old);
        }
        return 0;
    }
    return member_write_any(m, obj, value);
}
PyObject *raise_status(int st, const char *call);
int as_ptr(PyObject *o, void **out);

/* Py_XSETREF (not in the 3.11 limited API) */
#define HOT_XSETREF(dst, src) do { PyObject *old_ = (PyObject *)(dst); (dst) = (src); \
        Py_XDECREF(old_); } while (0)
#define PTR_ARG(i, var) void *var; if (as_ptr(args[i], &var) < 0) return NULL
#define CHECK_N(k, name) if (nargs != (k)) { \
        PyErr_SetString(PyExc_TypeError, name " takes " #k " arguments"); return NULL; }

/* hot_idle.c: whether rocpy enqueued anything a null-stream copy would wait for */
#define HOT_MAX_DEV 64
void idle_mark(int dev);
int idle_is(int dev);
PyObject *py_idle_mark(PyObject *m, PyObject *o);
PyObject *py_idle_marks(PyObject *m, PyObject *o);
PyObject *py_idle_cover(PyObject *m, PyObject *const *args, Py_ssize_t nargs);
PyObject *py_idle_is(PyObject *m, PyObject *o);

/* hot_lane.c: a stream's hot state */
typedef struct {
    PyObject_HEAD
    unsigned long long addr;   /* hipStream_t as an int */
    int dev;                   /* the stream's device index (idle_mark) */
    int ready;                 /* device index when nothing is due before enqueueing, else -1 */
    PyObject *errors;          /* CallbackErrors (its .pending list) */
    PyObject *box;             /* [list]: what unfenced work uses */
    Py_ssize_t limit;          /* items held before a fence */
    Py_ssize_t querying;       /* queries of the stream in progress (hot_launch.c's hold) */
} Lane;
extern PyTypeObject *LaneType;
extern PyType_Spec lane_spec;
int lane_ready(Lane *lane, int dev_index);
int lane_hold(Lane *lane, PyObject *stream, PyObject *item);
int lane_hold_once(Lane *lane, PyObject *stream, PyObject *a, PyObject *b);   /* b: NULL */

/* hot_launch.c: kernel launches */
extern PyTypeObject *LauncherType;
extern PyType_Spec launcher_spec;

/* hot_calls.c: calls by address, buffer copies */
PyObject *call_p(PyObject *m, PyObject *const *args, Py_ssize_t nargs);
PyObject *call_pp(PyObject *m, PyObject *const *args, Py_ssize_t nargs);
PyObject *call_ppu(PyObject *m, PyObject *const *args, Py_ssize_t nargs);
PyObject *call_memcpy_async(PyObject *m, PyObject *const *args, Py_ssize_t nargs);
PyObject *call_memset_async(PyObject *m, PyObject *const *args, Py_ssize_t nargs);
PyObject *call_signal_load(PyObject *m, PyObject *const *args, Py_ssize_t nargs);
PyObject *call_signal_store(PyObject *m, PyObject *const *args, Py_ssize_t nargs);
PyObject *register_copy_types(PyObject *m, PyObject *const *args, Py_ssize_t nargs);
PyObject *copy_async(PyObject *m, PyObject *const *args, Py_ssize_t nargs);
int copy_async_core(void *fn, PyObject *buf, PyObject *other, int to_other, PyObject *stream);
PyObject *register_sync_copy(PyObject *m, PyObject *const *args, Py_ssize_t nargs);
int copy_sync_core(PyObject *buf, PyObject *other, int to_other);

/* hot_method.c: compiled methods (hot_method.h: their kinds, hot_signal.c) */
PyObject *make_method(PyObject *m, PyObject *const *args, Py_ssize_t nargs);
int method_type_add(PyObject *m);

#endif
