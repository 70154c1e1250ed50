/* rocpy._hot: HSA Signal.load / store / silent_store as compiled methods (hot_method.c's
 * kinds SIGNAL_*), installed by rocpy/hsa/signal.py.
 *
 * The fast case: an open signal with no pending callback error (`_h` not None, `_bad`
 * False), a memory order named by an exact str the table knows (or none: the default),
 * for stores an exact int within int64.  It calls hsa_signal_<op>_<order> with the
 * integer handle (`_hv`: hsa_signal_t is one uint64_t, passed as one in the C ABI), the
 * GIL held as the cffi call from Python would not need it released: a value operation
 * never blocks (ROCr: an atomic on the signal's value, plus a wake-up for stores).
 * Everything else is the Python definition's (ClosedError, CallbackError, the order's
 * ValueError, _int64's TypeError/OverflowError).
 */
#include "hot_method.h"

/* Match positional and keyword arguments to `names` (n of them) in out[]: 1 matched,
 * 0 anything Python would judge (too many, unknown or repeated names). */
static int match_args(const char *const *names, int n, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames, PyObject **out)
{
    if (nargs > n)
        return 0;
    for (int i = 0; i < n; i++)
        out[i] = i < nargs ? args[i] : NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *k = PyTuple_GetItem(kwnames, i);
        int slot = -1;
        for (int j = 0; j < n; j++)
            if (PyUnicode_CompareWithASCIIString(k, names[j]) == 0)
                slot = j;
        if (slot < 0 || out[slot])
            return 0;
        out[slot] = args[nargs + i];
    }
    return 1;
}

/* The function for `order` (NULL: the default); NULL when the table has no such order. */
static void *order_fn(int kind, PyObject *order)
{
    if (!order)
        return method_state[kind].fn;
    if (!PyUnicode_CheckExact(order))
        return NULL;
    PyObject *a = PyDict_GetItem(method_state[kind].extra, order);   /* borrowed */
    return a && PyLong_CheckExact(a) ? PyLong_AsVoidPtr(a) : NULL;
}

/* 1 with the handle in *hv when the signal may be used here, 0 otherwise, -1 error */
static int signal_handle(int kind, PyObject *self, uint64_t *hv)
{
    PyObject *h = method_aux(kind, 0, self);
    if (!h)
        return -1;
    Py_DECREF(h);
    if (h == Py_None)
        return 0;
    PyObject *bad = method_aux(kind, 1, self);
    if (!bad)
        return -1;
    Py_DECREF(bad);
    if (bad != Py_False)
        return 0;
    PyObject *v = method_aux(kind, 2, self);
    if (!v)
        return -1;
    int ok = PyLong_CheckExact(v);
    if (ok)
        *hv = PyLong_AsUnsignedLongLong(v);
    Py_DECREF(v);
    if (ok && PyErr_Occurred()) {
        PyErr_Clear();
        ok = 0;
    }
    return ok;
}

static const char *const load_names[1] = {"order"};

PyObject *signal_load(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames)
{
    PyObject *order;
    void *fn = match_args(load_names, 1, args, nargs, kwnames, &order) ?
               order_fn(SIGNAL_LOAD, order) : NULL;
    uint64_t hv;
    int r = fn ? signal_handle(SIGNAL_LOAD, self, &hv) : 0;
    if (r <= 0)
        return r < 0 ? NULL : method_fallback(SIGNAL_LOAD, self, args, nargs, kwnames);
    return PyLong_FromLongLong(((fn_sig_load)fn)(hv));
}

static const char *const store_names[2] = {"value", "order"};

static PyObject *store(int kind, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames)
{
    PyObject *argv[2];
    void *fn = NULL;
    long long value = 0;
    if (match_args(store_names, 2, args, nargs, kwnames, argv) && argv[0] &&
        PyLong_CheckExact(argv[0])) {
        int overflow;
        value = PyLong_AsLongLongAndOverflow(argv[0], &overflow);
        if (value == -1 && PyErr_Occurred())
            return NULL;
        if (!overflow)
            fn = order_fn(kind, argv[1]);
    }
    uint64_t hv;
    int r = fn ? signal_handle(kind, self, &hv) : 0;
    if (r <= 0)
        return r < 0 ? NULL : method_fallback(kind, self, args, nargs, kwnames);
    ((fn_sig_store)fn)(hv, value);
    Py_RETURN_NONE;
}

PyObject *signal_store(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames)
{
    return store(SIGNAL_STORE, self, args, nargs, kwnames);
}

PyObject *signal_silent_store(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    return store(SIGNAL_SILENT_STORE, self, args, nargs, kwnames);
}
