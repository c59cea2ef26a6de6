/*
 * trace.c — the trace check: one record per launch, written after the
 * launch (and after the sync check's wait) so it carries the launch's
 * status; a refused launch is traced too, and so is each accessor call of a
 * device variable (global.c), before its copy. Every argument's packed
 * bytes are in the record, so a failing launch's argument buffer can be
 * rebuilt from it.
 *
 * The trace file (common/tracefmt.h, docs/runtime.md) is mapped MAP_SHARED
 * and a record is written into the mapping with no system call: its bytes
 * are reserved by one atomic fetch-add on the `next` offset in the file's
 * header (so threads and processes appending to one file never overlap),
 * filled in, and marked whole last. The pages are the file's page cache: a
 * record written survives the process dying right after (a fault, abort,
 * SIGKILL). `kstub trace FILE` renders the records as JSON lines
 * (common/trace_render.c). The file grows KS_TRACE_CHUNK at a time by
 * posix_fallocate (it only ever grows, so processes need no lock for it,
 * and blocks are allocated up front: a full disk is an error here, never
 * a SIGBUS on a page of the mapping).
 *
 * The file: ks_trace_set_file's, else $KSTUB_TRACE (a path; "1" or empty
 * mean the default; "0" turns the trace off, check.c), else
 * ./kstub-trace-<pid>.kstrace. It is opened as every output is
 * (ks__open_update: no symlink followed, regular files only, O_CLOEXEC).
 * A trace that cannot be opened (or is some other file) must not stop the
 * program's work: the first launch after it fails is refused with
 * KS_ERR_IO and says so (a caller that checks statuses learns of it once,
 * and knows that launch did not run), and every later launch goes on
 * untraced until ks_trace_set_file() names a file again. A record that
 * cannot be written (the file cannot grow: a full disk, a file-size limit)
 * is reported once in the same way: the reservation is handed back where
 * no one reserved after it, nothing of the record is in the file, and later
 * launches go on untraced; the launch whose record was lost returns
 * KS_ERR_IO ("launched, but …"), or, when it failed already (or the record
 * was a variable's), the next launch is refused saying so ("not
 * launched: …").
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "tracefmt.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23            /* Linux 5.14; older kernels say EINVAL, which is ignored */
#endif

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static int trace_fd = -1;
static unsigned char *trace_map;      /* the file's mapping, trace_window bytes of address space */
static size_t trace_window;
static uint64_t trace_known;          /* the file is at least this long */
static char *trace_path;              /* ks_trace_set_file's, or NULL */
static unsigned long long trace_seq;
static uint32_t trace_pid;            /* getpid(), refreshed in a forked child */
static int trace_failed;              /* the file could not be opened or written: launches go on untraced */
static char trace_lost[PATH_MAX + 160]; /* a lost record not yet reported, or "" */

static void trace_close(void)
{
    if (trace_map != NULL)
        munmap(trace_map, trace_window);
    if (trace_fd >= 0)
        close(trace_fd);
    trace_map = NULL;
    trace_fd = -1;
}

KS__API ks_status ks_trace_set_file(const char *path)
{
    char *copy = NULL;
    if (path != NULL && (copy = strdup(path)) == NULL)
        return ks__error(KS_ERR_NO_MEMORY, NULL, "ks_trace_set_file: out of memory");
    pthread_mutex_lock(&trace_lock);
    free(trace_path);
    trace_path = copy;
    trace_close();
    trace_failed = 0;
    trace_lost[0] = '\0';
    pthread_mutex_unlock(&trace_lock);
    return KS_OK;
}

/* The trace file's name (buf: room for the default one). */
static const char *trace_name(char *buf, size_t cap)
{
    const char *path = trace_path ? trace_path : ks__getenv("KSTUB_TRACE");
    if (path == NULL || path[0] == '\0' || strcmp(path, "1") == 0 || strcmp(path, "0") == 0) {
        snprintf(buf, cap, "kstub-trace-%ld.kstrace", (long)getpid());
        path = buf;
    }
    return path;
}

/* A forked child writes into the parent's mapping as its own process. */
static void forked_child(void)
{
    trace_pid = (uint32_t)getpid();
    trace_seq = 0;
}

static void watch_forks(void)
{
    (void)pthread_atfork(NULL, NULL, forked_child);
}

/* Under an exclusive flock of the file: a new file gets its header and
 * first chunk; an old one must be a trace of this version. 0, or -1 with
 * why. */
static int trace_prepare(int fd, const char **why, char *buf, size_t cap)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return *why = strerror(errno), -1;
    if (st.st_size == 0) {
        unsigned char head[KS_TRACE_HEADER] = KS_TRACE_MAGIC;
        uint32_t version = KS_TRACE_VERSION, size = KS_TRACE_HEADER;
        uint64_t next = KS_TRACE_HEADER;
        memcpy(head + 8, &version, 4);
        memcpy(head + 12, &size, 4);
        memcpy(head + 16, &next, 8);
        /* The header first: a file cut short here is still a trace, one that grows at its first record. */
        if (pwrite(fd, head, sizeof head, 0) != (ssize_t)sizeof head) {
            *why = strerror(errno ? errno : EIO);
            if (ftruncate(fd, 0) != 0) {
                /* the header's error is the one to report */
            }
            return -1;
        }
        (void)posix_fallocate(fd, 0, KS_TRACE_CHUNK);   /* if not, the first record grows it, or says why not */
        return 0;
    }
    unsigned char head[16];
    if (st.st_size < (off_t)KS_TRACE_HEADER || pread(fd, head, sizeof head, 0) != (ssize_t)sizeof head ||
        memcmp(head, KS_TRACE_MAGIC, 8) != 0)
        return *why = "it is not empty and not a kstub trace (which is not overwritten)", -1;
    uint32_t version;
    memcpy(&version, head + 8, 4);
    if (version != KS_TRACE_VERSION) {
        snprintf(buf, cap, "it is a kstub trace of format version %u, not %u", version, KS_TRACE_VERSION);
        return *why = buf, -1;
    }
    return 0;
}

/* Under trace_lock: 0 with the trace file open and mapped; -1 with the
 * error set the first time it cannot be; -2 (no error) every time after. */
static int trace_open(const char *kernel)
{
    if (trace_map != NULL)
        return 0;
    if (trace_failed)
        return -2;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    (void)pthread_once(&once, watch_forks);
    trace_pid = (uint32_t)getpid();
    char fallback[64], buf[96];
    const char *path = trace_name(fallback, sizeof fallback), *why = NULL;
    trace_fd = ks__open_update(path);
    if (trace_fd < 0) {
        why = trace_fd == KS__NOT_REGULAR ? "it is not a regular file"
              : errno == ELOOP            ? "it is a symbolic link, which is not followed"
                                          : strerror(errno);
        trace_fd = -1;
    } else if (flock(trace_fd, LOCK_EX) != 0) {
        why = strerror(errno);
    } else {
        int rc = trace_prepare(trace_fd, &why, buf, sizeof buf);
        struct stat st;
        if (rc == 0 && fstat(trace_fd, &st) != 0)
            why = strerror(errno);
        (void)flock(trace_fd, LOCK_UN);
        /* Address space for the file to grow into (1 TiB down to 64 MiB, as
         * the address-space limit allows); pages past the file's end are
         * never touched. */
        for (size_t w = (size_t)1 << 40; why == NULL && trace_map == NULL; w /= 2) {
            void *m = mmap(NULL, w, PROT_READ | PROT_WRITE, MAP_SHARED, trace_fd, 0);
            if (m != MAP_FAILED) {
                trace_map = m;
                trace_window = w;
                trace_known = (uint64_t)st.st_size;
            } else if (w <= ((size_t)64 << 20)) {
                why = strerror(errno);
            }
        }
    }
    if (why != NULL) {
        ks__error(KS_ERR_IO, kernel, "not launched: the trace file '%s' cannot be opened: %s; later "
                  "launches go on untraced", path, why);
        trace_close();
        trace_failed = 1;
        return -1;
    }
    return 0;
}

/* Under trace_lock, the file mapped: the record's place, `size` bytes
 * reserved (size word already stored), or NULL with the loss kept in
 * trace_lost to be reported once and the file closed until
 * ks_trace_set_file. */
static unsigned char *trace_reserve(uint32_t size)
{
    uint64_t *next = (uint64_t *)(void *)(trace_map + 16);
    uint64_t off = __atomic_fetch_add(next, size, __ATOMIC_RELAXED);
    const char *why = NULL;
    int err = 0;
    if (off + size > trace_window) {
        why = "it has reached the most this process can map";
    } else if (off + size > trace_known) {
        struct stat st;
        if (fstat(trace_fd, &st) == 0)
            trace_known = (uint64_t)st.st_size;    /* another process grew it */
        if (off + size > trace_known) {
            uint64_t want = (off + size + KS_TRACE_CHUNK - 1) / KS_TRACE_CHUNK * KS_TRACE_CHUNK;
            err = posix_fallocate(trace_fd, (off_t)trace_known, (off_t)(want - trace_known));
            if (err == 0) {
                /* The new pages faulted in now, together, not one by one under launches. */
                uint64_t from = trace_known & ~(uint64_t)4095;
                (void)madvise(trace_map + from, (size_t)(want - from), MADV_POPULATE_WRITE);
                trace_known = want;
            }
        }
    }
    if (why == NULL && err == 0) {
        unsigned char *r = trace_map + off;
        __atomic_store_n((uint32_t *)(void *)(r + 4), size, __ATOMIC_RELAXED);
        return r;
    }
    uint64_t mine = off + size;          /* hand the bytes back if no one reserved after them */
    (void)__atomic_compare_exchange_n(next, &mine, off, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    trace_close();
    trace_failed = 1;
    char fallback[64];
    snprintf(trace_lost, sizeof trace_lost, "the trace file '%s' cannot be written: %s; its last record is lost and "
             "later launches go on untraced", trace_name(fallback, sizeof fallback), why ? why : strerror(err));
    return NULL;
}

/* A record's fixed part; the strings and arguments follow. */
static unsigned char *put_fixed(unsigned char *r, unsigned type, unsigned nargs, int line, ks_status st,
                                const void *stream, const void *nums)
{
    uint16_t t = (uint16_t)type, n = (uint16_t)nargs;
    int32_t l = line;
    uint32_t pid = trace_pid, s = (uint32_t)st;
    uint64_t seq = __atomic_add_fetch(&trace_seq, 1, __ATOMIC_RELAXED), strm = (uintptr_t)stream;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    memcpy(r + 8, &t, 2);
    memcpy(r + 10, &n, 2);
    memcpy(r + 12, &l, 4);
    memcpy(r + 16, &pid, 4);
    memcpy(r + 20, &s, 4);
    memcpy(r + 24, &seq, 8);
    memcpy(r + 32, &ns, 8);
    memcpy(r + 40, &strm, 8);
    memcpy(r + 48, nums, 32);
    return r + KS_TRACE_FIXED;
}

static size_t str_size(const char *s)
{
    return 4 + (s ? strlen(s) : 0);
}

static unsigned char *put_str(unsigned char *p, const char *s)
{
    uint32_t n = s ? (uint32_t)strlen(s) : KS_TRACE_NULL;
    memcpy(p, &n, 4);
    if (s == NULL)
        return p + 4;
    memcpy(p + 4, s, n);
    return p + 4 + n;
}

static uint32_t round8(size_t n)
{
    return (uint32_t)((n + 7) & ~(size_t)7);
}

/* Under trace_lock: mark the record whole. */
static void trace_commit(unsigned char *r)
{
    __atomic_store_n((uint32_t *)(void *)r, KS_TRACE_MARK, __ATOMIC_RELEASE);
}

/* Under trace_lock: a lost record not reported yet, reported now with
 * status KS_ERR_IO (what: "launched, but" or "not launched:"); or st. */
static ks_status trace_report_lost(const char *kernel, const char *what, ks_status st)
{
    if (trace_lost[0] == '\0' || st != KS_OK)
        return st;
    st = ks__error(KS_ERR_IO, kernel, "%s %s", what, trace_lost);
    trace_lost[0] = '\0';
    return st;
}

static ks_status trace_before(const ks__checked *c)
{
    pthread_mutex_lock(&trace_lock);
    ks_status st = trace_report_lost(ks__kernel_name(c->k), "not launched:", KS_OK);
    int rc = st == KS_OK ? trace_open(ks__kernel_name(c->k)) : -2;
    pthread_mutex_unlock(&trace_lock);
    return st != KS_OK ? st : rc == -1 ? KS_ERR_IO : KS_OK;
}

/* What a launch record holds of its kernel alone (kernel, symbol, each
 * parameter's kind, offset, size, name and type), serialised once per
 * kernel and copied whole into each record. Under trace_lock; keyed by the
 * descriptor's address and checked against its fields, so a descriptor
 * freed and another made at its address is not taken for it. */
typedef struct kernel_part {
    const ks_kernel *k;
    const char *symbol;
    const ks_param_desc *params;
    unsigned nparams;
    uint32_t len;
    unsigned char *bytes;
} kernel_part;

#define KERNEL_PARTS 1024u                /* more kernels than this are serialised at each launch */
static kernel_part kernel_parts[KERNEL_PARTS];

static size_t kernel_part_size(const ks_kernel *k)
{
    size_t n = str_size(ks__kernel_name(k)) + str_size(k->symbol);
    for (unsigned i = 0; i < k->nparams; i++)
        n += 12 + str_size(k->params[i].name) + str_size(k->params[i].type);
    return n;
}

static unsigned char *put_kernel_part(unsigned char *p, const ks_kernel *k)
{
    p = put_str(p, ks__kernel_name(k));
    p = put_str(p, k->symbol);
    for (unsigned i = 0; i < k->nparams; i++) {
        const ks_param_desc *d = &k->params[i];
        uint32_t head[3] = {(uint32_t)d->kind, d->offset, d->size};
        memcpy(p, head, 12);
        p = put_str(p + 12, d->name);
        p = put_str(p, d->type);
    }
    return p;
}

/* The kernel's cached part, or NULL (not cached: no room or no memory). */
static const kernel_part *kernel_part_of(const ks_kernel *k)
{
    uintptr_t h = ((uintptr_t)k >> 4) * 0x9e3779b97f4a7c15u;
    for (unsigned i = 0, slot = (unsigned)(h >> 40) % KERNEL_PARTS; i < 16; i++, slot = (slot + 1) % KERNEL_PARTS) {
        kernel_part *e = &kernel_parts[slot];
        if (e->k == k && e->symbol == k->symbol && e->params == k->params && e->nparams == k->nparams)
            return e;
        if (e->k != NULL && e->k != k)
            continue;
        size_t len = kernel_part_size(k);
        unsigned char *bytes = len <= UINT32_MAX / 4 ? malloc(len) : NULL;
        if (bytes == NULL)
            return NULL;
        put_kernel_part(bytes, k);
        free(e->bytes);                   /* the same address, another descriptor */
        *e = (kernel_part){k, k->symbol, k->params, k->nparams, (uint32_t)len, bytes};
        return e;
    }
    return NULL;
}

static ks_status trace_after(const ks__checked *c, ks_status st)
{
    const ks_kernel *k = c->k;
    const ks_launch *l = c->l;
    const char *name = ks__kernel_name(k), *status = ks_status_name(st);
    const char *error = st != KS_OK ? ks_last_error()->message : NULL;
    uint32_t nums[8] = {l->grid.x, l->grid.y, l->grid.z, l->block.x, l->block.y, l->block.z, l->shared_bytes, 0};
    pthread_mutex_lock(&trace_lock);
    const kernel_part *part = trace_map != NULL ? kernel_part_of(k) : NULL;
    size_t size = KS_TRACE_FIXED + (part ? part->len : kernel_part_size(k)) + str_size(c->file) + str_size(status) +
                  str_size(error);
    for (unsigned i = 0; i < k->nparams; i++)
        size += k->params[i].size;
    unsigned char *r = trace_map != NULL && size <= UINT32_MAX / 2 ? trace_reserve(round8(size)) : NULL;
    if (r != NULL) {
        unsigned char *p = put_fixed(r, KS_TRACE_LAUNCH, k->nparams, c->line, st, l->stream, nums);
        if (part != NULL) {
            memcpy(p, part->bytes, part->len);
            p += part->len;
        } else {
            p = put_kernel_part(p, k);
        }
        p = put_str(p, c->file);
        p = put_str(p, status);
        p = put_str(p, error);
        for (unsigned i = 0; i < k->nparams; i++) {
            memcpy(p, c->args[i], k->params[i].size);
            p += k->params[i].size;
        }
        trace_commit(r);                 /* the padding is the file's zeros */
    }
    st = trace_report_lost(name, "launched, but", st);
    pthread_mutex_unlock(&trace_lock);
    return st;
}

const ks__check ks__check_trace = {trace_before, trace_after};

void ks__global_trace(const ks_global *g, const char *op, size_t first, size_t count, ks_stream stream,
                      const char *file, int line_no)
{
    if (!(__atomic_load_n(&ks__checks, __ATOMIC_RELAXED) & KS_CHECK_TRACE))
        return;
    const char *name = g->name ? g->name : g->symbol;
    size_t size = KS_TRACE_FIXED + str_size(name) + str_size(g->symbol) + str_size(op) + str_size(file);
    uint64_t nums[4] = {first, count, count * g->elem_size, 0};
    pthread_mutex_lock(&trace_lock);
    unsigned char *r = trace_open(g->name) == 0 ? trace_reserve(round8(size)) : NULL;
    if (r != NULL) {
        unsigned char *p = put_fixed(r, KS_TRACE_VARIABLE, 0, line_no, KS_OK, stream, nums);
        p = put_str(p, name);
        p = put_str(p, g->symbol);
        p = put_str(p, op);
        (void)put_str(p, file);
        trace_commit(r);                 /* a lost record: the next launch says so */
    }
    pthread_mutex_unlock(&trace_lock);
}
