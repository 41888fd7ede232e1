/* The device probe and the conversion of CUDA errors to sla statuses. A machine without a
 * driver or a device is a normal condition here (CI compiles this on CPU-only machines): the
 * probe runs once and keeps the reason, which every call that needs a device returns. */
#include <stdio.h>
#include <string.h>

#include <mutex>

#include "cuda/cuda_internal.h"

static std::once_flag probe_once;
static char probe_reason[256];
static int probe_ok;

static void probe(void)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        snprintf(probe_reason, sizeof probe_reason, "no CUDA device: cudaGetDeviceCount: %s (%s)",
                 cudaGetErrorName(e), cudaGetErrorString(e));
        cudaGetLastError();
    } else if (count < 1) {
        snprintf(probe_reason, sizeof probe_reason, "no CUDA device: cudaGetDeviceCount found 0");
    } else {
        probe_ok = 1;
        probe_reason[0] = '\0';
    }
}

extern "C" const char *sla_cuda_unavailable_reason(void)
{
    std::call_once(probe_once, probe);
    return probe_reason;
}

extern "C" sla_status sla_cuda_available(void)
{
    std::call_once(probe_once, probe);
    if (probe_ok) return SLA_OK;
    return sla_error_set(SLA_EUNSUPPORTED, "sla_cuda_available", "%s", probe_reason);
}

sla_status sla_cuda_status(cudaError_t e, const char *func, const char *what)
{
    if (e == cudaSuccess) return SLA_OK;
    cudaGetLastError();
    sla_status st = e == cudaErrorMemoryAllocation ? SLA_ENOMEM : SLA_EBACKEND;
    return sla_error_set(st, func, "%s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

extern "C" int sla_cuda_is_device_pointer(const void *ptr)
{
    if (!ptr || sla_cuda_available() != SLA_OK) return 0;
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

extern "C" sla_status sla_cuda_alloc(size_t bytes, void **ptr)
{
    SLA_CHECK_ARG(ptr, "ptr is NULL");
    *ptr = NULL;
    SLA_CU_NEED_DEVICE();
    cudaError_t e = cudaMalloc(ptr, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        *ptr = NULL;
        cudaGetLastError();
        return sla_error_set(SLA_ENOMEM, __func__, "cudaMalloc of %zu bytes: %s", bytes,
                             cudaGetErrorString(e));
    }
    return SLA_OK;
}

extern "C" void sla_cuda_free(void *ptr)
{
    if (ptr) cudaFree(ptr);
}

extern "C" sla_status sla_cuda_copy(void *dst, const void *src, size_t bytes, int to_device)
{
    SLA_CHECK_ARG((dst && src) || bytes == 0, "dst or src is NULL");
    if (bytes == 0) return SLA_OK;
    SLA_CU(cudaMemcpy(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost),
           to_device ? "cudaMemcpy host to device" : "cudaMemcpy device to host");
    return SLA_OK;
}
