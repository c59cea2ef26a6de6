/*
 * util.c — growable buffers, allocation that cannot return NULL, whole-file
 * reads, compiler-style diagnostics, and the all-or-nothing writer that the
 * generator uses for every output file.
 */
#include "model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void *ks_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "kstub: error: out of memory\n");
        exit(1);   /* a failure, not a usage error (2) */
    }
    return p;
}

void *ks_xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "kstub: error: out of memory\n");
        exit(1);   /* a failure, not a usage error (2) */
    }
    return p;
}

char *ks_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(ks_xmalloc(n), s, n);
}

char *ks_xvasprintf(const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    char *s = ks_xmalloc((size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

char *ks_xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = ks_xvasprintf(fmt, ap);
    va_end(ap);
    return s;
}

static void buf_reserve(ks_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    b->data = ks_xrealloc(b->data, cap);
    b->cap = cap;
}

void ks_buf_put(ks_buf *b, const char *s, size_t n)
{
    buf_reserve(b, n);
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void ks_buf_puts(ks_buf *b, const char *s)
{
    ks_buf_put(b, s, strlen(s));
}

void ks_buf_printf(ks_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    buf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *ks_buf_take(ks_buf *b)
{
    char *s = b->data ? b->data : ks_xstrdup("");
    b->data = NULL;
    b->len = b->cap = 0;
    return s;
}

char *ks_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    ks_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        ks_buf_put(&b, chunk, n);
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(b.data);
        errno = EIO;
        return NULL;
    }
    if (size)
        *size = b.len;
    return ks_buf_take(&b);
}

const char *ks_basename(const char *s)
{
    const char *slash = strrchr(s, '/');
    return slash ? slash + 1 : s;
}

/* The one diagnostic sink's error count (lemon's errorcnt): functions
 * return 0 / -1, and main() alone turns the count into an exit status. */
static int error_count, warning_count;

int ks_error_count(void)
{
    return error_count;
}

int ks_warning_count(void)
{
    return warning_count;
}

void ks_count_error(void)
{
    error_count++;
}

void ks_verror_at(const char *file, unsigned line, unsigned col, const char *severity,
                  const char *fmt, va_list ap)
{
    if (strcmp(severity, "error") == 0)
        error_count++;
    else if (strcmp(severity, "warning") == 0)
        warning_count++;
    if (file && line)
        fprintf(stderr, "%s:%u:%u: %s: ", file, line, col, severity);
    else if (file)
        fprintf(stderr, "%s: %s: ", file, severity);
    else
        fprintf(stderr, "kstub: %s: ", severity);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void ks_error_at(const char *file, unsigned line, unsigned col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ks_verror_at(file, line, col, "error", fmt, ap);
    va_end(ap);
}

void ks_note_at(const char *file, unsigned line, unsigned col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ks_verror_at(file, line, col, "note", fmt, ap);
    va_end(ap);
}

void ks_warning_at(const char *file, unsigned line, unsigned col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ks_verror_at(file, line, col, "warning", fmt, ap);
    va_end(ap);
}

static mode_t umask_value(void)
{
    mode_t m = umask(0);
    umask(m);
    return m;
}

/* 1 when path holds exactly text. */
static int same_content(const char *path, const char *text)
{
    size_t size;
    char *old = ks_read_file(path, &size);
    if (!old)
        return 0;
    int same = size == strlen(text) && memcmp(old, text, size) == 0;
    free(old);
    return same;
}

int ks_write_outputs(const ks_output *outs, size_t n)
{
    char **tmps = ks_xmalloc(n * sizeof *tmps);
    size_t i;
    int rc = 0;
    for (i = 0; i < n; i++)
        tmps[i] = NULL;

    /* Stage every changed file first, so a failure leaves the old outputs. */
    for (i = 0; i < n && rc == 0; i++) {
        if (same_content(outs[i].path, outs[i].text))
            continue;
        tmps[i] = ks_xasprintf("%s.tmp.XXXXXX", outs[i].path);
        int fd = mkstemp(tmps[i]);
        if (fd < 0) {
            ks_error_at(outs[i].path, 0, 0, "cannot create a temporary file: %s", strerror(errno));
            free(tmps[i]);
            tmps[i] = NULL;
            rc = -1;
            break;
        }
        size_t len = strlen(outs[i].text);
        FILE *f = fdopen(fd, "wb");
        int ok = f && fwrite(outs[i].text, 1, len, f) == len;
        ok = (f && fclose(f) == 0) && ok;
        /* mkstemp makes 0600; outputs are ordinary files. */
        ok = ok && chmod(tmps[i], (mode_t)0666 & ~umask_value()) == 0;
        if (!ok) {
            ks_error_at(outs[i].path, 0, 0, "cannot write: %s", strerror(errno));
            rc = -1;
        }
    }
    for (i = 0; i < n; i++) {
        if (!tmps[i])
            continue;
        if (rc == 0 && rename(tmps[i], outs[i].path) != 0) {
            ks_error_at(outs[i].path, 0, 0, "cannot rename into place: %s", strerror(errno));
            rc = -1;
        }
        if (rc != 0)
            unlink(tmps[i]);
        free(tmps[i]);
    }
    free(tmps);
    return rc;
}
