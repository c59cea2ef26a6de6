/*
 * util.c — growable buffers, allocation that cannot return NULL, whole-file
 * reads, compiler-style diagnostics, and the all-or-nothing writer that the
 * generator uses for every output file.
 */
#include "util.h"

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

static void read_failed(const char *path, int err)
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
        read_failed(path, fd == KS__NOT_REGULAR ? KS__NOT_REGULAR : errno);
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
            read_failed(path, e);
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
    if (where && line)
        fprintf(stderr, "%s:%u:%u: %s: %s\n", where, line, col, severity, msg);
    else if (where)
        fprintf(stderr, "%s: %s: %s\n", where, severity, msg);
    else
        fprintf(stderr, "kstub: %s: %s\n", severity, msg);
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
    char *old = ks_peek_file(path, &size);
    if (!old)
        return 0;
    int same = size == strlen(text) && memcmp(old, text, size) == 0;
    free(old);
    return same;
}

/* A hard link to path under a fresh name beside it, so that a replaced
 * output can be put back; NULL when path does not exist (nothing to keep). */
static char *backup_link(const char *path, int *err)
{
    *err = 0;
    struct stat st;
    if (lstat(path, &st) != 0)
        return NULL;
    for (int attempt = 0; attempt < 100; attempt++) {
        char *bak = ks_xasprintf("%s.bak.XXXXXX", path);
        int fd = mkstemp(bak);   /* reserves a fresh name */
        if (fd < 0) {
            *err = errno;
            free(bak);
            return NULL;
        }
        close(fd);
        unlink(bak);
        if (link(path, bak) == 0)
            return bak;
        int e = errno;
        free(bak);
        if (e != EEXIST) {
            *err = e;
            return NULL;
        }
    }
    *err = EEXIST;
    return NULL;
}

/* The directories to create before path can be written (mkdir -p of its
 * folder), outermost first, pushed onto *dirs; checks that the nearest one
 * that exists is a directory we can write into. Returns 0 or -1 after an
 * error. */
static int missing_dirs(const char *path, char ***dirs, size_t *ndirs)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return 0;   /* the working directory or the root: they exist */
    char *dir = ks_xasprintf("%.*s", (int)(slash - path), path);
    struct stat st;
    int rc = 0;
    if (stat(dir, &st) == 0) {
        free(dir);
        return 0;   /* exists; check_destination looks at it */
    }
    /* Walk down from the top: each prefix that exists must be a directory;
     * from the first missing one on, every prefix is created. */
    size_t first = *ndirs;
    const char *exists = path[0] == '/' ? "/" : ".";
    char *parent = NULL;
    for (char *p = dir + 1; rc == 0; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        if (p[-1] == '/') {   /* "a//b": the same prefix again */
            if (!*p)
                break;
            continue;
        }
        char save = *p;
        *p = '\0';
        if (*ndirs > first || stat(dir, &st) != 0) {
            if (*ndirs == first && errno != ENOENT) {
                ks_error_at(path, 0, 0, "cannot create the directory '%s': %s", dir, strerror(errno));
                rc = -1;
            } else {
                *dirs = ks_xrealloc(*dirs, (*ndirs + 1) * sizeof **dirs);
                (*dirs)[(*ndirs)++] = ks_xstrdup(dir);
            }
        } else if (!S_ISDIR(st.st_mode)) {
            ks_error_at(path, 0, 0, "cannot create a directory below '%s': not a directory", dir);
            rc = -1;
        } else {
            free(parent);
            parent = ks_xstrdup(dir);
        }
        *p = save;
        if (!save)
            break;
    }
    if (rc == 0 && *ndirs > first && access(parent ? parent : exists, W_OK | X_OK) != 0) {
        ks_error_at(path, 0, 0, "cannot create the directory '%s': %s", (*dirs)[first],
                    strerror(errno));
        rc = -1;
    }
    free(parent);
    free(dir);
    return rc;
}

/* Every destination must be replaceable before the first is replaced: a
 * directory in the way, or a folder we cannot write, fails the whole set.
 * A folder still to be created (in_new_dir) was checked by missing_dirs. */
static int check_destination(const char *path, int in_new_dir)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        ks_error_at(path, 0, 0, "cannot write: is a directory");
        return -1;
    }
    /* An output is replaced by rename: a FIFO or a device under its name
     * (-MF /dev/null) would be replaced, not written to. */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        read_failed(path, KS__NOT_REGULAR);
        ks_error_at(path, 0, 0, "cannot write: %s; kstub replaces only regular files",
                    ks_file_error());
        return -1;
    }
    if (in_new_dir)
        return 0;
    const char *slash = strrchr(path, '/');
    char *dir = slash ? ks_xasprintf("%.*s", (int)(slash - path + 1), path) : ks_xstrdup(".");
    int rc = 0;
    if (access(dir, W_OK | X_OK) != 0) {
        ks_error_at(path, 0, 0, "cannot write into '%s': %s", dir, strerror(errno));
        rc = -1;
    }
    free(dir);
    return rc;
}

/*
 * Temporaries an earlier run left beside an output (killed between
 * mkstemp and rename): "OUT.tmp.PID.XXXXXX" (this form) or
 * "OUT.tmp.XXXXXX" (kstub before it), for this output's name only. One is
 * removed once it is KS__STALE_TMP_S old (or dated as far ahead: a clock
 * set back) and its writer's pid is no running process here; one without
 * a pid on age alone, since writing an output takes milliseconds. Best
 * effort: nothing is said when one cannot be removed.
 */
#define KS__STALE_TMP_S 600

static int tmp_rest(const char *s, long *pid)
{
    *pid = 0;
    const char *x = s;
    if (*s >= '1' && *s <= '9') {
        char *end;
        long v = strtol(s, &end, 10);
        if (*end == '.' && v > 0) {
            *pid = v;
            x = end + 1;
        }
    }
    size_t k = 0;
    for (; x[k]; k++)
        if (!((x[k] >= '0' && x[k] <= '9') || (x[k] >= 'a' && x[k] <= 'z') || (x[k] >= 'A' && x[k] <= 'Z')))
            return 0;
    return k == 6;
}

static void remove_stale_tmps(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? ks_xasprintf("%.*s", (int)(slash - path + 1), path) : ks_xstrdup(".");
    const char *base = slash ? slash + 1 : path;
    size_t blen = strlen(base);
    DIR *d = opendir(dir);
    time_t now = time(NULL);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        long pid;
        if (strncmp(e->d_name, base, blen) != 0 || strncmp(e->d_name + blen, ".tmp.", 5) != 0 ||
            !tmp_rest(e->d_name + blen + 5, &pid))
            continue;
        char *full = ks_xasprintf("%s%s%s", dir, slash ? "" : "/", e->d_name);
        struct stat sb;
        long long age = lstat(full, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_uid == geteuid()
                            ? (long long)now - (long long)sb.st_mtime : 0;
        int alive = pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
        if ((age >= KS__STALE_TMP_S || -age >= KS__STALE_TMP_S) && !alive)
            unlink(full);
        free(full);
    }
    if (d)
        closedir(d);
    free(dir);
}

int ks_write_outputs(const ks_output *outs, size_t n)
{
    char **tmps = ks_xmalloc((n + 1) * sizeof *tmps);
    char **baks = ks_xmalloc((n + 1) * sizeof *baks);
    char **dirs = NULL;      /* to create, outermost first (mkdir -p) */
    size_t ndirs = 0, made = 0;
    size_t i, done = 0;
    int rc = 0;
    for (i = 0; i < n; i++)
        tmps[i] = baks[i] = NULL;

    for (i = 0; i < n; i++) {
        size_t before = ndirs;
        if (missing_dirs(outs[i].path, &dirs, &ndirs) != 0)
            rc = -1;
        else if (!same_content(outs[i].path, outs[i].text) &&
                 check_destination(outs[i].path, ndirs > before) != 0)
            rc = -1;
    }
    /* Missing folders are made only once every output is known to be
     * writable, and removed again below if the set fails after all. */
    for (i = 0; i < ndirs && rc == 0; i++) {
        if (mkdir(dirs[i], 0777) == 0) {
            char *t = dirs[made];   /* keep the ones made first, in order */
            dirs[made++] = dirs[i];
            dirs[i] = t;
        } else if (errno != EEXIST) {   /* EEXIST: a duplicate of one made already */
            ks_error_at(dirs[i], 0, 0, "cannot create the directory: %s", strerror(errno));
            rc = -1;
        }
    }

    /* Stage every changed file first, so a failure leaves the old outputs. */
    for (i = 0; i < n && rc == 0; i++) {
        if (same_content(outs[i].path, outs[i].text))
            continue;
        remove_stale_tmps(outs[i].path);
        tmps[i] = ks_xasprintf("%s.tmp.%ld.XXXXXX", outs[i].path, (long)getpid());
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
    /* Keep each old file under a backup link until every rename succeeded,
     * so that a late failure can put the earlier ones back. */
    for (i = 0; i < n && rc == 0; i++) {
        int err;
        if (tmps[i] && !(baks[i] = backup_link(outs[i].path, &err)) && err) {
            ks_error_at(outs[i].path, 0, 0, "cannot keep a backup: %s", strerror(err));
            rc = -1;
        }
    }
    for (done = 0; done < n && rc == 0; done++) {
        if (tmps[done] && rename(tmps[done], outs[done].path) != 0) {
            ks_error_at(outs[done].path, 0, 0, "cannot rename into place: %s", strerror(errno));
            rc = -1;
            break;
        }
    }
    if (rc != 0) {
        /* Put back what was replaced: the old file, or no file. */
        for (i = 0; i < done && i < n; i++) {
            if (!tmps[i])
                continue;
            if (baks[i] ? rename(baks[i], outs[i].path) != 0 : unlink(outs[i].path) != 0)
                ks_error_at(outs[i].path, 0, 0, "cannot restore the previous version: %s%s%s",
                            strerror(errno), baks[i] ? "; it is kept as " : "",
                            baks[i] ? baks[i] : "");
            /* restored (the link is gone) or kept for the user: not removed */
            free(baks[i]);
            baks[i] = NULL;
            free(tmps[i]);
            tmps[i] = NULL;   /* renamed: nothing left to remove */
        }
    }
    for (i = 0; i < n; i++) {
        if (baks[i])
            unlink(baks[i]);
        if (tmps[i] && rc != 0)
            unlink(tmps[i]);
        free(tmps[i]);
        free(baks[i]);
    }
    free(tmps);
    free(baks);
    /* A failed set leaves no folder it created (innermost first). */
    for (i = made; rc != 0 && i > 0; i--)
        rmdir(dirs[i - 1]);
    for (i = 0; i < ndirs; i++)
        free(dirs[i]);
    free(dirs);
    return rc;
}
