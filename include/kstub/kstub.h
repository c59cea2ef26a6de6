/*
 * kstub.h — the public API of libkstub, the runtime that kstub's generated
 * stubs call.
 *
 * An application normally touches only ks_launch (how to launch), the
 * generated per-kernel functions, and the status/error functions below. The
 * ks_image and ks_kernel structures are filled in by generated code; their
 * fields prefixed "ks__" belong to the runtime.
 *
 * Contexts: a launch runs in the calling thread's current CUDA context. When
 * the thread has none, libkstub retains the primary context of device 0,
 * makes it current on that thread, and keeps it for the life of the process.
 *
 * The library never prints and never exits: every call returns a ks_status,
 * and ks_last_error() gives the detail of this thread's last failure.
 *
 * This header compiles as C99, C11 and C++ under -Wpedantic. It does not
 * include <cuda.h> (whose anonymous unions are not C99): streams are named
 * as `struct CUstream_st *`, which is what cuda.h's CUstream is.
 */
#ifndef KSTUB_H
#define KSTUB_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The library's version: what this header belongs to. ks_version() tells the
 * version of the libkstub actually loaded. The shared library's soname
 * carries the major version (libkstub.so.0).
 */
#define KSTUB_VERSION_MAJOR 0
#define KSTUB_VERSION_MINOR 2
#define KSTUB_VERSION_PATCH 0
/* The version as one comparable number: 10000 * major + 100 * minor + patch. */
#define KSTUB_VERSION (10000 * KSTUB_VERSION_MAJOR + 100 * KSTUB_VERSION_MINOR + KSTUB_VERSION_PATCH)
/* Kept for code written against 0.1. */
#define KS_VERSION_MAJOR KSTUB_VERSION_MAJOR
#define KS_VERSION_MINOR KSTUB_VERSION_MINOR

/*
 * The layout of the descriptors generated code fills in (ks_image,
 * ks_kernel, ks_param_desc). KS_IMAGE_INIT and KS_KERNEL_INIT record it in
 * each descriptor when the generated .c is compiled; the library refuses a
 * descriptor of another layout with KS_ERR_VERSION when it loads the image
 * or resolves the kernel (never on the launch fast path), instead of
 * misreading it. Raised whenever those structs change (3: ks_param_desc's
 * readonly, for the races check).
 */
#define KS_DESC_VERSION 3

/**
 * \return the loaded library's version, "MAJOR.MINOR.PATCH" (e.g. "0.2.0"),
 *         which may differ from this header's KSTUB_VERSION_* within a major version
 */
const char *ks_version(void);
/** \return the loaded library's version as KSTUB_VERSION packs it (e.g. 200 for 0.2.0). */
int ks_version_number(void);

/* `restrict` in C99/C11, the common extension in C++. */
#if defined(__cplusplus)
#define KS_RESTRICT __restrict__
#else
#define KS_RESTRICT restrict
#endif

/*
 * Every status libkstub returns, listed once: XX(NAME, description).
 * The enum, ks_status_name() and ks_status_string() are all made from it.
 */
#define KS_STATUS_MAP(XX)                                                          \
    XX(OK, "success")                                                              \
    XX(ERR_NO_DRIVER, "the CUDA driver library (libcuda.so.1) could not be loaded") \
    XX(ERR_DRIVER, "a CUDA driver call failed")                                    \
    XX(ERR_NO_CONTEXT, "no CUDA context is current and none could be made current") \
    XX(ERR_INVALID_IMAGE, "the kernel image is missing or is not PTX, cubin or fatbin") \
    XX(ERR_LOAD, "the kernel image could not be loaded (JIT or driver error)")     \
    XX(ERR_SYMBOL_NOT_FOUND, "the kernel is not in the loaded image")              \
    XX(ERR_ABI_MISMATCH, "the loaded kernel's parameters differ from the stub's")  \
    XX(ERR_INVALID_VALUE, "an argument is invalid")                                \
    XX(ERR_INVALID_CONFIG, "the launch configuration is invalid for this kernel")  \
    XX(ERR_LAUNCH, "the kernel launch failed")                                     \
    XX(ERR_NO_NVRTC, "the NVRTC library could not be loaded")                      \
    XX(ERR_COMPILE, "run-time compilation with NVRTC failed")                      \
    XX(ERR_IO, "a file could not be read or written")                              \
    XX(ERR_NO_MEMORY, "out of host memory")                                        \
    XX(ERR_UNSUPPORTED, "the driver lacks a feature this call needs")              \
    XX(ERR_UNTRUSTED, "a directory or file is not safe to load code from (its owner or permissions)") \
    XX(ERR_VERSION, "the generated code was built for another descriptor layout (KS_DESC_VERSION)") \
    XX(ERR_GRAPH_MISMATCH, "a graph update does not match the graph (another kernel, or a changed topology)") \
    XX(ERR_POINTER, "a pointer argument is not memory the kernel can use (the pointers check)") \
    XX(ERR_EXTENT, "a buffer is smaller than the kernel's extent hint says it must be (the extents check)") \
    XX(ERR_FAULT, "the kernel faulted while it ran (the sync check)")                 \
    XX(ERR_SYMBOL_AMBIGUOUS, "several kernels in the loaded image match the stub's internal-linkage symbol") \
    XX(ERR_RACE, "work on different streams touches the same bytes unordered, or memory is freed under a use (the races check)")

typedef enum ks_status {
#define KS__STATUS_ENUM(name, text) KS_##name,
    KS_STATUS_MAP(KS__STATUS_ENUM)
#undef KS__STATUS_ENUM
    KS__STATUS_COUNT
} ks_status;

/** \return the constant's name, e.g. "KS_ERR_NO_DRIVER"; "KS_UNKNOWN" if out of range. */
const char *ks_status_name(ks_status status);
/** \return a one-line English description of \p status. */
const char *ks_status_string(ks_status status);

/*
 * The detail of the last failure on the calling thread. Fields that do not
 * apply are NULL (strings) or 0. It stays until this thread's next failure:
 * a successful call does not clear it, so read it right after a call that
 * returned something other than KS_OK. (About 18 KiB of thread-local storage
 * per thread, mostly room for a JIT log.)
 */
typedef struct ks_error {
    ks_status status;        /* what was returned */
    const char *kernel;      /* qualified kernel name, or NULL */
    const char *call;        /* failing driver/NVRTC call, e.g. "cuLaunchKernel" */
    int cu_result;           /* CUresult (or nvrtcResult) of that call, 0 if none */
    const char *cu_name;     /* e.g. "CUDA_ERROR_INVALID_VALUE" */
    const char *cu_string;   /* the driver's description */
    const char *log;         /* JIT or NVRTC log, or NULL */
    const char *message;     /* one line combining all of the above; never NULL */
    const char *file;        /* a checked launch's call site (the stub's macro form), or NULL */
    int line;                /* ... and its line, 0 if none */
} ks_error;

/** \return this thread's last failure; status KS_OK and an empty message if none. */
const ks_error *ks_last_error(void);
/** \return ks_last_error()->message. */
const char *ks_last_error_message(void);

/* ---------------------------------------------------------------------- */
/* Launch configuration                                                   */

typedef struct ks_dim3 {
    unsigned x, y, z;
} ks_dim3;

typedef struct ks_launch_attrs ks_launch_attrs; /* extended launch attributes (clusters, ...) */

/* A CUDA stream; the same type as cuda.h's CUstream. */
typedef struct CUstream_st *ks_stream;

/* The legacy default stream (also plain NULL) and the per-thread default
 * stream; the same values as cuda.h's CU_STREAM_LEGACY and CU_STREAM_PER_THREAD. */
#define KS_STREAM_LEGACY ((ks_stream)0x1)
#define KS_STREAM_PER_THREAD ((ks_stream)0x2)

/*
 * How to launch: passed by value as the first argument of every stub.
 * stream: NULL is the legacy default stream; KS_STREAM_PER_THREAD (or
 * cuda.h's CU_STREAM_PER_THREAD) selects the per-thread default stream; any
 * CUstream the caller created works.
 */
typedef struct ks_launch {
    ks_dim3 grid;                  /* blocks per grid; every field >= 1 */
    ks_dim3 block;                 /* threads per block; every field >= 1 */
    unsigned shared_bytes;         /* dynamic shared memory per block */
    ks_stream stream;              /* NULL: the legacy default stream */
    const ks_launch_attrs *attrs;  /* NULL: plain cuLaunchKernel */
} ks_launch;

/** A 1-D launch of \p grid blocks of \p block threads on the default stream. */
static inline ks_launch ks_launch_1d(unsigned grid, unsigned block)
{
    ks_launch l;
    l.grid.x = grid; l.grid.y = 1; l.grid.z = 1;
    l.block.x = block; l.block.y = 1; l.block.z = 1;
    l.shared_bytes = 0;
    l.stream = NULL;
    l.attrs = NULL;
    return l;
}

/** A 3-D launch on the default stream. */
static inline ks_launch ks_launch_3d(ks_dim3 grid, ks_dim3 block)
{
    ks_launch l;
    l.grid = grid;
    l.block = block;
    l.shared_bytes = 0;
    l.stream = NULL;
    l.attrs = NULL;
    return l;
}

/** \p l with its stream set to \p stream. */
static inline ks_launch ks_launch_on(ks_launch l, ks_stream stream)
{
    l.stream = stream;
    return l;
}

/*
 * Extended launch attributes: set ks_launch.attrs to one of these and the
 * launch goes through cuLaunchKernelEx (a driver for CUDA 12.0 or newer);
 * attrs == NULL launches with plain cuLaunchKernel. Start from
 * KS_LAUNCH_ATTRS_INIT or ks_launch_attrs_none() and add what you need:
 *
 *     ks_launch_attrs a = ks_launch_attrs_cluster(ks_launch_attrs_none(), 2, 1, 1);
 *     ks_launch l = ks_launch_with(ks_launch_1d(128, 256), &a);
 *
 * The attributes are read during the launch call only.
 */
#define KS_LAUNCH_COOPERATIVE 0x1u /* blocks may synchronise grid-wide (grid must fit co-resident) */
#define KS_LAUNCH_PDL 0x2u         /* programmatic stream serialization: may overlap the previous kernel */
#define KS_LAUNCH_PRIORITY 0x4u    /* use .priority instead of the stream's priority */

struct ks_launch_attrs {
    ks_dim3 cluster;     /* blocks per thread-block cluster (sm_90+); {0, 0, 0}: no cluster */
    unsigned flags;      /* KS_LAUNCH_* bits */
    int priority;        /* launch priority, with KS_LAUNCH_PRIORITY */
};

#define KS_LAUNCH_ATTRS_INIT { {0u, 0u, 0u}, 0u, 0 }

/** No attributes: what KS_LAUNCH_ATTRS_INIT gives, as a value. */
static inline ks_launch_attrs ks_launch_attrs_none(void)
{
    ks_launch_attrs a;
    a.cluster.x = 0; a.cluster.y = 0; a.cluster.z = 0;
    a.flags = 0;
    a.priority = 0;
    return a;
}

/** \p a with clusters of \p x * \p y * \p z blocks; the grid must be a multiple of them. */
static inline ks_launch_attrs ks_launch_attrs_cluster(ks_launch_attrs a, unsigned x, unsigned y, unsigned z)
{
    a.cluster.x = x; a.cluster.y = y; a.cluster.z = z;
    return a;
}

/** \p a as a cooperative launch (cudaLaunchCooperativeKernel's semantics). */
static inline ks_launch_attrs ks_launch_attrs_cooperative(ks_launch_attrs a)
{
    a.flags |= KS_LAUNCH_COOPERATIVE;
    return a;
}

/** \p a allowing programmatic dependent launch (PDL) after the stream's previous kernel. */
static inline ks_launch_attrs ks_launch_attrs_pdl(ks_launch_attrs a)
{
    a.flags |= KS_LAUNCH_PDL;
    return a;
}

/** \p a with launch priority \p priority. */
static inline ks_launch_attrs ks_launch_attrs_priority(ks_launch_attrs a, int priority)
{
    a.flags |= KS_LAUNCH_PRIORITY;
    a.priority = priority;
    return a;
}

/** \p l launched with the attributes \p attrs (which must outlive the launch call). */
static inline ks_launch ks_launch_with(ks_launch l, const ks_launch_attrs *attrs)
{
    l.attrs = attrs;
    return l;
}

/* ---------------------------------------------------------------------- */
/* Images and kernels (filled in by generated code)                        */

typedef enum ks_image_kind {
    KS_IMAGE_NONE = 0,    /* no embedded image: found on disk at run time */
    KS_IMAGE_PTX = 1,     /* NUL-terminated PTX text */
    KS_IMAGE_CUBIN = 2,   /* ELF cubin */
    KS_IMAGE_FATBIN = 3,  /* fat binary */
    KS_IMAGE_SOURCE = 4   /* NUL-terminated CUDA C++ source, compiled at run time with NVRTC */
} ks_image_kind;

/* One per generated file: the kernel image its kernels live in. */
typedef struct ks_image {
    const char *source;          /* the .cu file it was generated from */
    const void *data;            /* embedded image bytes, or NULL */
    size_t size;                 /* bytes in data; for PTX, including its closing NUL */
    ks_image_kind kind;          /* what data holds */
    unsigned desc_version;       /* KS_DESC_VERSION the generated code was compiled with (set by KS_IMAGE_INIT) */
    /* runtime state, zero-initialised */
    void *ks__library;           /* CUlibrary once loaded */
    struct ks_kernel *ks__kernels; /* kernels resolved from it, for unload */
    void *ks__state;             /* file path, NVRTC options, loaded bytes, per-context modules */
} ks_image;

/* Fields after the listed ones are the layout version and runtime state that starts zeroed.
 * desc_version sits where 0.1's struct had padding, so objects generated
 * before it existed read 0 there and are refused, not misread. */
#define KS_IMAGE_INIT(source, data, size, kind) \
    { (source), (data), (size), (kind), KS_DESC_VERSION, NULL, NULL, NULL }

/* What a parameter is, for the run-time checks and the trace. */
typedef enum ks_param_kind {
    KS_PARAM_BYTES = 0,          /* a struct, union or anything else: traced as its bytes */
    KS_PARAM_POINTER = 1,        /* a pointer: checked by KS_CHECK_POINTERS */
    KS_PARAM_SIGNED = 2,         /* a signed integer (enums included) */
    KS_PARAM_UNSIGNED = 3,       /* an unsigned integer or bool */
    KS_PARAM_FLOAT = 4           /* float or double */
} ks_param_kind;

/* One step of an extent hint's expression, in postfix order. */
typedef enum ks_extent_opcode {
    KS_EXTENT_CONST = 0,         /* push value */
    KS_EXTENT_PARAM = 1,         /* push the integer parameter number value */
    KS_EXTENT_ADD = 2, KS_EXTENT_SUB = 3, KS_EXTENT_MUL = 4, KS_EXTENT_DIV = 5
} ks_extent_opcode;

typedef struct ks_extent_op {
    ks_extent_opcode op;
    long long value;
} ks_extent_op;

/* One parameter as the stub packs it: the layout for the load-time ABI
 * check, and what the run-time checks and the trace need to know of it. */
typedef struct ks_param_desc {
    unsigned offset;             /* bytes from the start of the parameter buffer */
    unsigned size;               /* bytes */
    unsigned align;              /* bytes; 0 when not known */
    ks_param_kind kind;          /* what it is */
    const char *name;            /* the kernel's name for it, or NULL */
    const char *type;            /* its C type, for messages, or NULL */
    unsigned pointee_size;       /* pointers: bytes of one element; 0: not known (void, incomplete) */
    unsigned pointee_align;      /* pointers: the element's alignment on the device; 0: not known */
    const char *extent;          /* pointers: the "kstub:extent" expression as written, or NULL */
    unsigned nextent;            /* ... and its steps */
    const ks_extent_op *extent_ops;
    unsigned readonly;           /* pointers: 1 when the kernel only reads through it (a pointer to
                                  * const); 0: it may write (what the races check assumes) */
} ks_param_desc;

/* One per kernel in a generated file. */
typedef struct ks_kernel {
    ks_image *image;             /* the image that holds the kernel */
    const char *symbol;          /* device symbol (mangled for C++ kernels) */
    const char *name;            /* qualified C++ name, for messages */
    unsigned nparams;            /* parameters the stub packs */
    const ks_param_desc *params; /* nparams entries */
    unsigned max_threads;        /* __launch_bounds__ maximum, 0 if none */
    unsigned desc_version;       /* KS_DESC_VERSION the generated code was compiled with (set by KS_KERNEL_INIT) */
    /* runtime state, zero-initialised */
    void *ks__handle;            /* CUkernel once resolved; read without a lock */
    struct ks_kernel *ks__next;  /* next kernel resolved from the same image */
    void *ks__functions;         /* module fallback: (CUcontext, CUfunction) list, read without a lock */
    unsigned ks__max_shared;     /* dynamic shared bytes opted in by ks_kernel_set_max_shared, 0: 48 KiB */
    unsigned long long ks__occupancy; /* ks_launch_config_1d's last answer, packed; 0: none */
} ks_kernel;

/* Fields after the listed ones are runtime state and start zeroed. */
#define KS_KERNEL_INIT(image, symbol, name, nparams, params, max_threads) \
    { (image), (symbol), (name), (nparams), (params), (max_threads), KS_DESC_VERSION, NULL, NULL, NULL, 0u, 0ull }

/**
 * Launch \p kernel with \p launch and the packed argument pointers \p args
 * (one per parameter, as cuLaunchKernel takes them). Loads the kernel's image
 * on first use. This is what every generated stub calls.
 */
ks_status ks_kernel_launch(ks_kernel *kernel, const ks_launch *launch, void **args);

/**
 * ks_kernel_launch, saying where it was called from (\p file, \p line) for
 * the checks' messages: what a stub's macro form calls in C.
 */
ks_status ks_kernel_launch_at(ks_kernel *kernel, const ks_launch *launch, void **args,
                              const char *file, int line);

/** Load \p image now (instead of on first launch). Safe to call repeatedly. */
ks_status ks_image_load(ks_image *image);

/**
 * Unload \p image and forget every kernel handle resolved from it; the next
 * launch loads it again. Frees everything libkstub allocated for it except
 * its configuration (ks_image_set_file, ks_image_set_nvrtc_options: set
 * them back to NULL / none before unloading to free that too, e.g. for an
 * image on the stack). The caller must ensure no other thread is launching
 * one of its kernels meanwhile.
 */
ks_status ks_image_unload(ks_image *image);

/** Resolve \p kernel (loading its image if needed) without launching it. */
ks_status ks_kernel_resolve(ks_kernel *kernel);

/* ---------------------------------------------------------------------- */
/* Where images come from                                                  */

/*
 * An image is loaded from, in this order of preference:
 *  1. a file named with ks_image_set_file();
 *  2. its embedded data (kind PTX, CUBIN or FATBIN);
 *  3. its embedded CUDA source (kind SOURCE), compiled with NVRTC for the
 *     current device's architecture (sm_XY, to a cubin), through the disk
 *     cache described at ks_cache_set_dir();
 *  4. with kind NONE and no data: a file named after the image's source,
 *     <stem>.fatbin, <stem>.cubin, then <stem>.ptx (stem: source's base name
 *     without ".cu"), looked for in each directory of KSTUB_IMAGE_PATH (a
 *     colon-separated list), then in the executable's own directory.
 * A file's kind is told by its content (ELF: cubin; fatbin magic: fatbin),
 * else by its name: ".cu" or ".cuh" is source (compiled as in 3), anything
 * else PTX.
 */

/**
 * Load \p image from the file \p path from now on (the next load; an image
 * already loaded stays as it is until ks_image_unload). A path without a '/'
 * is looked for in KSTUB_IMAGE_PATH then the executable's directory; any
 * other is opened as it is. NULL goes back to the image's own data. The
 * string is copied.
 * \return KS_OK, KS_ERR_INVALID_VALUE, KS_ERR_NO_MEMORY
 */
ks_status ks_image_set_file(ks_image *image, const char *path);

/**
 * Options for NVRTC when \p image is compiled at run time (e.g.
 * "-std=c++17", "-DN=4", "--use_fast_math"). libkstub adds
 * --gpu-architecture=sm_XY for the device itself: do not pass one. The
 * strings are copied; \p n = 0 clears them. Takes effect at the next load.
 * \return KS_OK, KS_ERR_INVALID_VALUE, KS_ERR_NO_MEMORY
 */
ks_status ks_image_set_nvrtc_options(ks_image *image, const char *const *options, unsigned n);

/** \return nonzero when \p image is loaded (in the current context, with the module fallback). */
int ks_image_is_loaded(const ks_image *image);

/* What ks_image_info reports about a loaded image. */
typedef struct ks_image_info {
    int loaded;                  /* nonzero once loaded */
    ks_image_kind origin;        /* what was found (embedded or in the file): PTX, CUBIN, FATBIN or SOURCE */
    ks_image_kind kind;          /* what reached the driver: PTX, CUBIN or FATBIN */
    const char *path;            /* the file it was read from, or NULL; valid until unload */
    int arch;                    /* NVRTC target, e.g. 90 for sm_90; 0 if not compiled */
    int from_cache;              /* nonzero: the NVRTC output came from the disk cache */
    int library;                 /* nonzero: a context-independent CUlibrary; 0: per-context modules */
} ks_image_info;

/** Describe \p image; zeros when it is not loaded. \return KS_OK or KS_ERR_INVALID_VALUE */
ks_status ks_image_info_get(const ks_image *image, ks_image_info *out);

/*
 * The NVRTC disk cache. Entries live in KSTUB_CACHE_DIR, else
 * $XDG_CACHE_HOME/kstub, else ~/.cache/kstub (created with mode 0700). Each
 * entry is keyed by the SHA-256 of the source, the contents of the headers
 * its #include lines can reach (or their absence), the options, the target
 * architecture, the NVRTC library and the driver version, and carries a hash
 * of its content that is checked before use: a corrupt, truncated or
 * foreign entry is ignored and rewritten. A source whose includes cannot be
 * followed (a macro as the header name, __has_include, -include) is compiled
 * every time, never cached. The directory is used only when it is the
 * user's, nobody else may write to it, and each parent is owned by root or
 * the user and is not writable by others unless sticky; otherwise the cache
 * is not used (loading still works) and ks_cache_check() says why. The
 * environment variables are ignored in set-uid/set-gid programs.
 * KSTUB_CACHE=0 disables it.
 */

/** Use \p dir for the cache (copied); NULL goes back to the environment's choice. */
ks_status ks_cache_set_dir(const char *dir);
/** Turn the cache off (0) or back on (nonzero; the default unless KSTUB_CACHE=0). */
void ks_cache_enable(int enabled);
/**
 * Check the cache directory now, as the next run-time compilation would.
 * \return KS_OK when entries will be read and written there; otherwise why
 *         not (in ks_last_error()): KS_ERR_UNSUPPORTED (turned off),
 *         KS_ERR_INVALID_VALUE (no directory, or a name longer than PATH_MAX),
 *         KS_ERR_UNTRUSTED (it or a parent may be changed by another user),
 *         KS_ERR_IO (it cannot be created or opened)
 */
ks_status ks_cache_check(void);

/* ---------------------------------------------------------------------- */
/* Kernels: queries, shared memory, occupancy                              */

/* A kernel's attributes on the current context's device (cuFuncGetAttribute's). */
typedef struct ks_kernel_attrs {
    int max_threads_per_block;   /* the most threads a block of it may have */
    int num_regs;                /* registers per thread */
    int shared_static_bytes;     /* statically allocated shared memory per block */
    int max_dynamic_shared_bytes; /* dynamic shared memory a launch may ask for now */
    int const_bytes;             /* user constant memory */
    int local_bytes;             /* local memory per thread */
    int ptx_version;             /* e.g. 90 */
    int binary_version;          /* e.g. 90 */
} ks_kernel_attrs;

/** Resolve \p kernel if needed and read its attributes. \return KS_OK or an error */
ks_status ks_kernel_info(ks_kernel *kernel, ks_kernel_attrs *out);

/**
 * Let launches of \p kernel ask for up to \p bytes of dynamic shared memory
 * (more than the default 48 KiB) on the current context's device, through
 * CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES. Launches asking for more
 * than 48 KiB without it fail before the driver with KS_ERR_INVALID_CONFIG.
 * \return KS_OK; KS_ERR_INVALID_CONFIG when the device cannot give that much
 */
ks_status ks_kernel_set_max_shared(ks_kernel *kernel, unsigned bytes);

/**
 * A 1-D configuration covering \p n threads with the block size that
 * maximises occupancy (cuOccupancyMaxPotentialBlockSize on the current
 * context's device), given \p shared_bytes of dynamic shared memory per
 * block and the kernel's __launch_bounds__: grid = ceil(n / block), on the
 * legacy default stream, no attributes. Cached per kernel: repeated calls
 * with the same \p shared_bytes on the same device make one cheap driver
 * call (cuCtxGetDevice).
 * \return KS_OK; KS_ERR_INVALID_VALUE for n == 0; KS_ERR_INVALID_CONFIG when
 *         n needs more than the largest grid
 */
ks_status ks_launch_config_1d(ks_kernel *kernel, size_t n, unsigned shared_bytes, ks_launch *out);

/**
 * Launch \p kernel over \p n threads as ks_launch_config_1d chooses, on
 * \p stream. n == 0 launches nothing and returns KS_OK. What the generated
 * <kernel>_n entry points call.
 */
ks_status ks_kernel_launch_n(ks_kernel *kernel, size_t n, unsigned shared_bytes, ks_stream stream,
                             void **args);

/** ks_kernel_launch_n with its call site, as ks_kernel_launch_at. */
ks_status ks_kernel_launch_n_at(ks_kernel *kernel, size_t n, unsigned shared_bytes, ks_stream stream,
                                void **args, const char *file, int line);

/* ---------------------------------------------------------------------- */
/* Checked launches                                                        */

/*
 * Run-time checks, off by default: with none on, a launch costs what it
 * always did (one more load of a cached word). Chosen by the environment,
 * read once when the driver loads,
 *
 *     KSTUB_CHECK=sync,pointers,extents,nvtx,trace   (or "all"; "" or "0": none)
 *     KSTUB_TRACE=path                                (the trace's file; turns trace on)
 *
 * or by the program with ks_checks_set(), which overrides the environment.
 * An unknown word in KSTUB_CHECK makes every launch fail with
 * KS_ERR_INVALID_VALUE, saying so, rather than check nothing silently.
 *
 *  sync      wait for each launch; a fault while it ran is its KS_ERR_FAULT
 *            (kernel, grid, block, shared bytes, stream, call site; whether
 *            the context is now unusable). A fault left by earlier work is
 *            reported before the launch, as not this kernel's.
 *  pointers  before the launch, every pointer argument: memory the launch's
 *            device can reach (device, managed, or mapped host memory), not
 *            pageable host memory, not freed, aligned for its element type,
 *            and holding one element. NULL passes. KS_ERR_POINTER.
 *  extents   a pointer with a "kstub:extent(p, expr)" hint must hold expr
 *            elements (implies the pointer rules for it). KS_ERR_EXTENT.
 *  nvtx      an NVTX range named after the kernel around each launch (NVTX 3;
 *            a tool such as Nsight Systems must be attached to see it).
 *  trace     one record per launch appended to the trace file (`kstub trace
 *            FILE` prints JSON lines): time, kernel, symbol, grid, block,
 *            shared bytes, stream, call site, status, and each argument.
 *  races     (not in "all": it loads libcupti) kernels, async copies and
 *            memsets on different streams that touch overlapping bytes, one
 *            writing, with nothing the program does ordering them, and frees
 *            not ordered after a use: KS_ERR_RACE at the next checked launch.
 *            Order is the program's own driver calls, seen through CUPTI.
 *
 * Graph nodes are not checked. Messages name kernel, parameter and rule.
 */
#define KS_CHECK_SYNC 0x01u
#define KS_CHECK_POINTERS 0x02u
#define KS_CHECK_EXTENTS 0x04u
#define KS_CHECK_NVTX 0x08u
#define KS_CHECK_TRACE 0x10u
#define KS_CHECK_ALL 0x1fu
#define KS_CHECK_RACES 0x20u

/** Turn on exactly \p checks (KS_CHECK_* bits; 0: none). \return KS_OK or KS_ERR_INVALID_VALUE */
ks_status ks_checks_set(unsigned checks);
/** \return the KS_CHECK_* bits in force (the environment's, until ks_checks_set). */
unsigned ks_checks_get(void);
/**
 * Parse \p spec as KSTUB_CHECK is ("sync,pointers", "all", "", "0") into \p *checks.
 * \return KS_OK or KS_ERR_INVALID_VALUE naming the unknown word
 */
ks_status ks_checks_parse(const char *spec, unsigned *checks);
/**
 * Append the trace to \p path from the next traced launch on (the file is
 * opened then, created 0644, never truncated); NULL goes back to
 * KSTUB_TRACE, else kstub-trace-<pid>.kstrace in the working directory. The
 * string is copied. \return KS_OK, KS_ERR_NO_MEMORY
 */
ks_status ks_trace_set_file(const char *path);

/* ---------------------------------------------------------------------- */
/* CUDA graphs                                                             */

/*
 * A graph is built once and launched many times for a fraction of a
 * launch's CPU cost. Each generated stub has graph entry points beside it,
 * with the same typed parameters (and the same strict mode):
 *
 *     <kernel>_node(graph, deps, ndeps, &node, launch, args...)   add a kernel node
 *     <kernel>_node_set(exec, node, launch, args...)              update it in an instance
 *     <kernel>_nodes_set(exec, count, nodes, launches, args)      update many at once
 *
 * The node is a <kernel>_node_t: the kernel's identity is in its type, so a
 * node of another kernel does not compile, and an update is one
 * cuGraphExecKernelNodeSetParams. Its member `node` is the graph's node
 * (for dependencies and the driver's own calls). All pack the arguments
 * exactly as the stub does, and the node launches the same kernel handle the
 * stub launches. The types are cuda.h's (CUgraph, CUgraphNode, CUgraphExec),
 * so the driver's own node calls (memset, memcpy, host, child graphs) mix
 * freely with kstub's nodes. A node known only as a ks_graph_node (from
 * ks_kernel_node_add) is updated with ks_kernel_node_set, which asks the
 * driver which kernel the node launches first.
 *
 * Life cycle: ks_graph_create, nodes, ks_graph_instantiate, ks_graph_launch
 * (any number of times), <kernel>_node_set or ks_graph_exec_update between
 * launches, then ks_graph_exec_destroy and ks_graph_destroy in either order.
 * Keep the graph while you update its instances' nodes (the driver reads the
 * node), and do not unload an image while a graph holds one of its kernels.
 */
typedef struct CUgraph_st *ks_graph;           /* cuda.h's CUgraph */
typedef struct CUgraphNode_st *ks_graph_node;  /* cuda.h's CUgraphNode */
typedef struct CUgraphExec_st *ks_graph_exec;  /* cuda.h's CUgraphExec */

/** A new, empty graph in \p *graph (cuGraphCreate). \return KS_OK or an error */
ks_status ks_graph_create(ks_graph *graph);

/** Destroy \p graph and its nodes; instances made from it stay valid. NULL is ignored. */
ks_status ks_graph_destroy(ks_graph graph);

/**
 * Instantiate \p graph into \p *exec (cuGraphInstantiateWithFlags, no flags).
 * On failure the driver's CUresult is in ks_last_error() (e.g. a kernel
 * node whose configuration the device cannot run).
 */
ks_status ks_graph_instantiate(ks_graph graph, ks_graph_exec *exec);

/** Destroy an instance. NULL is ignored. */
ks_status ks_graph_exec_destroy(ks_graph_exec exec);

/**
 * Launch \p exec on \p stream: NULL the legacy default stream,
 * KS_STREAM_PER_THREAD the per-thread one, or a CUstream you created.
 * An instance runs one launch at a time: a launch waits for its previous one.
 */
ks_status ks_graph_launch(ks_graph_exec exec, ks_stream stream);

/**
 * Give \p exec the node parameters of \p graph, a graph of the same
 * topology (cuGraphExecUpdate): for a graph rebuilt with other arguments.
 * \return KS_OK; KS_ERR_GRAPH_MISMATCH when the driver refuses the update
 *         (another topology, node type or kernel context), naming its reason
 *         and leaving \p exec as it was
 */
ks_status ks_graph_exec_update(ks_graph_exec exec, ks_graph graph);

/**
 * Add a node launching \p kernel with \p launch and the packed \p args to
 * \p graph, after the \p ndeps nodes at \p deps; \p *node receives it.
 * The configuration is checked as a launch's is; launch->attrs must be NULL
 * and launch->stream is not used. The argument values are copied. What
 * the generated <kernel>_node entry points call.
 */
ks_status ks_kernel_node_add(ks_kernel *kernel, ks_graph graph, const ks_graph_node *deps, size_t ndeps,
                             const ks_launch *launch, void **args, ks_graph_node *node);

/**
 * Set the configuration and arguments of \p node, a node of \p kernel, in
 * the instance \p exec (cuGraphExecKernelNodeSetParams). What the generated
 * <kernel>_node_set entry points call.
 * \return KS_OK; KS_ERR_GRAPH_MISMATCH when \p node is not a node of
 *         \p kernel (nothing is changed); KS_ERR_DRIVER when the driver
 *         refuses (e.g. a node not in \p exec)
 */
ks_status ks_kernel_node_set(ks_kernel *kernel, ks_graph_exec exec, ks_graph_node node,
                             const ks_launch *launch, void **args);

/*
 * What a typed node handle (<kernel>_node_t) holds beside its node: what
 * the driver launches it with, read back once when it was added, and the
 * configuration it was added with. Filled and read by libkstub only.
 */
typedef struct ks_node_target {
    void *ks__kern;                /* the node's CUkernel, or NULL */
    void *ks__func;                /* its CUfunction, or NULL */
    void *ks__ctx;                 /* its CUcontext */
    ks_dim3 ks__grid, ks__block;   /* the configuration it was added with */
    unsigned ks__shared;
} ks_node_target;

/**
 * ks_kernel_node_add that also fills \p *target from the node the driver
 * made (cuGraphKernelNodeGetParams, once): what the generated <kernel>_node
 * entry points call. On any failure \p *target is zeroed; \p *node is NULL
 * unless the node was added (only the read-back failed).
 */
ks_status ks_typed_node_add(ks_kernel *kernel, ks_graph graph, const ks_graph_node *deps, size_t ndeps,
                            const ks_launch *launch, void **args, ks_graph_node *node,
                            ks_node_target *target);

/**
 * Set the configuration and arguments of \p node, added by
 * ks_typed_node_add for \p kernel with \p target, in the instance \p exec:
 * the configuration is checked as a launch's, then one
 * cuGraphExecKernelNodeSetParams (no read-back: the caller's type says
 * whose node it is). \p launch NULL: the configuration the node was added
 * with. What the generated <kernel>_node_set and <kernel>_nodes_set call.
 * \return KS_OK; KS_ERR_INVALID_VALUE for a target never filled;
 *         KS_ERR_DRIVER when the driver refuses (e.g. a node not in \p exec)
 */
ks_status ks_typed_node_set(ks_kernel *kernel, ks_graph_exec exec, ks_graph_node node,
                            const ks_node_target *target, const ks_launch *launch, void **args);

/* ---------------------------------------------------------------------- */
/* Device variables (filled in by generated code)                          */

/* Where a namespace-scope device variable lives. */
typedef enum ks_global_space {
    KS_GLOBAL_CONSTANT = 0,      /* __constant__ */
    KS_GLOBAL_DEVICE = 1,        /* __device__ */
    KS_GLOBAL_MANAGED = 2        /* __managed__: its address is also valid on the host */
} ks_global_space;

/* ks_global.flags */
#define KS_GLOBAL_CONST 1u       /* declared const: the image may lack its symbol (folded, or -rdc) */

/*
 * One per __constant__, __device__ or __managed__ variable in a generated
 * file. Its size is proven at load time: the driver's size for the symbol
 * (cuLibraryGetGlobal / cuModuleGetGlobal) must equal \p size, else
 * KS_ERR_ABI_MISMATCH naming the variable. Counts are in elements of the
 * innermost type (a float[4][4] has 16).
 */
typedef struct ks_global {
    ks_image *image;             /* the image that holds it */
    const char *symbol;          /* its device symbol */
    const char *name;            /* qualified C++ name, for messages */
    const char *type;            /* its C++ type, for messages */
    size_t size;                 /* bytes, as kstub computed them */
    size_t elem_size;            /* bytes of one element */
    size_t count;                /* elements: size / elem_size */
    ks_global_space space;
    unsigned flags;              /* KS_GLOBAL_* */
    unsigned desc_version;       /* KS_DESC_VERSION the generated code was compiled with */
    /* runtime state, zero-initialised */
    void *ks__addrs;             /* (CUcontext, address) list, read without a lock */
} ks_global;

#define KS_GLOBAL_INIT(image, symbol, name, type, size, elem_size, space, flags) \
    { (image), (symbol), (name), (type), (size), (elem_size), (size) / (elem_size), (space), (flags), \
      KS_DESC_VERSION, NULL }

/**
 * Copy \p count elements from host memory \p src into \p global from
 * element \p first on (cuMemcpyHtoDAsync on \p stream: NULL the legacy
 * default stream, KS_STREAM_PER_THREAD, or a CUstream). Loads the image on
 * first use. From pageable memory \p src may be reused on return; from
 * page-locked memory it must stay until the stream reaches the copy.
 * \return KS_OK; KS_ERR_INVALID_VALUE when first + count passes the
 *         variable's extent (nothing copied; the message names the
 *         variable and its extent) or \p src is NULL; KS_ERR_ABI_MISMATCH,
 *         KS_ERR_SYMBOL_NOT_FOUND from the load-time proof
 */
ks_status ks_global_write(ks_global *global, size_t first, const void *src, size_t count, ks_stream stream);
/** ks_global_write, saying where it was called from (the checks' and trace's messages). */
ks_status ks_global_write_at(ks_global *global, size_t first, const void *src, size_t count,
                             ks_stream stream, const char *file, int line);

/**
 * Copy \p count elements of \p global from element \p first on into host
 * memory \p dst, in \p stream's order, and return once they are there
 * (cuMemcpyDtoHAsync, then cuStreamSynchronize). Errors as ks_global_write.
 */
ks_status ks_global_read(ks_global *global, size_t first, void *dst, size_t count, ks_stream stream);
ks_status ks_global_read_at(ks_global *global, size_t first, void *dst, size_t count,
                            ks_stream stream, const char *file, int line);

/**
 * The variable's device address in the calling thread's context (loading
 * the image and making a context current as a launch would), for passing
 * to kernels or to the driver; for a __managed__ variable also a host
 * address.
 */
ks_status ks_global_address(ks_global *global, void **address);

/**
 * Add a node to \p graph, after the \p ndeps nodes at \p deps, that copies
 * \p count elements from host memory \p src into \p global from element
 * \p first on when the graph runs (cuGraphAddMemcpyNode, in the current
 * context). \p src is read when the graph runs, not now: keep it alive and
 * change it between launches to write new values. Bounds as ks_global_write.
 */
ks_status ks_global_node_add(ks_global *global, ks_graph graph, const ks_graph_node *deps, size_t ndeps,
                             size_t first, const void *src, size_t count, ks_graph_node *node);

/* ---------------------------------------------------------------------- */
/* The driver, for the application's own calls                             */

/**
 * Look up a CUDA driver entry point by its documented name (e.g.
 * "cuMemAlloc", "cuStreamCreate") for the CUDA version this header came
 * from, loading the driver if needed. Lets an application make its own
 * driver calls without linking libcuda, so it still starts (and can report
 * KS_ERR_NO_DRIVER) on a machine without one.
 * \param name  the driver function's name, without a _v2 suffix
 * \param fn    receives the entry point; cast it to the function's type for
 *              that CUDA version: cudaTypedefs.h's PFN_<name>_v<version>. Mind
 *              that for CUDA 13.0, cuCtxSynchronize and cuCtxGetDevice are
 *              their _v2 forms, which take a CUcontext (NULL: the current one)
 * \return KS_OK, KS_ERR_NO_DRIVER, or KS_ERR_SYMBOL_NOT_FOUND
 */
ks_status ks_driver_proc(const char *name, void **fn);

#ifdef __cplusplus
}
#endif

/* ---------------------------------------------------------------------- */
/* KS_CHECK: fail fast, in the caller                                      */

/*
 * KS_CHECK(expr) evaluates expr, a call that returns ks_status, once. On
 * anything but KS_OK it prints one line on stderr and exits with status 1:
 *
 *     app.c:42: saxpy(cfg, 2.0f, x, y, n): KS_ERR_LAUNCH: <ks_last_error_message()>
 *
 * where the message names the kernel, the failing driver or NVRTC call and
 * its CUresult. It is the caller's macro, expanded in the caller's code:
 * libkstub itself never prints and never exits (it reports, the program
 * decides), and nothing in the library uses it. Right for examples, tests
 * and programs that cannot go on; a library or a server should test the
 * status and read ks_last_error() instead. To act differently, define
 * KS_CHECK before including this header; it is then left alone.
 */
#ifndef KS_CHECK
#include <stdio.h>
#include <stdlib.h>
#define KS_CHECK(expr)                                                                   \
    do {                                                                                 \
        ks_status ks__check_status = (expr);                                             \
        if (ks__check_status != KS_OK) {                                                 \
            fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #expr,            \
                    ks_status_name(ks__check_status), ks_last_error_message());          \
            exit(EXIT_FAILURE);                                                          \
        }                                                                                \
    } while (0)
#endif

#endif /* KSTUB_H */
