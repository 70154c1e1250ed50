#ifndef SYNTH_HIPRTC_H
#define SYNTH_HIPRTC_H
typedef enum hiprtcResult { HIPRTC_SUCCESS = 0, HIPRTC_ERROR_INTERNAL_ERROR = 11 } hiprtcResult;
const char *hiprtcGetErrorString(hiprtcResult result);
#endif
