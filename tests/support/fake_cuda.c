/*
 * fake_cuda.c — a fake libcuda.so.1 for the runtime's CPU tests (built as
 * build/tests/libcuda_fake.so and named by KSTUB_LIBCUDA).
 *
 * Like the real driver it exports only cuGetProcAddress(_v2); every other
 * entry point is reached through it, so the runtime's resolution path is the
 * one exercised. See fake_cuda.h for the control functions.
 *
 * Model: any image loads (PTX containing "BAD" fails to JIT, with a log);
 * symbols exist when registered with fake_cuda_set_params (kernels) or
 * fake_cuda_set_global (device variables: host memory, one copy per
 * context, which the memcpy entry points read and write); a kernel handle
 * dies with its library or module. Contexts: FAKE_CUDA_CONTEXTS of them,
 * 0 the primary context of device 0 and the rest user contexts (device 0
 * for 1, device 1 for 2 and 3); a module's functions launch only in its
 * own context, so the runtime's per-context caching is checked. A stream
 * given a context (fake_cuda_stream_context) runs its launches there: a
 * CUkernel's with no context current, a CUfunction's only with one current
 * and of the stream's context; any other stream is the current context's.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fake_cuda.h"

/* -DFAKE_CUDA_COLD_KB: the launch entry points evict the caches first (fake_cold.h). */
#ifdef FAKE_CUDA_COLD_KB
#include "fake_cold.h"
#else
#define FAKE_COLD() ((void)0)
#endif

#undef cuGetProcAddress
#define FAKE_API __attribute__((visibility("default")))

/* The driver's own way in; the legacy one takes no status argument. */
FAKE_API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                      CUdriverProcAddressQueryResult *status);
FAKE_API CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags);

#define FAKE_DRIVER_ENTRIES(X)                                            \
    X(cuInit) X(cuGetErrorName) X(cuGetErrorString) X(cuDriverGetVersion) \
    X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuCtxGetDevice) X(cuDeviceGet) \
    X(cuDeviceGetAttribute) X(cuCtxPushCurrent) X(cuCtxPopCurrent)       \
    X(cuDevicePrimaryCtxRetain) X(cuLibraryLoadData) X(cuLibraryUnload)   \
    X(cuLibraryGetKernel) X(cuKernelGetParamInfo) X(cuLaunchKernel)       \
    X(cuLaunchKernelEx) X(cuModuleLoadDataEx) X(cuModuleUnload)           \
    X(cuModuleGetFunction) X(cuFuncGetParamInfo) X(cuKernelGetFunction)   \
    X(cuFuncGetAttribute) X(cuKernelGetAttribute) X(cuFuncSetAttribute)   \
    X(cuKernelSetAttribute) X(cuOccupancyMaxPotentialBlockSize)           \
    X(cuGraphCreate) X(cuGraphDestroy) X(cuGraphAddKernelNode)            \
    X(cuGraphAddEmptyNode) X(cuGraphKernelNodeGetParams)                  \
    X(cuGraphInstantiateWithFlags) X(cuGraphExecDestroy) X(cuGraphLaunch) \
    X(cuGraphExecKernelNodeSetParams) X(cuGraphExecUpdate)               \
    X(cuKernelGetName) X(cuFuncGetName) X(cuStreamSynchronize)          \
    X(cuPointerGetAttributes) X(cuDeviceCanAccessPeer) X(cuPointerGetAttribute) \
    X(cuLibraryGetKernelCount) X(cuLibraryEnumerateKernels)             \
    X(cuModuleGetFunctionCount) X(cuModuleEnumerateFunctions)           \
    X(cuLibraryGetGlobal) X(cuModuleGetGlobal) X(cuMemcpyHtoDAsync)     \
    X(cuMemcpyDtoHAsync) X(cuGraphAddMemcpyNode) X(cuStreamGetCtx)      \
    X(cuMemFree) X(cuMemFreeAsync) X(cuMemUnmap)
#define FAKE_ENTRIES(X) FAKE_DRIVER_ENTRIES(X) X(cuGetProcAddress_v2) X(cuGetProcAddress)

enum {
#define X(name) E_##name,
    FAKE_ENTRIES(X)
#undef X
    E_COUNT
};

static const char *const entry_names[E_COUNT] = {
#define X(name) #name,
    FAKE_ENTRIES(X)
#undef X
};

#define MAX_SYMS 16
#define MAX_PARAMS 32
#define MAX_LIBS 64
#define MAX_KERNELS 256
#define MAX_FAILS 16

typedef struct fake_sym {
    char name[256];
    unsigned n;
    size_t offsets[MAX_PARAMS], sizes[MAX_PARAMS];
} fake_sym;

/* ctx: -1 for a CUlibrary, else the module's. bad_log: lazy mode's deferred JIT failure. */
typedef struct fake_lib { int live; int ctx; char *bad_log; size_t bad_cap; } fake_lib;
/* A CUkernel (ctx -1) or a CUfunction of one context. */
typedef struct fake_kernel { fake_lib *lib; fake_sym *sym; int ctx; int max_dyn_shared; } fake_kernel;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int calls[E_COUNT];
    int hidden[E_COUNT];
    int versions[E_COUNT];      /* the cudaVersion each entry was last asked for at */
    struct { int entry; CUresult result; int left; } fails[MAX_FAILS];
    int nfails;
    fake_sym syms[MAX_SYMS];
    int nsyms;
    fake_lib libs[MAX_LIBS];
    int nlibs;
    fake_kernel kernels[MAX_KERNELS];
    int nkernels;
    fake_launch launches[FAKE_CUDA_MAX_LAUNCHES];
    int nlaunches;
    const char *last_symbol;
    char last_symbol_buf[128];
    const void *last_image;
    unsigned char image_copy[4096];
    size_t image_n;
    int proc_version;
    int need_set_current;       /* fake_cuda_no_current_context() was called */
    int cc_major, cc_minor, optin_shared;
    int lazy_jit;               /* fake_cuda_lazy_jit(1): "BAD" PTX fails at the kernel look-up */
    int occ_last_shared, occ_last_limit;
    struct {
        CUdeviceptr base;
        size_t size;
        int type, device, live;
        unsigned long long id;          /* CU_POINTER_ATTRIBUTE_BUFFER_ID: never reused */
        CUdeviceptr map_base;           /* CU_POINTER_ATTRIBUTE_MAPPING_*: the mapping (size 0: the range) */
        size_t map_size;
    } allocs[FAKE_CUDA_ALLOCS];
    unsigned long long next_buffer_id;
    int nallocs;
    int peer_access;            /* fake_cuda_peer_access */
    int peer_flags;             /* fake_cuda_peer_flags: ACCESS_FLAGS on another device's memory */
    int access_flags_unknown;   /* fake_cuda_peer_flags(-1): the attribute is refused */
    struct { CUstream stream; int ctx; } streams[8];   /* fake_cuda_stream_context */
    int nstreams;
} st;

/* Device variables: a symbol, the size the driver reports, and one copy per context. */
#define MAX_GLOBALS 8
static struct fake_global {
    char name[128];
    size_t size;
    unsigned char mem[FAKE_CUDA_CONTEXTS][FAKE_CUDA_GLOBAL_BYTES];
} globals[MAX_GLOBALS];
static int nglobals;
static struct { CUstream stream; size_t bytes; int dir; } last_copy;

static int ctx_objs[FAKE_CUDA_CONTEXTS];     /* their addresses are the CUcontexts */
static const int ctx_device[FAKE_CUDA_CONTEXTS] = {0, 0, 1, 1};
#define PRIMARY ((CUcontext)(void *)&ctx_objs[0])
static _Thread_local CUcontext current;
static _Thread_local CUcontext ctx_stack[8];
static _Thread_local int ctx_depth;

static int ctx_index(CUcontext ctx)
{
    for (int i = 0; i < FAKE_CUDA_CONTEXTS; i++)
        if (ctx == (CUcontext)(void *)&ctx_objs[i])
            return i;
    return -1;
}

/* The calling thread's context index, or -1 for none. */
static int current_index(void)
{
    if (current)
        return ctx_index(current);
    return st.need_set_current ? -1 : 0;
}

static int entry_index(const char *name)
{
    for (int i = 0; i < E_COUNT; i++)
        if (strcmp(entry_names[i], name) == 0)
            return i;
    return -1;
}

/* Count the call and say whether an injected failure is due. Under lock. */
static CUresult enter(int e)
{
    st.calls[e]++;
    for (int i = 0; i < st.nfails; i++) {
        if (st.fails[i].entry == e && --st.fails[i].left == 0) {
            CUresult r = st.fails[i].result;
            st.fails[i] = st.fails[--st.nfails];
            return r;
        }
    }
    return CUDA_SUCCESS;
}

/* Delays are set before the threads that feel them start, so read unlocked. */
static unsigned delay_us[E_COUNT];

#define ENTER(name)                         \
    if (delay_us[E_##name])                 \
        usleep(delay_us[E_##name]);         \
    pthread_mutex_lock(&lock);              \
    CUresult injected_ = enter(E_##name);   \
    if (injected_ != CUDA_SUCCESS) {        \
        pthread_mutex_unlock(&lock);        \
        return injected_;                   \
    }
/* The result is computed before the unlock: it may be a call that touches st. */
#define LEAVE(result)                       \
    do {                                    \
        CUresult leave_ = (result);         \
        pthread_mutex_unlock(&lock);        \
        return leave_;                      \
    } while (0)

/* ---- fake entry points ------------------------------------------------------ */

static const struct { CUresult code; const char *name, *text; } errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE",
     "the graph update was not performed because it included changes which violated constraints "
     "specific to instantiated graph update"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static CUresult describe(CUresult code, const char **str, int text)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
        if (errors[i].code == code) {
            *str = text ? errors[i].text : errors[i].name;
            return CUDA_SUCCESS;
        }
    }
    *str = NULL;                /* as the driver does for codes it does not know */
    return CUDA_ERROR_INVALID_VALUE;
}

static CUresult fake_cuInit(unsigned flags)
{
    ENTER(cuInit);
    LEAVE(flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

static CUresult fake_cuGetErrorName(CUresult code, const char **str)
{
    ENTER(cuGetErrorName);
    LEAVE(describe(code, str, 0));
}

static CUresult fake_cuGetErrorString(CUresult code, const char **str)
{
    ENTER(cuGetErrorString);
    LEAVE(describe(code, str, 1));
}

static CUresult fake_cuDriverGetVersion(int *v)
{
    ENTER(cuDriverGetVersion);
    *v = CUDA_VERSION;
    LEAVE(CUDA_SUCCESS);
}

static CUresult fake_cuCtxGetCurrent(CUcontext *ctx)
{
    ENTER(cuCtxGetCurrent);
    *ctx = current ? current : st.need_set_current ? NULL : PRIMARY;
    LEAVE(CUDA_SUCCESS);
}

static CUresult fake_cuCtxSetCurrent(CUcontext ctx)
{
    ENTER(cuCtxSetCurrent);
    if (ctx != NULL && ctx_index(ctx) < 0)
        LEAVE(CUDA_ERROR_INVALID_CONTEXT);
    current = ctx;
    LEAVE(CUDA_SUCCESS);
}

static CUresult fake_cuCtxGetDevice(CUdevice *dev)
{
    ENTER(cuCtxGetDevice);
    int i = current_index();
    if (i < 0)
        LEAVE(CUDA_ERROR_INVALID_CONTEXT);
    *dev = ctx_device[i];
    LEAVE(CUDA_SUCCESS);
}

static CUresult fake_cuCtxPushCurrent(CUcontext ctx)
{
    ENTER(cuCtxPushCurrent);
    if (ctx_index(ctx) < 0 || ctx_depth == 8)
        LEAVE(CUDA_ERROR_INVALID_CONTEXT);
    ctx_stack[ctx_depth++] = current;
    current = ctx;
    LEAVE(CUDA_SUCCESS);
}

static CUresult fake_cuCtxPopCurrent(CUcontext *ctx)
{
    ENTER(cuCtxPopCurrent);
    if (ctx_depth == 0)
        LEAVE(CUDA_ERROR_INVALID_CONTEXT);
    if (ctx)
        *ctx = current;
    current = ctx_stack[--ctx_depth];
    LEAVE(CUDA_SUCCESS);
}

static CUresult fake_cuDeviceGetAttribute(int *value, CUdevice_attribute attr, CUdevice dev)
{
    ENTER(cuDeviceGetAttribute);
    if (dev < 0 || dev > 1)
        LEAVE(CUDA_ERROR_INVALID_DEVICE);
    switch (attr) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = st.cc_major; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = st.cc_minor; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = st.optin_shared; break;
    default: LEAVE(CUDA_ERROR_INVALID_VALUE);
    }
    LEAVE(CUDA_SUCCESS);
}

static CUresult fake_cuDeviceGet(CUdevice *dev, int ordinal)
{
    ENTER(cuDeviceGet);
    if (ordinal != 0)
        LEAVE(CUDA_ERROR_INVALID_DEVICE);
    *dev = 0;
    LEAVE(CUDA_SUCCESS);
}

static CUresult fake_cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    ENTER(cuDevicePrimaryCtxRetain);
    if (dev != 0)
        LEAVE(CUDA_ERROR_INVALID_DEVICE);
    *ctx = PRIMARY;
    LEAVE(CUDA_SUCCESS);
}

static int has_context(void)
{
    return current != NULL || !st.need_set_current;
}

/* The context \p s was made in (fake_cuda_stream_context), or -1: the current one's. Under lock. */
static int stream_ctx(CUstream s)
{
    for (int i = 0; i < st.nstreams; i++)
        if (st.streams[i].stream == s)
            return st.streams[i].ctx;
    return -1;
}

static CUresult fake_cuStreamGetCtx(CUstream s, CUcontext *ctx)
{
    ENTER(cuStreamGetCtx);
    int i = stream_ctx(s);
    if (i < 0)
        i = current_index();
    if (i < 0)
        LEAVE(CUDA_ERROR_INVALID_CONTEXT);
    *ctx = (CUcontext)(void *)&ctx_objs[i];
    LEAVE(CUDA_SUCCESS);
}

static void jit_fail(char *buf, size_t cap)
{
    static const char log[] = "ptxas application ptx input, line 7; error   : "
                              "Unknown symbol 'BAD'\nptxas fatal   : Ptx assembly aborted\n";
    if (buf && cap) {
        size_t n = sizeof log < cap ? sizeof log : cap;
        memcpy(buf, log, n);
        buf[n - 1] = '\0';
    }
}

/* What cuLibraryLoadData and cuModuleLoadDataEx share: record the image,
 * fail the JIT of "BAD" PTX, make a library for context \p ctx. Under lock. */
static CUresult load_image(fake_lib **out, const void *code, CUjit_option *opts, void **vals,
                           unsigned nopts, int ctx)
{
    const unsigned char *p = code;
    int binary = memcmp(p, "\x7f" "ELF", 4) == 0 ||
                 (p[0] == 0x50 && p[1] == 0xED && p[2] == 0x55 && p[3] == 0xBA);
    st.last_image = code;
    st.image_n = binary ? 8 : strnlen(code, sizeof st.image_copy - 1) + 1;
    memcpy(st.image_copy, code, st.image_n);
    if (!binary)
        st.image_copy[st.image_n - 1] = '\0';

    char *buf = NULL;
    size_t cap = 0;
    for (unsigned i = 0; i < nopts; i++) {
        if (opts[i] == CU_JIT_ERROR_LOG_BUFFER)
            buf = vals[i];
        else if (opts[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            cap = (size_t)(uintptr_t)vals[i];
    }
    int bad = !binary && strstr(code, "BAD") != NULL;   /* (code is text here) */
    if (bad && !st.lazy_jit) {
        /* A JIT failure: fill the caller's error log as the driver does. */
        jit_fail(buf, cap);
        return CUDA_ERROR_INVALID_PTX;
    }
    if (st.nlibs == MAX_LIBS)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fake_lib *lib = &st.libs[st.nlibs++];
    memset(lib, 0, sizeof *lib);
    lib->live = 1;
    lib->ctx = ctx;
    if (bad)                    /* lazy: the JIT runs, and logs, at the look-up */
        lib->bad_log = buf, lib->bad_cap = cap;
    *out = lib;
    return CUDA_SUCCESS;
}

static CUresult fake_cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *opts,
                                       void **vals, unsigned nopts, CUlibraryOption *lopts,
                                       void **lvals, unsigned nlopts)
{
    (void)lopts, (void)lvals;
    ENTER(cuLibraryLoadData);
    if (library == NULL || code == NULL || nlopts != 0)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    fake_lib *lib = NULL;
    CUresult r = load_image(&lib, code, opts, vals, nopts, -1);
    if (r == CUDA_SUCCESS)
        *library = (CUlibrary)(void *)lib;
    LEAVE(r);
}

static CUresult fake_cuModuleLoadDataEx(CUmodule *module, const void *code, unsigned nopts,
                                        CUjit_option *opts, void **vals)
{
    ENTER(cuModuleLoadDataEx);
    if (module == NULL || code == NULL)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    int ctx = current_index();
    if (ctx < 0)
        LEAVE(CUDA_ERROR_INVALID_CONTEXT);
    fake_lib *lib = NULL;
    CUresult r = load_image(&lib, code, opts, vals, nopts, ctx);
    if (r == CUDA_SUCCESS)
        *module = (CUmodule)(void *)lib;
    LEAVE(r);
}

static fake_lib *find_lib(const void *library)
{
    for (int i = 0; i < st.nlibs; i++)
        if ((void *)&st.libs[i] == library && st.libs[i].live)
            return &st.libs[i];
    return NULL;
}

static fake_kernel *find_kernel(const void *handle)
{
    for (int i = 0; i < st.nkernels; i++)
        if ((const void *)&st.kernels[i] == handle && st.kernels[i].lib->live)
            return &st.kernels[i];
    return NULL;
}

static CUresult fake_cuLibraryUnload(CUlibrary library)
{
    ENTER(cuLibraryUnload);
    fake_lib *lib = find_lib(library);
    if (lib == NULL || lib->ctx != -1)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    lib->live = 0;
    LEAVE(CUDA_SUCCESS);
}

static CUresult fake_cuModuleUnload(CUmodule module)
{
    ENTER(cuModuleUnload);
    fake_lib *lib = find_lib(module);
    if (lib == NULL || lib->ctx == -1)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    if (lib->ctx != current_index())   /* a module unloads from its own, current, context */
        LEAVE(CUDA_ERROR_INVALID_CONTEXT);
    lib->live = 0;
    LEAVE(CUDA_SUCCESS);
}

/* A handle for \p sym in \p lib seen from context \p ctx (-1: a CUkernel). Under lock. */
static CUresult new_kernel(void **out, fake_lib *lib, const char *name, int ctx)
{
    if (lib->bad_log != NULL || (st.lazy_jit && lib->bad_cap)) {
        jit_fail(lib->bad_log, lib->bad_cap);
        return CUDA_ERROR_INVALID_PTX;
    }
    strncpy(st.last_symbol_buf, name, sizeof st.last_symbol_buf - 1);
    st.last_symbol = st.last_symbol_buf;
    for (int i = 0; i < st.nsyms; i++) {
        if (strcmp(st.syms[i].name, name) == 0) {
            if (st.nkernels == MAX_KERNELS)
                return CUDA_ERROR_OUT_OF_MEMORY;
            fake_kernel *k = &st.kernels[st.nkernels++];
            k->lib = lib;
            k->sym = &st.syms[i];
            k->ctx = ctx;
            k->max_dyn_shared = 48 * 1024;
            *out = k;
            return CUDA_SUCCESS;
        }
    }
    return CUDA_ERROR_NOT_FOUND;
}

static CUresult fake_cuModuleGetFunction(CUfunction *fn, CUmodule module, const char *name)
{
    ENTER(cuModuleGetFunction);
    fake_lib *lib = find_lib(module);
    if (lib == NULL || lib->ctx == -1)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    void *k = NULL;
    CUresult r = new_kernel(&k, lib, name, lib->ctx);
    if (r == CUDA_SUCCESS)
        *fn = (CUfunction)k;
    LEAVE(r);
}

static CUresult fake_cuLibraryGetKernel(CUkernel *kernel, CUlibrary library, const char *name)
{
    ENTER(cuLibraryGetKernel);
    fake_lib *lib = find_lib(library);
    if (lib == NULL || lib->ctx != -1)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    void *k = NULL;
    CUresult r = new_kernel(&k, lib, name, -1);
    if (r == CUDA_SUCCESS)
        *kernel = (CUkernel)k;
    LEAVE(r);
}

/* A variable's copy in context \p ctx. Under lock. */
static CUresult get_global(CUdeviceptr *ptr, size_t *bytes, fake_lib *lib, const char *name, int ctx)
{
    if (lib->bad_log != NULL || (st.lazy_jit && lib->bad_cap)) {
        jit_fail(lib->bad_log, lib->bad_cap);
        return CUDA_ERROR_INVALID_PTX;
    }
    if (ctx < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    for (int i = 0; i < nglobals; i++)
        if (strcmp(globals[i].name, name) == 0) {
            if (ptr)
                *ptr = (CUdeviceptr)(uintptr_t)globals[i].mem[ctx];
            if (bytes)
                *bytes = globals[i].size;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}

static CUresult fake_cuLibraryGetGlobal(CUdeviceptr *ptr, size_t *bytes, CUlibrary library, const char *name)
{
    ENTER(cuLibraryGetGlobal);
    fake_lib *lib = find_lib(library);
    if (lib == NULL || lib->ctx != -1)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    LEAVE(get_global(ptr, bytes, lib, name, current_index()));
}

static CUresult fake_cuModuleGetGlobal(CUdeviceptr *ptr, size_t *bytes, CUmodule module, const char *name)
{
    ENTER(cuModuleGetGlobal);
    fake_lib *lib = find_lib(module);
    if (lib == NULL || lib->ctx == -1)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    LEAVE(get_global(ptr, bytes, lib, name, lib->ctx));
}

/* Whether [p, p + n) lies inside one variable's copy. Under lock. */
static int in_global(CUdeviceptr p, size_t n)
{
    for (int i = 0; i < nglobals; i++)
        for (int c = 0; c < FAKE_CUDA_CONTEXTS; c++) {
            uintptr_t base = (uintptr_t)globals[i].mem[c];
            if (p >= base && p - base <= globals[i].size && n <= globals[i].size - (p - base))
                return 1;
        }
    return 0;
}

static CUresult fake_cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream stream)
{
    FAKE_COLD();
    ENTER(cuMemcpyHtoDAsync);
    if (!has_context())
        LEAVE(CUDA_ERROR_INVALID_CONTEXT);
    if (src == NULL || !in_global(dst, n))
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    memcpy((void *)(uintptr_t)dst, src, n);
    last_copy.stream = stream, last_copy.bytes = n, last_copy.dir = 1;
    LEAVE(CUDA_SUCCESS);
}

static CUresult fake_cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream stream)
{
    ENTER(cuMemcpyDtoHAsync);
    if (!has_context())
        LEAVE(CUDA_ERROR_INVALID_CONTEXT);
    if (dst == NULL || !in_global(src, n))
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    memcpy(dst, (const void *)(uintptr_t)src, n);
    last_copy.stream = stream, last_copy.bytes = n, last_copy.dir = -1;
    LEAVE(CUDA_SUCCESS);
}

/* Every registered symbol is in every image: the list is theirs, in order. Under lock. */
static CUresult list_kernels(void **out, unsigned n, fake_lib *lib, int ctx)
{
    if (out == NULL || n > (unsigned)st.nsyms)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < n; i++) {
        CUresult r = new_kernel(&out[i], lib, st.syms[i].name, ctx);
        if (r != CUDA_SUCCESS)
            return r;
    }
    return CUDA_SUCCESS;
}

static CUresult fake_cuLibraryGetKernelCount(unsigned *count, CUlibrary library)
{
    ENTER(cuLibraryGetKernelCount);
    fake_lib *lib = find_lib(library);
    if (lib == NULL || lib->ctx != -1 || count == NULL)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    *count = (unsigned)st.nsyms;
    LEAVE(CUDA_SUCCESS);
}

static CUresult fake_cuLibraryEnumerateKernels(CUkernel *kernels, unsigned n, CUlibrary library)
{
    ENTER(cuLibraryEnumerateKernels);
    fake_lib *lib = find_lib(library);
    if (lib == NULL || lib->ctx != -1)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    LEAVE(list_kernels((void **)kernels, n, lib, -1));
}

static CUresult fake_cuModuleGetFunctionCount(unsigned *count, CUmodule module)
{
    ENTER(cuModuleGetFunctionCount);
    fake_lib *lib = find_lib(module);
    if (lib == NULL || lib->ctx == -1 || count == NULL)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    *count = (unsigned)st.nsyms;
    LEAVE(CUDA_SUCCESS);
}

static CUresult fake_cuModuleEnumerateFunctions(CUfunction *fns, unsigned n, CUmodule module)
{
    ENTER(cuModuleEnumerateFunctions);
    fake_lib *lib = find_lib(module);
    if (lib == NULL || lib->ctx == -1)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    LEAVE(list_kernels((void **)fns, n, lib, lib->ctx));
}

static CUresult fake_cuKernelGetFunction(CUfunction *fn, CUkernel kernel)
{
    ENTER(cuKernelGetFunction);
    fake_kernel *k = find_kernel(kernel);
    int ctx = current_index();
    if (k == NULL || k->ctx != -1)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    if (ctx < 0)
        LEAVE(CUDA_ERROR_INVALID_CONTEXT);
    void *f = NULL;
    CUresult r = new_kernel(&f, k->lib, k->sym->name, ctx);
    if (r == CUDA_SUCCESS) {
        ((fake_kernel *)f)->max_dyn_shared = k->max_dyn_shared;
        *fn = (CUfunction)f;
    }
    LEAVE(r);
}

static CUresult fake_cuKernelGetParamInfo(CUkernel kernel, size_t index, size_t *offset, size_t *size)
{
    ENTER(cuKernelGetParamInfo);
    fake_kernel *k = find_kernel(kernel);
    if (k == NULL)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    if (index >= k->sym->n)
        LEAVE(CUDA_ERROR_INVALID_VALUE);   /* past the last parameter, as the driver says */
    *offset = k->sym->offsets[index];
    *size = k->sym->sizes[index];
    LEAVE(CUDA_SUCCESS);
}

/* The symbol a kernel or function was looked up by, as the driver reports it (12.3+). */
static CUresult fake_cuKernelGetName(const char **name, CUkernel kernel)
{
    ENTER(cuKernelGetName);
    fake_kernel *k = find_kernel(kernel);
    if (name == NULL || k == NULL || k->ctx != -1)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    *name = k->sym->name;
    LEAVE(CUDA_SUCCESS);
}

static CUresult fake_cuFuncGetName(const char **name, CUfunction fn)
{
    ENTER(cuFuncGetName);
    fake_kernel *k = find_kernel(fn);
    if (name == NULL || k == NULL || k->ctx == -1)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    *name = k->sym->name;
    LEAVE(CUDA_SUCCESS);
}

static CUresult fake_cuFuncGetParamInfo(CUfunction fn, size_t index, size_t *offset, size_t *size)
{
    ENTER(cuFuncGetParamInfo);
    fake_kernel *k = find_kernel(fn);
    if (k == NULL || k->ctx == -1)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    if (index >= k->sym->n)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    *offset = k->sym->offsets[index];
    *size = k->sym->sizes[index];
    LEAVE(CUDA_SUCCESS);
}

/* What both launch calls do once their arguments are unpacked. Under lock. */
static CUresult record_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                              unsigned bx, unsigned by, unsigned bz, unsigned shared,
                              CUstream stream, void **params, void **extra, fake_launch **out)
{
    *out = NULL;
    /* As the driver documents for a CUkernel: it runs in its stream's context, or
     * the current one's for the default streams. A CUfunction (the module loader's)
     * also wants a context current, and must be of the stream's. */
    fake_kernel *k = find_kernel(f);
    int run_ctx = stream_ctx(stream);
    if (run_ctx < 0 || (k != NULL && k->ctx != -1)) {
        if (!has_context())
            return CUDA_ERROR_INVALID_CONTEXT;
        if (run_ctx < 0)
            run_ctx = current_index();
    }
    if (k == NULL)
        return CUDA_ERROR_INVALID_HANDLE;
    if (k->ctx != -1 && k->ctx != run_ctx)
        return CUDA_ERROR_INVALID_HANDLE;   /* a function of another context */
    if (extra != NULL || (params == NULL && k->sym->n != 0))
        return CUDA_ERROR_INVALID_VALUE;
    if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if ((int)shared > k->max_dyn_shared)
        return CUDA_ERROR_INVALID_VALUE;
    if (st.nlaunches == FAKE_CUDA_MAX_LAUNCHES)
        return CUDA_SUCCESS;    /* stop recording, keep launching */
    fake_launch *l = &st.launches[st.nlaunches++];
    memset(l, 0, sizeof *l);
    l->symbol = k->sym->name;
    l->grid[0] = gx, l->grid[1] = gy, l->grid[2] = gz;
    l->block[0] = bx, l->block[1] = by, l->block[2] = bz;
    l->shared = shared;
    l->stream = stream;
    l->ctx = run_ctx;
    l->nparams = k->sym->n;
    for (unsigned i = 0; i < k->sym->n; i++)
        if (k->sym->offsets[i] + k->sym->sizes[i] <= sizeof l->params)
            memcpy(l->params + k->sym->offsets[i], params[i], k->sym->sizes[i]);
    *out = l;
    return CUDA_SUCCESS;
}

static CUresult fake_cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    FAKE_COLD();
    ENTER(cuLaunchKernelEx);
    fake_launch *l;
    CUresult r = record_launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
                               c->blockDimZ, c->sharedMemBytes, c->hStream, params, extra, &l);
    if (l != NULL) {
        l->ex = 1;
        l->nattrs = c->numAttrs;
        for (unsigned i = 0; i < c->numAttrs; i++) {
            const CUlaunchAttribute *a = &c->attrs[i];
            switch (a->id) {
            case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
                l->cluster[0] = a->value.clusterDim.x;
                l->cluster[1] = a->value.clusterDim.y;
                l->cluster[2] = a->value.clusterDim.z;
                break;
            case CU_LAUNCH_ATTRIBUTE_COOPERATIVE: l->cooperative = a->value.cooperative; break;
            case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
                l->pdl = a->value.programmaticStreamSerializationAllowed;
                break;
            case CU_LAUNCH_ATTRIBUTE_PRIORITY: l->priority = a->value.priority, l->has_priority = 1; break;
            default: l->nattrs = -1; break;   /* something the runtime should not send */
            }
        }
    }
    LEAVE(r);
}

static CUresult fake_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                    unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                    CUstream stream, void **params, void **extra)
{
    FAKE_COLD();
    ENTER(cuLaunchKernel);
    fake_launch *l;
    LEAVE(record_launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra, &l));
}

static CUresult fake_cuStreamSynchronize(CUstream stream)
{
    (void)stream;
    ENTER(cuStreamSynchronize);    /* faults are injected with fake_cuda_fail */
    LEAVE(CUDA_SUCCESS);
}

/* ---- frees, as a tool sees them ---------------------------------------------- */

/* The tool fake_cuda_set_tool installed (the fake CUPTI): told of each free's entry and
 * exit, on the calling thread and outside the lock, as CUPTI's callbacks are. */
static fake_cuda_tool_fn tool;

static void tell_tool(const char *entry, int exit, const void *params, CUresult r)
{
    fake_cuda_tool_fn t = __atomic_load_n(&tool, __ATOMIC_ACQUIRE);
    if (t)
        t(entry, exit, params, (int)r);
}

/* Forget the live allocation at \p p (under lock): CUDA_ERROR_INVALID_VALUE if none. */
static CUresult forget(CUdeviceptr p)
{
    for (int i = 0; i < st.nallocs; i++)
        if (st.allocs[i].live && st.allocs[i].base == p) {
            st.allocs[i].live = 0;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_VALUE;
}

static CUresult free_locked(int e, CUdeviceptr p)
{
    pthread_mutex_lock(&lock);
    CUresult r = enter(e);
    if (r == CUDA_SUCCESS)
        r = forget(p);
    pthread_mutex_unlock(&lock);
    return r;
}

static CUresult fake_cuMemFree(CUdeviceptr p)
{
    tell_tool("cuMemFree_v2", 0, &p, CUDA_SUCCESS);
    CUresult r = free_locked(E_cuMemFree, p);
    tell_tool("cuMemFree_v2", 1, &p, r);
    return r;
}

static CUresult fake_cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
    struct { CUdeviceptr dptr; CUstream hStream; } params = {p, s};   /* cuMemFreeAsync_params */
    tell_tool("cuMemFreeAsync", 0, &params, CUDA_SUCCESS);
    CUresult r = free_locked(E_cuMemFreeAsync, p);
    tell_tool("cuMemFreeAsync", 1, &params, r);
    return r;
}

static CUresult fake_cuMemUnmap(CUdeviceptr p, size_t size)
{
    struct { CUdeviceptr ptr; size_t size; } params = {p, size};       /* cuMemUnmap_params */
    tell_tool("cuMemUnmap", 0, &params, CUDA_SUCCESS);
    CUresult r = free_locked(E_cuMemUnmap, p);
    tell_tool("cuMemUnmap", 1, &params, r);
    return r;
}

/* Set while cuPointerGetAttribute asks through cuPointerGetAttributes' code. Under lock. */
static int single_attr;

/* As the driver does: attributes of an address it does not know are zero, and success. */
static CUresult pointer_attributes(unsigned n, CUpointer_attribute *attrs, void **data, CUdeviceptr ptr);
static CUresult fake_cuPointerGetAttributes(unsigned n, CUpointer_attribute *attrs, void **data,
                                            CUdeviceptr ptr)
{
    ENTER(cuPointerGetAttributes);
    LEAVE(pointer_attributes(n, attrs, data, ptr));
}

static CUresult fake_cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr ptr)
{
    ENTER(cuPointerGetAttribute);
    single_attr = 1;
    CUresult r = pointer_attributes(1, &attr, &data, ptr);
    single_attr = 0;
    LEAVE(r);
}

#undef LEAVE
#define LEAVE(result) return (result)
static CUresult pointer_attributes(unsigned n, CUpointer_attribute *attrs, void **data, CUdeviceptr ptr)
{
    int a = -1;
    for (int i = 0; i < st.nallocs; i++)
        if (st.allocs[i].live && ptr >= st.allocs[i].base && ptr - st.allocs[i].base < st.allocs[i].size)
            a = i;
    for (unsigned i = 0; i < n; i++) {
        unsigned long long v = 0;
        size_t bytes = 8;
        switch (attrs[i]) {
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
            v = a < 0 ? 0 : st.allocs[a].type == CU_MEMORYTYPE_UNIFIED ? CU_MEMORYTYPE_DEVICE : (unsigned)st.allocs[a].type;
            bytes = sizeof(unsigned);
            break;
        case CU_POINTER_ATTRIBUTE_IS_MANAGED: v = a >= 0 && st.allocs[a].type == CU_MEMORYTYPE_UNIFIED; bytes = 1; break;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: v = a < 0 ? 0 : (unsigned)st.allocs[a].device; bytes = 4; break;
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: v = a < 0 ? 0 : st.allocs[a].base; break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE: v = a < 0 ? 0 : st.allocs[a].size; break;
        case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: v = a < 0 ? 0 : ptr; break;
        case CU_POINTER_ATTRIBUTE_BUFFER_ID: v = a < 0 ? 0 : st.allocs[a].id; break;
        case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
            v = a < 0 ? 0 : st.allocs[a].map_size ? st.allocs[a].map_base : st.allocs[a].base;
            break;
        case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
            v = a < 0 ? 0 : st.allocs[a].map_size ? st.allocs[a].map_size : st.allocs[a].size;
            break;
        case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: {
            /* The current context's device: its own memory, managed and mapped host
             * memory read-write; another device's as fake_cuda_peer_flags says. */
            if (st.access_flags_unknown && !(st.access_flags_unknown == 2 && single_attr))
                LEAVE(CUDA_ERROR_INVALID_VALUE);
            int cur = current_index();
            if (cur < 0)
                LEAVE(CUDA_ERROR_INVALID_CONTEXT);
            v = a < 0 ? CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE
                : st.allocs[a].type == CU_MEMORYTYPE_DEVICE && st.allocs[a].device != ctx_device[cur]
                    ? (unsigned)st.peer_flags : CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE;
            bytes = sizeof(unsigned);
            break;
        }
        default: LEAVE(CUDA_ERROR_INVALID_VALUE);
        }
        memcpy(data[i], &v, bytes);
    }
    LEAVE(CUDA_SUCCESS);
}

#undef LEAVE
#define LEAVE(result)                       \
    do {                                    \
        CUresult leave_ = (result);         \
        pthread_mutex_unlock(&lock);        \
        return leave_;                      \
    } while (0)

static CUresult fake_cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer)
{
    ENTER(cuDeviceCanAccessPeer);
    *can = dev != peer && st.peer_access;
    LEAVE(CUDA_SUCCESS);
}

static CUresult attribute(fake_kernel *k, CUfunction_attribute attr, int *value)
{
    switch (attr) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = 32; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = FAKE_CUDA_STATIC_SHARED; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *value = k->max_dyn_shared; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *value = 10 * st.cc_major + st.cc_minor; break;
    default: *value = 0; break;
    }
    return CUDA_SUCCESS;
}

static CUresult fake_cuFuncGetAttribute(int *value, CUfunction_attribute attr, CUfunction f)
{
    ENTER(cuFuncGetAttribute);
    fake_kernel *k = find_kernel(f);
    if (k == NULL || k->ctx == -1)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    LEAVE(attribute(k, attr, value));
}

static CUresult fake_cuKernelGetAttribute(int *value, CUfunction_attribute attr, CUkernel kern, CUdevice d)
{
    (void)d;
    ENTER(cuKernelGetAttribute);
    fake_kernel *k = find_kernel(kern);
    if (k == NULL || k->ctx != -1)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    LEAVE(attribute(k, attr, value));
}

static CUresult set_attribute(fake_kernel *k, CUfunction_attribute attr, int value)
{
    if (attr != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
        return CUDA_ERROR_INVALID_VALUE;
    if (value < 0 || value + FAKE_CUDA_STATIC_SHARED > st.optin_shared)
        return CUDA_ERROR_INVALID_VALUE;
    k->max_dyn_shared = value;
    return CUDA_SUCCESS;
}

static CUresult fake_cuFuncSetAttribute(CUfunction f, CUfunction_attribute attr, int value)
{
    ENTER(cuFuncSetAttribute);
    fake_kernel *k = find_kernel(f);
    if (k == NULL || k->ctx == -1)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    LEAVE(set_attribute(k, attr, value));
}

static CUresult fake_cuKernelSetAttribute(CUfunction_attribute attr, int value, CUkernel kern, CUdevice d)
{
    (void)d;
    ENTER(cuKernelSetAttribute);
    fake_kernel *k = find_kernel(kern);
    if (k == NULL || k->ctx != -1)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    LEAVE(set_attribute(k, attr, value));
}

/* A made-up but deterministic rule: 768 threads, 256 with more than 64 KiB of
 * dynamic shared memory, never above the limit. */
static CUresult fake_cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block, CUfunction f,
                                                      CUoccupancyB2DSize fn, size_t smem, int limit)
{
    ENTER(cuOccupancyMaxPotentialBlockSize);
    fake_kernel *k = find_kernel(f);
    if (k == NULL || k->ctx == -1 || fn != NULL)
        LEAVE(CUDA_ERROR_INVALID_HANDLE);
    st.occ_last_shared = (int)smem;
    st.occ_last_limit = limit;
    int b = smem > 64 * 1024 ? 256 : 768;
    if (limit > 0 && b > limit)
        b = limit;
    *block = b;
    *min_grid = 264;
    LEAVE(CUDA_SUCCESS);
}

/* ---- graphs ------------------------------------------------------------------
 * A graph holds up to FAKE_CUDA_GRAPH_NODES nodes, added in an order that is
 * already topological (a node's dependencies exist before it); a node's
 * handle is its address in the graph. An instance copies the graph's nodes,
 * and a launch of it records one fake_launch per kernel node, in that order.
 */
typedef struct fake_node {
    int kernel;                                  /* 1: a kernel node; 0: an empty node */
    int memcpy;                                  /* 1: a host-to-device memcpy node */
    CUdeviceptr copy_dst;
    const void *copy_src;
    size_t copy_bytes;
    fake_kernel *k;
    unsigned grid[3], block[3], shared;
    int ctx;                                     /* the context it was added in */
    int ndeps, deps[FAKE_CUDA_GRAPH_NODES];      /* indices of its dependencies */
    unsigned char params[FAKE_CUDA_PARAM_BYTES]; /* the argument bytes at their offsets */
    void *ptrs[MAX_PARAMS];                      /* what GetParams hands out: into params */
} fake_node;

typedef struct fake_graph { int live; int nnodes; fake_node nodes[FAKE_CUDA_GRAPH_NODES]; } fake_graph;
typedef struct fake_exec { int live; fake_graph *from; int nnodes; fake_node nodes[FAKE_CUDA_GRAPH_NODES]; } fake_exec;

#define MAX_GRAPHS 8
static fake_graph graphs[MAX_GRAPHS];
static fake_exec execs[MAX_GRAPHS];

static fake_graph *find_graph(CUgraph g)
{
    for (int i = 0; i < MAX_GRAPHS; i++)
        if ((void *)&graphs[i] == (void *)g && graphs[i].live)
            return &graphs[i];
    return NULL;
}

static fake_exec *find_exec(CUgraphExec e)
{
    for (int i = 0; i < MAX_GRAPHS; i++)
        if ((void *)&execs[i] == (void *)e && execs[i].live)
            return &execs[i];
    return NULL;
}

/* The live graph holding \p node, and its index there; NULL if none. */
static fake_graph *node_graph(CUgraphNode node, int *index)
{
    for (int i = 0; i < MAX_GRAPHS; i++) {
        fake_graph *g = &graphs[i];
        const char *p = (const char *)(void *)node, *base = (const char *)g->nodes;
        if (g->live && p >= base && p < base + (size_t)g->nnodes * sizeof g->nodes[0] &&
            (size_t)(p - base) % sizeof g->nodes[0] == 0) {
            *index = (int)((size_t)(p - base) / sizeof g->nodes[0]);
            return g;
        }
    }
    return NULL;
}

/* Fill a kernel node from \p p as the driver reads it: func, else kern in ctx (NULL: current). */
static CUresult kernel_node_fill(fake_node *n, const CUDA_KERNEL_NODE_PARAMS *p)
{
    fake_kernel *k;
    int ctx = current_index();
    if (p->func != NULL) {
        k = find_kernel(p->func);
        if (k == NULL || k->ctx == -1)
            return CUDA_ERROR_INVALID_HANDLE;
        ctx = k->ctx;
    } else {
        k = find_kernel(p->kern);
        if (k == NULL || k->ctx != -1)
            return CUDA_ERROR_INVALID_HANDLE;
        if (p->ctx != NULL)
            ctx = ctx_index(p->ctx);
        if (ctx < 0)
            return CUDA_ERROR_INVALID_CONTEXT;
    }
    if (p->extra != NULL || (p->kernelParams == NULL && k->sym->n != 0))
        return CUDA_ERROR_INVALID_VALUE;
    if (p->gridDimX == 0 || p->gridDimY == 0 || p->gridDimZ == 0 || p->blockDimX == 0 ||
        p->blockDimY == 0 || p->blockDimZ == 0 || (int)p->sharedMemBytes > k->max_dyn_shared)
        return CUDA_ERROR_INVALID_VALUE;
    n->kernel = 1;
    n->k = k;
    n->ctx = ctx;
    n->grid[0] = p->gridDimX, n->grid[1] = p->gridDimY, n->grid[2] = p->gridDimZ;
    n->block[0] = p->blockDimX, n->block[1] = p->blockDimY, n->block[2] = p->blockDimZ;
    n->shared = p->sharedMemBytes;
    memset(n->params, 0, sizeof n->params);
    for (unsigned i = 0; i < k->sym->n; i++) {
        if (k->sym->offsets[i] + k->sym->sizes[i] <= sizeof n->params)
            memcpy(n->params + k->sym->offsets[i], p->kernelParams[i], k->sym->sizes[i]);
        n->ptrs[i] = n->params + k->sym->offsets[i];
    }
    return CUDA_SUCCESS;
}

static CUresult fake_cuGraphCreate(CUgraph *graph, unsigned flags)
{
    ENTER(cuGraphCreate);
    if (graph == NULL || flags != 0)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    for (int i = 0; i < MAX_GRAPHS; i++) {
        if (!graphs[i].live) {
            memset(&graphs[i], 0, sizeof graphs[i]);
            graphs[i].live = 1;
            *graph = (CUgraph)(void *)&graphs[i];
            LEAVE(CUDA_SUCCESS);
        }
    }
    LEAVE(CUDA_ERROR_OUT_OF_MEMORY);
}

static CUresult fake_cuGraphDestroy(CUgraph graph)
{
    ENTER(cuGraphDestroy);
    fake_graph *g = find_graph(graph);
    if (g == NULL)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    g->live = 0;
    LEAVE(CUDA_SUCCESS);
}

/* A new node of \p g after \p deps (which must be nodes of g). Under lock. */
static CUresult add_node(fake_graph *g, const CUgraphNode *deps, size_t ndeps, fake_node **out)
{
    if (g == NULL || (deps == NULL && ndeps != 0))
        return CUDA_ERROR_INVALID_VALUE;
    if (g->nnodes == FAKE_CUDA_GRAPH_NODES)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fake_node *n = &g->nodes[g->nnodes];
    memset(n, 0, sizeof *n);
    for (size_t i = 0; i < ndeps; i++) {
        int at;
        if (node_graph(deps[i], &at) != g)
            return CUDA_ERROR_INVALID_VALUE;
        n->deps[n->ndeps++] = at;
    }
    *out = n;
    return CUDA_SUCCESS;
}

static CUresult fake_cuGraphAddKernelNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
                                          size_t ndeps, const CUDA_KERNEL_NODE_PARAMS *p)
{
    ENTER(cuGraphAddKernelNode);
    fake_graph *g = find_graph(graph);
    fake_node *n = NULL;
    CUresult r = node == NULL || p == NULL ? CUDA_ERROR_INVALID_VALUE : add_node(g, deps, ndeps, &n);
    if (r == CUDA_SUCCESS)
        r = kernel_node_fill(n, p);
    if (r == CUDA_SUCCESS) {
        g->nnodes++;
        *node = (CUgraphNode)(void *)n;
    }
    LEAVE(r);
}

static CUresult fake_cuGraphAddEmptyNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
                                         size_t ndeps)
{
    ENTER(cuGraphAddEmptyNode);
    fake_graph *g = find_graph(graph);
    fake_node *n = NULL;
    CUresult r = node == NULL ? CUDA_ERROR_INVALID_VALUE : add_node(g, deps, ndeps, &n);
    if (r == CUDA_SUCCESS) {
        g->nnodes++;
        *node = (CUgraphNode)(void *)n;
    }
    LEAVE(r);
}

static CUresult fake_cuGraphAddMemcpyNode(CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,
                                          size_t ndeps, const CUDA_MEMCPY3D *c, CUcontext ctx)
{
    ENTER(cuGraphAddMemcpyNode);
    fake_graph *g = find_graph(graph);
    fake_node *n = NULL;
    int ci = ctx_index(ctx);
    CUresult r = node == NULL || c == NULL || ci < 0 ? CUDA_ERROR_INVALID_VALUE : add_node(g, deps, ndeps, &n);
    /* Only what ks_global_node_add makes: one row from host memory into a variable. */
    if (r == CUDA_SUCCESS && (c->srcMemoryType != CU_MEMORYTYPE_HOST || c->dstMemoryType != CU_MEMORYTYPE_DEVICE ||
                              c->Height != 1 || c->Depth != 1 || !in_global(c->dstDevice, c->WidthInBytes)))
        r = CUDA_ERROR_INVALID_VALUE;
    if (r == CUDA_SUCCESS) {
        n->memcpy = 1;
        n->ctx = ci;
        n->copy_dst = c->dstDevice;
        n->copy_src = c->srcHost;
        n->copy_bytes = c->WidthInBytes;
        g->nnodes++;
        *node = (CUgraphNode)(void *)n;
    }
    LEAVE(r);
}

static CUresult fake_cuGraphKernelNodeGetParams(CUgraphNode node, CUDA_KERNEL_NODE_PARAMS *p)
{
    ENTER(cuGraphKernelNodeGetParams);
    int at;
    fake_graph *g = node_graph(node, &at);
    if (g == NULL || p == NULL || !g->nodes[at].kernel)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    const fake_node *n = &g->nodes[at];
    memset(p, 0, sizeof *p);
    /* A node of a CUkernel reports it in kern; one of a function, in func. */
    if (n->k->ctx == -1)
        p->kern = (CUkernel)(void *)n->k;
    else
        p->func = (CUfunction)(void *)n->k;
    p->ctx = (CUcontext)(void *)&ctx_objs[n->ctx];
    p->gridDimX = n->grid[0], p->gridDimY = n->grid[1], p->gridDimZ = n->grid[2];
    p->blockDimX = n->block[0], p->blockDimY = n->block[1], p->blockDimZ = n->block[2];
    p->sharedMemBytes = n->shared;
    p->kernelParams = (void **)g->nodes[at].ptrs;
    LEAVE(CUDA_SUCCESS);
}

static CUresult fake_cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph, unsigned long long flags)
{
    ENTER(cuGraphInstantiateWithFlags);
    fake_graph *g = find_graph(graph);
    if (exec == NULL || g == NULL || flags != 0)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    for (int i = 0; i < MAX_GRAPHS; i++) {
        if (!execs[i].live) {
            execs[i].live = 1;
            execs[i].from = g;
            execs[i].nnodes = g->nnodes;
            memcpy(execs[i].nodes, g->nodes, sizeof g->nodes);
            *exec = (CUgraphExec)(void *)&execs[i];
            LEAVE(CUDA_SUCCESS);
        }
    }
    LEAVE(CUDA_ERROR_OUT_OF_MEMORY);
}

static CUresult fake_cuGraphExecDestroy(CUgraphExec exec)
{
    ENTER(cuGraphExecDestroy);
    fake_exec *e = find_exec(exec);
    if (e == NULL)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    e->live = 0;
    LEAVE(CUDA_SUCCESS);
}

static CUresult fake_cuGraphLaunch(CUgraphExec exec, CUstream stream)
{
    ENTER(cuGraphLaunch);
    fake_exec *e = find_exec(exec);
    if (e == NULL)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    if (!has_context())
        LEAVE(CUDA_ERROR_INVALID_CONTEXT);
    for (int i = 0; i < e->nnodes; i++) {
        const fake_node *n = &e->nodes[i];
        if (n->memcpy)                           /* the source is read now, as the driver does */
            memcpy((void *)(uintptr_t)n->copy_dst, n->copy_src, n->copy_bytes);
        if (!n->kernel || st.nlaunches == FAKE_CUDA_MAX_LAUNCHES)
            continue;
        fake_launch *l = &st.launches[st.nlaunches++];
        memset(l, 0, sizeof *l);
        l->symbol = n->k->sym->name;
        memcpy(l->grid, n->grid, sizeof l->grid);
        memcpy(l->block, n->block, sizeof l->block);
        l->shared = n->shared;
        l->stream = stream;
        l->ctx = n->ctx;
        l->graph = 1;
        l->nparams = n->k->sym->n;
        memcpy(l->params, n->params, sizeof l->params);
    }
    LEAVE(CUDA_SUCCESS);
}

static CUresult fake_cuGraphExecKernelNodeSetParams(CUgraphExec exec, CUgraphNode node,
                                                    const CUDA_KERNEL_NODE_PARAMS *p)
{
    ENTER(cuGraphExecKernelNodeSetParams);
    fake_exec *e = find_exec(exec);
    int at;
    fake_graph *g = node_graph(node, &at);
    if (e == NULL || p == NULL || g == NULL || e->from != g || at >= e->nnodes || !e->nodes[at].kernel)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    /* Like the driver, the fake lets the kernel change: the runtime must refuse that itself. */
    fake_node n = e->nodes[at];
    CUresult r = kernel_node_fill(&n, p);
    if (r == CUDA_SUCCESS)
        e->nodes[at] = n;
    LEAVE(r);
}

static CUresult fake_cuGraphExecUpdate(CUgraphExec exec, CUgraph graph, CUgraphExecUpdateResultInfo *info)
{
    ENTER(cuGraphExecUpdate);
    fake_exec *e = find_exec(exec);
    fake_graph *g = find_graph(graph);
    if (e == NULL || g == NULL || info == NULL)
        LEAVE(CUDA_ERROR_INVALID_VALUE);
    memset(info, 0, sizeof *info);
    CUgraphExecUpdateResult why = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    if (g->nnodes != e->nnodes)
        why = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    for (int i = 0; i < g->nnodes && why == CU_GRAPH_EXEC_UPDATE_SUCCESS; i++) {
        const fake_node *a = &g->nodes[i], *b = &e->nodes[i];
        if (a->ndeps != b->ndeps || memcmp(a->deps, b->deps, (size_t)a->ndeps * sizeof a->deps[0]) != 0)
            why = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
        else if (a->kernel != b->kernel)
            why = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
        else if (a->kernel && a->k->sym != b->k->sym)
            why = CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE;
        if (why != CU_GRAPH_EXEC_UPDATE_SUCCESS)
            info->errorNode = (CUgraphNode)(void *)&g->nodes[i];
    }
    info->result = why;
    if (why != CU_GRAPH_EXEC_UPDATE_SUCCESS)
        LEAVE(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
    memcpy(e->nodes, g->nodes, sizeof g->nodes);
    LEAVE(CUDA_SUCCESS);
}

/* ---- the way in ---------------------------------------------------------------- */

static void *entry_pointer(int e)
{
    /* void (*)(void) is the generic function pointer type C allows casting through. */
    void (*fn)(void) = NULL;
    switch (e) {
#define X(name) case E_##name: fn = (void (*)(void))fake_##name; break;
        FAKE_DRIVER_ENTRIES(X)
#undef X
    default: break;
    }
    void *p;
    memcpy(&p, &fn, sizeof p);
    return p;
}

static CUresult get_proc(int self, const char *symbol, void **pfn, int version,
                         CUdriverProcAddressQueryResult *status)
{
    pthread_mutex_lock(&lock);
    st.calls[self]++;
    st.proc_version = version;
    int e = entry_index(symbol);
    if (e >= 0)
        st.versions[e] = version;
    void *p = e >= 0 && !st.hidden[e] ? entry_pointer(e) : NULL;
    pthread_mutex_unlock(&lock);
    *pfn = p;
    if (status)
        *status = p ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return p ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
    (void)flags;
    return get_proc(E_cuGetProcAddress_v2, symbol, pfn, version, status);
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    (void)flags;
    return get_proc(E_cuGetProcAddress, symbol, pfn, version, NULL);
}

/* ---- control ------------------------------------------------------------------- */

FAKE_API void fake_cuda_reset(void)
{
    pthread_mutex_lock(&lock);
    memset(&st, 0, sizeof st);
    memset(delay_us, 0, sizeof delay_us);
    memset(graphs, 0, sizeof graphs);
    memset(execs, 0, sizeof execs);
    memset(globals, 0, sizeof globals);
    nglobals = 0;
    memset(&last_copy, 0, sizeof last_copy);
    current = NULL;
    ctx_depth = 0;
    st.cc_major = 9, st.cc_minor = 0;          /* an H100/H200 */
    st.optin_shared = 227 * 1024;
    pthread_mutex_unlock(&lock);
}

FAKE_API void fake_cuda_fail(const char *entry, CUresult result, int nth)
{
    pthread_mutex_lock(&lock);
    int e = entry_index(entry);
    if (e >= 0 && st.nfails < MAX_FAILS && nth > 0) {
        st.fails[st.nfails].entry = e;
        st.fails[st.nfails].result = result;
        st.fails[st.nfails].left = nth;
        st.nfails++;
    }
    pthread_mutex_unlock(&lock);
}

FAKE_API void fake_cuda_set_params(const char *symbol, unsigned n, const size_t *offsets,
                                   const size_t *sizes)
{
    pthread_mutex_lock(&lock);
    fake_sym *s = NULL;
    for (int i = 0; i < st.nsyms && s == NULL; i++)
        if (strcmp(st.syms[i].name, symbol) == 0)
            s = &st.syms[i];
    if (s == NULL && st.nsyms < MAX_SYMS) {
        s = &st.syms[st.nsyms++];
        strncpy(s->name, symbol, sizeof s->name - 1);
    }
    if (s != NULL) {
        s->n = n < MAX_PARAMS ? n : MAX_PARAMS;
        for (unsigned i = 0; i < s->n; i++) {
            s->offsets[i] = offsets[i];
            s->sizes[i] = sizes[i];
        }
    }
    pthread_mutex_unlock(&lock);
}

FAKE_API void fake_cuda_hide(const char *entry)
{
    pthread_mutex_lock(&lock);
    int e = entry_index(entry);
    if (e >= 0)
        st.hidden[e] = 1;
    pthread_mutex_unlock(&lock);
}

FAKE_API void fake_cuda_delay(const char *entry, unsigned microseconds)
{
    int e = entry_index(entry);
    if (e >= 0)
        delay_us[e] = microseconds;
}

FAKE_API void fake_cuda_no_current_context(void)
{
    pthread_mutex_lock(&lock);
    st.need_set_current = 1;
    pthread_mutex_unlock(&lock);
}

FAKE_API int fake_cuda_calls(const char *entry)
{
    pthread_mutex_lock(&lock);
    int e = entry_index(entry);
    int n = e >= 0 ? st.calls[e] : -1;
    pthread_mutex_unlock(&lock);
    return n;
}

FAKE_API int fake_cuda_launch_count(void)
{
    pthread_mutex_lock(&lock);
    int n = st.nlaunches;
    pthread_mutex_unlock(&lock);
    return n;
}

FAKE_API const fake_launch *fake_cuda_launch(int i)
{
    pthread_mutex_lock(&lock);
    const fake_launch *l = i >= 0 && i < st.nlaunches ? &st.launches[i] : NULL;
    pthread_mutex_unlock(&lock);
    return l;
}

FAKE_API const char *fake_cuda_last_symbol(void)
{
    return st.last_symbol;
}

FAKE_API const void *fake_cuda_last_image(const unsigned char **copy, size_t *n)
{
    if (copy)
        *copy = st.image_copy;
    if (n)
        *n = st.image_n;
    return st.last_image;
}

FAKE_API int fake_cuda_proc_version(void)
{
    return st.proc_version;
}

FAKE_API int fake_cuda_live_libraries(void)
{
    pthread_mutex_lock(&lock);
    int n = 0;
    for (int i = 0; i < st.nlibs; i++)
        n += st.libs[i].live;
    pthread_mutex_unlock(&lock);
    return n;
}

FAKE_API void fake_cuda_set_context(int index)
{
    current = index >= 0 && index < FAKE_CUDA_CONTEXTS ? (CUcontext)(void *)&ctx_objs[index] : NULL;
}

FAKE_API void fake_cuda_set_device(int major, int minor, int optin_shared)
{
    pthread_mutex_lock(&lock);
    st.cc_major = major, st.cc_minor = minor, st.optin_shared = optin_shared;
    pthread_mutex_unlock(&lock);
}

FAKE_API int fake_cuda_live_graphs(int *execs_live)
{
    pthread_mutex_lock(&lock);
    int n = 0, e = 0;
    for (int i = 0; i < MAX_GRAPHS; i++)
        n += graphs[i].live, e += execs[i].live;
    pthread_mutex_unlock(&lock);
    if (execs_live)
        *execs_live = e;
    return n;
}

FAKE_API int fake_cuda_live_modules(void)
{
    pthread_mutex_lock(&lock);
    int n = 0;
    for (int i = 0; i < st.nlibs; i++)
        n += st.libs[i].live && st.libs[i].ctx != -1;
    pthread_mutex_unlock(&lock);
    return n;
}

FAKE_API void fake_cuda_occupancy_args(int *shared, int *limit)
{
    pthread_mutex_lock(&lock);
    *shared = st.occ_last_shared;
    *limit = st.occ_last_limit;
    pthread_mutex_unlock(&lock);
}

FAKE_API int fake_cuda_proc_version_of(const char *entry)
{
    pthread_mutex_lock(&lock);
    int e = entry_index(entry);
    int v = e >= 0 ? st.versions[e] : -1;
    pthread_mutex_unlock(&lock);
    return v;
}

FAKE_API void fake_cuda_lazy_jit(int on)
{
    pthread_mutex_lock(&lock);
    st.lazy_jit = on;
    pthread_mutex_unlock(&lock);
}

/* Where the fake's allocations live: a range reserved PROT_NONE, as the real
 * driver reserves device address space in the process ("---p" in
 * /proc/self/maps), so nothing else is ever mapped there and the runtime's
 * pointer check sees what it sees on a GPU. A fixed address was not enough:
 * under ASan 16 TiB lies in the sanitizer's shadow, mapped memory the check
 * took for pageable host memory. */
static unsigned long long va_base(void)
{
    static unsigned long long base;
    if (base == 0) {
        size_t bytes = (size_t)FAKE_CUDA_ALLOCS * FAKE_CUDA_VA_STRIDE;
        void *p = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        base = p == MAP_FAILED ? FAKE_CUDA_VA_BASE : (unsigned long long)(uintptr_t)p;
    }
    return base;
}

FAKE_API unsigned long long fake_cuda_alloc_at(unsigned long long at, size_t size, int type, int device)
{
    pthread_mutex_lock(&lock);
    unsigned long long base = 0;
    if (st.nallocs < FAKE_CUDA_ALLOCS) {
        /* Addresses nothing readable in the process: the runtime must never touch them. */
        base = at != 0 ? at : va_base() + (unsigned long long)st.nallocs * FAKE_CUDA_VA_STRIDE;
        st.allocs[st.nallocs].base = base;
        st.allocs[st.nallocs].size = size;
        st.allocs[st.nallocs].type = type;
        st.allocs[st.nallocs].device = device;
        st.allocs[st.nallocs].id = ++st.next_buffer_id;
        st.allocs[st.nallocs++].live = 1;
    }
    pthread_mutex_unlock(&lock);
    return base;
}

FAKE_API unsigned long long fake_cuda_alloc(size_t size, int type, int device)
{
    return fake_cuda_alloc_at(0, size, type, device);
}

FAKE_API void fake_cuda_remap(unsigned long long ptr, size_t size, int device)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < st.nallocs; i++)
        if (st.allocs[i].live && st.allocs[i].base == ptr) {
            st.allocs[i].size = size;
            st.allocs[i].device = device;
            st.allocs[i].id = ++st.next_buffer_id;   /* as the H100's driver 580 does on every cuMemMap */
        }
    pthread_mutex_unlock(&lock);
}

FAKE_API void fake_cuda_free(unsigned long long ptr)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < st.nallocs; i++)
        if (st.allocs[i].base == ptr)
            st.allocs[i].live = 0;
    pthread_mutex_unlock(&lock);
}

FAKE_API void fake_cuda_mapping(unsigned long long ptr, unsigned long long base, size_t size)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < st.nallocs; i++)
        if (st.allocs[i].live && st.allocs[i].base == ptr)
            st.allocs[i].map_base = base, st.allocs[i].map_size = size;
    pthread_mutex_unlock(&lock);
}

FAKE_API void fake_cuda_set_tool(fake_cuda_tool_fn fn)
{
    __atomic_store_n(&tool, fn, __ATOMIC_RELEASE);
}

FAKE_API void fake_cuda_peer_access(int on)
{
    pthread_mutex_lock(&lock);
    st.peer_access = on;
    pthread_mutex_unlock(&lock);
}

FAKE_API void fake_cuda_peer_flags(int flags)
{
    pthread_mutex_lock(&lock);
    st.access_flags_unknown = flags == -1 ? 1 : flags == -2 ? 2 : 0;
    st.peer_flags = flags < 0 ? 0 : flags;
    pthread_mutex_unlock(&lock);
}

FAKE_API void fake_cuda_stream_context(CUstream s, int ctx)
{
    pthread_mutex_lock(&lock);
    if (st.nstreams < (int)(sizeof st.streams / sizeof st.streams[0])) {
        st.streams[st.nstreams].stream = s;
        st.streams[st.nstreams++].ctx = ctx;
    }
    pthread_mutex_unlock(&lock);
}

FAKE_API void fake_cuda_set_global(const char *symbol, size_t size)
{
    pthread_mutex_lock(&lock);
    if (nglobals < MAX_GLOBALS && size <= FAKE_CUDA_GLOBAL_BYTES) {
        struct fake_global *g = &globals[nglobals++];
        memset(g, 0, sizeof *g);
        strncpy(g->name, symbol, sizeof g->name - 1);
        g->size = size;
    }
    pthread_mutex_unlock(&lock);
}

FAKE_API unsigned char *fake_cuda_global(const char *symbol, int ctx)
{
    for (int i = 0; i < nglobals; i++)
        if (strcmp(globals[i].name, symbol) == 0 && ctx >= 0 && ctx < FAKE_CUDA_CONTEXTS)
            return globals[i].mem[ctx];
    return NULL;
}

FAKE_API size_t fake_cuda_last_copy(CUstream *stream, int *dir)
{
    if (stream)
        *stream = last_copy.stream;
    if (dir)
        *dir = last_copy.dir;
    return last_copy.bytes;
}
