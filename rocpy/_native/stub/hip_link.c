/* Links between devices (hipamd hip_peer.cpp at rocm-5.2.3:
 * hipExtGetLinkTypeAndHopCount, hipDeviceGetP2PAttribute; ROCclr
 * roc::Device::findLinkInfo).  The stub's HSA half describes every link
 * between two different GPUs as one PCIe hop of NUMA distance 40 with 32-
 * and 64-bit atomics (hsa_pool.c); ROCclr turns that into link type PCIe and
 * a hop count of distance / 20 (one PCIe hop's distance) = 2. */
#include <hsa/hsa_ext_amd.h>

#include "hip_internal.h"

#define STUB_LINK_TYPE HSA_AMD_LINK_INFO_TYPE_PCIE
#define STUB_LINK_DISTANCE 40u
#define PCIE_HOP_DISTANCE 20u

static hipError_t find_link(int d1, int d2, uint32_t *type, uint32_t *hops) {
    if (!hip_dev(d1) || !hip_dev(d2)) return hipErrorInvalidDevice;
    *type = STUB_LINK_TYPE;
    *hops = STUB_LINK_DISTANCE / PCIE_HOP_DISTANCE;
    return hipSuccess;
}

hipError_t hipExtGetLinkTypeAndHopCount(int device1, int device2, uint32_t *linktype,
                                        uint32_t *hopcount) {
    HIP_INIT_API();
    if (!linktype || !hopcount || device1 == device2 || device1 < 0 || device2 < 0)
        HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(find_link(device1, device2, linktype, hopcount));
}

/* hipamd answers PerformanceRank and NativeAtomicSupported with the link
 * type (both push kLinkLinkType), AccessSupported and HipArrayAccessSupported
 * with canAccessPeer (every pair of stub devices: same target assumed). */
hipError_t hipDeviceGetP2PAttribute(int *value, hipDeviceP2PAttr attr, int srcDevice,
                                    int dstDevice) {
    HIP_INIT_API();
    if (!value) HIP_RETURN(hipErrorInvalidValue);
    int n = hip_device_count();
    if (srcDevice == dstDevice || srcDevice >= n || dstDevice >= n)
        HIP_RETURN(hipErrorInvalidDevice);
    uint32_t type, hops;
    switch (attr) {
    case hipDevP2PAttrPerformanceRank:
    case hipDevP2PAttrNativeAtomicSupported:
        HIP_RETURN_ONFAIL(find_link(srcDevice, dstDevice, &type, &hops));
        *value = (int)type;
        break;
    case hipDevP2PAttrAccessSupported:
    case hipDevP2PAttrHipArrayAccessSupported:
        HIP_RETURN_ONFAIL(hipDeviceCanAccessPeer(value, srcDevice, dstDevice));
        break;
    default: HIP_RETURN(hipErrorInvalidValue);
    }
    HIP_RETURN(hipSuccess);
}
