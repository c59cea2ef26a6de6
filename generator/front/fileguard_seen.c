/*
 * fileguard_seen.c — what a run's parse asked the file system, for the
 * result cache (cli/result_cache.c): every name opened for reading (a file,
 * or a directory listed), every name stat(2) or access(2) found, and every
 * name they found missing (ENOENT, ENOTDIR). A header search tries each
 * include directory in turn: the misses before the hit are what a new
 * header in an earlier directory would change (a header found in the third
 * -I is the answer only while the first two hold no such file), so they
 * are kept as "must still not exist". clang's file manager stats a path's
 * folder before opening the path ("inc/sys" missing: "inc/sys/x.h" is never
 * opened), hence stat and access here too, in front of the C library's as
 * fileguard.c's opens are (libLLVM calls stat, stat64 and access: `nm -D`).
 *
 * Recording is off but between ks_fileguard_record(1) and (0), so that
 * kstub's own probes of its outputs before writing them are not kept. A
 * descriptor-relative open (the cache directory's entries) and names
 * under /proc (the prelude's PCH, read as /proc/self/fd/N) are not kept:
 * the prelude cache answers for those. Like fileguard.c this runs inside
 * every open and stat of libclang's thread, so it uses the C library
 * alone, under a lock; out of memory it marks the record incomplete, and
 * the result cache then stores nothing. A mark (ks_fileguard_mark) starts
 * a span: the names asked from then on, first or again, are the mark's, so
 * that the host trials' cache keeps the names one trial asked alone.
 */
#include "front/fileguard.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct seen {
    char *path;
    int kind;                    /* KS_SEEN_* */
    struct timespec mtime;       /* a directory's, when it was listed */
    unsigned long gen;           /* the mark it was last asked under */
} seen;

static int recording;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static seen *slots;              /* open addressing by the path's hash; path NULL: empty */
static size_t nslots, nseen;
static int incomplete;           /* something could not be kept, or changed kind */
static unsigned long mark_gen;   /* ks_fileguard_mark's count */

void ks_fileguard_record(int on)
{
    __atomic_store_n(&recording, on, __ATOMIC_RELEASE);
}

int ks_fileguard_recording(void)
{
    return __atomic_load_n(&recording, __ATOMIC_ACQUIRE);
}

unsigned long ks_fileguard_mark(void)
{
    pthread_mutex_lock(&seen_lock);
    unsigned long g = ++mark_gen;
    pthread_mutex_unlock(&seen_lock);
    return g;
}

static size_t path_hash(const char *s)
{
    size_t h = (size_t)1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * (size_t)1099511628211ULL;
    return h;
}

static int grow(void)
{
    size_t cap = nslots ? nslots * 2 : 1024;
    seen *big = calloc(cap, sizeof *big);
    if (!big)
        return -1;
    for (size_t i = 0; i < nslots; i++)
        if (slots[i].path) {
            size_t j = path_hash(slots[i].path) & (cap - 1);
            while (big[j].path)
                j = (j + 1) & (cap - 1);
            big[j] = slots[i];
        }
    free(slots);
    slots = big;
    nslots = cap;
    return 0;
}

/* A stronger answer wins (read over listed over found); missing and found
 * for one name means it changed during the parse. */
static void keep(const char *path, int kind, const struct timespec *mtime)
{
    pthread_mutex_lock(&seen_lock);
    if ((nseen + 1) * 2 > nslots && grow() != 0) {
        incomplete = 1;
        pthread_mutex_unlock(&seen_lock);
        return;
    }
    size_t j = path_hash(path) & (nslots - 1);
    for (; slots[j].path; j = (j + 1) & (nslots - 1))
        if (strcmp(slots[j].path, path) == 0)
            break;
    seen *s = &slots[j];
    if (s->path)
        s->gen = mark_gen;
    if (!s->path) {
        s->path = strdup(path);
        if (!s->path) {
            incomplete = 1;
        } else {
            s->kind = kind;
            s->gen = mark_gen;
            if (mtime)
                s->mtime = *mtime;
            nseen++;
        }
    } else if ((s->kind == KS_SEEN_ABSENT) != (kind == KS_SEEN_ABSENT)) {
        incomplete = 1;
    } else if (kind > s->kind) {
        s->kind = kind;
        if (mtime)
            s->mtime = *mtime;
    }
    pthread_mutex_unlock(&seen_lock);
}

static int kept_name(int dirfd, const char *path)
{
    return path && path[0] && dirfd == AT_FDCWD && strncmp(path, "/proc/", 6) != 0 &&
           __atomic_load_n(&recording, __ATOMIC_ACQUIRE);
}

void ks__fileguard_saw_open(int dirfd, const char *path, int flags, int fd, int err)
{
    if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_PATH) || !kept_name(dirfd, path))
        return;
    struct stat st;
    if (fd < 0) {
        if (err == ENOENT || err == ENOTDIR)
            keep(path, KS_SEEN_ABSENT, NULL);
    } else if (fstat(fd, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            keep(path, KS_SEEN_LISTED, &st.st_mtim);
        else
            keep(path, KS_SEEN_READ, NULL);
    }
}

static void saw_probe(const char *path, int rc, int err)
{
    if (!kept_name(AT_FDCWD, path))
        return;
    if (rc == 0)
        keep(path, KS_SEEN_FOUND, NULL);
    else if (err == ENOENT || err == ENOTDIR)
        keep(path, KS_SEEN_ABSENT, NULL);
}

void ks_fileguard_each_seen(void (*fn)(const char *path, int kind, const struct timespec *mtime, void *data),
                            void *data)
{
    ks_fileguard_each_seen_since(0, fn, data);
}

void ks_fileguard_each_seen_since(unsigned long mark,
                                  void (*fn)(const char *path, int kind, const struct timespec *mtime, void *data),
                                  void *data)
{
    for (size_t i = 0; i < nslots; i++)
        if (slots[i].path && slots[i].gen >= mark)
            fn(slots[i].path, slots[i].kind, &slots[i].mtime, data);
}

int ks_fileguard_seen_incomplete(void)
{
    return incomplete;
}

/* ---- stat, stat64 and access, in front of the C library's ---- */

typedef int (*stat_fn)(const char *, struct stat *);
typedef int (*stat64_fn)(const char *, struct stat64 *);
typedef int (*access_fn)(const char *, int);

static void next_fn(const char *name, void *fn, size_t size)
{
    void *p = dlsym(RTLD_NEXT, name);
    memcpy(fn, &p, size);          /* POSIX: a function's address as dlsym gives it */
}

/* Exported from the program, as fileguard.c's opens are. */
__attribute__((visibility("default"))) int stat(const char *restrict path, struct stat *restrict st)
{
    static stat_fn real;
    if (real == NULL)
        next_fn("stat", &real, sizeof real);
    int rc = real(path, st);
    int err = errno;
    saw_probe(path, rc, err);
    errno = err;
    return rc;
}

__attribute__((visibility("default"))) int stat64(const char *restrict path, struct stat64 *restrict st)
{
    static stat64_fn real;
    if (real == NULL)
        next_fn("stat64", &real, sizeof real);
    int rc = real(path, st);
    int err = errno;
    saw_probe(path, rc, err);
    errno = err;
    return rc;
}

__attribute__((visibility("default"))) int access(const char *path, int mode)
{
    static access_fn real;
    if (real == NULL)
        next_fn("access", &real, sizeof real);
    int rc = real(path, mode);
    int err = errno;
    if (mode == F_OK || rc == 0 || err == ENOENT || err == ENOTDIR)
        saw_probe(path, rc, err);
    errno = err;
    return rc;
}

/* glibc's opendir opens the folder without the interposed openat: a
 * listing (the driver's toolchain search, the prelude's search directories)
 * is kept here, by the folder's time then (an entry added or removed
 * changes it). */
typedef DIR *(*opendir_fn)(const char *);

__attribute__((visibility("default"))) DIR *opendir(const char *path)
{
    static opendir_fn real;
    if (real == NULL)
        next_fn("opendir", &real, sizeof real);
    DIR *d = real(path);
    int err = errno;
    if (kept_name(AT_FDCWD, path)) {
        struct stat st;
        if (!d)
            saw_probe(path, -1, err);
        else if (fstat(dirfd(d), &st) == 0)
            keep(path, KS_SEEN_LISTED, &st.st_mtim);
    }
    errno = err;
    return d;
}
