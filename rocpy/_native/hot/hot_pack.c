/* rocpy._hot: the compiled launch's per-parameter packer (pointers, integers, floats,
 * raw slots), the fast cases of the conversion plan (rocpy/codeobject/argconv.py): every
 * other value goes to the Python packer, which raises what is wrong. */
#include "hot_launch.h"

static int is_buffer(Launcher *self, PyTypeObject *t)
{
    return in_types(self->buffer_array, self->nbuffer, t);
}

/* the low `size` bytes of v, little-endian (hot.h): a store, not a libc memcpy call */
static inline void put(char *out, unsigned long long v, Py_ssize_t size)
{
    switch (size) {
    case 8: { uint64_t x = v; memcpy(out, &x, 8); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(out, &x, 4); break; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(out, &x, 2); break; }
    case 1: *out = (char)v; break;
    default: memcpy(out, &v, (size_t)size);
    }
}

int pack_one(Launcher *self, const Param *q, PyObject *a, char *out)
{
    PyTypeObject *t = Py_TYPE(a);
    if (q->what == P_PTR) {
        unsigned long long v;
        PyObject *p = NULL;
        if (a == Py_None) {
            v = 0;
        } else {
            PyObject *src = a;
            if (!PyLong_CheckExact(a)) {
                /* rocpy's buffers: .ptr is their _h (None once closed: Python raises) */
                int own = is_buffer(self, t);
                p = own ? member_read(&mem_h, a) : PyObject_GetAttr(a, str_ptr);
                if (!p) {
                    PyErr_Clear();
                    return 0;
                }
                src = p;
                if (!PyLong_CheckExact(src)) {
                    Py_DECREF(p);
                    return 0;
                }
            }
            v = PyLong_AsUnsignedLongLong(src);
            Py_XDECREF(p);
            if (v == (unsigned long long)-1 && PyErr_Occurred()) {
                PyErr_Clear();
                return 0;
            }
            if (q->size < 8 && v >> (8 * q->size))
                return 0;
        }
        put(out, v, q->size);
        return 1;
    }
    if (q->what == P_INT) {
        unsigned long long bits;
        if (PyLong_CheckExact(a)) {
            int ovf;
            long long v = PyLong_AsLongLongAndOverflow(a, &ovf);
            if (ovf < 0 || (v == -1 && PyErr_Occurred())) {
                PyErr_Clear();
                return 0;
            }
            if (ovf > 0) {   /* above INT64_MAX: only an unsigned/untyped 8-byte bound admits it */
                if (!(q->hi == 0 && !q->hi_signed))
                    return 0;
                bits = PyLong_AsUnsignedLongLong(a);
                if (PyErr_Occurred()) {
                    PyErr_Clear();
                    return 0;
                }
            } else {
                if (v < q->lo)
                    return 0;
                if (q->hi != 0 && v >= 0 && (unsigned long long)v >= q->hi)
                    return 0;
                bits = (unsigned long long)v;
            }
        } else if (t == &PyBool_Type) {
            bits = a == Py_True;
        } else if (in_types(q->numpy_types, q->nnumpy, t)) {
            PyObject *i = PyNumber_Index(a);
            if (!i) {
                PyErr_Clear();
                return 0;
            }
            bits = PyLong_AsUnsignedLongLongMask(i);
            Py_DECREF(i);
            if (PyErr_Occurred()) {
                PyErr_Clear();
                return 0;
            }
        } else if (q->untyped && q->size == 8 && (is_buffer(self, t) ||
                   (self->pointer_types != Py_None &&
                    PySet_Contains(self->pointer_types, (PyObject *)t) == 1))) {
            Param as_ptr_param = *q;
            as_ptr_param.what = P_PTR;
            return pack_one(self, &as_ptr_param, a, out);
        } else {
            PyErr_Clear();
            return 0;
        }
        put(out, bits, q->size);
        return 1;
    }
    if (q->what == P_FLOAT) {
        double d;
        if (PyFloat_CheckExact(a)) {
            d = PyFloat_AsDouble(a);
        } else if (in_types(q->numpy_types, q->nnumpy, t)) {
            PyObject *f = PyNumber_Float(a);
            if (!f) {
                PyErr_Clear();
                return 0;
            }
            d = PyFloat_AsDouble(f);
            Py_DECREF(f);
        } else {
            PyErr_Clear();
            return 0;
        }
        if (!isfinite(d))
            return 0;     /* infinities, NaN payloads: struct's rules, in Python */
        if (q->size == 8) {
            memcpy(out, &d, 8);
            return 1;
        }
        if (q->size == 4) {
            float f = (float)d;   /* PyFloat_Pack4: round to nearest, refuse overflow */
            if (isinf(f))
                return 0;
            memcpy(out, &f, 4);
            return 1;
        }
        return 0;
    }
    if (q->what == P_RAW) {
        if (PyBytes_CheckExact(a) && PyBytes_Size(a) == q->size) {
            memcpy(out, PyBytes_AsString(a), q->size);
            return 1;
        }
        /* an 8-byte slot of unknown type takes a pointer (argconv._untyped): None and
         * rocpy buffers here (NVIDIA's parameter info has sizes only, so every pointer
         * parameter there is such a slot); other pointer kinds go to Python */
        if (q->size == 8 && (a == Py_None || is_buffer(self, t))) {
            Param as_ptr_param = *q;
            as_ptr_param.what = P_PTR;
            return pack_one(self, &as_ptr_param, a, out);
        }
#if Py_LIMITED_API >= 0x030B0000
        /* a parameter of unknown type: a numpy scalar of its width gives its bytes
         * (argconv._untyped); the buffer protocol needs the 3.11 limited API */
        if (in_types(q->numpy_types, q->nnumpy, t)) {
            Py_buffer view;
            if (PyObject_GetBuffer(a, &view, PyBUF_SIMPLE) < 0) {
                PyErr_Clear();
                return 0;
            }
            int ok = view.len == q->size && view.buf != NULL;
            if (ok)
                memcpy(out, view.buf, q->size);
            PyBuffer_Release(&view);
            return ok;
        }
#endif
        return 0;
    }
    return 0;
}
