/* Device resources and execution (green) contexts: what hip_dev_resource.c
 * and hip_exec_ctx.c share.  ROCm 7.2's clr, hipamd/src/hip_executionctx.cpp
 * (class hip::ExecutionCtx) is the specification; headers that do not declare
 * hipGreenCtxCreate build none of it. */
#ifndef ROCPY_STUB_HIP_EXEC_CTX_H
#define ROCPY_STUB_HIP_EXEC_CTX_H

#include "hip_internal.h"

#ifdef ROCPY_HAVE_hipGreenCtxCreate

/* A descriptor made by hipDevResourceGenerateDesc (hip::DevResourceDesc). */
typedef struct hip_res_desc {
    uint32_t magic;
    int device;
    unsigned count;
    atomic_int owners;                /* live contexts made from it */
    hipDevResource res[];             /* copies of the resources it was made of */
} hip_res_desc_t;

/* ExecutionCtx::getSmAlignment: 2 CUs per scheduling granule in WGP mode
 * (ROCclr's enableWgpMode_, on from gfx10), else 1. */
unsigned hip_res_sm_alignment(int device);
/* ExecutionCtx::getTotalCuCount. */
unsigned hip_res_total_cus(int device);
/* ExecutionCtx::deviceGetDevResource without the API frame. */
hipError_t hip_res_of_device(int device, hipDevResource *res, hipDevResourceType type);
/* The first CU of a tagged resource (its split's bookkeeping; 0 if none). */
unsigned hip_res_start_cu(const hipDevResource *res);
/* A live descriptor: its handle resolved, or NULL. */
hip_res_desc_t *hip_res_desc_resolve(hipDevResourceDesc_t handle);
/* A context made from d is gone: the last owner frees it. */
void hip_res_desc_release(hip_res_desc_t *d);
/* A context takes d (it stays live until every such context is destroyed). */
void hip_res_desc_retain(hip_res_desc_t *d);

#endif
#endif
