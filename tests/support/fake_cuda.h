/*
 * fake_cuda.h — the control side of tests/support/fake_cuda.c, a stand-in for
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
#define FAKE_CUDA_CONTEXTS 4            /* 0: device 0's primary; 1: device 0; 2, 3: device 1 */
#define FAKE_CUDA_STATIC_SHARED 1024    /* every kernel's static shared memory */
#define FAKE_CUDA_GRAPH_NODES 16        /* nodes per graph */
#define FAKE_CUDA_GLOBAL_BYTES 256      /* the most a fake device variable holds */
#define FAKE_CUDA_ALLOCS 32             /* fake_cuda_alloc's allocations */
#define FAKE_CUDA_VA_STRIDE 0x1000000ull  /* 16 MiB of address space per allocation */
#define FAKE_CUDA_VA_BASE 0x100000000000ull /* where they start if no range can be reserved */

/* One cuLaunchKernel call as the fake saw it. */
typedef struct fake_launch {
    const char *symbol;                          /* the kernel's symbol */
    unsigned grid[3], block[3], shared;
    CUstream stream;
    int ctx;                                     /* the context it ran in (index) */
    int ex;                                      /* 1: through cuLaunchKernelEx */
    int graph;                                   /* 1: a kernel node of a cuGraphLaunch */
    int nattrs;                                  /* its attributes; -1 if one was unknown */
    unsigned cluster[3];
    int cooperative, pdl, priority, has_priority;
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
/* The cudaVersion \p entry was last looked up at (0: never). */
int fake_cuda_proc_version_of(const char *entry);
/* Libraries and modules loaded and not yet unloaded. */
int fake_cuda_live_libraries(void);
/* Modules (the per-context loader's) loaded and not yet unloaded. */
int fake_cuda_live_modules(void);
/* Graphs not yet destroyed; *execs (if not NULL) receives the instances not yet destroyed. */
int fake_cuda_live_graphs(int *execs);
/* Make context \p index (0 .. FAKE_CUDA_CONTEXTS-1) current on this thread; -1: none. */
void fake_cuda_set_context(int index);
/* The device's compute capability and shared-memory opt-in limit (default 9.0, 227 KiB). */
void fake_cuda_set_device(int major, int minor, int optin_shared);
/* Lazy loading: PTX containing "BAD" loads, and fails (writing the log into
 * the buffer given at load time) when a kernel is looked up in it. */
void fake_cuda_lazy_jit(int on);
/* The dynamic shared memory and block limit of the last occupancy query. */
void fake_cuda_occupancy_args(int *shared, int *limit);
/* An allocation cuPointerGetAttributes reports: type CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_UNIFIED
 * (managed: reported as device memory with IS_MANAGED), CU_MEMORYTYPE_HOST (1: mapped
 * host memory) on \p device; its fake address (never mapped in the process). */
unsigned long long fake_cuda_alloc(size_t size, int type, int device);
/* fake_cuda_alloc at address \p at (0: a fresh one; else where a freed
 * allocation was: a new allocation at the same address). Every allocation
 * gets a buffer id never used before. */
unsigned long long fake_cuda_alloc_at(unsigned long long at, size_t size, int type, int device);
/* Forget the allocation at \p ptr (cuPointerGetAttributes no longer knows it). */
void fake_cuda_free(unsigned long long ptr);
/* The live allocation at \p ptr unmapped and another mapped at the same
 * address (cuMemUnmap + cuMemMap): \p size bytes on \p device, with a new
 * buffer id, as an H100 with driver 580 gives every cuMemMap. */
void fake_cuda_remap(unsigned long long ptr, size_t size, int device);
/* The live allocation at \p ptr lies in a mapping of \p size bytes at \p base
 * (CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR and _SIZE), as a reservation only part
 * of which is mapped; by default an allocation is its own mapping. */
void fake_cuda_mapping(unsigned long long ptr, unsigned long long base, size_t size);
/* A tool (tests/support/fake_cupti.c) told of the fake's frees (cuMemFree_v2,
 * cuMemFreeAsync, cuMemUnmap: the driver's own entry points, which forget the
 * allocation at their pointer) at each call's entry (\p exit 0) and exit, on
 * the calling thread, with the call's parameters laid out as CUPTI's
 * <name>_params; NULL: none. fake_cuda_free is a free no tool sees. */
typedef void (*fake_cuda_tool_fn)(const char *entry, int exit, const void *params, int result);
void fake_cuda_set_tool(fake_cuda_tool_fn fn);
/* cuDeviceCanAccessPeer's answer between different devices (default 0): what the hardware can. */
void fake_cuda_peer_access(int on);
/* CU_POINTER_ATTRIBUTE_ACCESS_FLAGS of another device's memory, for the current context's
 * device: what cuCtxEnablePeerAccess has enabled. CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE
 * (the default), _READ or _READWRITE; -1: the driver does not know the attribute
 * (cuPointerGetAttributes and cuPointerGetAttribute fail with CUDA_ERROR_INVALID_VALUE
 * when asked for it); -2: only cuPointerGetAttribute answers it (as NONE). */
void fake_cuda_peer_flags(int flags);
/* Stream \p s belongs to context \p ctx (cuStreamGetCtx says so; its launches run there),
 * as a stream made there, or a green context's (cuGreenCtxStreamCreate), is. */
void fake_cuda_stream_context(CUstream s, int ctx);
/* Declare the device variable \p symbol in every image: cuLibraryGetGlobal and
 * cuModuleGetGlobal report \p size bytes (at most FAKE_CUDA_GLOBAL_BYTES) and an
 * address in host memory, one copy per context, zeroed. */
void fake_cuda_set_global(const char *symbol, size_t size);
/* The copy of \p symbol in context \p ctx, or NULL. */
unsigned char *fake_cuda_global(const char *symbol, int ctx);
/* The last cuMemcpyHtoDAsync (*dir 1) or cuMemcpyDtoHAsync (-1): its bytes, and its stream. */
size_t fake_cuda_last_copy(CUstream *stream, int *dir);

#endif /* FAKE_CUDA_H */
