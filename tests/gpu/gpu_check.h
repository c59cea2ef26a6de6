/*
 * gpu_check.h — what the GPU suites share (tests/gpu/gpu_check.c): the
 * driver functions the tests call themselves, found through libkstub
 * (ks_driver_proc, so the tests resolve them as the runtime does); the
 * start of a run (driver, device 0, its primary context current, or the
 * "skipped" line where there is no driver); a failure sink with the case
 * harness's assertion macros; and device memory with a poisoned guard after
 * every buffer, released after each case. gpu_start also installs a crash
 * report: a fatal signal prints the faulting thread's stack to stderr
 * ("binary(+offset)" frames for addr2line) before the default action.
 *
 * A suite whose cases return an int status, 1 at their first failure
 * (real_gpu.c, spec_gpu.c), defines GPU_CHECK_RETURN_STATUS before including
 * this and gets EXPECT (prints "  FAIL FILE:LINE: ..." and returns 1), CU
 * and KS; the others get EXPECT (records a failure and goes on) and the
 * REQUIREs (end the case: they return from the function they stand in).
 */
#ifndef KSTUB_GPU_CHECK_H
#define KSTUB_GPU_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "kstub.h"

/* ---- the driver ------------------------------------------------------------------ */

/* Types from cudaTypedefs.h in the version cuGetProcAddress returns for this
 * cuda.h (cuMemAlloc is cuMemAlloc_v2, of type _v3020). cuCtxSynchronize is
 * avoided on purpose: for CUDA 13 the name resolves to the variant that takes
 * a context argument. Every entry is in every CUDA 12 driver. */
#define GPU_DRIVER_FUNCTIONS(X)                                         \
    X(GetErrorName, "cuGetErrorName", PFN_cuGetErrorName_v6000)         \
    X(DeviceGet, "cuDeviceGet", PFN_cuDeviceGet_v2000)                  \
    X(DeviceGetName, "cuDeviceGetName", PFN_cuDeviceGetName_v2000)      \
    X(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", PFN_cuDevicePrimaryCtxRetain_v7000) \
    X(CtxSetCurrent, "cuCtxSetCurrent", PFN_cuCtxSetCurrent_v4000)      \
    X(MemAlloc, "cuMemAlloc", PFN_cuMemAlloc_v3020)                     \
    X(MemFree, "cuMemFree", PFN_cuMemFree_v3020)                        \
    X(MemcpyHtoD, "cuMemcpyHtoD", PFN_cuMemcpyHtoD_v3020)               \
    X(MemcpyDtoH, "cuMemcpyDtoH", PFN_cuMemcpyDtoH_v3020)               \
    X(MemsetD8, "cuMemsetD8", PFN_cuMemsetD8_v3020)                     \
    X(MemsetD32, "cuMemsetD32", PFN_cuMemsetD32_v3020)                  \
    X(StreamCreate, "cuStreamCreate", PFN_cuStreamCreate_v2000)         \
    X(StreamSynchronize, "cuStreamSynchronize", PFN_cuStreamSynchronize_v2000) \
    X(StreamDestroy, "cuStreamDestroy", PFN_cuStreamDestroy_v4000)      \
    X(StreamBeginCapture, "cuStreamBeginCapture", PFN_cuStreamBeginCapture_v10010) \
    X(StreamEndCapture, "cuStreamEndCapture", PFN_cuStreamEndCapture_v10000) \
    X(GraphGetNodes, "cuGraphGetNodes", PFN_cuGraphGetNodes_v10000)     \
    X(GraphInstantiateWithFlags, "cuGraphInstantiateWithFlags", PFN_cuGraphInstantiateWithFlags_v11040) \
    X(GraphLaunch, "cuGraphLaunch", PFN_cuGraphLaunch_v10000)           \
    X(GraphExecDestroy, "cuGraphExecDestroy", PFN_cuGraphExecDestroy_v10000) \
    X(GraphDestroy, "cuGraphDestroy", PFN_cuGraphDestroy_v10000)        \
    X(GraphAddMemsetNode, "cuGraphAddMemsetNode", PFN_cuGraphAddMemsetNode_v10000) \
    X(GraphKernelNodeGetParams, "cuGraphKernelNodeGetParams", PFN_cuGraphKernelNodeGetParams_v12000)

struct gpu_driver {
#define GPU_FIELD(field, name, type) type field;
    GPU_DRIVER_FUNCTIONS(GPU_FIELD)
#undef GPU_FIELD
};
extern struct gpu_driver cu;

/* The name of a CUresult ("CUDA_ERROR_INVALID_VALUE"), or "unknown CUresult". */
const char *gpu_cu_name(CUresult r);

/* What gpu_start found. */
enum { GPU_READY = 0, GPU_SKIP = 1, GPU_BROKEN = 2 };

/* Finds the driver functions, takes device 0's primary context and makes it
 * current (*ctx, *dev and its name in devname when not NULL). Prints, as
 * "WHO: ...", "no CUDA driver (...); skipped" (GPU_SKIP: the suite passes)
 * or what failed (GPU_BROKEN); nothing when GPU_READY. */
int gpu_start(const char *who, CUdevice *dev, CUcontext *ctx, char *devname, size_t cap);

/* ---- failures and the case harness --------------------------------------------------- */

/* Set by gpu_fail_at; the harness clears it before each case. */
extern int gpu_case_failed;

/* Prints "    FILE:LINE: message" and marks the case failed. */
void gpu_fail_at(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#ifdef GPU_CHECK_RETURN_STATUS
#define EXPECT(cond, ...)                                                   \
    do {                                                                    \
        if (!(cond)) {                                                      \
            printf("  FAIL %s:%d: ", __FILE__, __LINE__);                   \
            printf(__VA_ARGS__);                                            \
            printf("\n");                                                   \
            return 1;                                                       \
        }                                                                   \
    } while (0)

#define CU(call) EXPECT((call) == CUDA_SUCCESS, "%s failed", #call)
#define KS(call)                                                            \
    do {                                                                    \
        ks_status st_ = (call);                                             \
        EXPECT(st_ == KS_OK, "%s: %s: %s", #call, ks_status_name(st_), ks_last_error_message()); \
    } while (0)
#else
#define EXPECT(cond, ...)                                               \
    do {                                                                \
        if (!(cond))                                                    \
            gpu_fail_at(__FILE__, __LINE__, __VA_ARGS__);               \
    } while (0)

#define REQUIRE(cond, ...)                                              \
    do {                                                                \
        if (!(cond)) {                                                  \
            gpu_fail_at(__FILE__, __LINE__, __VA_ARGS__);               \
            return;                                                     \
        }                                                               \
    } while (0)

#define CU_REQUIRE(call)                                                \
    do {                                                                \
        CUresult r_ = (call);                                           \
        REQUIRE(r_ == CUDA_SUCCESS, "%s failed: %s", #call, gpu_cu_name(r_)); \
    } while (0)

#define KS_REQUIRE(call)                                                \
    do {                                                                \
        ks_status s_ = (call);                                          \
        REQUIRE(s_ == KS_OK, "%s returned %s: %s", #call, ks_status_name(s_), \
                ks_last_error_message());                               \
    } while (0)
#endif

/* The return-status suites' runner (GPU_CHECK_RETURN_STATUS): prints \p name,
 * runs \p fn, prints "  ok" when it returns 0, and counts; gpu_report prints
 * "WHO: P passed, F failed" and returns the exit status (1 if any failed). */
void gpu_run_case(const char *name, int (*fn)(void));
int gpu_report(const char *who);

/* ---- inputs ------------------------------------------------------------------------- */

/* The next of a linear congruential sequence in *state, as a float in [-1, 1). */
float gpu_frand(unsigned *state);

/* ---- memory ------------------------------------------------------------------------- */

/* Bytes after every device buffer (gpu_dev_alloc) that no kernel may touch, and their fill. */
#define GPU_GUARD_BYTES 256
#define POISON 0xAB

/* A device address as the pointer type a stub takes. */
#define DEV(type, d) ((type *)(uintptr_t)(d))

/* Host memory for one case (exits on exhaustion), freed by gpu_release_case_memory. */
void *gpu_host_alloc(size_t bytes);
/* bytes of device memory filled with fill, followed by a poisoned guard;
 * 0 (with the failure recorded) when the driver refuses. Freed by
 * gpu_release_case_memory. */
CUdeviceptr gpu_dev_alloc(size_t bytes, unsigned char fill);
/* A device copy of host; complete (even for a launch on a non-blocking
 * stream) when this returns; 0 after a recorded failure. */
CUdeviceptr gpu_dev_upload(const void *host, size_t bytes);
/* 1, or 0 after a recorded failure. */
int gpu_dev_download(void *host, CUdeviceptr d, size_t bytes);
/* Records a failure unless the guard after d (from gpu_dev_alloc) still holds
 * the poison: a kernel wrote past the end of its buffer. */
void gpu_check_guard(CUdeviceptr d);
/* Frees what the case took, so a case that stops early leaks nothing into the next. */
void gpu_release_case_memory(void);

#endif /* KSTUB_GPU_CHECK_H */
