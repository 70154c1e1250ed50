/* Managed memory hints (hipamd hip_hmm.cpp at rocm-5.2.3: hipMemPrefetchAsync,
 * hipMemAdvise, hipMemRangeGetAttribute[s], hipStreamAttachMemAsync; ROCclr
 * SetSvmAttributes/GetSvmAttributes over ROCr's SVM attributes).
 *
 * The stub keeps, per managed allocation, what the hints set: read-mostly,
 * the preferred location, the devices that access it, the coherency mode and
 * the last prefetch location (set when the stream reaches the prefetch).  A
 * hint or query on a range applies to the allocation holding it; a range
 * that is not inside one managed allocation is hipErrorInvalidValue (ROCr
 * refuses SVM attributes on memory that is not SVM).  Pages never move:
 * the stub's memory is the host's. */
#include <string.h>

#include "hip_internal.h"

typedef struct hints {
    uintptr_t base;
    bool read_mostly, coarse;
    int preferred;                    /* hipInvalidDeviceId when unset */
    int last_prefetch;                /* hipInvalidDeviceId before a prefetch */
    uint64_t accessed_by;             /* bit i: device i; bit 63: the CPU */
} hints_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static hints_t *table;
static size_t count, cap;

/* The hints of the managed allocation holding [ptr, ptr + size), created on
 * first use (stale entries of freed allocations are reset); call locked. */
static hints_t *hints_of(const void *ptr, size_t size) {
    stub_alloc_t a;
    if (!ptr || !stub_mem_find(ptr, &a) || a.kind != STUB_MEM_MANAGED) return NULL;
    if (size > a.size - ((uintptr_t)ptr - a.base)) return NULL;
    for (size_t i = 0; i < count; i++)
        if (table[i].base == a.base) return &table[i];
    if (count == cap) {
        size_t n = cap ? cap * 2 : 16;
        hints_t *t = realloc(table, n * sizeof *t);
        if (!t) return NULL;
        table = t;
        cap = n;
    }
    table[count] = (hints_t){a.base, false, false, hipInvalidDeviceId, hipInvalidDeviceId, 0};
    return &table[count++];
}

/* a freed allocation's hints go with it */
static void forget_stale(void) {
    for (size_t i = 0; i < count; i++) {
        stub_alloc_t a;
        if (!stub_mem_find((void *)table[i].base, &a) || a.base != table[i].base ||
            a.kind != STUB_MEM_MANAGED)
            table[i--] = table[--count];
    }
}

static bool device_ok(int device) { return device == hipCpuDeviceId || hip_dev(device); }

static uint64_t device_bit(int device) {
    return device == hipCpuDeviceId ? 1ull << 63 : 1ull << device;
}

typedef struct prefetch {
    const void *ptr;
    size_t size;
    int device;
} prefetch_t;

static void run_prefetch(hip_op_t *op) {
    prefetch_t *p = HIP_OP_DATA(op, prefetch_t);
    pthread_mutex_lock(&lock);
    hints_t *h = hints_of(p->ptr, p->size);
    if (h) h->last_prefetch = p->device;
    pthread_mutex_unlock(&lock);
}

/* hipamd's order: pointer and count, the stream (hipErrorContextIsDestroyed),
 * the range inside tracked memory, the device (hipErrorInvalidDevice) */
hipError_t hipMemPrefetchAsync(const void *dev_ptr, size_t count_, int device,
                               hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    if (!dev_ptr || count_ == 0) HIP_RETURN(hipErrorInvalidValue);
    hip_stream_t *s;
    if (hip_stream_resolve(stream, &s) != hipSuccess) HIP_RETURN(hipErrorContextIsDestroyed);
    stub_alloc_t a;
    if (!stub_mem_find(dev_ptr, &a) || count_ > a.size - ((uintptr_t)dev_ptr - a.base))
        HIP_RETURN(hipErrorInvalidValue);
    if (!device_ok(device)) HIP_RETURN(hipErrorInvalidDevice);
    hip_op_t *op = hip_op_new(run_prefetch, sizeof(prefetch_t));
    if (!op) HIP_RETURN(hipErrorOutOfMemory);
    *HIP_OP_DATA(op, prefetch_t) = (prefetch_t){dev_ptr, count_, device};
    hip_stream_submit(s, op);
    HIP_RETURN(hipSuccess);
}

hipError_t hipMemAdvise(const void *dev_ptr, size_t count_, hipMemoryAdvise advice, int device) {
    HIP_INIT_API();
    if (!dev_ptr || count_ == 0 || !device_ok(device)) HIP_RETURN(hipErrorInvalidValue);
    pthread_mutex_lock(&lock);
    forget_stale();
    hints_t *h = hints_of(dev_ptr, count_);
    hipError_t status = h ? hipSuccess : hipErrorInvalidValue;
    if (h) {
        switch (advice) {
        case hipMemAdviseSetReadMostly: h->read_mostly = true; break;
        case hipMemAdviseUnsetReadMostly: h->read_mostly = false; break;
        case hipMemAdviseSetPreferredLocation: h->preferred = device; break;
        case hipMemAdviseUnsetPreferredLocation: h->preferred = hipInvalidDeviceId; break;
        case hipMemAdviseSetAccessedBy: h->accessed_by |= device_bit(device); break;
        case hipMemAdviseUnsetAccessedBy: h->accessed_by &= ~device_bit(device); break;
        case hipMemAdviseSetCoarseGrain: h->coarse = true; break;
        case hipMemAdviseUnsetCoarseGrain: h->coarse = false; break;
        default: status = hipErrorInvalidValue;
        }
    }
    pthread_mutex_unlock(&lock);
    HIP_RETURN(status);
}

/* One attribute into data (data_size bytes: 4 for the single values, a
 * multiple of 4 for AccessedBy, filled with the devices and then
 * hipInvalidDeviceId as ROCclr's GetSvmAttributes does). */
static hipError_t get_attribute(const hints_t *h, hipMemRangeAttribute attr, void *data,
                                size_t size) {
    if (!data || size < 4 || size % 4) return hipErrorInvalidValue;
    if (attr != hipMemRangeAttributeAccessedBy && size != 4) return hipErrorInvalidValue;
    int32_t *out = data;
    switch (attr) {
    case hipMemRangeAttributeReadMostly: *out = h->read_mostly; return hipSuccess;
    case hipMemRangeAttributePreferredLocation: *out = h->preferred; return hipSuccess;
    case hipMemRangeAttributeLastPrefetchLocation: *out = h->last_prefetch; return hipSuccess;
    case hipMemRangeAttributeCoherencyMode:
        *out = h->coarse ? hipMemRangeCoherencyModeCoarseGrain : hipMemRangeCoherencyModeFineGrain;
        return hipSuccess;
    case hipMemRangeAttributeAccessedBy: {
        size_t n = size / 4, k = 0;
        if (h->accessed_by & (1ull << 63)) out[k++] = hipCpuDeviceId;
        for (int d = 0; d < hip_device_count() && k < n; d++)
            if (h->accessed_by & (1ull << d)) out[k++] = d;
        while (k < n) out[k++] = hipInvalidDeviceId;
        return hipSuccess;
    }
    default: return hipErrorInvalidValue;
    }
}

hipError_t hipMemRangeGetAttribute(void *data, size_t data_size, hipMemRangeAttribute attribute,
                                   const void *dev_ptr, size_t count_) {
    HIP_INIT_API();
    if (!data || data_size == 0 || !dev_ptr || count_ == 0) HIP_RETURN(hipErrorInvalidValue);
    pthread_mutex_lock(&lock);
    forget_stale();
    hints_t *h = hints_of(dev_ptr, count_);
    hipError_t status = h ? get_attribute(h, attribute, data, data_size) : hipErrorInvalidValue;
    pthread_mutex_unlock(&lock);
    HIP_RETURN(status);
}

hipError_t hipMemRangeGetAttributes(void **data, size_t *data_sizes,
                                    hipMemRangeAttribute *attributes, size_t num_attributes,
                                    const void *dev_ptr, size_t count_) {
    HIP_INIT_API();
    if (!data || !data_sizes || !attributes || num_attributes == 0 || !dev_ptr || count_ == 0)
        HIP_RETURN(hipErrorInvalidValue);
    pthread_mutex_lock(&lock);
    forget_stale();
    hints_t *h = hints_of(dev_ptr, count_);
    hipError_t status = h ? hipSuccess : hipErrorInvalidValue;
    for (size_t i = 0; status == hipSuccess && i < num_attributes; i++)
        status = get_attribute(h, attributes[i], data[i], data_sizes[i]);
    pthread_mutex_unlock(&lock);
    HIP_RETURN(status);
}

/* hipamd checks the arguments and does nothing else ("Unclear what should be
 * done for this interface in AMD HMM"); the null stream is refused there */
hipError_t hipStreamAttachMemAsync(hipStream_t stream, void *dev_ptr, size_t length,
                                   unsigned int flags) {
    (void)flags;
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    if (!stream || !dev_ptr || length == 0) HIP_RETURN(hipErrorInvalidValue);
    hip_stream_t *s;
    HIP_RETURN_ONFAIL(hip_stream_resolve(stream, &s));
    HIP_RETURN(hipSuccess);
}
