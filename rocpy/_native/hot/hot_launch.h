/* rocpy._hot: what the compiled launch (hot_launch.c) and its per-parameter packer
 * (hot_pack.c) share: the parameter spec and the Launcher's state. */
#ifndef ROCPY_HOT_LAUNCH_H
#define ROCPY_HOT_LAUNCH_H

#include "hot.h"

enum { P_PTR = 1, P_INT = 2, P_FLOAT = 3, P_RAW = 4 };

typedef struct {
    Py_ssize_t offset, size;
    int what;
    int untyped;              /* integer with no type name: registered pointer types too */
    long long lo;             /* inclusive */
    unsigned long long hi;    /* exclusive upper bound, 0 = 2**64 */
    int hi_signed;            /* hi is a signed bound (<= 2**63) */
    PyObject *numpy;          /* frozenset of numpy scalar types taken inline */
    int nnumpy;
    PyObject *numpy_types[8]; /* the same, compared by pointer (borrowed from .numpy) */
} Param;

static inline int in_types(PyObject *const *types, int n, PyTypeObject *t)
{
    for (int i = 0; i < n; i++)
        if (types[i] == (PyObject *)t)
            return 1;
    return 0;
}

typedef struct {
    PyObject_HEAD
    launch_fn fn;
    void *func;
    int dev_index;
    Py_ssize_t size, explicit_end;
    void *keys[3];            /* HIP_LAUNCH_PARAM_BUFFER_POINTER, _BUFFER_SIZE, _END */
    Py_ssize_t nparams;
    Param *params;
    PyObject *stream_type;
    PyObject *pointer_types;  /* set: untyped 8-byte parameters take their .ptr */
    PyObject *buffer_types;   /* frozenset: rocpy's buffer classes, whose .ptr is ._h */
    int nbuffer;
    PyObject *buffer_array[8];
    PyObject *slow;           /* Kernel._launch_py(kernel, grid, block, args, stream, shm) */
    PyObject *configure;      /* Kernel._configure(kernel, grid, block, shm) */
    /* the geometry cache: immutable keys compared by value */
    PyObject *kgrid, *kblock;
    long long kshm;
    unsigned dims[6];
    PyObject *tail;           /* bytes of the hidden arguments, or NULL */
} Launcher;

/* hot_pack.c: one parameter, the fast cases only: 1 packed, 0 not a fast case (Python
 * decides), -1 error. */
int pack_one(Launcher *self, const Param *q, PyObject *a, char *out);

/* hot_launch.c: launch(kernel, grid, block, args, stream, shared_mem) (Launcher.launch) */
PyObject *launcher_launch(Launcher *self, PyObject *const *args, Py_ssize_t nargs);

#endif
