/* Symbols (hipamd hip_memory.cpp ihipMemcpySymbol_validate,
 * hipMemcpy{To,From}Symbol[Async|_spt]; hip_platform.cpp
 * hipGetSymbolAddress/Size; StatCO::getStatGlobalVar at rocm-5.2.3).
 *
 * A symbol is the address of a host variable that fat-binary registration
 * tied to a device copy (__hipRegisterVar); an address nobody registered is
 * hipErrorInvalidSymbol.  Looked up first in the table filled through
 * rocpy_stub_register_symbol (a module global's device memory under a host
 * key), then in what fat-binary registration registered (hip_fatbin.c).  Variables of
 * modules loaded with hipModuleLoad are found by name with
 * hipModuleGetGlobal, never here (as in hipamd). */
#include <string.h>

#include "hip_internal.h"
#include "hip_fatbin.h"
#include "hip_symbol.h"

typedef struct symbol {
    const void *host;
    void *device;
    size_t size;
} symbol_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static symbol_t *table;
static size_t count, cap;

int rocpy_stub_register_symbol(const void *host_var, void *device_ptr, size_t size) {
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < count; i++) {
        if (table[i].host == host_var) {
            table[i] = (symbol_t){host_var, device_ptr, size};
            pthread_mutex_unlock(&lock);
            return 0;
        }
    }
    if (count == cap) {
        size_t n = cap ? cap * 2 : 16;
        symbol_t *t = realloc(table, n * sizeof *t);
        if (!t) {
            pthread_mutex_unlock(&lock);
            return -1;
        }
        table = t;
        cap = n;
    }
    table[count++] = (symbol_t){host_var, device_ptr, size};
    pthread_mutex_unlock(&lock);
    return 0;
}

void rocpy_stub_unregister_symbol(const void *host_var) {
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < count; i++)
        if (table[i].host == host_var) table[i--] = table[--count];
    pthread_mutex_unlock(&lock);
}

static hipError_t lookup(const void *symbol, void **dev, size_t *size) {
    hipError_t status = hipErrorInvalidSymbol;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < count; i++) {
        if (table[i].host == symbol) {
            *dev = table[i].device;
            *size = table[i].size;
            status = hipSuccess;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    /* then what hipcc's constructor registered (hip_fatbin.c), on the
     * calling thread's device as StatCO::getStatGlobalVar(ihipGetDevice()) */
    if (status != hipSuccess) status = hip_fatbin_variable(symbol, hip_current_dev()->id, dev, size);
    return status;
}

/* ihipMemcpySymbol_validate: the symbol, then offset + size within it */
hipError_t hip_symbol_resolve(const void *symbol, size_t size, size_t offset, char **at) {
    void *dev;
    size_t sym_size;
    HIP_RETURN_ONFAIL(lookup(symbol, &dev, &sym_size));
    if (offset > sym_size || size > sym_size - offset) return hipErrorInvalidValue;
    *at = (char *)dev + offset;
    return hipSuccess;
}

static hipError_t symbol_copy(hipStream_t stream, bool to_symbol, const void *symbol, void *host,
                              size_t size, size_t offset, hipMemcpyKind kind, bool sync_api) {
    hip_stream_t *s;
    bool capturing;
    char *at = NULL;
    if (sync_api) {
        HIP_RETURN_ONFAIL(hip_capture_check_sync());
        HIP_RETURN_ONFAIL(hip_symbol_resolve(symbol, size, offset, &at));
        HIP_RETURN_ONFAIL(hip_stream_resolve(stream, &s));
        return to_symbol ? hip_memcpy_on(s, at, host, size, kind, false)
                         : hip_memcpy_on(s, host, at, size, kind, false);
    }
    HIP_RETURN_ONFAIL(hip_stream_begin_op(stream, &s, &capturing));
    HIP_RETURN_ONFAIL(hip_symbol_resolve(symbol, size, offset, &at));
    if (capturing) {
        hip_memcpy1d_params_t p = {to_symbol ? at : host, to_symbol ? host : at, size, kind};
        return hip_capture_node(s, hip_make_memcpy1d_node, &p);
    }
    return to_symbol ? hip_memcpy_on(s, at, host, size, kind, true)
                     : hip_memcpy_on(s, host, at, size, kind, true);
}

hipError_t hipMemcpyToSymbol(const void *symbol, const void *src, size_t sizeBytes, size_t offset,
                             hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN(symbol_copy(NULL, true, symbol, (void *)src, sizeBytes, offset, kind, true));
}

hipError_t hipMemcpyToSymbol_spt(const void *symbol, const void *src, size_t sizeBytes,
                                 size_t offset, hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN(symbol_copy(hipStreamPerThread, true, symbol, (void *)src, sizeBytes, offset, kind,
                           true));
}

hipError_t hipMemcpyToSymbolAsync(const void *symbol, const void *src, size_t sizeBytes,
                                  size_t offset, hipMemcpyKind kind, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(symbol_copy(stream, true, symbol, (void *)src, sizeBytes, offset, kind, false));
}

hipError_t hipMemcpyFromSymbol(void *dst, const void *symbol, size_t sizeBytes, size_t offset,
                               hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN(symbol_copy(NULL, false, symbol, dst, sizeBytes, offset, kind, true));
}

hipError_t hipMemcpyFromSymbol_spt(void *dst, const void *symbol, size_t sizeBytes, size_t offset,
                                   hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN(symbol_copy(hipStreamPerThread, false, symbol, dst, sizeBytes, offset, kind, true));
}

hipError_t hipMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t sizeBytes,
                                    size_t offset, hipMemcpyKind kind, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(symbol_copy(stream, false, symbol, dst, sizeBytes, offset, kind, false));
}

/* a null devPtr / size is hipErrorInvalidValue (hipamd writes through it) */
hipError_t hipGetSymbolAddress(void **devPtr, const void *symbol) {
    HIP_INIT_API();
    void *dev;
    size_t size;
    HIP_RETURN_ONFAIL(lookup(symbol, &dev, &size));
    if (!devPtr) HIP_RETURN(hipErrorInvalidValue);
    *devPtr = dev;
    HIP_RETURN(hipSuccess);
}

hipError_t hipGetSymbolSize(size_t *size, const void *symbol) {
    HIP_INIT_API();
    void *dev;
    size_t sym_size;
    HIP_RETURN_ONFAIL(lookup(symbol, &dev, &sym_size));
    if (!size) HIP_RETURN(hipErrorInvalidValue);
    *size = sym_size;
    HIP_RETURN(hipSuccess);
}
