/*
 * pointers.c — the pointers and extents checks: before a launch, every
 * pointer argument (every one with an extent hint, for extents alone) is
 * asked of the driver (cuPointerGetAttributes) and must be memory the
 * launch's device can reach, aligned for its element type, and hold one
 * element (or the hint's count of them) before the end of its allocation.
 *
 * Another device's memory passes only where the launch's device has peer
 * access to it enabled (check_peer: the driver's CU_POINTER_ATTRIBUTE_ACCESS_FLAGS,
 * asked only for such a pointer).
 *
 * A pointer the driver does not know is described from /proc/self/maps
 * (stack, heap, a file's pages, or nothing mapped: freed or never
 * allocated), since that is what the programmer needs to find the bug.
 *
 * Each thread keeps the last few allocations it was told about. While the
 * free watch is on (watch.c: CUPTI's callbacks on every call that can free
 * or unmap, bumping a generation), a cached allocation is trusted as long as
 * the generation it was asked under is still the generation: no driver call
 * at all. Without the watch (no CUPTI, another tool holding it,
 * KSTUB_CHECK_WATCH=0), a cached range is trusted only after asking the
 * driver one attribute of the pointer: CU_POINTER_ATTRIBUTE_BUFFER_ID, a
 * process-wide unique id of the allocation, which a freed range no longer
 * has and a new allocation at the same address has another of (and so does
 * every cuMemMap). A miss asks everything, as without the cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* ---- what an address the driver does not know is --------------------------------- */

/* From the line of /proc/self/maps that holds p: "host stack memory" and the like. */
static const char *host_kind(uintptr_t p, char *buf, size_t cap)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return "host memory or freed device memory (not an allocation CUDA knows)";
    /* Read line by line through a small window: the file may be long. */
    char win[4096];
    size_t have = 0;
    const char *found = NULL;
    for (;;) {
        ssize_t n = read(fd, win + have, sizeof win - 1 - have);
        if (n <= 0)
            break;
        have += (size_t)n;
        win[have] = '\0';
        char *line = win, *nl;
        while ((nl = strchr(line, '\n')) != NULL) {
            *nl = '\0';
            unsigned long long lo, hi;
            char perms[8] = "";
            int off = 0;
            if (sscanf(line, "%llx-%llx %7s %*s %*s %*s%n", &lo, &hi, perms, &off) >= 3 && p >= lo &&
                p < hi) {
                const char *path = line + off;
                while (*path == ' ')
                    path++;
                if (strncmp(perms, "---", 3) == 0 || strstr(path, "/dev/nvidia") != NULL)
                    found = "not a live CUDA allocation: freed device memory, or an address never allocated";
                else if (strcmp(path, "[stack]") == 0)
                    found = "host stack memory, not device memory";
                else if (strcmp(path, "[heap]") == 0)
                    found = "pageable host memory (the heap: malloc), not device memory";
                else if (path[0] == '/') {
                    snprintf(buf, cap, "host memory of %s (a global or static?), not device memory", path);
                    found = buf;
                } else
                    found = "pageable host memory (malloc, mmap or a thread's stack), not device memory";
                break;
            }
            line = nl + 1;
        }
        if (found)
            break;
        have = strlen(line);
        memmove(win, line, have);
        if (have == sizeof win - 1)
            have = 0;            /* a line longer than the window: skip it */
    }
    close(fd);
    return found ? found : "not a live CUDA allocation: freed device memory, or an address never allocated";
}

/* ---- the extent hint's count ------------------------------------------------------- */

/* The integer parameter \p idx's value in \p args; -1 when it is not one that
 * fits (the generator refuses a hint on anything but an integer). An if chain,
 * not a switch: no jump table for the quick path to read. */
static inline int int_param(const ks_kernel *k, void **args, long long idx, long long *v)
{
    if (idx < 0 || (unsigned long long)idx >= k->nparams)
        return -1;
    const ks_param_desc *d = &k->params[idx];
    const void *a = args[idx];
    int is_signed = d->kind == KS_PARAM_SIGNED;
    if (d->size == 4) {
        uint32_t u;
        memcpy(&u, a, 4);
        *v = is_signed ? (long long)(int32_t)u : (long long)u;
    } else if (d->size == 8) {
        uint64_t u;
        memcpy(&u, a, 8);
        if (!is_signed && u > (uint64_t)INT64_MAX)
            return -1;
        *v = (long long)u;
    } else if (d->size == 2) {
        uint16_t u;
        memcpy(&u, a, 2);
        *v = is_signed ? (long long)(int16_t)u : (long long)u;
    } else if (d->size == 1) {
        unsigned char u;
        memcpy(&u, a, 1);
        *v = is_signed ? (long long)(signed char)u : (long long)u;
    } else {
        return -1;
    }
    return 0;
}

/* Evaluate \p d's hint: 0 with *count, or an error (set) naming the hint. */
ks_status ks__extent_count(const ks__checked *c, const ks_param_desc *d, long long *count)
{
    long long stack[16];
    unsigned sp = 0;
    const char *name = ks__kernel_name(c->k);
    for (unsigned i = 0; i < d->nextent; i++) {
        const ks_extent_op *op = &d->extent_ops[i];
        long long v = 0;
        if (op->op == KS_EXTENT_CONST || op->op == KS_EXTENT_PARAM) {
            if (op->op == KS_EXTENT_CONST)
                v = op->value;
            else if (int_param(c->k, c->args, op->value, &v) != 0)
                return ks__error(KS_ERR_EXTENT, name, "parameter %s: its extent %s cannot be evaluated "
                                 "(parameter %lld is not an integer that fits)", d->name, d->extent, op->value);
            if (sp == sizeof stack / sizeof stack[0])
                return ks__error(KS_ERR_EXTENT, name, "parameter %s: its extent %s is too deep",
                                 d->name, d->extent);
            stack[sp++] = v;
            continue;
        }
        if (sp < 2)
            return ks__error(KS_ERR_EXTENT, name, "parameter %s: its extent %s is malformed",
                             d->name, d->extent);
        long long b = stack[--sp], a = stack[sp - 1], r = 0;
        int over = 0;
        switch (op->op) {
        case KS_EXTENT_ADD: over = __builtin_add_overflow(a, b, &r); break;
        case KS_EXTENT_SUB: over = __builtin_sub_overflow(a, b, &r); break;
        case KS_EXTENT_MUL: over = __builtin_mul_overflow(a, b, &r); break;
        case KS_EXTENT_DIV:
            if (b == 0)
                return ks__error(KS_ERR_EXTENT, name, "parameter %s: its extent %s divides by zero",
                                 d->name, d->extent);
            r = a / b;
            break;
        default:
            return ks__error(KS_ERR_EXTENT, name, "parameter %s: its extent %s is malformed",
                             d->name, d->extent);
        }
        if (over)
            return ks__error(KS_ERR_EXTENT, name, "parameter %s: its extent %s overflows", d->name, d->extent);
        stack[sp - 1] = r;
    }
    if (sp != 1)
        return ks__error(KS_ERR_EXTENT, name, "parameter %s: its extent %s is malformed", d->name, d->extent);
    if (stack[0] < 0)
        return ks__error(KS_ERR_EXTENT, name, "parameter %s: its extent %s = %lld is negative",
                         d->name, d->extent, stack[0]);
    *count = stack[0];
    return KS_OK;
}

/* ---- the allocations this thread saw --------------------------------------------- */

/* What a cached allocation lets a pointer into it be, decided once when it is
 * asked (check_one's tests in that order): another device's memory is
 * check_peer's, and anything refused is reported by asking again. */
enum { REACH_ASK = -2, REACH_ANY = -1 };      /* >= 0: plain memory of that device */

/* First the line a watch hit reads: where the entry answers, under which
 * generation, and what check_one needs of it. */
typedef struct alloc_info {
    unsigned long long span_lo, span_size;  /* where the entry answers: the range, or its part mapped;
                                             * span_size 0: an empty slot */
    uint64_t gen;                           /* ks__watch_gen before asking; 0: not watched */
    unsigned long long start, size, id;     /* the allocation */
    int reach;                              /* REACH_* or the device whose plain memory it is */
    int span_mapped;                        /* span from the mapping's attributes: the watch may answer */
    unsigned long long type, managed, ordinal, devptr;
    unsigned long long map_start, map_size; /* the mapping holding the pointer asked about */
} __attribute__((aligned(64))) alloc_info;

#define KS__PTR_CACHE 8
static __thread alloc_info seen[KS__PTR_CACHE];
static __thread unsigned seen_next;
/* 0 turns the cache off (bench/launch.c compares both in one run). */
int ks__pointers_cache = 1;
/* Hits the watch answered without a driver call, on this thread (tests and bench/ read it). */
__thread unsigned long ks__pointers_watch_hits;
/* Checked launches ks__pointers_quick passed, on this thread (tests read it). */
__thread unsigned long ks__pointers_quick_launches;
/* The driver refused the mapping's attributes once: not asked again. */
static int no_mapping_attrs;

/* Whether the driver still has the allocation of buffer id \p id at \p p: one
 * attribute, CU_POINTER_ATTRIBUTE_BUFFER_ID, which no later allocation reuses
 * (cuda.h: unique over the process's lifetime). A pointer the driver no
 * longer knows is an error of cuPointerGetAttribute: a miss. */
static int still_allocated(CUdeviceptr p, unsigned long long id)
{
    unsigned long long now = 0;
    CUpointer_attribute a = CU_POINTER_ATTRIBUTE_BUFFER_ID;
    void *d = &now;
    CUresult r = ks__cu.PointerGetAttribute != NULL ? ks__cu.PointerGetAttribute(&now, a, p)
                                                     : ks__cu.PointerGetAttributes(1, &a, &d, p);
    return r == CUDA_SUCCESS && now == id;
}

/* The cache's entry holding \p p (the first that does), or NULL. */
static inline alloc_info *entry_of(CUdeviceptr p)
{
    for (unsigned i = 0; i < KS__PTR_CACHE; i++)
        if (p - seen[i].span_lo < seen[i].span_size)    /* wraps for p below it */
            return &seen[i];
    return NULL;
}

/* Whether the free watch vouches for entry \p e now (generation \p gen). */
static inline int watched_hit(const alloc_info *e, int watched, uint64_t gen)
{
    return watched && e->gen == gen && e->span_mapped;
}

/*
 * What the driver says of \p p: from the cache while the watch vouches for
 * it (its generation unchanged) or, without the watch, while its buffer id
 * still matches. Every cached attribute is fixed for the life of a buffer id:
 * a free and a new allocation at the same address get a new id, for
 * cuMemAlloc and a memory pool alike, and so does every cuMemMap, even of the
 * same handle at the same address after an unmap (measured on an H100,
 * driver 580: bench/driver_probe.c), so memory the program maps itself is
 * cached too. The range a mapped pointer reports is its whole reservation;
 * with the watch an entry answers only inside the mapping it was asked in (a
 * pointer into another part is asked again, and gets its own entry).
 * tests/gpu/check_checks_gpu.c (cache_agrees_with_no_cache, with the watch,
 * and buffer_id_cache_agrees_with_no_cache, without) compares the cache's
 * verdicts with the uncached check's on the GPU. *out is the answer: the
 * cache's own entry (read at once, before anything else asks), or \p buf.
 */
static CUresult describe_ask(CUdeviceptr p, alloc_info *out, int watched, uint64_t gen, alloc_info *e)
    __attribute__((noinline));
static CUresult describe_ptr(CUdeviceptr p, alloc_info *buf, const alloc_info **out)
{
    /* The watch's word first, then the generation (watch.c says why this order). */
    int watched = __atomic_load_n(&ks__watch_on, __ATOMIC_ACQUIRE);
    uint64_t gen = watched ? __atomic_load_n(&ks__watch_gen, __ATOMIC_ACQUIRE) : 0;
    alloc_info *e = ks__pointers_cache ? entry_of(p) : NULL;
    /* With the watch on, the usual answer: the entry itself, not a copy. */
    if (__builtin_expect(e != NULL && watched_hit(e, watched, gen), 1)) {
        ks__pointers_watch_hits++;
        *out = e;
        return CUDA_SUCCESS;
    }
    *out = buf;
    return describe_ask(p, buf, watched, gen, e);
}

/* check_one's verdict on the kind of memory, decided once for an entry. */
static int reach_of(const alloc_info *n)
{
    unsigned memtype = (unsigned)n->type;
    if (n->managed)
        return REACH_ANY;
    if (memtype == 0 || (memtype == CU_MEMORYTYPE_HOST && n->devptr == 0))
        return REACH_ASK;
    return memtype == CU_MEMORYTYPE_DEVICE ? (int)n->ordinal : REACH_ANY;
}

/* describe_ptr where the watch does not answer: \p e, the cache's entry
 * holding \p p (NULL: none), revalidated by its buffer id, else the driver
 * asked everything. Out of line: with the watch on, a hit is the checked
 * launch's usual path, and its code stays a few contiguous lines. */
static CUresult describe_ask(CUdeviceptr p, alloc_info *out, int watched, uint64_t gen, alloc_info *e)
{
    if (e != NULL) {
        if (still_allocated(p, e->id)) {
            e->gen = gen;            /* asked now: the watch may answer next time */
            *out = *e;
            return CUDA_SUCCESS;
        }
        e->span_size = 0;            /* freed, or another allocation now: ask everything */
    }
    /* Each value in a zeroed 8-byte slot: the driver writes 1, 4 or 8 bytes. */
    alloc_info n;
    memset(&n, 0, sizeof n);
    CUpointer_attribute attrs[] = {
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE,     CU_POINTER_ATTRIBUTE_IS_MANAGED,
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,  CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        CU_POINTER_ATTRIBUTE_RANGE_SIZE,      CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
        CU_POINTER_ATTRIBUTE_BUFFER_ID,       CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR,
        CU_POINTER_ATTRIBUTE_MAPPING_SIZE,
    };
    void *data[] = {&n.type, &n.managed, &n.ordinal, &n.start, &n.size, &n.devptr, &n.id,
                    &n.map_start, &n.map_size};
    /* The mapping's attributes only where the watch would use them. */
    unsigned count = !ks__pointers_cache ? 6 : watched && !__atomic_load_n(&no_mapping_attrs, __ATOMIC_RELAXED) ? 9 : 7;
    CUresult r = ks__cu.PointerGetAttributes(count, attrs, data, p);
    if (r == CUDA_ERROR_INVALID_VALUE && count == 9) {
        __atomic_store_n(&no_mapping_attrs, 1, __ATOMIC_RELAXED);   /* a driver without them */
        memset(&n, 0, sizeof n);
        r = ks__cu.PointerGetAttributes(count = 7, attrs, data, p);
    }
    if (r != CUDA_SUCCESS)
        return r;
    n.gen = gen;
    /* The entry answers inside the allocation's range and, where the mapping is
     * known, inside the part of it mapped where p is: another mapping of the same
     * reservation gets its own entry, and the watch answers only where it knows. */
    n.span_lo = n.start, n.span_size = n.size;
    n.span_mapped = count == 9;
    if (count == 9 && n.map_size != 0) {
        unsigned long long lo = n.map_start > n.start ? n.map_start : n.start;
        unsigned long long a = n.start + n.size, b = n.map_start + n.map_size, hi = a < b ? a : b;
        n.span_lo = lo, n.span_size = hi > lo ? hi - lo : 0;
    }
    n.reach = reach_of(&n);
    *out = n;
    if (ks__pointers_cache && n.id != 0 && n.span_size != 0 && ((unsigned)n.type != 0 || n.managed)) {
        seen[seen_next] = n;
        seen_next = (seen_next + 1) % KS__PTR_CACHE;
    }
    return CUDA_SUCCESS;
}

/* ---- one pointer ----------------------------------------------------------------- */

static const char *type_of(const ks_param_desc *d)
{
    return d->type ? d->type : "a pointer";
}

/*
 * Memory of another device than the launch's: usable only where peer access
 * is enabled (cuCtxEnablePeerAccess), which the driver answers per pointer as
 * CU_POINTER_ATTRIBUTE_ACCESS_FLAGS for the current context's device: none,
 * read-only (then only a pointer to const passes) or read-write. Asked only
 * here, off the same-device path, of cuPointerGetAttributes and then of
 * cuPointerGetAttribute. A driver that answers neither (an error for that
 * attribute) falls back to cuDeviceCanAccessPeer, which says what the
 * hardware could do, not what the program enabled. The launch's device is the
 * current context's, or, for a stream of another context (asked only here),
 * that context's.
 */
static ks_status peer_access(const ks__checked *c, const ks_param_desc *d, CUdeviceptr p, int ordinal,
                             CUdevice dev);
static ks_status check_peer(const ks__checked *c, const ks_param_desc *d, CUdeviceptr p, int ordinal,
                            CUdevice dev) __attribute__((noinline, cold));
static ks_status check_peer(const ks__checked *c, const ks_param_desc *d, CUdeviceptr p, int ordinal,
                            CUdevice dev)
{
    /* A stream of another context than the current one: the kernel runs there, so that
     * context's device is the launch's, and the access flags are asked with it current. */
    int pushed;
    ks__context_enter(ks__stream_context(c->l->stream), &pushed);
    CUdevice sdev;
    if (pushed && ks__cu.CtxGetDevice(&sdev) == CUDA_SUCCESS)
        dev = sdev;
    ks_status st = ordinal == (int)dev ? KS_OK : peer_access(c, d, p, ordinal, dev);
    ks__context_leave(pushed);
    return st;
}

/* check_peer's question, with the launch's context current. */
static ks_status peer_access(const ks__checked *c, const ks_param_desc *d, CUdeviceptr p, int ordinal,
                             CUdevice dev)
{
    const char *name = ks__kernel_name(c->k);
    const char *pname = d->name ? d->name : "(unnamed)";
    unsigned long long flags = 0;        /* the driver writes the enum's 4 bytes */
    CUpointer_attribute attr = CU_POINTER_ATTRIBUTE_ACCESS_FLAGS;
    void *data = &flags;
    /* cuda.h lists the attribute with neither call's supported ones: ask both. */
    if (ks__cu.PointerGetAttributes(1, &attr, &data, p) == CUDA_SUCCESS ||
        (ks__cu.PointerGetAttribute != NULL &&
         (flags = 0, ks__cu.PointerGetAttribute(&flags, attr, p)) == CUDA_SUCCESS)) {
        unsigned f = (unsigned)flags;
        if (f == CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE)
            return ks__error(KS_ERR_POINTER, name,
                             "parameter %s (%s): 0x%llx is memory of device %d; device %d (the "
                             "launch's) has no peer access to it: cuCtxEnablePeerAccess of device %d's "
                             "context, with device %d's current, enables it (cudaDeviceEnablePeerAccess(%d, 0) "
                             "on device %d)",
                             pname, type_of(d), (unsigned long long)p, ordinal, (int)dev, ordinal,
                             (int)dev, ordinal, (int)dev);
        if ((f & CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE) != CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE &&
            !d->readonly)
            return ks__error(KS_ERR_POINTER, name,
                             "parameter %s (%s): 0x%llx is memory of device %d, which device %d (the "
                             "launch's) may only read (its peer access is read-only), but the kernel "
                             "may write through a pointer to non-const",
                             pname, type_of(d), (unsigned long long)p, ordinal, (int)dev);
        return KS_OK;
    }
    int can = 0;
    if (ks__cu.DeviceCanAccessPeer == NULL ||
        ks__cu.DeviceCanAccessPeer(&can, dev, (CUdevice)ordinal) != CUDA_SUCCESS || !can)
        return ks__error(KS_ERR_POINTER, name,
                         "parameter %s (%s): 0x%llx is memory of device %d, which device %d "
                         "(the launch's) cannot reach",
                         pname, type_of(d), (unsigned long long)p, ordinal, (int)dev);
    return KS_OK;
}

/* A pointer the driver does not know, described from /proc/self/maps. Out of
 * line, with its buffers, so check_one's frame (the stack lines a checked
 * launch writes) stays small. */
static ks_status not_device(const char *name, const char *pname, const ks_param_desc *d, CUdeviceptr p)
    __attribute__((noinline, cold));
static ks_status not_device(const char *name, const char *pname, const ks_param_desc *d, CUdeviceptr p)
{
    char buf[512];
    return ks__error(KS_ERR_POINTER, name, "parameter %s (%s): 0x%llx is %s", pname, type_of(d),
                     (unsigned long long)p, host_kind((uintptr_t)p, buf, sizeof buf));
}

/* Whether p is aligned for its element type on the device. An alignment is a
 * power of two (KS_ALIGNOF's): a mask, not a division. */
static inline int aligned(const ks_param_desc *d, CUdeviceptr p)
{
    unsigned a = d->pointee_align;
    return a <= 1 || (a & (a - 1u) ? p % a : p & (a - 1u)) == 0;
}

/* Whether \p count elements of d's type fit between p and the end of its
 * allocation (start, size); an unknown element size or allocation passes. */
static inline int room_for(const ks_param_desc *d, CUdeviceptr p, unsigned long long start,
                           unsigned long long size, long long count)
{
    unsigned long long need;
    if (d->pointee_size == 0 || size == 0 || count == 0)
        return 1;
    if (__builtin_mul_overflow((unsigned long long)count, (unsigned long long)d->pointee_size, &need))
        return 0;
    return p >= start && p - start < size && start + size - p >= need;
}

/* Out of line, as launch_device below: pointers_before's loop then holds one
 * copy of each (the compiler otherwise copies the loop body for the first
 * pointer and the rest), and a checked launch's code is fewer lines. */
static ks_status check_one(const ks__checked *c, unsigned i, CUdevice dev) __attribute__((noinline));
static ks_status check_one(const ks__checked *c, unsigned i, CUdevice dev)
{
    const ks_param_desc *d = &c->k->params[i];
    const char *name = ks__kernel_name(c->k);
    const char *pname = d->name ? d->name : "(unnamed)";
    CUdeviceptr p;
    memcpy(&p, c->args[i], sizeof p);
    if (p == 0)
        return KS_OK;

    alloc_info buf;
    const alloc_info *ai;
    CUresult r = describe_ptr(p, &buf, &ai);
    unsigned long long type = ai->type, managed = ai->managed, ordinal = ai->ordinal, start = ai->start,
                       size = ai->size, devptr = ai->devptr;
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_POINTER, name, "cuPointerGetAttributes", r,
                            "parameter %s (%s): asking about 0x%llx", pname, type_of(d),
                            (unsigned long long)p);
    unsigned memtype = (unsigned)type;
    if (memtype == 0 && !managed)
        return not_device(name, pname, d, p);
    if (memtype == CU_MEMORYTYPE_HOST && !managed && devptr == 0)
        return ks__error(KS_ERR_POINTER, name,
                         "parameter %s (%s): 0x%llx is page-locked host memory not mapped for the device",
                         pname, type_of(d), (unsigned long long)p);
    if (memtype == CU_MEMORYTYPE_DEVICE && !managed && (int)ordinal != (int)dev) {
        ks_status st = check_peer(c, d, p, (int)ordinal, dev);
        if (st != KS_OK)
            return st;
    }
    if (!aligned(d, p))
        return ks__error(KS_ERR_POINTER, name,
                         "parameter %s (%s): 0x%llx is not %u-byte aligned, as its element type must be "
                         "on the device (it is %llu bytes past a boundary)",
                         pname, type_of(d), (unsigned long long)p, d->pointee_align,
                         (unsigned long long)(p % d->pointee_align));

    int use_extent = d->nextent > 0 && (c->checks & KS_CHECK_EXTENTS);
    long long count = 1;
    if (use_extent) {
        ks_status st = ks__extent_count(c, d, &count);
        if (st != KS_OK)
            return st;
    }
    if (room_for(d, p, start, size, count))
        return KS_OK;
    unsigned long long need;
    if (__builtin_mul_overflow((unsigned long long)count, (unsigned long long)d->pointee_size, &need))
        need = ~0ull;
    unsigned long long have = p >= start && p - start < size ? start + size - p : 0;
    if (use_extent)
        return ks__error(KS_ERR_EXTENT, name,
                         "parameter %s (%s): 0x%llx must hold %s = %lld elements (%llu bytes), but its "
                         "allocation (0x%llx, %llu bytes) ends %llu bytes after it (%llu elements)",
                         pname, type_of(d), (unsigned long long)p, d->extent, count, need, start, size, have,
                         have / d->pointee_size);
    return ks__error(KS_ERR_POINTER, name,
                     "parameter %s (%s): 0x%llx has %llu bytes to the end of its allocation (0x%llx, "
                     "%llu bytes); one element needs %u",
                     pname, type_of(d), (unsigned long long)p, have, start, size, d->pointee_size);
}

/*
 * The launch's device: the current context's. A context's device is fixed
 * for its life, and every call that ends a context (cuCtxDestroy, a primary
 * context's release or reset, cudaDeviceReset) bumps the watch's generation,
 * so while the watch vouches for it this thread's last answer stands for the
 * same context: one cuCtxGetCurrent, no cuCtxGetDevice. The current context
 * itself is asked every launch (the runtime can change it without a call
 * the watch sees).
 */
static ks_status launch_device(const char *name, CUdevice *dev) __attribute__((noinline));
static __thread struct { CUcontext ctx; CUdevice dev; uint64_t gen; } last;

static ks_status launch_device(const char *name, CUdevice *dev)
{
    int watched = __atomic_load_n(&ks__watch_on, __ATOMIC_ACQUIRE);
    uint64_t gen = watched ? __atomic_load_n(&ks__watch_gen, __ATOMIC_ACQUIRE) : 0;
    CUcontext ctx = NULL;
    ks_status st = ks__context_current(name, &ctx);
    if (st != KS_OK)
        return st;
    if (watched && ctx == last.ctx && gen == last.gen) {
        *dev = last.dev;
        return KS_OK;
    }
    CUresult r = ks__cu.CtxGetDevice(dev);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_DRIVER, name, "cuCtxGetDevice", r, NULL);
    last.ctx = ctx, last.dev = *dev, last.gen = gen;
    return KS_OK;
}

static ks_status pointers_before(const ks__checked *c)
{
    const ks_kernel *k = c->k;
    const char *name = ks__kernel_name(k);
    if (ks__cu.PointerGetAttributes == NULL)
        return ks__error(KS_ERR_UNSUPPORTED, name,
                         "the pointers check needs cuPointerGetAttributes, which the driver lacks");
    /* Turned on by KSTUB_CHECK: the watch starts with the first checked launch
     * (ks_checks_set starts it itself). */
    if (__builtin_expect(!__atomic_load_n(&ks__watch_asked, __ATOMIC_ACQUIRE), 0))
        ks__watch_start();
    CUdevice dev = 0;
    int have_dev = 0;
    for (unsigned i = 0; i < k->nparams; i++) {
        const ks_param_desc *d = &k->params[i];
        if (d->kind != KS_PARAM_POINTER)
            continue;
        if (!(c->checks & KS_CHECK_POINTERS) && d->nextent == 0)
            continue;
        if (!have_dev) {
            ks_status st = launch_device(name, &dev);
            if (st != KS_OK)
                return st;
            have_dev = 1;
        }
        ks_status st = check_one(c, i, dev);
        if (st != KS_OK)
            return st;
    }
    return KS_OK;
}

static ks_status pointers_after(const ks__checked *c, ks_status st)
{
    (void)c;
    return st;
}

const ks__check ks__check_pointers = {pointers_before, pointers_after};

/* A hint of one step, a constant or an integer parameter (most hints: "n"),
 * evaluated as ks__extent_count would: 1 with *count; 0 for anything else,
 * which ks__extent_count evaluates (and reports). */
static inline int one_step_count(const ks_kernel *k, void **args, const ks_param_desc *d, long long *count)
{
    const ks_extent_op *op = d->extent_ops;
    long long v = 0;
    if (d->nextent != 1)
        return 0;
    if (op->op == KS_EXTENT_CONST)
        v = op->value;
    else if (op->op != KS_EXTENT_PARAM || int_param(k, args, op->value, &v) != 0)
        return 0;
    *count = v;
    return v >= 0;
}

/* A hint of several steps ("rows * cols"), evaluated in full: 1 with *count,
 * 0 when it cannot be (pointers_before then reports it). Out of line, so the
 * one-step hints' path (most hints) stays a few contiguous lines. */
static int extent_count_quiet(const ks_kernel *k, void **args, const ks_param_desc *d, unsigned checks,
                              long long *count) __attribute__((noinline, cold));
static int extent_count_quiet(const ks_kernel *k, void **args, const ks_param_desc *d, unsigned checks,
                              long long *count)
{
    const ks__checked c = {(ks_kernel *)k, NULL, args, NULL, NULL, 0, checks};
    return ks__extent_count(&c, d, count) == KS_OK;
}

/*
 * The checked launch's usual case (launch.c), when pointers and extents are
 * the only checks on: every pointer argument they look at is in an
 * allocation the free watch vouches for, of the launch's device (or
 * reachable from any), aligned, and holding what its hint says, all decided
 * from the cache as check_one decides it, and the launch's device is this
 * thread's last answer for the current context: one cuCtxGetCurrent and no
 * other call, no error text, no hook table. 1 if so; 0 when anything is
 * not so plain (a miss, another device, a refusal), and pointers_before
 * then decides and reports as always.
 */
int ks__pointers_quick(const ks_kernel *k, void **args, unsigned checks)
{
    if (!__atomic_load_n(&ks__watch_on, __ATOMIC_ACQUIRE) || !ks__pointers_cache)
        return 0;
    uint64_t gen = __atomic_load_n(&ks__watch_gen, __ATOMIC_ACQUIRE);
    int dev = -1;
    unsigned hits = 0;
    for (unsigned i = 0; i < k->nparams; i++) {
        const ks_param_desc *d = &k->params[i];
        if (d->kind != KS_PARAM_POINTER)
            continue;
        int use_extent = d->nextent > 0 && (checks & KS_CHECK_EXTENTS);
        if (!(checks & KS_CHECK_POINTERS) && !use_extent)
            continue;
        CUdeviceptr p;
        memcpy(&p, args[i], sizeof p);
        if (p == 0)
            continue;
        if (dev < 0) {
            CUcontext ctx = NULL;
            if (ks__cu.CtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx == NULL || ctx != last.ctx || gen != last.gen)
                return 0;
            dev = (int)last.dev;
        }
        const alloc_info *e = entry_of(p);
        if (e == NULL || !watched_hit(e, 1, gen) || (e->reach != REACH_ANY && e->reach != dev) || !aligned(d, p))
            return 0;
        long long count = 1;
        if (use_extent && !one_step_count(k, args, d, &count) && !extent_count_quiet(k, args, d, checks, &count))
            return 0;
        if (!room_for(d, p, e->start, e->size, count))
            return 0;
        hits++;
    }
    if (dev < 0 && ks__cu.PointerGetAttributes == NULL)
        return 0;                /* pointers_before refuses every launch then */
    ks__pointers_watch_hits += hits;
    ks__pointers_quick_launches++;
    return 1;
}

/* ---- device variables' accessors ------------------------------------------------- */

ks_status ks__global_check_host(const ks_global *g, const char *op, const void *p, size_t bytes)
{
    if (!(__atomic_load_n(&ks__checks, __ATOMIC_RELAXED) & KS_CHECK_POINTERS) || p == NULL)
        return KS_OK;
    const char *name = g->name ? g->name : g->symbol;
    if (ks__cu.PointerGetAttributes == NULL)
        return ks__error(KS_ERR_UNSUPPORTED, NULL, "variable '%s': the pointers check needs "
                         "cuPointerGetAttributes, which the driver lacks", name);
    unsigned long long type = 0, managed = 0, start = 0, size = 0;
    CUpointer_attribute attrs[] = {
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
    };
    void *data[] = {&type, &managed, &start, &size};
    uintptr_t a = (uintptr_t)p;
    CUresult r = ks__cu.PointerGetAttributes(4, attrs, data, (CUdeviceptr)a);
    if (r != CUDA_SUCCESS)
        return ks__error_cu(KS_ERR_POINTER, NULL, "cuPointerGetAttributes", r,
                            "variable '%s': %s: asking about 0x%llx", name, op, (unsigned long long)a);
    if ((unsigned)type == CU_MEMORYTYPE_DEVICE && !managed)
        return ks__error(KS_ERR_POINTER, NULL, "variable '%s': %s: 0x%llx is device memory; the "
                         "accessors copy between the variable and host memory (use its _address() "
                         "and the driver for a device-to-device copy)", name, op, (unsigned long long)a);
    if (size != 0 && a >= start && bytes > start + size - a)
        return ks__error(KS_ERR_POINTER, NULL, "variable '%s': %s: 0x%llx has %llu bytes to the end "
                         "of its allocation (0x%llx, %llu bytes); the copy needs %zu", name, op,
                         (unsigned long long)a, (unsigned long long)(start + size - a), start, size, bytes);
    return KS_OK;
}
