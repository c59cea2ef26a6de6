/*
 * fake_cuda.h — the control side of tests/fake_cuda.c, a stand-in for
 * libcuda.so.1 that lets the runtime's tests run without a GPU.
 *
 * The fake records what the runtime asked of the driver and can be told to
 * fail. Tests reach these functions with dlsym on the same path they give
 * libkstub in KSTUB_LIBCUDA, so both see one copy of the fake's state.
 */
#ifndef FAKE_CUDA_H
#define FAKE_CUDA_H

#include <stddef.h>
#include <cuda.h>

#define FAKE_CUDA_MAX_LAUNCHES 64
#define FAKE_CUDA_PARAM_BYTES 512

/* One cuLaunchKernel call as the fake saw it. */
typedef struct fake_launch {
    const char *symbol;                          /* the kernel's symbol */
    unsigned grid[3], block[3], shared;
    CUstream stream;
    unsigned nparams;                            /* as registered for the symbol */
    unsigned char params[FAKE_CUDA_PARAM_BYTES]; /* each argument's bytes at its registered offset */
} fake_launch;

/* Forget everything: records, failures, hidden entries, symbols, contexts mode. */
void fake_cuda_reset(void);
/* Make the nth (1 = next) call of \p entry (e.g. "cuLaunchKernel") return \p result. */
void fake_cuda_fail(const char *entry, CUresult result, int nth);
/* Declare \p symbol present in every image, with this parameter layout
 * (what cuKernelGetParamInfo reports and what launches copy). */
void fake_cuda_set_params(const char *symbol, unsigned n, const size_t *offsets, const size_t *sizes);
/* cuGetProcAddress reports \p entry as missing. */
void fake_cuda_hide(const char *entry);
/* Make every call of \p entry sleep first (to widen race windows in tests). */
void fake_cuda_delay(const char *entry, unsigned microseconds);
/* From now on no thread has a current context until it calls cuCtxSetCurrent
 * (launches fail with CUDA_ERROR_INVALID_CONTEXT); by default every thread has one. */
void fake_cuda_no_current_context(void);

/* Calls of \p entry so far (cuGetProcAddress look-ups are counted under their own name). */
int fake_cuda_calls(const char *entry);
int fake_cuda_launch_count(void);
/* The ith launch (0-based), or NULL. */
const fake_launch *fake_cuda_launch(int i);
/* The symbol of the last cuLibraryGetKernel call, or NULL. */
const char *fake_cuda_last_symbol(void);
/* The code pointer of the last cuLibraryLoadData call, and a copy of its first
 * *n bytes (the whole text for PTX up to 4 KiB, else the first 8). */
const void *fake_cuda_last_image(const unsigned char **copy, size_t *n);
/* The cudaVersion argument of the last cuGetProcAddress call. */
int fake_cuda_proc_version(void);
/* Libraries loaded and not yet unloaded. */
int fake_cuda_live_libraries(void);

#endif /* FAKE_CUDA_H */
