/* rocpy._hot: Launcher, a kernel's compiled launch (geometry cache, kernarg packing). */
#include "hot_launch.h"

/* ---- Launcher --------------------------------------------------------------------- */

/* Fill types[] from an iterable of at most 8 types; -1 (with an error) if longer. */
static int type_array(PyObject *iterable, PyObject **types, int *n)
{
    *n = 0;
    if (iterable == Py_None)
        return 0;
    PyObject *it = PyObject_GetIter(iterable), *x;
    if (!it)
        return -1;
    while ((x = PyIter_Next(it))) {
        if (*n == 8) {
            Py_DECREF(x);
            Py_DECREF(it);
            PyErr_SetString(PyExc_ValueError, "at most 8 types");
            return -1;
        }
        types[(*n)++] = x;   /* borrowed: the iterable holds it */
        Py_DECREF(x);
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
}


PyTypeObject *LauncherType;

static int launcher_traverse(Launcher *self, visitproc visit, void *arg)
{
    for (Py_ssize_t i = 0; i < self->nparams; i++)
        Py_VISIT(self->params[i].numpy);
    Py_VISIT(self->stream_type);
    Py_VISIT(self->pointer_types);
    Py_VISIT(self->buffer_types);
    Py_VISIT(self->slow);
    Py_VISIT(self->configure);
    Py_VISIT(self->kgrid);
    Py_VISIT(self->kblock);
    Py_VISIT(self->tail);
    Py_VISIT((PyObject *)Py_TYPE((PyObject *)self));
    return 0;
}

static int launcher_clear(Launcher *self)
{
    for (Py_ssize_t i = 0; i < self->nparams; i++)
        Py_CLEAR(self->params[i].numpy);
    Py_CLEAR(self->stream_type);
    Py_CLEAR(self->pointer_types);
    Py_CLEAR(self->buffer_types);
    Py_CLEAR(self->slow);
    Py_CLEAR(self->configure);
    Py_CLEAR(self->kgrid);
    Py_CLEAR(self->kblock);
    Py_CLEAR(self->tail);
    return 0;
}

static void launcher_dealloc(Launcher *self)
{
    PyTypeObject *tp = Py_TYPE((PyObject *)self);
    PyObject_GC_UnTrack(self);
    launcher_clear(self);
    free(self->params);
    freefunc f = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    f(self);
    Py_DECREF(tp);
}

/* Launcher(fn, func, dev_index, size, explicit_end, keys, params, stream_type,
 *          pointer_types, buffer_types, slow, configure)
 * params: tuple of (offset, size, what, untyped, lo, hi, numpy_types) */
static int launcher_init(Launcher *self, PyObject *args, PyObject *kw)
{
    PyObject *fn, *func, *keys, *params, *stype, *ptypes, *btypes, *slow, *configure;
    int dev;
    Py_ssize_t size, explicit_end;
    if (kw && PyDict_Size(kw)) {
        PyErr_SetString(PyExc_TypeError, "Launcher takes no keyword arguments");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "OOinnO!O!OOOOO", &fn, &func, &dev, &size, &explicit_end,
                          &PyTuple_Type, &keys, &PyTuple_Type, &params, &stype, &ptypes,
                          &btypes, &slow, &configure))
        return -1;
    if (self->params) {
        PyErr_SetString(PyExc_RuntimeError, "Launcher is initialised once");
        return -1;
    }
    void *p;
    if (as_ptr(fn, &p) < 0)
        return -1;
    self->fn = (launch_fn)p;
    if (as_ptr(func, &self->func) < 0)
        return -1;
    if (PyTuple_Size(keys) != 3) {
        PyErr_SetString(PyExc_ValueError, "three launch parameter keys");
        return -1;
    }
    for (int i = 0; i < 3; i++)
        if (as_ptr(PyTuple_GetItem(keys, i), &self->keys[i]) < 0)
            return -1;
    self->dev_index = dev;
    self->size = size;
    self->explicit_end = explicit_end;
    Py_ssize_t n = PyTuple_Size(params);
    self->params = calloc(n ? n : 1, sizeof(Param));
    if (!self->params) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Param *q = &self->params[i];
        PyObject *np;
        if (!PyArg_ParseTuple(PyTuple_GetItem(params, i), "nniiLKiO", &q->offset, &q->size,
                              &q->what, &q->untyped, &q->lo, &q->hi, &q->hi_signed, &np))
            return -1;
        if (q->offset < 0 || q->size < 1 || q->offset + q->size > explicit_end) {
            PyErr_SetString(PyExc_ValueError, "a parameter outside the explicit arguments");
            return -1;
        }
        Py_INCREF(np);
        q->numpy = np;
        self->nparams = i + 1;
        if (type_array(np, q->numpy_types, &q->nnumpy) < 0)
            return -1;
    }
    Py_INCREF(stype);
    self->stream_type = stype;
    Py_INCREF(ptypes);
    self->pointer_types = ptypes;
    Py_INCREF(btypes);
    self->buffer_types = btypes;
    if (type_array(btypes, self->buffer_array, &self->nbuffer) < 0)
        return -1;
    Py_INCREF(slow);
    self->slow = slow;
    Py_INCREF(configure);
    self->configure = configure;
    return 0;
}

/* An immutable geometry value we may cache by value: exact int, or a tuple of 1..3 exact ints. */
static int plain_dims(PyObject *o)
{
    if (PyLong_CheckExact(o))
        return 1;
    if (!PyTuple_CheckExact(o))
        return 0;
    Py_ssize_t n = PyTuple_Size(o);
    if (n < 1 || n > 3)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!PyLong_CheckExact(PyTuple_GetItem(o, i)))
            return 0;
    return 1;
}

static int same_dims(PyObject *key, PyObject *o)
{
    if (!key || Py_TYPE(key) != Py_TYPE(o))
        return 0;
    if (key == o)
        return 1;
    if (!plain_dims(o))
        return 0;
    return PyObject_RichCompareBool(key, o, Py_EQ) == 1;
}

/* Validate and cache the geometry through the Python definition; 0 ok, -1 error. */
static int configure(Launcher *self, PyObject *kernel, PyObject *grid, PyObject *block,
                     PyObject *shm)
{
    PyObject *r = PyObject_CallFunctionObjArgs(self->configure, kernel, grid, block, shm, NULL);
    if (!r)
        return -1;
    unsigned d[6];
    PyObject *tail = NULL;
    int ok = PyTuple_Check(r) && PyTuple_Size(r) == 7;
    for (int i = 0; ok && i < 6; i++) {
        unsigned long v = PyLong_AsUnsignedLong(PyTuple_GetItem(r, i));
        if (PyErr_Occurred() || v > 0xFFFFFFFFul)
            ok = 0;
        d[i] = (unsigned)v;
    }
    if (ok) {
        tail = PyTuple_GetItem(r, 6);
        if (tail == Py_None)
            tail = NULL;
        else if (!PyBytes_Check(tail) ||
                 PyBytes_Size(tail) != self->size - self->explicit_end)
            ok = 0;
    }
    if (!ok) {
        Py_DECREF(r);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "Kernel._configure returned a bad geometry");
        return -1;
    }
    memcpy(self->dims, d, sizeof d);
    Py_XINCREF(tail);
    PyObject *old_tail = self->tail;
    self->tail = tail;
    Py_XDECREF(old_tail);
    Py_DECREF(r);
    Py_CLEAR(self->kgrid);
    Py_CLEAR(self->kblock);
    if (plain_dims(grid) && plain_dims(block) && PyLong_CheckExact(shm)) {
        long long s = PyLong_AsLongLong(shm);
        if (!PyErr_Occurred()) {
            Py_INCREF(grid);
            Py_INCREF(block);
            self->kgrid = grid;
            self->kblock = block;
            self->kshm = s;
        }
        PyErr_Clear();
    }
    return 0;
}

#define STACK_KERNARGS 4096

static PyObject *slow_launch(Launcher *self, PyObject *const *args)
{
    return PyObject_CallFunctionObjArgs(self->slow, args[0], args[1], args[2], args[3],
                                        args[4], args[5], NULL);
}

/* launch(kernel, grid, block, args, stream, shared_mem) -> None */
PyObject *launcher_launch(Launcher *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "Launcher.launch takes 6 arguments");
        return NULL;
    }
    PyObject *kernel = args[0], *grid = args[1], *block = args[2], *kargs = args[3];
    PyObject *stream = args[4], *shm = args[5];
    if ((PyObject *)Py_TYPE(stream) != self->stream_type)
        return slow_launch(self, args);
    PyObject *h = member_read(&mem_h, stream);
    if (!h)
        return NULL;
    Py_DECREF(h);
    if (h == Py_None)   /* closed: Python raises */
        return slow_launch(self, args);
    PyObject *lane_o = member_read(&mem_lane, stream);
    if (!lane_o)
        return NULL;
    if (Py_TYPE(lane_o) != LaneType) {
        Py_DECREF(lane_o);
        return slow_launch(self, args);
    }
    Lane *lane = (Lane *)lane_o;
    PyObject *result = NULL, *tail = NULL;
    int r = lane_ready(lane, self->dev_index);
    if (r <= 0) {
        Py_DECREF(lane_o);
        return r < 0 ? NULL : slow_launch(self, args);
    }
    Py_ssize_t n;
    if (PyTuple_CheckExact(kargs)) {
        n = PyTuple_Size(kargs);
    } else if (PyList_CheckExact(kargs)) {
        n = PyList_Size(kargs);
    } else {
        Py_DECREF(lane_o);
        return slow_launch(self, args);
    }
    if (n != self->nparams) {
        Py_DECREF(lane_o);
        return slow_launch(self, args);
    }
    if (!(same_dims(self->kgrid, grid) && same_dims(self->kblock, block) &&
          PyLong_CheckExact(shm) && PyLong_AsLongLong(shm) == self->kshm)) {
        PyErr_Clear();
        if (configure(self, kernel, grid, block, shm) < 0)
            goto done;
    }
    /* this launch's geometry, copied now: packing may run Python code (a .ptr property),
     * during which another thread's launch may reconfigure the cache */
    unsigned d[6];
    memcpy(d, self->dims, sizeof d);
    unsigned s = (unsigned)self->kshm;
    if (self->kgrid == NULL) {   /* not cached: the value configure validated */
        long long v = PyLong_AsLongLong(shm);
        if (PyErr_Occurred()) {
            PyErr_Clear();
            v = 0;
        }
        s = (unsigned)v;
    }
    tail = self->tail;
    Py_XINCREF(tail);
    char stackbuf[STACK_KERNARGS];
    char *kbuf = self->size <= STACK_KERNARGS ? stackbuf : malloc(self->size);
    if (!kbuf) {
        PyErr_NoMemory();
        goto done;
    }
    if (self->explicit_end)
        memset(kbuf, 0, self->explicit_end);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = PyTuple_CheckExact(kargs) ? PyTuple_GetItem(kargs, i)
                                                : PyList_GetItem(kargs, i);
        int ok = pack_one(self, &self->params[i], a, kbuf + self->params[i].offset);
        if (ok <= 0) {
            if (kbuf != stackbuf)
                free(kbuf);
            Py_XDECREF(tail);
            Py_DECREF(lane_o);
            return ok < 0 ? NULL : slow_launch(self, args);
        }
    }
    if (tail)
        memcpy(kbuf + self->explicit_end, PyBytes_AsString(tail), self->size - self->explicit_end);
    else if (self->size > self->explicit_end)
        memset(kbuf + self->explicit_end, 0, self->size - self->explicit_end);
    Py_CLEAR(tail);
    size_t ksize = (size_t)self->size;
    void *extra[5] = {self->keys[0], kbuf, self->keys[1], &ksize, self->keys[2]};
    void *sh = (void *)(uintptr_t)lane->addr;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = self->fn(self->func, d[0], d[1], d[2], d[3], d[4], d[5], s, sh, NULL, extra);
    Py_END_ALLOW_THREADS
    if (kbuf != stackbuf)
        free(kbuf);
    if (st) {
        raise_status(st, "hipModuleLaunchKernel");
        goto done;
    }
    if (lane_hold_once(lane, stream, kernel, n ? kargs : NULL) < 0)
        goto done;
    Py_INCREF(Py_None);
    result = Py_None;
done:
    Py_XDECREF(tail);
    Py_DECREF(lane_o);
    return result;
}

/* pack(args, kernel=None) -> bytes|None: the explicit arguments as the launch packs them
 * (None when an argument is not a fast case); for the differential tests. */
static PyObject *launcher_pack(Launcher *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 1 || !PyTuple_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "pack takes one tuple");
        return NULL;
    }
    PyObject *kargs = args[0];
    if (PyTuple_Size(kargs) != self->nparams)
        Py_RETURN_NONE;
    PyObject *out = PyBytes_FromStringAndSize(NULL, self->explicit_end);
    if (!out)
        return NULL;
    char *buf = PyBytes_AsString(out);
    memset(buf, 0, self->explicit_end);
    for (Py_ssize_t i = 0; i < self->nparams; i++) {
        int ok = pack_one(self, &self->params[i], PyTuple_GetItem(kargs, i),
                          buf + self->params[i].offset);
        if (ok <= 0) {
            Py_DECREF(out);
            if (ok < 0)
                return NULL;
            Py_RETURN_NONE;
        }
    }
    return out;
}

static PyMethodDef launcher_methods[] = {
    {"launch", (PyCFunction)(void (*)(void))launcher_launch, METH_FASTCALL,
     "launch(kernel, grid, block, args, stream, shared_mem): enqueue, or hand to Python"},
    {"pack", (PyCFunction)(void (*)(void))launcher_pack, METH_FASTCALL,
     "pack(args): the explicit kernarg bytes the compiled path writes, None if not a fast case"},
    {NULL}
};

static PyType_Slot launcher_slots[] = {
    {Py_tp_doc, "A kernel's compiled launch state (see rocpy/hip/module.py)."},
    {Py_tp_methods, launcher_methods},
    {Py_tp_init, launcher_init},
    {Py_tp_traverse, launcher_traverse},
    {Py_tp_clear, launcher_clear},
    {Py_tp_dealloc, launcher_dealloc},
    {Py_tp_new, PyType_GenericNew},
    {0, NULL}
};

PyType_Spec launcher_spec = {
    "rocpy._hot.Launcher", sizeof(Launcher), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, launcher_slots
};

