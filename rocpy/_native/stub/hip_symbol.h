/* Registered device variables (hip_symbol.c): what hipMemcpyToSymbol & co
 * look host symbols up in. */
#ifndef ROCPY_STUB_HIP_SYMBOL_H
#define ROCPY_STUB_HIP_SYMBOL_H

#include <stddef.h>

/* Register a host variable's device copy, as __hipRegisterVar does (the
 * stub's fat-binary registration, to come, and tests through Python).
 * Returns 0, or -1 when out of memory. */
int rocpy_stub_register_symbol(const void *host_var, void *device_ptr, size_t size);
/* Forget a registered variable. */
void rocpy_stub_unregister_symbol(const void *host_var);

#endif
