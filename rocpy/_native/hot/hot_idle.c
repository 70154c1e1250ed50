/* rocpy._hot: "the legacy null stream is idle", as far as rocpy knows.
 *
 * A synchronous copy or fill runs on the legacy null stream, which first waits for
 * the device's blocking streams (hipamd: ihipMemcpy on hip::getNullStream(), whose
 * commands wait for the other streams' last commands, iHipWaitActiveStreams).  rocpy
 * waits for that earlier work itself first, interruptibly (rocpy/hip/_copy.py
 * `on_null`), and the copy then only does its own part.  That pre-wait needs a
 * reason: per device, `marked` counts the enqueues rocpy made (every stream, every
 * path: the compiled lane_hold, Python's Stream._hold, Stream.wait ...) and `covered`
 * the count a completed null-stream wait began after.  Equal: nothing rocpy enqueued
 * is pending, no query and no wait are needed.  Work rocpy cannot see (raw
 * rocpy.hip.lib calls, other libraries) is still ordered by the runtime's own
 * implicit sync; only its wait is then not interruptible.
 *
 * The counters are changed with the GIL held (every enqueuer holds it), so plain
 * integers suffice; a mark made while a synchronous call runs (GIL released) stays
 * above what that call covers, since `covered` takes the count read before it.
 * Devices past HOT_MAX_DEV are never idle. */
#include "hot.h"

static unsigned long long marked[HOT_MAX_DEV], covered[HOT_MAX_DEV];

void idle_mark(int dev)
{
    if (dev >= 0 && dev < HOT_MAX_DEV)
        marked[dev]++;
}

int idle_is(int dev)
{
    return dev >= 0 && dev < HOT_MAX_DEV && marked[dev] == covered[dev];
}

static int dev_arg(PyObject *o, int *dev)
{
    long d = PyLong_AsLong(o);
    if (d == -1 && PyErr_Occurred())
        return -1;
    *dev = d < 0 || d >= HOT_MAX_DEV ? -1 : (int)d;
    return 0;
}

/* mark(dev): rocpy enqueued work on a stream of device dev */
PyObject *py_idle_mark(PyObject *m, PyObject *o)
{
    int dev;
    if (dev_arg(o, &dev) < 0)
        return NULL;
    idle_mark(dev);
    Py_RETURN_NONE;
}

/* marks(dev) -> int: the enqueues counted so far (what a wait beginning now covers) */
PyObject *py_idle_marks(PyObject *m, PyObject *o)
{
    int dev;
    if (dev_arg(o, &dev) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(dev < 0 ? 0 : marked[dev]);
}

/* cover(dev, n): a null-stream wait that began when marks(dev) was n completed */
PyObject *py_idle_cover(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    CHECK_N(2, "cover");
    int dev;
    if (dev_arg(args[0], &dev) < 0)
        return NULL;
    unsigned long long n = PyLong_AsUnsignedLongLong(args[1]);
    if (PyErr_Occurred())
        return NULL;
    if (dev >= 0 && n > covered[dev] && n <= marked[dev])
        covered[dev] = n;
    Py_RETURN_NONE;
}

/* idle(dev) -> bool: nothing rocpy enqueued on device dev is pending */
PyObject *py_idle_is(PyObject *m, PyObject *o)
{
    int dev;
    if (dev_arg(o, &dev) < 0)
        return NULL;
    return PyBool_FromLong(idle_is(dev));
}
