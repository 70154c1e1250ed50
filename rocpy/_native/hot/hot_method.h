/* rocpy._hot: compiled methods (hot_method.c the descriptor type, hot_signal.c HSA
 * Signal's kinds): what their files share. */
#ifndef ROCPY_HOT_METHOD_H
#define ROCPY_HOT_METHOD_H

#include "hot_launch.h"

/* Vectorcall (PEP 590) as the 3.12 limited API spells it; 3.10's and 3.11's limited
 * API lack the names, not the ABI (tp_vectorcall_offset, the flag bits and the calling
 * convention are the same since 3.8), and PyType_FromSpec takes `__vectorcalloffset__`
 * from Py_tp_members since 3.9. */
typedef PyObject *(*hot_vectorcallfunc)(PyObject *, PyObject *const *, size_t, PyObject *);
#define HOT_TPFLAGS_HAVE_VECTORCALL (1UL << 11)
#define HOT_TPFLAGS_METHOD_DESCRIPTOR (1UL << 17)
#define HOT_VECTORCALL_ARGUMENTS_OFFSET ((size_t)1 << (8 * sizeof(size_t) - 1))

enum {
    EVENT_QUERY, EVENT_RECORD, STREAM_QUERY, COPY_FROM, COPY_TO, KERNEL_LAUNCH,
    SIGNAL_LOAD, SIGNAL_STORE, SIGNAL_SILENT_STORE, STREAM_SYNC, EVENT_SYNC, N_KINDS
};

typedef struct {
    void *fn;                  /* the runtime function (the default memory order's) */
    PyObject *fallback;        /* the Python definition: fallback(self, *args, **kwargs) */
    PyTypeObject *owner;       /* the class whose instances the fast case takes */
    int not_ready;             /* hipErrorNotReady of the backend */
    Member aux[4];             /* slots: EVENT_*: Event's `_addr`;
                                  STREAM_QUERY: the stream's `_pending`, PendingList's
                                  `_entries`; KERNEL_LAUNCH: Kernel's `_launcher`;
                                  SIGNAL_*: Handle's `_h`, Signal's `_bad`, `_hv`;
                                  STREAM_SYNC: `_pending`, `_entries`, Stream's
                                  `_cb_seen`, `_more_errors`; EVENT_SYNC: Event's
                                  `_addr`, `_dev`, Device's `_index` */
    uint64_t spin_ns, slice_ns; /* STREAM_SYNC, EVENT_SYNC: rocpy_wait's first spin, slice */
    PyObject *extra;           /* EVENT_RECORD: the Stream type the fast case takes;
                                  STREAM_QUERY: PendingList's `_entries` (aux[1]);
                                  SIGNAL_*: {memory order name: function address};
                                  STREAM_SYNC, EVENT_SYNC: (_wait.captures,
                                  _wait._abandoned, SPIN_NS, SLICE_NS) */
} MethodState;

extern MethodState method_state[N_KINDS];

/* fallback(self, *args, **kwnames): the Python definition, given what the call got */
PyObject *method_fallback(int kind, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames);
/* slot aux[i] of kind's state read on obj (member_read) */
PyObject *method_aux(int kind, int i, PyObject *obj);

/* An open stream's lane ready for a fast case: 1 and *lane_o (new), 0 not, -1 error */
int stream_ready_lane(PyObject *self, PyObject **lane_o);

/* pending.poll() where its `_entries` (kind's aux[1]) has any; 0 ok, -1 error */
int poll_pending(int kind, PyObject *pending);

/* An open Event's hipEvent_t (kind's aux[0], `_addr`): 1 and *addr, 0 closed, -1 error */
int event_addr(PyObject *ev, int kind, void **addr);

/* hot_sync.c: Stream.sync and Event.sync (self, args, nargs, kwnames); fn: rocpy_wait */
PyObject *stream_sync(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames);
PyObject *event_sync(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames);

/* hot_signal.c: Signal.load / store / silent_store (self, args, nargs, kwnames) */
PyObject *signal_load(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames);
PyObject *signal_store(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames);
PyObject *signal_silent_store(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames);

#endif
