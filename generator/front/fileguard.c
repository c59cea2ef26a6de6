/*
 * fileguard.c — open, open64, openat and openat64 of the kstub program,
 * in front of the C library's (found with dlsym(RTLD_NEXT)): libLLVM opens
 * every file libclang reads with open() (`nm -D libLLVM.so | grep ' U '`
 * lists no other opener), so this is the one place every include, every
 * spelling of one, is opened, where a scan of the text could only guess.
 *
 * Once installed, an open for reading (O_RDONLY, not O_PATH) of a name that
 * is not a regular file or a directory fails with EACCES before the file is
 * opened (stat first: a device's open may act), and the name opened with
 * O_NONBLOCK is checked again with fstat (it may have been replaced in
 * between); O_NONBLOCK is then taken off. An open that asks O_NONBLOCK
 * itself is let through: kstub's own readers (common/safefile.c) never
 * block and refuse all but a regular file, with their own words. Each refusal is
 * kept (the name, what it is) for ks_fileguard_explain, which says it
 * again in kstub's words where libclang's diagnostic stands. Writes are
 * let through: kstub's outputs are written by rename (util.c). A regular
 * file that is a same-time, byte-identical copy of one read before is
 * opened as that one (fileguard_copies.c: gcc's #pragma once).
 *
 * libclang parses on a thread of its own: the refusals are kept under a
 * lock. It calls nothing of kstub's (the C library's only): every object
 * that opens a file calls into it. Under ASan the program's open still wins over the runtime's
 * interceptor, and RTLD_NEXT finds the interceptor or libc's after it.
 */
#include "front/fileguard.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KS_FILEGUARD_KEPT 32

typedef struct refusal {
    char path[PATH_MAX];
    const char *what;
} refusal;

static int guard_on;
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;
static refusal refused[KS_FILEGUARD_KEPT];
static unsigned nrefused;

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);

void ks_fileguard_install(void)
{
    __atomic_store_n(&guard_on, 1, __ATOMIC_RELEASE);
}

/* What a file of this mode is, or NULL when the guard lets it be read. */
static const char *refused_kind(mode_t m)
{
    if (S_ISREG(m) || S_ISDIR(m))
        return NULL;
    return S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device"
         : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

static int refuse(const char *path, const char *what)
{
    pthread_mutex_lock(&guard_lock);
    if (nrefused < KS_FILEGUARD_KEPT) {
        snprintf(refused[nrefused].path, sizeof refused[nrefused].path, "%s", path);
        refused[nrefused].what = what;
        nrefused++;
    }
    pthread_mutex_unlock(&guard_lock);
    errno = EACCES;
    return -1;
}

static int guarded(int flags)
{
    return __atomic_load_n(&guard_on, __ATOMIC_ACQUIRE) && (flags & O_ACCMODE) == O_RDONLY &&
           !(flags & (O_PATH | O_NONBLOCK));
}

/* How fileguard_copies.c opens the file read first, for its copy. */
typedef struct reopen_ctx {
    openat_fn real;
    int flags;
} reopen_ctx;

static int reopen_first(const char *path, void *data)
{
    const reopen_ctx *c = data;
    int fd = c->real(AT_FDCWD, path, c->flags | O_NONBLOCK, 0);
    struct stat st;
    if (fd < 0)
        return -1;
    int fl = fcntl(fd, F_GETFL);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The guard's open: dirfd AT_FDCWD for open(); real the C library's. */
static int guard_open_1(openat_fn real, int dirfd, const char *path, int flags, mode_t mode)
{
    if (!guarded(flags) || path == NULL)
        return real(dirfd, path, flags, mode);
    struct stat st;
    const char *what;
    if (fstatat(dirfd, path, &st, 0) == 0 && (what = refused_kind(st.st_mode)) != NULL)
        return refuse(path, what);
    int fd = real(dirfd, path, flags | O_NONBLOCK, mode);
    if (fd < 0)
        return fd;
    if (fstat(fd, &st) == 0 && (what = refused_kind(st.st_mode)) != NULL) {
        close(fd);
        return refuse(path, what);
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    reopen_ctx rc = {real, flags};
    return ks__fileguard_copy_of(fd, path, dirfd, &st, reopen_first, &rc);
}

/* The guard's open, every outcome seen by fileguard_seen.c. */
static int guard_open(openat_fn real, int dirfd, const char *path, int flags, mode_t mode)
{
    int fd = guard_open_1(real, dirfd, path, flags, mode);
    int err = errno;
    ks__fileguard_saw_open(dirfd, path, flags, fd, err);   /* the result cache's record */
    errno = err;
    return fd;
}

/* The next definition of name, the C library's (or a sanitizer's). */
static void next_fn(const char *name, void *fn, size_t size)
{
    void *p = dlsym(RTLD_NEXT, name);
    memcpy(fn, &p, size);          /* POSIX: a function's address as dlsym gives it */
}

/* open(path, ...) as openat(AT_FDCWD, path, ...), through the next open:
 * the C library's open and openat of a name relative to AT_FDCWD are one. */
static int open_as_openat(int dirfd, const char *path, int flags, ...)
{
    static open_fn real;
    (void)dirfd;
    if (real == NULL)
        next_fn("open", &real, sizeof real);
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (mode_t)va_arg(ap, unsigned);
    va_end(ap);
    return real(path, flags, mode);
}

static int open64_as_openat(int dirfd, const char *path, int flags, ...)
{
    static open_fn real;
    (void)dirfd;
    if (real == NULL)
        next_fn("open64", &real, sizeof real);
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (mode_t)va_arg(ap, unsigned);
    va_end(ap);
    return real(path, flags, mode);
}

static int openat_next(int dirfd, const char *path, int flags, ...)
{
    static openat_fn real;
    if (real == NULL)
        next_fn("openat", &real, sizeof real);
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (mode_t)va_arg(ap, unsigned);
    va_end(ap);
    return real(dirfd, path, flags, mode);
}

static int openat64_next(int dirfd, const char *path, int flags, ...)
{
    static openat_fn real;
    if (real == NULL)
        next_fn("openat64", &real, sizeof real);
    va_list ap;
    va_start(ap, flags);
    mode_t mode = (mode_t)va_arg(ap, unsigned);
    va_end(ap);
    return real(dirfd, path, flags, mode);
}

/* The mode argument, when the flags say there is one. */
#define KS_MODE_ARG(flags, mode)                                                                           \
    do {                                                                                                   \
        if ((flags) & O_CREAT || ((flags) & O_TMPFILE) == O_TMPFILE) {                                     \
            va_list ap;                                                                                    \
            va_start(ap, flags);                                                                           \
            mode = (mode_t)va_arg(ap, unsigned);                                                           \
            va_end(ap);                                                                                    \
        }                                                                                                  \
    } while (0)

/* The interposed names: exported from the program (libLLVM's undefined
 * open binds to it), hence no ks_ prefix and no prototype of our own. */
int open(const char *path, int flags, ...);
int open64(const char *path, int flags, ...);
int openat(int dirfd, const char *path, int flags, ...);
int openat64(int dirfd, const char *path, int flags, ...);

__attribute__((visibility("default"))) int open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    KS_MODE_ARG(flags, mode);
    return guard_open(open_as_openat, AT_FDCWD, path, flags, mode);
}

__attribute__((visibility("default"))) int open64(const char *path, int flags, ...)
{
    mode_t mode = 0;
    KS_MODE_ARG(flags, mode);
    return guard_open(open64_as_openat, AT_FDCWD, path, flags, mode);
}

__attribute__((visibility("default"))) int openat(int dirfd, const char *path, int flags, ...)
{
    mode_t mode = 0;
    KS_MODE_ARG(flags, mode);
    return guard_open(openat_next, dirfd, path, flags, mode);
}

__attribute__((visibility("default"))) int openat64(int dirfd, const char *path, int flags, ...)
{
    mode_t mode = 0;
    KS_MODE_ARG(flags, mode);
    return guard_open(openat64_next, dirfd, path, flags, mode);
}

/* ---- saying it in kstub's words ----------------------------------------------------------- */

/* The refusal whose path is name or ends in "/name", or NULL. */
static const refusal *refusal_of(const char *name, size_t n)
{
    const refusal *found = NULL;
    pthread_mutex_lock(&guard_lock);
    for (unsigned i = 0; i < nrefused && !found; i++) {
        size_t len = strlen(refused[i].path);
        if (len >= n && memcmp(refused[i].path + len - n, name, n) == 0 &&
            (len == n || refused[i].path[len - n - 1] == '/'))
            found = &refused[i];
    }
    pthread_mutex_unlock(&guard_lock);
    return found;
}

void ks_fileguard_said_free(ks_fileguard_said *said)
{
    free(said->place);
    said->place = NULL;
    said->refusal = NULL;
}

int ks_fileguard_explain(char **msg, ks_fileguard_said *said)
{
    if (__atomic_load_n(&nrefused, __ATOMIC_ACQUIRE) == 0)
        return 0;
    char *m = *msg;
    char *err = strstr(m, ": error: ");
    if (err == NULL)
        return 0;
    const char *text = err + 9, *name, *end;
    if (strncmp(text, "cannot open file '", 18) == 0) {
        name = text + 18;
        end = strstr(name, "': ");
    } else if (text[0] == '\'') {
        name = text + 1;
        end = strstr(name, "' file not found");
    } else {
        return 0;
    }
    if (end == NULL)
        return 0;
    const refusal *r = refusal_of(name, (size_t)(end - name));
    if (r == NULL)
        return 0;
    if (end - name > 2 && name[0] == '.' && name[1] == '/')
        name += 2;                    /* "./ff.h": the name as written */
    char *place = strndup(m, (size_t)(err - m));
    if (place == NULL)
        return 0;                     /* out of memory: libclang's words stand */
    int again = said->place && said->refusal == r && strcmp(place, said->place) == 0;
    free(said->place);
    said->place = place;
    said->refusal = r;
    if (again)
        return -1;
    char *said_now;
    if (asprintf(&said_now, "%s: error: '%.*s' is %s; kstub reads only regular files", place,
                                  (int)(end - name), name, r->what) < 0)
        return 0;
    *msg = said_now;
    free(m);
    return 1;
}
