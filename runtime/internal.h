/*
 * internal.h — what the runtime's files share and nothing outside sees:
 * the resolved driver entry points, the error setters, the per-image state,
 * the loaders' table of operations, and the entry points between the files:
 *
 *   driver.c   libcuda, resolved once          status.c   statuses, this thread's error
 *   context.c  contexts and devices            image.c    image state, the bytes to load
 *   load.c     load, resolve, ABI check, unload (through a ks__loader:)
 *   library.c  CUlibrary loading               module.c   CUmodule-per-context loading
 *   file.c     image files                     nvrtc.c    run-time compilation
 *   cache.c    NVRTC's disk cache              sha256.c   its hash
 *   launch.c   the launch fast path            query.c    attributes, shared memory, occupancy
 *   graph.c    graphs and typed kernel nodes   version.c  ks_version
 *   check.c    checked launches: the choice, the table, sync   pointers.c  pointers, extents
 *   nvtx.c     NVTX ranges                     trace.c    the launch trace
 *   cupti.c    libcupti and its one subscription, shared by:
 *   races_check.c  the races check: the calls it follows, the check (races.c: its happens-before core)
 *   watch.c    the free watch: the pointers check's cache trusted without a driver call
 *   global.c   device variables: addresses, the size proof, the accessors' copies
 * Internal names carry the "ks__" prefix; everything here is hidden by
 * -fvisibility=hidden except what is marked KS__API.
 */
#ifndef KS_INTERNAL_H
#define KS_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <cuda.h>
#include "kstub.h"

/* The library is built with -fvisibility=hidden; this marks the public API. */
#define KS__API __attribute__((visibility("default")))

#define KS__PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
/* The error setters: a path that calls one is unlikely, so the compiler
 * lays it out apart from the code around it and the paths that succeed stay
 * contiguous (fewer cache lines per launch: bench/cold.mk). */
#define KS__COLD __attribute__((cold))

/* ---- driver.c ------------------------------------------------------------ */

/*
 * Driver entry points, resolved once by ks__driver_load() through
 * cuGetProcAddress for the CUDA_VERSION we compiled against. The optional
 * ones are NULL when the driver lacks them.
 */
typedef struct ks__driver {
    /* First, what the launch and copy fast paths read: with ks__checks before
     * them, one cache line (ks__hot below). */
    CUresult (*LaunchKernel)(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                             unsigned int bx, unsigned int by, unsigned int bz,
                             unsigned int shared_bytes, CUstream stream, void **params, void **extra);
    /* never NULL once loaded: ks__launch_ex_missing where the driver lacks it */
    CUresult (*LaunchKernelEx)(const CUlaunchConfig *config, CUfunction f, void **params, void **extra);
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream);
    CUresult (*CtxGetCurrent)(CUcontext *ctx);
    int version;                    /* cuDriverGetVersion, e.g. 13000 */
    int use_library;                /* 1: cuLibrary*; 0: per-context cuModule* (the fallback) */
    CUresult (*Init)(unsigned int flags);
    CUresult (*GetErrorName)(CUresult error, const char **str);
    CUresult (*GetErrorString)(CUresult error, const char **str);
    CUresult (*DriverGetVersion)(int *version);
    CUresult (*CtxSetCurrent)(CUcontext ctx);
    CUresult (*CtxGetDevice)(CUdevice *device);
    CUresult (*DeviceGet)(CUdevice *device, int ordinal);
    CUresult (*DeviceGetAttribute)(int *value, CUdevice_attribute attr, CUdevice dev);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
    /* context-independent loading (CUDA 12.0+): all three, or the module fallback */
    CUresult (*LibraryLoadData)(CUlibrary *library, const void *code,
                                CUjit_option *jit_options, void **jit_values, unsigned int njit,
                                CUlibraryOption *lib_options, void **lib_values, unsigned int nlib);
    CUresult (*LibraryUnload)(CUlibrary library);
    CUresult (*LibraryGetKernel)(CUkernel *kernel, CUlibrary library, const char *name);
    /* the module fallback: one CUmodule per context */
    CUresult (*ModuleLoadDataEx)(CUmodule *module, const void *image, unsigned int n,
                                 CUjit_option *options, void **values);
    CUresult (*ModuleUnload)(CUmodule module);
    CUresult (*ModuleGetFunction)(CUfunction *fn, CUmodule module, const char *name);
    CUresult (*CtxPushCurrent)(CUcontext ctx);
    CUresult (*CtxPopCurrent)(CUcontext *ctx);
    /* device variables (global.c): their addresses, and copies to and from them */
    CUresult (*LibraryGetGlobal)(CUdeviceptr *ptr, size_t *bytes, CUlibrary library, const char *name);
    CUresult (*ModuleGetGlobal)(CUdeviceptr *ptr, size_t *bytes, CUmodule module, const char *name);
    CUresult (*MemcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes, CUstream stream);
    /* optional: an image's kernel list (CUDA 12.4+), for internal-linkage kernels (symbol.h) */
    CUresult (*LibraryGetKernelCount)(unsigned int *count, CUlibrary lib);
    CUresult (*LibraryEnumerateKernels)(CUkernel *kernels, unsigned int n, CUlibrary lib);
    CUresult (*KernelGetName)(const char **name, CUkernel kernel);
    CUresult (*ModuleGetFunctionCount)(unsigned int *count, CUmodule mod);
    CUresult (*ModuleEnumerateFunctions)(CUfunction *functions, unsigned int n, CUmodule mod);
    CUresult (*FuncGetName)(const char **name, CUfunction fn);
    /* optional: CUDA 12.4+ (the load-time ABI check is skipped without them) */
    CUresult (*KernelGetParamInfo)(CUkernel kernel, size_t index, size_t *offset, size_t *size);
    CUresult (*FuncGetParamInfo)(CUfunction fn, size_t index, size_t *offset, size_t *size);
    /* optional: launch attributes, queries, occupancy, shared-memory opt-in */
    CUresult (*KernelGetFunction)(CUfunction *fn, CUkernel kernel);
    CUresult (*FuncGetAttribute)(int *value, CUfunction_attribute attr, CUfunction f);
    CUresult (*KernelGetAttribute)(int *value, CUfunction_attribute attr, CUkernel kernel, CUdevice dev);
    CUresult (*FuncSetAttribute)(CUfunction f, CUfunction_attribute attr, int value);
    CUresult (*KernelSetAttribute)(CUfunction_attribute attr, int value, CUkernel kernel, CUdevice dev);
    CUresult (*OccupancyMaxPotentialBlockSize)(int *min_grid, int *block, CUfunction f,
                                               CUoccupancyB2DSize smem_fn, size_t smem, int limit);
    /* optional: the run-time checks (check.c, pointers.c) */
    CUresult (*StreamSynchronize)(CUstream stream);
    CUresult (*PointerGetAttributes)(unsigned n, CUpointer_attribute *attrs, void **data, CUdeviceptr ptr);
    CUresult (*PointerGetAttribute)(void *data, CUpointer_attribute attr, CUdeviceptr ptr);
    CUresult (*DeviceCanAccessPeer)(int *can, CUdevice dev, CUdevice peer);
    /* optional: a stream's context (the module fallback launches in it; green contexts) */
    CUresult (*StreamGetCtx)(CUstream stream, CUcontext *ctx);
} ks__driver;

/*
 * The driver table and the word of check switches, as one object aligned to
 * a cache line (driver.c): a launch reads ks__checks and the table's first
 * fields, which then share one line, the one a real launch (which evicts the
 * caches) makes it miss again (bench/cold.mk measures it).
 *   ks__cu      filled once by ks__driver_load(); read-only afterwards
 *   ks__checks  KS_CHECK_* bits in force (or KS__CHECK_BAD_ENV); written by
 *               check.c alone (ks_checks_set, KSTUB_CHECK), read relaxed by
 *               every launch and copy
 */
typedef struct ks__hot_words {
    unsigned checks;
    ks__driver cu;
} ks__hot_words;
extern ks__hot_words ks__hot;
#define ks__cu (ks__hot.cu)
#define ks__checks (ks__hot.checks)

/*
 * Load libcuda and call cuInit(0), once per process (later calls are cheap).
 * On failure sets this thread's error (naming \p kernel, which may be NULL)
 * and returns KS_ERR_NO_DRIVER or KS_ERR_DRIVER, the same on every call.
 */
ks_status ks__driver_load(const char *kernel);
/* What ks__cu.LaunchKernelEx is where the driver lacks cuLaunchKernelEx:
 * CUDA_ERROR_NOT_SUPPORTED, which launch.c reports as KS_ERR_UNSUPPORTED. */
CUresult ks__launch_ex_missing(const CUlaunchConfig *config, CUfunction f, void **params, void **extra);

/* ---- status.c ------------------------------------------------------------ */

/*
 * Record a failure in this thread's ks_error and return \p status.
 * message = "kernel '<kernel>': <detail>" (the prefix only when kernel != NULL).
 */
ks_status ks__error(ks_status status, const char *kernel, const char *fmt, ...) KS__PRINTF(3, 4) KS__COLD;

/* Names a CUresult: its name and text, each NULL when unknown; 0. */
typedef int (*ks__cu_namer)(int result, const char **name, const char **text);
/* Registers who names CUresults for ks__error_cu (driver.c does, when it
 * resolves the driver); until then a result is named by its number. */
void ks__status_cu_namer(ks__cu_namer namer);

/*
 * Record a failed driver call: message =
 * "kernel '<kernel>': [<detail>: ]<call> failed: <CUDA_ERROR_…> (<driver text>)".
 * \p fmt may be NULL for no detail.
 */
ks_status ks__error_cu(ks_status status, const char *kernel, const char *call, CUresult result,
                       const char *fmt, ...) KS__PRINTF(5, 6) KS__COLD;

/* Record a failed NVRTC call: like ks__error_cu, named by nvrtcGetErrorString (\p text). */
ks_status ks__error_nvrtc(ks_status status, const char *kernel, const char *call, int result,
                          const char *text, const char *fmt, ...) KS__PRINTF(6, 7);

/* Attach a JIT/NVRTC log to the error just recorded (its first line joins the message). */
void ks__error_log(const char *log);

/* Name the call site (NULL: none) of the launch whose error was just recorded. */
void ks__error_site(const char *file, int line);
/* Copies at most n bytes of a user's word into dst[cap] with control
 * characters escaped (\n, \xNN), as the generator's messages escape them. */
void ks__escape_word(char *dst, size_t cap, const char *src, size_t n);

/* ---- shared by launch.c, query.c and load.c ------------------------------ */

/* Grid limit that holds on every CUDA device (compute capability 5.0 and later). */
#define KS__MAX_GRID_X 0x7fffffffu

/* A kernel's name for messages: its qualified C++ name, else its symbol. */
static inline const char *ks__kernel_name(const ks_kernel *k)
{
    return k->name ? k->name : k->symbol;
}

/* ---- launch.c ------------------------------------------------------------ */

/*
 * The checks a launch makes before any driver call (dimensions, the
 * kernel's __launch_bounds__, dynamic shared memory against its opt-in), for
 * the graph calls: KS_OK or KS_ERR_INVALID_CONFIG with the numbers.
 */
ks_status ks__launch_check(ks_kernel *k, const ks_launch *l);

/* The launch itself, \p handle resolved and the configuration checked: what
 * the checked path calls between its checks. */
ks_status ks__launch_handle(ks_kernel *k, const ks_launch *l, void **args, void *handle);

/* ---- check.c, pointers.c, nvtx.c, trace.c: checked launches ---------------- */

/* ks__checks, the KS_CHECK_* bits in force, is with the driver table (ks__hot, above). */
/* KSTUB_CHECK could not be parsed: every launch fails, saying why. */
#define KS__CHECK_BAD_ENV 0x80000000u

/* Read KSTUB_CHECK and KSTUB_TRACE, unless ks_checks_set came first; once per process
 * (at driver load, or at a first launch before it). */
void ks__checks_from_env(void);
/* KS_ERR_INVALID_VALUE (with the message and call site) when KSTUB_CHECK
 * holds an unknown word, else KS_OK; reads the environment first if no one
 * has (before the driver loads, so nothing can mask the typo). */
ks_status ks__checks_refuse(ks_kernel *k, const char *file, int line);

/* One launch going through the checks. */
typedef struct ks__checked {
    ks_kernel *k;
    const ks_launch *l;
    void **args;
    void *handle;
    const char *file;            /* call site, or NULL */
    int line;
    unsigned checks;             /* the bits in force for this launch */
} ks__checked;

/*
 * The checks as one table, each filling a ks__check (the ks__loader seam):
 * before() runs in table order and may refuse the launch (error set);
 * after() runs, for every check whose before() ran, in reverse order, with
 * the status so far, and returns the status to report. check.c's table
 * says which KS_CHECK_* bits turn each on.
 */
typedef struct ks__check {
    ks_status (*before)(const ks__checked *c);
    ks_status (*after)(const ks__checked *c, ks_status st);
} ks__check;

extern const ks__check ks__check_nvtx;      /* nvtx.c */
extern const ks__check ks__check_trace;     /* trace.c */
extern const ks__check ks__check_pointers;  /* pointers.c */
extern const ks__check ks__check_sync;      /* check.c */
extern const ks__check ks__check_races;     /* races_check.c */

/* Every check bit ks_checks_set takes ("all" leaves races out: it loads libcupti). */
#define KS__CHECK_KNOWN (KS_CHECK_ALL | KS_CHECK_RACES)

/* races_check.c: load libcupti and subscribe, once (a failure is reported by every launch). */
void ks__races_start(void);

/* ---- cupti.c: the one CUPTI subscription ------------------------------------ */

/* CUPTI's callback domains (CUpti_CallbackDomain), so that callers need not include cupti.h. */
#define KS__CUPTI_DRIVER 1
#define KS__CUPTI_RUNTIME 2
/* The clients of the subscription, each with its own callbacks. */
enum { KS__CUPTI_RACES, KS__CUPTI_WATCH, KS__CUPTI_CLIENTS };
typedef struct ks__cupti_id {
    int domain;                  /* KS__CUPTI_DRIVER or KS__CUPTI_RUNTIME */
    unsigned cbid;               /* CUPTI's callback id in it */
    const char *name;            /* for messages */
} ks__cupti_id;
/* A client's callback: the domain, the id and CUPTI's CUpti_CallbackData, at
 * the call's entry and at its exit (data->callbackSite says which). */
typedef void (*ks__cupti_fn)(int domain, unsigned cbid, const void *data);
/* Turn the callbacks ids[0..n) on (\p on) or off for \p client, whose \p fn
 * gets them; loads libcupti and subscribes the first time. 0, or -1 with
 * why (\p cap bytes) saying why: CUPTI missing, held by another tool, or a
 * callback refused (some may be on: turn them off). */
int ks__cupti_want(unsigned client, ks__cupti_fn fn, const ks__cupti_id *ids, size_t n, int on,
                   char *why, size_t cap);

/* ---- watch.c: the free watch -------------------------------------------------- */

/* Bumped at the entry and the exit of every call that can end an allocation
 * or change what an address means, while ks__watch_on (read first, acquire);
 * an allocation asked of the driver when it read g, with ks__watch_on, is
 * still the driver's answer while it reads g. */
extern uint64_t ks__watch_gen;
extern int ks__watch_on;
/* Whether ks__watch_start has run (pointers.c starts it once, for KSTUB_CHECK). */
extern int ks__watch_asked;
/* The pointers or extents check turned on: the watch's callbacks on, for the
 * rest of the process. Without CUPTI, or with KSTUB_CHECK_WATCH=0, the watch
 * stays off for good and the cache asks the buffer id (pointers.c). */
void ks__watch_start(void);

/* pointers.c: an extent hint's element count for \p d in launch \p c (error set otherwise). */
ks_status ks__extent_count(const ks__checked *c, const ks_param_desc *d, long long *count);
/* pointers.c: 1 when pointers/extents (the only checks on) pass from the
 * free watch's cache alone; 0: run the checks (launch.c's checked launch). */
int ks__pointers_quick(const ks_kernel *k, void **args, unsigned checks);

/* Trace one accessor call of a device variable (trace.c), when the trace is on. */
void ks__global_trace(const ks_global *g, const char *op, size_t first, size_t count, ks_stream stream,
                      const char *file, int line) __attribute__((cold));

/* The pointers check of an accessor's host pointer \p p (pointers.c), when it is on:
 * device memory, or a page-locked allocation shorter than \p bytes, is refused. */
ks_status ks__global_check_host(const ks_global *g, const char *op, const void *p, size_t bytes)
    __attribute__((cold));

/* global.c, for the graph node: the address of elements [first, first + count) of \p g
 * in the current context, checked as a write's. */
ks_status ks__global_range(ks_global *g, size_t first, const void *src, size_t count, CUdeviceptr *dst);

/* The checked launch, launch.c's slow branch when any check is on, runs
 * ks__checks_before (c's kernel, launch, arguments, handle and site filled
 * in; it sets c->checks and *ran), launches only if it returned KS_OK, then
 * returns ks__checks_after with the launch's status. check.c never calls
 * back into launch.c. */
ks_status ks__checks_before(ks__checked *c, size_t *ran);
ks_status ks__checks_after(const ks__checked *c, size_t ran, ks_status st);

/* ---- context.c ----------------------------------------------------------- */

/*
 * Called after a driver call returned CUDA_ERROR_INVALID_CONTEXT. When this
 * thread has no current context, make device 0's primary context (retained
 * once per process, never released) current and return KS_OK: retry the call.
 * KS_ERR_NO_CONTEXT (error set): no primary context could be made current.
 * KS_ERR_DRIVER (error untouched): the thread has a context of its own, so
 * the caller reports its failed call as it is. Callable with or without the
 * load lock held.
 */
ks_status ks__context_make_current(const char *kernel);

/* Whether \p s is a stream the program made (not NULL, CU_STREAM_LEGACY or CU_STREAM_PER_THREAD,
 * which stand for the current context's). */
static inline int ks__stream_is_own(CUstream s)
{
    return s != NULL && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD;
}

/* The context \p s belongs to (cuStreamGetCtx) for a stream the program made; NULL for the
 * special streams, or where the driver cannot say (no error is set). */
CUcontext ks__stream_context(CUstream s);

/*
 * Make \p ctx current for a while: pushed (cuCtxPushCurrent) unless it is
 * NULL or current already. *pushed says whether ks__context_leave must pop it.
 * \return CUDA_SUCCESS, the push's error, or CUDA_ERROR_NOT_SUPPORTED for a
 * driver without cuCtxPushCurrent (then nothing was pushed).
 */
CUresult ks__context_enter(CUcontext ctx, int *pushed);
/* Undo ks__context_enter: pop the context it pushed, if it pushed one. */
void ks__context_leave(int pushed);

/* The calling thread's context, making device 0's primary one current if it has none. */
ks_status ks__context_current(const char *kernel, CUcontext *ctx);

/* The current context's device (a context is made current as above). */
ks_status ks__device_current(const char *kernel, CUdevice *dev);

/* The current device's compute capability as NVRTC spells it (90 for sm_90). */
ks_status ks__device_arch(const char *kernel, int *arch);

/* The most shared memory a block may opt in to on \p dev, cached per device. */
ks_status ks__device_shared_optin(CUdevice dev, int *bytes);

/* ---- image.c: an image's state and the bytes the driver gets --------------- */

/* The per-context module list of the fallback loader. */
typedef struct ks__module_node {
    CUcontext ctx;
    CUmodule module;
    struct ks__module_node *next;
} ks__module_node;

/* The per-context function list of a kernel, with the fallback loader. */
typedef struct ks__function_node {
    CUcontext ctx;
    CUfunction fn;
    struct ks__function_node *next;  /* published with a release store; never unlinked until unload */
} ks__function_node;

/* What ks_image.ks__state points to; created on first need, under the load lock. */
typedef struct ks__image_state {
    char *file;                  /* ks_image_set_file's path, or NULL */
    char **nvrtc_options;        /* ks_image_set_nvrtc_options's copies */
    unsigned nvrtc_noptions;
    /* what the last load was made from (freed by unload) */
    const void *bytes;           /* the image handed to the driver */
    size_t nbytes;
    void *owned;                 /* bytes, when read from a file or compiled; else NULL */
    char *path;                  /* the file read, or NULL */
    ks_image_kind origin, kind;
    int arch, from_cache;
    char *jit_log;               /* the JIT error log buffer, alive as long as the loaded image:
                                  * with lazy loading the driver JITs (and logs) after the load call */
    ks__module_node *modules;    /* the fallback: one module per context; read with acquire */
    struct ks_global **globals;  /* variables resolved from it, for unload (global.c) */
    size_t nglobals;
} ks__image_state;

/* The one lock of the slow path (loading, resolving, unloading, configuring images);
 * image.c defines it, since what it guards is image state. */
extern pthread_mutex_t ks__load_lock;

/* "(unnamed)" or the image's source, for messages. */
static inline const char *ks__source_name(const ks_image *img)
{
    return img->source ? img->source : "(unnamed)";
}

/* Only under the load lock: the image's state, created on first need (NULL: out of memory, error set). */
ks__image_state *ks__image_state_get(ks_image *img, const char *kernel);

/* Only under the load lock: decide the bytes the driver gets (file, embedded, NVRTC). */
ks_status ks__image_prepare(ks_image *img, ks__image_state *s, const char *kernel);

/* Only under the load lock: forget what the last load was made from. */
void ks__image_unprepare(ks__image_state *s);

/*
 * Only under the load lock, with nothing of \p img loaded: free its state
 * when it holds no configuration (file, NVRTC options) either.
 */
void ks__image_release_idle(ks_image *img);

/*
 * KS_ERR_VERSION (error set) unless \p img and \p k (either may be NULL)
 * were compiled against this library's descriptor layout (KS_DESC_VERSION).
 */
ks_status ks__check_versions(const ks_image *img, const ks_kernel *k, const char *kernel);

/* ---- load.c, library.c, module.c: loading and resolving --------------------- */

/*
 * The two ways of loading an image, as one table: a context-independent
 * CUlibrary (library.c, CUDA 12.0+) or one CUmodule per context (module.c,
 * the fallback). ks__cu.use_library picks one, once, when the driver loads;
 * load.c holds what is common and never asks which it has.
 */
typedef struct ks__loader {
    int per_context;             /* 1: handles differ per context (modules) */
    const char *lookup_call;     /* the driver call lookup makes, for messages */
    const char *param_info_call; /* the driver call param_info makes, for messages */
    /* Only under the load lock: load \p img (in \p ctx, the current one, when per_context). */
    ks_status (*load)(ks_image *img, CUcontext ctx, const char *kernel);
    /* Only under the load lock, \p img loaded: the handle of \p symbol (CUkernel or CUfunction). */
    CUresult (*lookup)(ks_image *img, CUcontext ctx, const char *symbol, void **handle);
    /* Only under the load lock, \p img loaded: every kernel in it, as a malloc'd array of
     * handles (*n of them); *call names the driver call that failed, or that is missing
     * (CUDA_ERROR_NOT_SUPPORTED). */
    CUresult (*list)(ks_image *img, CUcontext ctx, void ***handles, unsigned *n, const char **call);
    /* The device symbol of a handle list gave; *call as list's. */
    CUresult (*name)(const void *handle, const char **name, const char **call);
    /* The resolved handle of \p k in \p ctx, or NULL; lock-free. */
    void *(*find)(const ks_kernel *k, CUcontext ctx);
    /* Only under the load lock: keep \p handle, just looked up and checked, for \p ctx. */
    ks_status (*adopt)(ks_kernel *k, CUcontext ctx, const char *kernel, void *handle);
    /* Whether the driver has param_info's call (CUDA 12.4+); without it the ABI check is skipped. */
    int (*has_param_info)(void);
    /* cu*GetParamInfo on a handle. */
    CUresult (*param_info)(const void *handle, size_t i, size_t *offset, size_t *size);
    /* The CUfunction of resolved \p k in \p ctx, the current context; NULL in \p fn when a
     * per-context loader has none there yet (load.c then resolves it). */
    ks_status (*function)(ks_kernel *k, CUcontext ctx, const char *kernel, CUfunction *fn);
    /* Opt \p fn (\p k's in the current context, on \p dev) in to \p bytes of dynamic shared memory. */
    CUresult (*set_max_shared)(ks_kernel *k, CUfunction fn, CUdevice dev, int bytes, const char **call);
    /* Only under the load lock: unload every copy of \p img; the first failure is reported. */
    ks_status (*unload)(ks_image *img);
    /* Graphs: point kernel node parameters \p p at resolved \p k: its CUkernel, or \p fn, the
     * current context's CUfunction, which graph.c resolves first for a per-context loader. */
    ks_status (*node_target)(ks_kernel *k, CUDA_KERNEL_NODE_PARAMS *p, CUfunction fn, const char *kernel);
    /* Graphs: whether node parameters \p q, as the driver reports them, launch \p k. */
    int (*node_is)(const ks_kernel *k, const CUDA_KERNEL_NODE_PARAMS *q);
    /* The driver call global makes, for messages. */
    const char *global_call;
    /* Only under the load lock, \p img loaded: a device variable's address and size in \p ctx
     * (the current context). */
    CUresult (*global)(ks_image *img, CUcontext ctx, const char *symbol, CUdeviceptr *ptr, size_t *bytes);
} ks__loader;

/* A loader's table, from its functions <prefix>_load, <prefix>_lookup, ... */
#define KS__LOADER_TABLE(prefix, per_ctx, lookup_name, param_info_name, global_name)            \
    {                                                                                          \
        per_ctx, lookup_name, param_info_name, prefix##_load, prefix##_lookup, prefix##_list,  \
        prefix##_name, prefix##_find,                                                          \
        prefix##_adopt, prefix##_has_param_info, prefix##_param_info, prefix##_function,       \
        prefix##_set_max_shared, prefix##_unload, prefix##_node_target, prefix##_node_is,      \
        global_name, prefix##_global                                                           \
    }

extern const ks__loader ks__library_loader;
extern const ks__loader ks__module_loader;

/* The loader the driver chose (the module one before the driver is loaded). */
static inline const ks__loader *ks__loader_get(void)
{
    return ks__cu.use_library ? &ks__library_loader : &ks__module_loader;
}

/* image.c: the JIT options: the image's own log buffer (made here), and its size. */
unsigned ks__jit_options(ks__image_state *s, CUjit_option opts[2], void *vals[2]);

/* Report a failed load of \p img (\p call returned \p r) with its JIT log; returns KS_ERR_LOAD. */
ks_status ks__load_failed(const ks_image *img, ks__image_state *s, const char *kernel, const char *call,
                          CUresult r);

/*
 * image.c: a loader's list (ks__loader.list) from its driver's two calls:
 * \p count (how many kernels \p owner, the CUlibrary or CUmodule, holds) and
 * \p enumerate (their handles, into \p all), named \p count_call and
 * \p enum_call in *call; either NULL where the driver lacks it
 * (CUDA_ERROR_NOT_SUPPORTED, *call naming it).
 */
CUresult ks__image_list(void *owner, CUresult (*count)(void *owner, unsigned *n), const char *count_call,
                        CUresult (*enumerate)(void *owner, void **all, unsigned n), const char *enum_call,
                        void ***handles, unsigned *n, const char **call);

/*
 * The CUfunction of \p kernel in the current context (resolving it, and
 * making a context current, as needed), and that context's device.
 */
ks_status ks__kernel_function(ks_kernel *kernel, CUfunction *fn, CUdevice *dev);

/* ks_kernel_resolve for a launch on \p stream: with the module fallback, in the stream's
 * context when it is one the program made (pushed, then popped, when not current). */
ks_status ks__kernel_resolve_on(ks_kernel *k, CUstream stream);

/* Only under the load lock: load \p img with \p L into \p ctx (as resolving a kernel does). */
ks_status ks__image_load_locked(const ks__loader *L, ks_image *img, CUcontext ctx, const char *name);

/* A device global's address in one context (global.c), listed on the ks_global. */
typedef struct ks__addr_node {
    CUcontext ctx;
    CUdeviceptr ptr;
    struct ks__addr_node *next;  /* published with a release store; freed only by unload */
} ks__addr_node;


/* Only under the load lock, from ks_image_unload: forget every resolved address of \p img's
 * variables (image.c; global.c fills them). */
void ks__globals_forget(ks_image *img);

/* The fallback's slow path: resolve \p kernel in \p ctx (the current one). */
ks_status ks__kernel_resolve_in(ks_kernel *kernel, CUcontext ctx, CUfunction *fn);

/* Looks up \p ctx in \p kernel's function list without a lock; NULL if absent. */
static inline CUfunction ks__function_find(const ks_kernel *k, CUcontext ctx)
{
    for (const ks__function_node *n = __atomic_load_n((ks__function_node *const *)&k->ks__functions,
                                                      __ATOMIC_ACQUIRE);
         n != NULL; n = n->next)
        if (n->ctx == ctx)
            return n->fn;
    return NULL;
}

/* ---- file.c -------------------------------------------------------------- */

/*
 * Find and read the image file of \p img: \p name as ks_image_set_file gave
 * it, or (NULL) the names made from img->source. On success *bytes (malloc'd,
 * NUL-terminated beyond *n), *n, *path (malloc'd) and *kind are set.
 */
ks_status ks__file_read(const ks_image *img, const char *name, const char *kernel,
                        void **bytes, size_t *n, char **path, ks_image_kind *kind);

/* ---- nvrtc.c ------------------------------------------------------------- */

/*
 * Compile the CUDA source \p src (named \p name in messages) with \p opts for
 * sm_<arch>, through the disk cache. On success *cubin is malloc'd.
 */
ks_status ks__nvrtc_compile(const char *src, const char *name, char *const *opts, unsigned nopts,
                            int arch, const char *kernel, void **cubin, size_t *n, int *from_cache);

/* ---- includes.c ------------------------------------------------------------ */

struct ks__sha256;
/*
 * Feed into \p s everything \p src's #include lines can reach (with
 * -I/--include-path from \p opts): 0, or -1 when they cannot be followed and
 * the compile must not be cached.
 */
int ks__includes_hash(struct ks__sha256 *s, const char *src, char *const *opts, unsigned nopts);

/* ---- cache.c ------------------------------------------------------------- */

/*
 * Open the cache directory to use now (created 0700 if need be) into *dirfd.
 * KS_OK, or (*dirfd = -1, \p why says why, this thread's error untouched):
 * KS_ERR_UNSUPPORTED (turned off), KS_ERR_INVALID_VALUE (no directory to
 * use, or a name longer than PATH_MAX), KS_ERR_UNTRUSTED (the directory or
 * a parent lets another user change it) or KS_ERR_IO.
 */
ks_status ks__cache_open(int *dirfd, char *why, size_t cap);
/* A verified entry for \p key (malloc'd into *data), or 0 when there is none usable. */
int ks__cache_get(int dirfd, const unsigned char key[32], void **data, size_t *n);
/* Store an entry (best effort: a cache that cannot be written is no error). */
void ks__cache_put(int dirfd, const unsigned char key[32], const void *data, size_t n);
/* The payload's length if the \p size bytes at \p buf are a whole, intact entry for \p key, else -1. */
long long ks__cache_entry_check(const unsigned char *buf, size_t size, const unsigned char key[32]);
/* Bytes before an entry's payload (cache_entry.h's KS__ENTRY_HEADER_BYTES). */
#define KS__CACHE_HEADER_BYTES (8 + 32 + 8 + 32)

/* safefile.c (common/): ks__open_regular, ks__dir_open_trusted, ks__getenv */
#include "safefile.h"

#endif /* KS_INTERNAL_H */
