/*
 * gpu_check.c — the GPU suites' shared setup (gpu_check.h): driver functions,
 * device 0's context, the failure sink, guarded device memory, and a crash
 * that prints its stack (a suite that dies on the GPU machine, where no gdb
 * is, still says where: `addr2line -f -e BINARY ADDR...` on what it prints).
 */
#include "gpu_check.h"

#include <execinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct gpu_driver cu;
int gpu_case_failed;

/* KS_OK, or the status of the first entry point that could not be found. */
static ks_status load_driver_functions(void)
{
    void *p;
    ks_status st;
#define GPU_LOAD(field, name, type)                                     \
    if ((st = ks_driver_proc(name, &p)) != KS_OK)                       \
        return st;                                                      \
    memcpy(&cu.field, &p, sizeof p);
    GPU_DRIVER_FUNCTIONS(GPU_LOAD)
#undef GPU_LOAD
    return KS_OK;
}

const char *gpu_cu_name(CUresult r)
{
    const char *name = NULL;
    if (cu.GetErrorName == NULL || cu.GetErrorName(r, &name) != CUDA_SUCCESS || name == NULL)
        return "unknown CUresult";
    return name;
}

/* A crash prints the faulting thread's stack before the default action (a
 * core, where enabled): a one-off SIGSEGV on the GPU machine (issue 45)
 * leaves its frames in the log ("binary(+offset)": addr2line -f -e binary
 * offset). Only async-signal-safe calls here; backtrace was called once
 * before, so it does not load libgcc now. */
static void crash_report(int sig)
{
    static const char head[] = "\n*** gpu suite: fatal signal; the faulting thread's stack:\n";
    void *frames[64];
    if (write(2, head, sizeof head - 1) < 0) {
        /* nothing more to do */
    }
    int n = backtrace(frames, 64);
    backtrace_symbols_fd(frames, n, 2);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void crash_report_install(void)
{
    void *warm[1];
    backtrace(warm, 1);
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = crash_report;
        sa.sa_flags = SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

int gpu_start(const char *who, CUdevice *dev, CUcontext *ctx, char *devname, size_t cap)
{
    crash_report_install();
    ks_status st = load_driver_functions();
    if (st == KS_ERR_NO_DRIVER) {
        printf("%s: no CUDA driver (%s); skipped\n", who, ks_last_error_message());
        return GPU_SKIP;
    }
    if (st != KS_OK) {
        printf("%s: driver setup failed: %s: %s\n", who, ks_status_name(st), ks_last_error_message());
        return GPU_BROKEN;
    }
    CUresult r;
    if ((r = cu.DeviceGet(dev, 0)) != CUDA_SUCCESS ||
        (devname && (r = cu.DeviceGetName(devname, (int)cap, *dev)) != CUDA_SUCCESS) ||
        (r = cu.DevicePrimaryCtxRetain(ctx, *dev)) != CUDA_SUCCESS || (r = cu.CtxSetCurrent(*ctx)) != CUDA_SUCCESS) {
        printf("%s: no usable device 0: %s\n", who, gpu_cu_name(r));
        return GPU_BROKEN;
    }
    return GPU_READY;
}

void gpu_fail_at(const char *file, int line, const char *fmt, ...)
{
    const char *slash = strrchr(file, '/');
    va_list ap;
    va_start(ap, fmt);
    printf("    %s:%d: ", slash ? slash + 1 : file, line);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    gpu_case_failed = 1;
}

float gpu_frand(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (float)(*state >> 8) / (float)(1u << 24) * 2.0f - 1.0f;
}

/* ---- memory ------------------------------------------------------------------------- */

#define MAX_ALLOCS 64
static struct { CUdeviceptr d; size_t bytes; } dev_allocs[MAX_ALLOCS];
static void *host_allocs[MAX_ALLOCS];
static int n_dev_allocs, n_host_allocs;

void gpu_release_case_memory(void)
{
    for (int i = 0; i < n_dev_allocs; i++)
        cu.MemFree(dev_allocs[i].d);
    for (int i = 0; i < n_host_allocs; i++)
        free(host_allocs[i]);
    n_dev_allocs = n_host_allocs = 0;
}

void *gpu_host_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL || n_host_allocs == MAX_ALLOCS) {
        fprintf(stderr, "gpu_check: out of host memory or allocation slots\n");
        exit(2);
    }
    host_allocs[n_host_allocs++] = p;
    return p;
}

CUdeviceptr gpu_dev_alloc(size_t bytes, unsigned char fill)
{
    CUdeviceptr d;
    CUresult r;
    if (n_dev_allocs == MAX_ALLOCS) {
        gpu_fail_at(__FILE__, __LINE__, "too many device allocations in one case");
        return 0;
    }
    if ((r = cu.MemAlloc(&d, bytes + GPU_GUARD_BYTES)) != CUDA_SUCCESS) {
        gpu_fail_at(__FILE__, __LINE__, "cuMemAlloc(%zu) failed: %s", bytes + GPU_GUARD_BYTES, gpu_cu_name(r));
        return 0;
    }
    dev_allocs[n_dev_allocs].d = d;
    dev_allocs[n_dev_allocs++].bytes = bytes;
    if ((r = cu.MemsetD8(d, fill, bytes)) != CUDA_SUCCESS ||
        (r = cu.MemsetD8(d + bytes, POISON, GPU_GUARD_BYTES)) != CUDA_SUCCESS) {
        gpu_fail_at(__FILE__, __LINE__, "cuMemsetD8 failed: %s", gpu_cu_name(r));
        return 0;
    }
    return d;
}

CUdeviceptr gpu_dev_upload(const void *host, size_t bytes)
{
    CUdeviceptr d = gpu_dev_alloc(bytes, POISON);
    CUresult r;
    if (d == 0)
        return 0;
    if ((r = cu.MemcpyHtoD(d, host, bytes)) != CUDA_SUCCESS || (r = cu.StreamSynchronize(NULL)) != CUDA_SUCCESS) {
        gpu_fail_at(__FILE__, __LINE__, "upload of %zu bytes failed: %s", bytes, gpu_cu_name(r));
        return 0;
    }
    return d;
}

int gpu_dev_download(void *host, CUdeviceptr d, size_t bytes)
{
    CUresult r = cu.MemcpyDtoH(host, d, bytes);
    if (r != CUDA_SUCCESS)
        gpu_fail_at(__FILE__, __LINE__, "cuMemcpyDtoH(%zu) failed: %s", bytes, gpu_cu_name(r));
    return r == CUDA_SUCCESS;
}

void gpu_check_guard(CUdeviceptr d)
{
    for (int i = 0; i < n_dev_allocs; i++) {
        if (dev_allocs[i].d != d)
            continue;
        unsigned char g[GPU_GUARD_BYTES];
        if (!gpu_dev_download(g, d + dev_allocs[i].bytes, sizeof g))
            return;
        for (size_t j = 0; j < sizeof g; j++)
            if (g[j] != POISON) {
                gpu_fail_at(__FILE__, __LINE__, "byte %zu past the end of a %zu-byte buffer was overwritten", j,
                            dev_allocs[i].bytes);
                return;
            }
        return;
    }
    gpu_fail_at(__FILE__, __LINE__, "gpu_check_guard: 0x%llx was not allocated by gpu_dev_alloc",
                (unsigned long long)d);
}

/* ---- the return-status suites' runner ----------------------------------------------- */

static int run_passed, run_failed;

void gpu_run_case(const char *name, int (*fn)(void))
{
    printf("%s\n", name);
    if (fn() == 0) {
        run_passed++;
        printf("  ok\n");
    } else {
        run_failed++;
    }
}

int gpu_report(const char *who)
{
    printf("%s: %d passed, %d failed\n", who, run_passed, run_failed);
    return run_failed ? 1 : 0;
}
