/* The per-thread-default-stream (_spt) forms that the headers of 5.7 on
 * declare beyond 5.2's (amd_detail/amd_hip_runtime_pt_api.h): clr defines
 * each as its plain form after PER_THREAD_DEFAULT_STREAM(stream), which
 * takes a null stream for the thread's default stream (hipamd/src/
 * hip_memory.cpp, hip_stream.cpp, hip_graph.cpp, hip_event.cpp).  Each is
 * compiled only where the headers declare it (rocpy_features.h). */
#include "hip_internal.h"

#define SPT(stream) ((stream) == NULL ? hipStreamPerThread : (stream))

#ifdef ROCPY_HAVE_hipMemsetAsync_spt
hipError_t hipMemsetAsync_spt(void *dst, int value, size_t sizeBytes, hipStream_t stream) {
    return hipMemsetAsync(dst, value, sizeBytes, SPT(stream));
}
#endif

#ifdef ROCPY_HAVE_hipMemset2DAsync_spt
hipError_t hipMemset2DAsync_spt(void *dst, size_t pitch, int value, size_t width, size_t height,
                                hipStream_t stream) {
    return hipMemset2DAsync(dst, pitch, value, width, height, SPT(stream));
}
#endif

#ifdef ROCPY_HAVE_hipMemset3DAsync_spt
hipError_t hipMemset3DAsync_spt(hipPitchedPtr pitchedDevPtr, int value, hipExtent extent,
                                hipStream_t stream) {
    return hipMemset3DAsync(pitchedDevPtr, value, extent, SPT(stream));
}
#endif

#ifdef ROCPY_HAVE_hipMemcpy3DAsync_spt
hipError_t hipMemcpy3DAsync_spt(const hipMemcpy3DParms *p, hipStream_t stream) {
    return hipMemcpy3DAsync(p, SPT(stream));
}
#endif

#ifdef ROCPY_HAVE_hipMemcpy2DAsync_spt
hipError_t hipMemcpy2DAsync_spt(void *dst, size_t dpitch, const void *src, size_t spitch,
                                size_t width, size_t height, hipMemcpyKind kind,
                                hipStream_t stream) {
    return hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, SPT(stream));
}
#endif

#ifdef ROCPY_HAVE_hipMemcpyFromSymbolAsync_spt
hipError_t hipMemcpyFromSymbolAsync_spt(void *dst, const void *symbol, size_t sizeBytes,
                                        size_t offset, hipMemcpyKind kind, hipStream_t stream) {
    return hipMemcpyFromSymbolAsync(dst, symbol, sizeBytes, offset, kind, SPT(stream));
}
#endif

#ifdef ROCPY_HAVE_hipMemcpyToSymbolAsync_spt
hipError_t hipMemcpyToSymbolAsync_spt(const void *symbol, const void *src, size_t sizeBytes,
                                      size_t offset, hipMemcpyKind kind, hipStream_t stream) {
    return hipMemcpyToSymbolAsync(symbol, src, sizeBytes, offset, kind, SPT(stream));
}
#endif

#ifdef ROCPY_HAVE_hipMemcpy2DFromArrayAsync_spt
hipError_t hipMemcpy2DFromArrayAsync_spt(void *dst, size_t dpitch, hipArray_const_t src,
                                         size_t wOffsetSrc, size_t hOffsetSrc, size_t width,
                                         size_t height, hipMemcpyKind kind, hipStream_t stream) {
    return hipMemcpy2DFromArrayAsync(dst, dpitch, src, wOffsetSrc, hOffsetSrc, width, height,
                                     kind, SPT(stream));
}
#endif

#ifdef ROCPY_HAVE_hipMemcpy2DToArrayAsync_spt
hipError_t hipMemcpy2DToArrayAsync_spt(hipArray_t dst, size_t wOffset, size_t hOffset,
                                       const void *src, size_t spitch, size_t width,
                                       size_t height, hipMemcpyKind kind, hipStream_t stream) {
    return hipMemcpy2DToArrayAsync(dst, wOffset, hOffset, src, spitch, width, height, kind,
                                   SPT(stream));
}
#endif

#ifdef ROCPY_HAVE_hipStreamAddCallback_spt
hipError_t hipStreamAddCallback_spt(hipStream_t stream, hipStreamCallback_t callback,
                                    void *userData, unsigned int flags) {
    return hipStreamAddCallback(SPT(stream), callback, userData, flags);
}
#endif

#ifdef ROCPY_HAVE_hipLaunchHostFunc_spt
hipError_t hipLaunchHostFunc_spt(hipStream_t stream, hipHostFn_t fn, void *userData) {
    return hipLaunchHostFunc(SPT(stream), fn, userData);
}
#endif

#ifdef ROCPY_HAVE_hipEventRecord_spt
hipError_t hipEventRecord_spt(hipEvent_t event, hipStream_t stream) {
    return hipEventRecord(event, SPT(stream));
}
#endif

#ifdef ROCPY_HAVE_hipGraphLaunch_spt
hipError_t hipGraphLaunch_spt(hipGraphExec_t graphExec, hipStream_t stream) {
    return hipGraphLaunch(graphExec, SPT(stream));
}
#endif

#ifdef ROCPY_HAVE_hipStreamBeginCapture_spt
hipError_t hipStreamBeginCapture_spt(hipStream_t stream, hipStreamCaptureMode mode) {
    return hipStreamBeginCapture(SPT(stream), mode);
}
#endif

#ifdef ROCPY_HAVE_hipStreamEndCapture_spt
hipError_t hipStreamEndCapture_spt(hipStream_t stream, hipGraph_t *pGraph) {
    return hipStreamEndCapture(SPT(stream), pGraph);
}
#endif

#ifdef ROCPY_HAVE_hipStreamIsCapturing_spt
hipError_t hipStreamIsCapturing_spt(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus) {
    return hipStreamIsCapturing(SPT(stream), pCaptureStatus);
}
#endif

#ifdef ROCPY_HAVE_hipStreamGetCaptureInfo_spt
hipError_t hipStreamGetCaptureInfo_spt(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus,
                                       unsigned long long *pId) {
    return hipStreamGetCaptureInfo(SPT(stream), pCaptureStatus, pId);
}
#endif

#ifdef ROCPY_HAVE_hipStreamGetCaptureInfo_v2_spt
hipError_t hipStreamGetCaptureInfo_v2_spt(hipStream_t stream,
                                          hipStreamCaptureStatus *captureStatus_out,
                                          unsigned long long *id_out, hipGraph_t *graph_out,
                                          const hipGraphNode_t **dependencies_out,
                                          size_t *numDependencies_out) {
    return hipStreamGetCaptureInfo_v2(SPT(stream), captureStatus_out, id_out, graph_out,
                                      dependencies_out, numDependencies_out);
}
#endif
