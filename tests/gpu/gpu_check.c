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

/* SIGSEGV/SIGBUS/SIGABRT/SIGFPE: the stack as raw frames on stderr (backtrace_symbols_fd
 * allocates nothing), then the default action, so the exit status still says it crashed. */
static void crash_stack(int sig)
{
    static const char head[] = "\n*** crashed; stack (addr2line -f -e BINARY on the addresses):\n";
    void *frames[64];
    int n = backtrace(frames, 64);
    ssize_t w = write(STDERR_FILENO, head, sizeof head - 1);
    (void)w;
    backtrace_symbols_fd(frames, n, STDERR_FILENO);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void print_stack_on_crash(void)
{
    void *frames[1];
    backtrace(frames, 1);   /* loads libgcc now, not inside the handler */
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        signal(sigs[i], crash_stack);
}

int gpu_start(const char *who, CUdevice *dev, CUcontext *ctx, char *devname, size_t cap)
{
    print_stack_on_crash();
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
