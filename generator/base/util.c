/*
 * util.c — growable buffers, allocation that cannot return NULL, whole-file
 * reads, compiler-style diagnostics (the all-or-nothing output writer is
 * outputs.c's).
 */
#include "base/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

/* Why the last read failed, for ks_file_error(). */
static char read_error[96];

void ks__file_failed(const char *path, int err)
{
    struct stat st;
    const char *what = NULL;
    if (err == KS__NOT_REGULAR && stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            what = NULL, err = EISDIR;
        else if (S_ISFIFO(st.st_mode))
            what = "a FIFO";
        else if (S_ISCHR(st.st_mode))
            what = "a character device";
        else if (S_ISBLK(st.st_mode))
            what = "a block device";
        else if (S_ISSOCK(st.st_mode))
            what = "a socket";
        else
            what = "not a file";
    }
    if (err == KS__NOT_REGULAR || what)
        snprintf(read_error, sizeof read_error, "not a regular file (%s)", what ? what : "gone");
    else
        snprintf(read_error, sizeof read_error, "%s", strerror(err));
    errno = err == KS__NOT_REGULAR ? EINVAL : err;
}

const char *ks_file_error(void)
{
    return read_error;
}

/* The one reader of whole files: regular files only, opened without
 * blocking (runtime/safefile.c), so a FIFO named as any input fails at
 * once instead of stopping the run until someone writes to it. */
char *ks_peek_file_id(const char *path, size_t *size, dev_t *dev, ino_t *ino)
{
    struct stat st;
    int fd = ks__open_regular(AT_FDCWD, path, 0, &st);
    if (fd < 0) {
        ks__file_failed(path, fd == KS__NOT_REGULAR ? KS__NOT_REGULAR : errno);
        return NULL;
    }
    ks_buf b = {0};
    char chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            free(b.data);
            ks__file_failed(path, e);
            return NULL;
        }
        if (n == 0)
            break;
        ks_buf_put(&b, chunk, (size_t)n);
    }
    close(fd);
    if (dev)
        *dev = st.st_dev;
    if (ino)
        *ino = st.st_ino;
    if (size)
        *size = b.len;
    return ks_buf_take(&b);
}

char *ks_peek_file(const char *path, size_t *size)
{
    return ks_peek_file_id(path, size, NULL, NULL);
}

const char *ks_basename(const char *s)
{
    const char *slash = strrchr(s, '/');
    return slash ? slash + 1 : s;
}

size_t ks_path_parts(const char *path, char ***out)
{
    char cwd[4096];
    char *full = path[0] == '/' || !getcwd(cwd, sizeof cwd) ? ks_xstrdup(path)
                                                          : ks_xasprintf("%s/%s", cwd, path);
    char **parts = ks_xmalloc((strlen(full) / 2 + 2) * sizeof *parts);
    size_t n = 0;
    for (char *save = NULL, *p = strtok_r(full, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
        if (strcmp(p, ".") == 0)
            continue;
        if (strcmp(p, "..") == 0) {
            if (n)
                free(parts[--n]);
            continue;
        }
        parts[n++] = ks_xstrdup(p);
    }
    free(full);
    *out = parts;
    return n;
}

void ks_path_parts_free(char **parts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(parts[i]);
    free(parts);
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

char *ks_escape_controls(const char *s)
{
    ks_buf b = {0};
    ks_buf_put(&b, "", 0);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\n')
            ks_buf_puts(&b, "\\n");
        else if (c == '\r')
            ks_buf_puts(&b, "\\r");
        else if (c == '\t')
            ks_buf_puts(&b, "\\t");
        else if (c < 0x20 || c == 0x7f)
            ks_buf_printf(&b, "\\x%02x", c);
        else
            ks_buf_put(&b, s, 1);
    }
    return ks_buf_take(&b);
}

static ks_kept_error *kept;
static size_t nkept;

void ks_error_keep(const char *file, unsigned line, unsigned col, const char *message)
{
    if (nkept >= 10000)          /* a bound: the text output has them all */
        return;
    kept = ks_xrealloc(kept, (nkept + 1) * sizeof *kept);
    kept[nkept].file = file ? ks_xstrdup(file) : NULL;
    kept[nkept].line = line;
    kept[nkept].col = col;
    kept[nkept++].message = ks_xstrdup(message);
}

const ks_kept_error *ks_errors_kept(size_t *n)
{
    *n = nkept;
    return kept;
}

/* What the diagnostics of a run said, kept while capturing (the result
 * cache replays it on a hit). */
static ks_buf captured;
static int capturing;

void ks_diag_capture(int on)
{
    capturing = on;
}

char *ks_diag_captured(void)
{
    ks_buf_put(&captured, "", 0);
    return ks_buf_take(&captured);
}

void ks_diag_line(const char *line)
{
    fprintf(stderr, "%s\n", line);
    if (capturing) {
        ks_buf_puts(&captured, line);
        ks_buf_puts(&captured, "\n");
    }
}

/* One diagnostic, one line: file names and messages carry paths anyone
 * can choose ("x\n::error::..." as a directory), so control characters are
 * escaped before the line is printed. */
void ks_verror_at(const char *file, unsigned line, unsigned col, const char *severity,
                  const char *fmt, va_list ap)
{
    if (strcmp(severity, "error") == 0)
        error_count++;
    else if (strcmp(severity, "warning") == 0)
        warning_count++;
    char *raw = ks_xvasprintf(fmt, ap);
    if (strcmp(severity, "error") == 0)
        ks_error_keep(file, line, col, raw);
    char *msg = ks_escape_controls(raw);
    char *where = file ? ks_escape_controls(file) : NULL;
    char *text = where && line ? ks_xasprintf("%s:%u:%u: %s: %s", where, line, col, severity, msg)
               : where ? ks_xasprintf("%s: %s: %s", where, severity, msg)
               : ks_xasprintf("kstub: %s: %s", severity, msg);
    ks_diag_line(text);
    free(text);
    free(where);
    free(msg);
    free(raw);
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

size_t ks_hash_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t h = (size_t)14695981039346656037ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * (size_t)1099511628211ull;
    return h;
}
