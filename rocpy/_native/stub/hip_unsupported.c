/* What the stub cannot model, in one place: the functions below return
 * hipErrorNotSupported, hipamd's status for a feature the device lacks
 * (hip_texture.cpp: "Texture not supported on the device" when
 * !info.imageSupport_), after HIP_INIT_API, so the status is also the
 * thread's last error.  The table `table` names each one with
 * the reason; Python reads it as rocpy.hip.stub_unsupported, and
 * ARCHITECTURE.md shows the groups.  Functions the stub implements but for
 * one case name that case in `partial` (hiprtc's compiler, IPC memory of
 * another process). */
#include "hip_internal.h"
#include "hip_unsupported.h"

static const char *const reasons[] = {
    [ROCPY_UNSUPPORTED_TEXTURE] = "texture objects and references: the stub runs kernels as C emulations, which have no image sampler to read a texture through",
    [ROCPY_UNSUPPORTED_MIPMAP] = "mipmapped arrays exist only for texture sampling (hipamd builds them as ROCclr images with mip levels)",
    [ROCPY_UNSUPPORTED_GL] = "OpenGL interop: the stub has no OpenGL context to share buffers or images with",
    [ROCPY_UNSUPPORTED_EXTERNAL] = "external memory and semaphores (Vulkan/DirectX file descriptors): the stub has no other API's handles to import",
    [ROCPY_UNSUPPORTED_VMM] = "virtual memory management: hipamd 5.2's hip_vm.cpp accepts hipMemAddressReserve/hipMemSetAccess/hipMemUnmap without doing anything; the stub refuses instead of pretending to map",
    [ROCPY_UNSUPPORTED_POOLSHARE] = "sharing memory pools between processes: hipamd 5.2's hip_mempool.cpp returns hipSuccess without exporting or importing anything; the stub refuses instead of handing back an unusable handle",
    [ROCPY_UNSUPPORTED_TRACE] = "roctracer's API and activity callbacks: the stub has no tracing layer that would call them",
    [ROCPY_UNSUPPORTED_RTC] = "hiprtc compilation runs rocpy's compiler driver (hipcc for the code object, the host C++ compiler for the CPU build; hip_rtc_compile.c), not comgr: options only comgr takes (-ffast-math, -mcumode, ...) are dropped, and what a CPU build cannot provide (inline assembly, AMDGPU built-ins, textures) fails with HIPRTC_ERROR_COMPILATION and a log naming it",
    [ROCPY_UNSUPPORTED_DMABUF] = "dma-buf export of device memory (hipMemGetHandleForAddressRange): hipamd asks ROCr for a Linux dma-buf file descriptor of the GPU pages (hsa_amd_portable_export_dmabuf through the KFD driver); the stub's device memory is ordinary process memory with no driver to export it to another device or process",
    [ROCPY_UNSUPPORTED_IPC_PROCESS] = "IPC memory of another process: the stub's device memory is private to its process, so a handle made elsewhere returns hipErrorNotSupported (handles of this process open; IPC events work across processes)",
};

static const struct {
    const char *name;
    int group;
} table[] = {
    {"hipImportExternalSemaphore", ROCPY_UNSUPPORTED_EXTERNAL},
    {"hipSignalExternalSemaphoresAsync", ROCPY_UNSUPPORTED_EXTERNAL},
    {"hipWaitExternalSemaphoresAsync", ROCPY_UNSUPPORTED_EXTERNAL},
    {"hipDestroyExternalSemaphore", ROCPY_UNSUPPORTED_EXTERNAL},
    {"hipImportExternalMemory", ROCPY_UNSUPPORTED_EXTERNAL},
    {"hipExternalMemoryGetMappedBuffer", ROCPY_UNSUPPORTED_EXTERNAL},
    {"hipDestroyExternalMemory", ROCPY_UNSUPPORTED_EXTERNAL},
#ifdef ROCPY_HAVE_hipExternalMemoryGetMappedMipmappedArray   /* hip_unsupported_graph.c */
    {"hipExternalMemoryGetMappedMipmappedArray", ROCPY_UNSUPPORTED_EXTERNAL},
#endif
#ifdef ROCPY_HAVE_hipMemGetHandleForAddressRange   /* hip_unsupported_graph.c */
    {"hipMemGetHandleForAddressRange", ROCPY_UNSUPPORTED_DMABUF},
#endif
    {"hipFreeMipmappedArray", ROCPY_UNSUPPORTED_MIPMAP},
    {"hipMallocMipmappedArray", ROCPY_UNSUPPORTED_MIPMAP},
    {"hipGetMipmappedArrayLevel", ROCPY_UNSUPPORTED_MIPMAP},
    {"hipModuleGetTexRef", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipBindTextureToMipmappedArray", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipGetTextureReference", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipCreateTextureObject", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipDestroyTextureObject", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipGetTextureObjectResourceDesc", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipGetTextureObjectResourceViewDesc", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipGetTextureObjectTextureDesc", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefSetAddressMode", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefSetArray", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefSetFilterMode", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefSetFlags", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefSetFormat", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexObjectCreate", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexObjectDestroy", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexObjectGetResourceDesc", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexObjectGetResourceViewDesc", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexObjectGetTextureDesc", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipBindTexture", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipBindTexture2D", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipBindTextureToArray", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipGetTextureAlignmentOffset", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipUnbindTexture", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefGetAddress", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefGetAddressMode", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefGetFilterMode", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefGetFlags", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefGetFormat", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefGetMaxAnisotropy", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefGetMipmapFilterMode", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefGetMipmapLevelBias", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefGetMipmapLevelClamp", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefGetMipMappedArray", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefSetAddress", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefSetAddress2D", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefSetMaxAnisotropy", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefSetBorderColor", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefSetMipmapFilterMode", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefSetMipmapLevelBias", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefSetMipmapLevelClamp", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefSetMipmappedArray", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipMipmappedArrayCreate", ROCPY_UNSUPPORTED_MIPMAP},
    {"hipMipmappedArrayDestroy", ROCPY_UNSUPPORTED_MIPMAP},
    {"hipMipmappedArrayGetLevel", ROCPY_UNSUPPORTED_MIPMAP},
#ifdef ROCPY_HAVE_hipRegisterApiCallback   /* the tracing callbacks: gone from HIP 5.7's headers */
    {"hipRegisterApiCallback", ROCPY_UNSUPPORTED_TRACE},
    {"hipRemoveApiCallback", ROCPY_UNSUPPORTED_TRACE},
    {"hipRegisterActivityCallback", ROCPY_UNSUPPORTED_TRACE},
    {"hipRemoveActivityCallback", ROCPY_UNSUPPORTED_TRACE},
#endif
    {"hipMemAddressFree", ROCPY_UNSUPPORTED_VMM},
    {"hipMemAddressReserve", ROCPY_UNSUPPORTED_VMM},
    {"hipMemCreate", ROCPY_UNSUPPORTED_VMM},
    {"hipMemExportToShareableHandle", ROCPY_UNSUPPORTED_VMM},
    {"hipMemGetAccess", ROCPY_UNSUPPORTED_VMM},
    {"hipMemGetAllocationGranularity", ROCPY_UNSUPPORTED_VMM},
    {"hipMemGetAllocationPropertiesFromHandle", ROCPY_UNSUPPORTED_VMM},
    {"hipMemImportFromShareableHandle", ROCPY_UNSUPPORTED_VMM},
    {"hipMemMap", ROCPY_UNSUPPORTED_VMM},
    {"hipMemRelease", ROCPY_UNSUPPORTED_VMM},
    {"hipMemRetainAllocationHandle", ROCPY_UNSUPPORTED_VMM},
    {"hipMemSetAccess", ROCPY_UNSUPPORTED_VMM},
    {"hipMemUnmap", ROCPY_UNSUPPORTED_VMM},
#ifdef ROCPY_HAVE_hipGLDeviceList    /* where the runtime API headers declare the GL calls */
    {"hipGLGetDevices", ROCPY_UNSUPPORTED_GL},
    {"hipGraphicsGLRegisterBuffer", ROCPY_UNSUPPORTED_GL},
    {"hipGraphicsGLRegisterImage", ROCPY_UNSUPPORTED_GL},
#endif
    {"hipGraphicsMapResources", ROCPY_UNSUPPORTED_GL},
    {"hipGraphicsSubResourceGetMappedArray", ROCPY_UNSUPPORTED_GL},
    {"hipGraphicsResourceGetMappedPointer", ROCPY_UNSUPPORTED_GL},
    {"hipGraphicsUnmapResources", ROCPY_UNSUPPORTED_GL},
    {"hipGraphicsUnregisterResource", ROCPY_UNSUPPORTED_GL},
#ifdef ROCPY_HAVE_hipGraphAddExternalSemaphoresSignalNode   /* hip_unsupported_graph.c */
    {"hipGraphAddExternalSemaphoresSignalNode", ROCPY_UNSUPPORTED_EXTERNAL},
    {"hipGraphAddExternalSemaphoresWaitNode", ROCPY_UNSUPPORTED_EXTERNAL},
    {"hipGraphExternalSemaphoresSignalNodeGetParams", ROCPY_UNSUPPORTED_EXTERNAL},
    {"hipGraphExternalSemaphoresSignalNodeSetParams", ROCPY_UNSUPPORTED_EXTERNAL},
    {"hipGraphExternalSemaphoresWaitNodeGetParams", ROCPY_UNSUPPORTED_EXTERNAL},
    {"hipGraphExternalSemaphoresWaitNodeSetParams", ROCPY_UNSUPPORTED_EXTERNAL},
    {"hipGraphExecExternalSemaphoresSignalNodeSetParams", ROCPY_UNSUPPORTED_EXTERNAL},
    {"hipGraphExecExternalSemaphoresWaitNodeSetParams", ROCPY_UNSUPPORTED_EXTERNAL},
#endif
#ifdef ROCPY_HAVE_hipTexRefGetArray
    {"hipTexRefGetArray", ROCPY_UNSUPPORTED_TEXTURE},
    {"hipTexRefGetBorderColor", ROCPY_UNSUPPORTED_TEXTURE},
#endif
    {"hipMemPoolExportToShareableHandle", ROCPY_UNSUPPORTED_POOLSHARE},
    {"hipMemPoolImportFromShareableHandle", ROCPY_UNSUPPORTED_POOLSHARE},
    {"hipMemPoolExportPointer", ROCPY_UNSUPPORTED_POOLSHARE},
    {"hipMemPoolImportPointer", ROCPY_UNSUPPORTED_POOLSHARE},
};

/* functions the stub implements but for one case (hip_rtc.c, hip_ipc.c) */
static const struct {
    const char *name;
    int group;
} partial[] = {
    {"hiprtcCompileProgram", ROCPY_UNSUPPORTED_RTC},
    {"hipIpcOpenMemHandle", ROCPY_UNSUPPORTED_IPC_PROCESS},
};

#define COUNT(t) (sizeof t / sizeof t[0])

size_t rocpy_stub_unsupported_count(void) { return COUNT(table) + COUNT(partial); }

const char *rocpy_stub_unsupported_entry(size_t i, const char **reason, int *whole) {
    if (i >= COUNT(table) + COUNT(partial)) return NULL;
    bool all = i < COUNT(table);
    const char *name = all ? table[i].name : partial[i - COUNT(table)].name;
    int group = all ? table[i].group : partial[i - COUNT(table)].group;
    if (reason) *reason = reasons[group];
    if (whole) *whole = all;
    return name;
}

hipError_t hipImportExternalSemaphore(hipExternalSemaphore_t *extSem_out, const hipExternalSemaphoreHandleDesc *semHandleDesc) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_EXTERNAL);
}

hipError_t hipSignalExternalSemaphoresAsync(const hipExternalSemaphore_t *extSemArray, const hipExternalSemaphoreSignalParams *paramsArray, unsigned int numExtSems, hipStream_t stream) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_EXTERNAL);
}

hipError_t hipWaitExternalSemaphoresAsync(const hipExternalSemaphore_t *extSemArray, const hipExternalSemaphoreWaitParams *paramsArray, unsigned int numExtSems, hipStream_t stream) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_EXTERNAL);
}

hipError_t hipDestroyExternalSemaphore(hipExternalSemaphore_t extSem) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_EXTERNAL);
}

hipError_t hipImportExternalMemory(hipExternalMemory_t *extMem_out, const hipExternalMemoryHandleDesc *memHandleDesc) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_EXTERNAL);
}

hipError_t hipExternalMemoryGetMappedBuffer(void **devPtr, hipExternalMemory_t extMem, const hipExternalMemoryBufferDesc *bufferDesc) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_EXTERNAL);
}

hipError_t hipDestroyExternalMemory(hipExternalMemory_t extMem) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_EXTERNAL);
}

hipError_t hipFreeMipmappedArray(hipMipmappedArray_t mipmappedArray) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_MIPMAP);
}

hipError_t hipMallocMipmappedArray(hipMipmappedArray_t *mipmappedArray, const struct hipChannelFormatDesc *desc, struct hipExtent extent, unsigned int numLevels, unsigned int flags) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_MIPMAP);
}

hipError_t hipGetMipmappedArrayLevel(hipArray_t *levelArray, hipMipmappedArray_const_t mipmappedArray, unsigned int level) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_MIPMAP);
}

hipError_t hipModuleGetTexRef(textureReference **texRef, hipModule_t hmod, const char *name) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipBindTextureToMipmappedArray(const textureReference *tex, hipMipmappedArray_const_t mipmappedArray, const hipChannelFormatDesc *desc) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipGetTextureReference(const textureReference **texref, const void *symbol) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipCreateTextureObject(hipTextureObject_t *pTexObject, const hipResourceDesc *pResDesc, const hipTextureDesc *pTexDesc, const struct hipResourceViewDesc *pResViewDesc) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipDestroyTextureObject(hipTextureObject_t textureObject) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipGetTextureObjectResourceDesc(hipResourceDesc *pResDesc, hipTextureObject_t textureObject) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipGetTextureObjectResourceViewDesc(struct hipResourceViewDesc *pResViewDesc, hipTextureObject_t textureObject) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipGetTextureObjectTextureDesc(hipTextureDesc *pTexDesc, hipTextureObject_t textureObject) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefSetAddressMode(textureReference *texRef, int dim, enum hipTextureAddressMode am) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefSetArray(textureReference *tex, hipArray_const_t array, unsigned int flags) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefSetFilterMode(textureReference *texRef, enum hipTextureFilterMode fm) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefSetFlags(textureReference *texRef, unsigned int Flags) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefSetFormat(textureReference *texRef, hipArray_Format fmt, int NumPackedComponents) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexObjectCreate(hipTextureObject_t *pTexObject, const HIP_RESOURCE_DESC *pResDesc, const HIP_TEXTURE_DESC *pTexDesc, const HIP_RESOURCE_VIEW_DESC *pResViewDesc) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexObjectDestroy(hipTextureObject_t texObject) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexObjectGetResourceDesc(HIP_RESOURCE_DESC *pResDesc, hipTextureObject_t texObject) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexObjectGetResourceViewDesc(HIP_RESOURCE_VIEW_DESC *pResViewDesc, hipTextureObject_t texObject) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexObjectGetTextureDesc(HIP_TEXTURE_DESC *pTexDesc, hipTextureObject_t texObject) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipBindTexture(size_t *offset, const textureReference *tex, const void *devPtr, const hipChannelFormatDesc *desc, size_t size) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipBindTexture2D(size_t *offset, const textureReference *tex, const void *devPtr, const hipChannelFormatDesc *desc, size_t width, size_t height, size_t pitch) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipBindTextureToArray(const textureReference *tex, hipArray_const_t array, const hipChannelFormatDesc *desc) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipGetTextureAlignmentOffset(size_t *offset, const textureReference *texref) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipUnbindTexture(const textureReference *tex) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefGetAddress(hipDeviceptr_t *dev_ptr, const textureReference *texRef) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefGetAddressMode(enum hipTextureAddressMode *pam, const textureReference *texRef, int dim) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefGetFilterMode(enum hipTextureFilterMode *pfm, const textureReference *texRef) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefGetFlags(unsigned int *pFlags, const textureReference *texRef) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefGetFormat(hipArray_Format *pFormat, int *pNumChannels, const textureReference *texRef) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefGetMaxAnisotropy(int *pmaxAnsio, const textureReference *texRef) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefGetMipmapFilterMode(enum hipTextureFilterMode *pfm, const textureReference *texRef) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefGetMipmapLevelBias(float *pbias, const textureReference *texRef) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefGetMipmapLevelClamp(float *pminMipmapLevelClamp, float *pmaxMipmapLevelClamp, const textureReference *texRef) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefGetMipMappedArray(hipMipmappedArray_t *pArray, const textureReference *texRef) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefSetAddress(size_t *ByteOffset, textureReference *texRef, hipDeviceptr_t dptr, size_t bytes) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefSetAddress2D(textureReference *texRef, const HIP_ARRAY_DESCRIPTOR *desc, hipDeviceptr_t dptr, size_t Pitch) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefSetMaxAnisotropy(textureReference *texRef, unsigned int maxAniso) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefSetBorderColor(textureReference *texRef, float *pBorderColor) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefSetMipmapFilterMode(textureReference *texRef, enum hipTextureFilterMode fm) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefSetMipmapLevelBias(textureReference *texRef, float bias) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefSetMipmapLevelClamp(textureReference *texRef, float minMipMapLevelClamp, float maxMipMapLevelClamp) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefSetMipmappedArray(textureReference *texRef, struct hipMipmappedArray *mipmappedArray, unsigned int Flags) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipMipmappedArrayCreate(hipMipmappedArray_t *pHandle, HIP_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc, unsigned int numMipmapLevels) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_MIPMAP);
}

hipError_t hipMipmappedArrayDestroy(hipMipmappedArray_t hMipmappedArray) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_MIPMAP);
}

hipError_t hipMipmappedArrayGetLevel(hipArray_t *pLevelArray, hipMipmappedArray_t hMipMappedArray, unsigned int level) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_MIPMAP);
}

#ifdef ROCPY_HAVE_hipRegisterApiCallback
hipError_t hipRegisterApiCallback(uint32_t id, void *fun, void *arg) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TRACE);
}

hipError_t hipRemoveApiCallback(uint32_t id) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TRACE);
}

hipError_t hipRegisterActivityCallback(uint32_t id, void *fun, void *arg) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TRACE);
}

hipError_t hipRemoveActivityCallback(uint32_t id) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TRACE);
}
#endif

hipError_t hipMemAddressFree(void *devPtr, size_t size) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_VMM);
}

hipError_t hipMemAddressReserve(void **ptr, size_t size, size_t alignment, void *addr, unsigned long long flags) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_VMM);
}

hipError_t hipMemCreate(hipMemGenericAllocationHandle_t *handle, size_t size, const hipMemAllocationProp *prop, unsigned long long flags) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_VMM);
}

hipError_t hipMemExportToShareableHandle(void *shareableHandle, hipMemGenericAllocationHandle_t handle, hipMemAllocationHandleType handleType, unsigned long long flags) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_VMM);
}

hipError_t hipMemGetAccess(unsigned long long *flags, const hipMemLocation *location, void *ptr) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_VMM);
}

hipError_t hipMemGetAllocationGranularity(size_t *granularity, const hipMemAllocationProp *prop, hipMemAllocationGranularity_flags option) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_VMM);
}

hipError_t hipMemGetAllocationPropertiesFromHandle(hipMemAllocationProp *prop, hipMemGenericAllocationHandle_t handle) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_VMM);
}

hipError_t hipMemImportFromShareableHandle(hipMemGenericAllocationHandle_t *handle, void *osHandle, hipMemAllocationHandleType shHandleType) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_VMM);
}

hipError_t hipMemMap(void *ptr, size_t size, size_t offset, hipMemGenericAllocationHandle_t handle, unsigned long long flags) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_VMM);
}

hipError_t hipMemRelease(hipMemGenericAllocationHandle_t handle) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_VMM);
}

hipError_t hipMemRetainAllocationHandle(hipMemGenericAllocationHandle_t *handle, void *addr) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_VMM);
}

hipError_t hipMemSetAccess(void *ptr, size_t size, const hipMemAccessDesc *desc, size_t count) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_VMM);
}

hipError_t hipMemUnmap(void *ptr, size_t size) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_VMM);
}

#ifdef ROCPY_HAVE_hipGLDeviceList
hipError_t hipGLGetDevices(unsigned int *pHipDeviceCount, int *pHipDevices, unsigned int hipDeviceCount, hipGLDeviceList deviceList) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_GL);
}

hipError_t hipGraphicsGLRegisterBuffer(hipGraphicsResource **resource, GLuint buffer, unsigned int flags) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_GL);
}

hipError_t hipGraphicsGLRegisterImage(hipGraphicsResource **resource, GLuint image, GLenum target, unsigned int flags) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_GL);
}
#endif

hipError_t hipGraphicsMapResources(int count, hipGraphicsResource_t *resources, hipStream_t stream) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_GL);
}

hipError_t hipGraphicsSubResourceGetMappedArray(hipArray_t *array, hipGraphicsResource_t resource, unsigned int arrayIndex, unsigned int mipLevel) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_GL);
}

hipError_t hipGraphicsResourceGetMappedPointer(void **devPtr, size_t *size, hipGraphicsResource_t resource) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_GL);
}

hipError_t hipGraphicsUnmapResources(int count, hipGraphicsResource_t *resources, hipStream_t stream) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_GL);
}

hipError_t hipGraphicsUnregisterResource(hipGraphicsResource_t resource) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_GL);
}

hipError_t hipMemPoolExportToShareableHandle(void *shared_handle, hipMemPool_t mem_pool, hipMemAllocationHandleType handle_type, unsigned int flags) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_POOLSHARE);
}

hipError_t hipMemPoolImportFromShareableHandle(hipMemPool_t *mem_pool, void *shared_handle, hipMemAllocationHandleType handle_type, unsigned int flags) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_POOLSHARE);
}

hipError_t hipMemPoolExportPointer(hipMemPoolPtrExportData *export_data, void *dev_ptr) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_POOLSHARE);
}

hipError_t hipMemPoolImportPointer(void **dev_ptr, hipMemPool_t mem_pool, hipMemPoolPtrExportData *export_data) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_POOLSHARE);
}
