/*
 * trace.c — the trace check: one JSON line per launch, appended to a file,
 * written after the launch (and after the sync check's wait) so it carries
 * the launch's status; a refused launch is traced too. Each line is one
 * write() on an O_APPEND descriptor, so threads' and processes' lines never
 * interleave. Every argument's packed bytes are in it ("bytes", hex), so a
 * failing launch's argument buffer can be rebuilt from its line.
 *
 *   {"seq":1,"time_ns":…,"kernel":"saxpy","symbol":"saxpy","grid":[4,1,1],
 *    "block":[256,1,1],"shared":0,"stream":"0x0","site":"app.c:42",
 *    "status":"KS_OK","args":[{"name":"a","type":"float","offset":0,"size":4,
 *    "bytes":"0000803f","value":1}, {"name":"x",…,"pointer":"0x7f…"}, …]}
 *
 * The file: ks_trace_set_file's, else $KSTUB_TRACE (a path; "1" or empty
 * mean the default; "0" turns the trace off, check.c), else
 * ./kstub-trace-<pid>.jsonl. It is opened as every output is
 * (ks__open_append: no symlink followed, regular files only, O_CLOEXEC).
 * A trace that cannot be opened must not stop the program's work: the
 * first launch after it fails is refused with KS_ERR_IO and says so (a
 * caller that checks statuses learns of it once, and knows that launch did
 * not run), and every later launch goes on untraced until
 * ks_trace_set_file() names a file again. A write that fails or stops
 * short (a full disk, a file-size limit) is reported once in the same way:
 * the file is cut back to its last whole line, closed, and later launches
 * go on untraced; the launch whose line was lost returns KS_ERR_IO
 * ("launched, but …"), or, when it failed already (or the line was a
 * variable's), the next launch is refused saying so ("not launched: …").
 *
 * A device variable's accessor (global.c) is traced too, one line before
 * its copy:
 *
 *   {"seq":2,"time_ns":…,"variable":"c_w","symbol":"c_w","op":"write",
 *    "first":0,"count":16,"bytes":64,"stream":"0x0","site":"app.c:40"}
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static int trace_fd = -1;
static char *trace_path;              /* ks_trace_set_file's, or NULL */
static unsigned long long trace_seq;
static int trace_failed;              /* the file could not be opened or written: launches go on untraced */
static char trace_lost[PATH_MAX + 160]; /* a failed write not yet reported, or "" */

KS__API ks_status ks_trace_set_file(const char *path)
{
    char *copy = NULL;
    if (path != NULL && (copy = strdup(path)) == NULL)
        return ks__error(KS_ERR_NO_MEMORY, NULL, "ks_trace_set_file: out of memory");
    pthread_mutex_lock(&trace_lock);
    free(trace_path);
    trace_path = copy;
    if (trace_fd >= 0)
        close(trace_fd);
    trace_fd = -1;
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
        snprintf(buf, cap, "kstub-trace-%ld.jsonl", (long)getpid());
        path = buf;
    }
    return path;
}

/* Under trace_lock: the open trace file; -1 with the error set the first
 * time it cannot be opened; -2 (no error) every time after that. */
static int trace_open(const char *kernel)
{
    if (trace_fd >= 0)
        return trace_fd;
    if (trace_failed)
        return -2;
    char fallback[64];
    const char *path = trace_name(fallback, sizeof fallback);
    trace_fd = ks__open_append(path);
    if (trace_fd < 0) {
        const char *why = trace_fd == KS__NOT_REGULAR ? "it is not a regular file"
                          : errno == ELOOP            ? "it is a symbolic link, which is not followed"
                                                      : strerror(errno);
        ks__error(KS_ERR_IO, kernel, "not launched: the trace file '%s' cannot be opened: %s; later "
                  "launches go on untraced", path, why);
        trace_fd = -1;
        trace_failed = 1;
        return -1;
    }
    return trace_fd;
}

/* A growing line; on allocation failure it stops growing (and is not written). */
typedef struct line {
    char *s;
    size_t n, cap;
    int failed;
} line;

static void put(line *b, const char *fmt, ...) KS__PRINTF(2, 3);
static void put(line *b, const char *fmt, ...)
{
    for (;;) {
        if (b->failed)
            return;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if (b->s && b->n + (size_t)n < b->cap) {
            b->n += (size_t)n;
            return;
        }
        size_t cap = (b->cap ? b->cap * 2 : 1024) + (size_t)n;
        char *s = realloc(b->s, cap);
        if (s == NULL) {
            b->failed = 1;
            return;
        }
        b->s = s, b->cap = cap;
    }
}

/* A JSON string (quotes included); NULL is null. */
static void put_string(line *b, const char *s)
{
    if (s == NULL) {
        put(b, "null");
        return;
    }
    put(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            put(b, "\\%c", ch);
        else if (ch < 0x20)
            put(b, "\\u%04x", ch);
        else
            put(b, "%c", ch);
    }
    put(b, "\"");
}

static void put_arg(line *b, const ks_param_desc *d, const void *arg)
{
    const unsigned char *p = arg;
    put(b, "{\"name\":");
    put_string(b, d->name);
    put(b, ",\"type\":");
    put_string(b, d->type);
    put(b, ",\"offset\":%u,\"size\":%u,\"bytes\":\"", d->offset, d->size);
    for (unsigned i = 0; i < d->size; i++)
        put(b, "%02x", p[i]);
    put(b, "\"");
    if (d->kind == KS_PARAM_POINTER && d->size == sizeof(void *)) {
        uintptr_t v;
        memcpy(&v, p, sizeof v);
        put(b, ",\"pointer\":\"0x%" PRIxPTR "\"", v);
    } else if ((d->kind == KS_PARAM_SIGNED || d->kind == KS_PARAM_UNSIGNED) && d->size <= 8 &&
               (d->size & (d->size - 1)) == 0) {
        unsigned long long u = 0;
        memcpy(&u, p, d->size);          /* little-endian, as the device's parameters are */
        if (d->kind == KS_PARAM_SIGNED) {
            unsigned shift = 64 - 8 * d->size;
            long long s = shift ? (long long)(u << shift) >> shift : (long long)u;
            put(b, ",\"value\":%lld", s);
        } else {
            put(b, ",\"value\":%llu", u);
        }
    } else if (d->kind == KS_PARAM_FLOAT && (d->size == 4 || d->size == 8)) {
        double v;
        if (d->size == 4) {
            float f;
            memcpy(&f, p, 4);
            v = f;
        } else {
            memcpy(&v, p, 8);
        }
        if (isfinite(v))
            put(b, d->size == 4 ? ",\"value\":%.9g" : ",\"value\":%.17g", v);
        else
            put(b, ",\"value\":\"%s\"", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    }
    put(b, "}");
}

/* "file:line" as a JSON string, or null. */
static void put_site(line *b, const char *file, int line_no)
{
    if (file) {
        char site[320];
        snprintf(site, sizeof site, "%s:%d", file, line_no);
        put_string(b, site);
    } else {
        put(b, "null");
    }
}

/* Under trace_lock, the file open: writes one line. A short write is
 * continued; when the rest cannot be written the bytes written of it are
 * cut off again (the file ends in its last whole line, unless another
 * process appended in between), the file is closed for good (until
 * ks_trace_set_file) and the failure kept in trace_lost to be reported
 * once. Returns 0, or -1 when the line was lost. */
static int trace_write(const line *b)
{
    size_t done = 0;
    int err = 0;
    while (done < b->n) {
        ssize_t w = write(trace_fd, b->s + done, b->n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            err = w < 0 ? errno : ENOSPC;
            break;
        }
        done += (size_t)w;
    }
    if (done == b->n)
        return 0;
    struct stat st;
    if (done > 0 && fstat(trace_fd, &st) == 0 && st.st_size >= (off_t)done && ftruncate(trace_fd, st.st_size - (off_t)done) != 0)
        err = errno;                      /* the half line stays: say why */
    close(trace_fd);
    trace_fd = -1;
    trace_failed = 1;
    char fallback[64];
    snprintf(trace_lost, sizeof trace_lost, "the trace file '%s' cannot be written: %s; its last line is lost and "
             "later launches go on untraced", trace_name(fallback, sizeof fallback), strerror(err));
    return -1;
}

/* Under trace_lock: a lost line not reported yet, reported now with status
 * KS_ERR_IO (what: "launched, but" or "not launched:"); or st. */
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
    int fd = st == KS_OK ? trace_open(ks__kernel_name(c->k)) : -1;
    pthread_mutex_unlock(&trace_lock);
    return st != KS_OK ? st : fd == -1 ? KS_ERR_IO : KS_OK;
}

static ks_status trace_after(const ks__checked *c, ks_status st)
{
    const ks_kernel *k = c->k;
    const ks_launch *l = c->l;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    line b = {0};
    unsigned long long seq = __atomic_add_fetch(&trace_seq, 1, __ATOMIC_RELAXED);
    put(&b, "{\"seq\":%llu,\"time_ns\":%lld,\"kernel\":", seq,
        (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    put_string(&b, ks__kernel_name(k));
    put(&b, ",\"symbol\":");
    put_string(&b, k->symbol);
    put(&b, ",\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"shared\":%u,\"stream\":\"0x%" PRIxPTR "\",\"site\":",
        l->grid.x, l->grid.y, l->grid.z, l->block.x, l->block.y, l->block.z, l->shared_bytes,
        (uintptr_t)l->stream);
    put_site(&b, c->file, c->line);
    put(&b, ",\"status\":\"%s\"", ks_status_name(st));
    if (st != KS_OK) {
        put(&b, ",\"error\":");
        put_string(&b, ks_last_error()->message);
    }
    put(&b, ",\"args\":[");
    for (unsigned i = 0; i < k->nparams; i++) {
        if (i)
            put(&b, ",");
        put_arg(&b, &k->params[i], c->args[i]);
    }
    put(&b, "]}\n");
    if (!b.failed) {
        pthread_mutex_lock(&trace_lock);
        if (trace_fd >= 0)
            (void)trace_write(&b);        /* one write per line, as a rule */
        st = trace_report_lost(ks__kernel_name(k), "launched, but", st);
        pthread_mutex_unlock(&trace_lock);
    }
    free(b.s);
    return st;
}

const ks__check ks__check_trace = {KS_CHECK_TRACE, trace_before, trace_after};

void ks__global_trace(const ks_global *g, const char *op, size_t first, size_t count, ks_stream stream,
                      const char *file, int line_no)
{
    if (!(__atomic_load_n(&ks__checks, __ATOMIC_RELAXED) & KS_CHECK_TRACE))
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    line b = {0};
    unsigned long long seq = __atomic_add_fetch(&trace_seq, 1, __ATOMIC_RELAXED);
    put(&b, "{\"seq\":%llu,\"time_ns\":%lld,\"variable\":", seq,
        (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    put_string(&b, g->name ? g->name : g->symbol);
    put(&b, ",\"symbol\":");
    put_string(&b, g->symbol);
    put(&b, ",\"op\":\"%s\",\"first\":%zu,\"count\":%zu,\"bytes\":%zu,\"stream\":\"0x%" PRIxPTR "\",\"site\":",
        op, first, count, count * g->elem_size, (uintptr_t)stream);
    put_site(&b, file, line_no);
    put(&b, "}\n");
    pthread_mutex_lock(&trace_lock);
    if (!b.failed && trace_open(g->name) >= 0)
        (void)trace_write(&b);            /* a lost line: the next launch says so */
    pthread_mutex_unlock(&trace_lock);
    free(b.s);
}
