/* A readable report of GPU memory faults, before the runtime aborts.
 *
 * rocpy.hsa.Runtime registers rocpy_hsa_report_system_event with
 * hsa_amd_register_system_event_handler.  On a GPU memory fault ROCr
 * (Runtime::VMFaultHandler) calls the system event handlers on its own
 * async-events thread and then, unless one returned HSA_STATUS_SUCCESS,
 * prints its message and aborts the process.
 *
 * The report is written to stderr from C, right here: the process dies as
 * soon as the handlers return, so rocpy's dispatcher thread would never get
 * to run a Python callback, and calling into Python on the runtime's thread
 * (a cffi callback taking the GIL) could deadlock against a Python thread
 * that holds the GIL while it waits for that very runtime.  The handler
 * returns HSA_STATUS_ERROR ("not handled"): the runtime still aborts, as it
 * would without rocpy, unless a Python handler registered with
 * hsa.Runtime.on_system_event (the hook below) handled it.  The same fault reported twice (a handler registered
 * again by a later Runtime while the runtime stayed open) prints once. */
#ifndef ROCPY_FAST_HSA_FAULT_H
#define ROCPY_FAST_HSA_FAULT_H

#include <stdint.h>

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

hsa_status_t rocpy_hsa_report_system_event(const hsa_amd_event_t *event, void *data);
/* rocpy.hsa.events' Python dispatcher (a cffi callback, holding the GIL
 * while it runs), called first; NULL: none.  Its HSA_STATUS_SUCCESS means
 * handled: no report, and the runtime does not abort. */
void rocpy_hsa_set_event_hook(hsa_amd_system_event_callback_t fn, void *data);
/* How many events were reported (printed) so far. */
uint64_t rocpy_hsa_reported_events(void);
/* The text of a fault reason mask ("page not present, ..."), into buf. */
void rocpy_hsa_fault_reason_text(uint32_t mask, char *buf, uint32_t size);

#endif
