/*
 * fileguard_copies.c — gcc's #pragma once, for the guard's opens
 * (fileguard.c): a header that is a byte-identical copy of one read
 * before, with the same size and the same modification second, is the
 * same header. gcc (and nvcc, whose preprocessor is the host compiler's)
 * skips such a copy when the first had #pragma once (libcpp compares
 * st_mtime, st_size, then the bytes); clang keys #pragma once by the
 * file's identity (device and inode), so a second copy in another folder
 * was read again and its definitions said "redefinition".
 *
 * So the guard gives libclang, for the copy's name, a descriptor of the
 * file read first: clang's file manager identifies a file by the fstat of
 * the descriptor it opened (open, then fstat), sees the one it knows, and
 * whether it is entered again is clang's own answer (its #pragma once
 * flag of that file, its include guard). The bytes are the same, so
 * nothing else read changes. Only a copy with a #pragma once line is
 * taken for the first (holds_pragma_once): one that is only
 * include-guarded, or has no guard, keeps its own identity, so the files a
 * parse lists and the names its diagnostics give stay as they were.
 *
 * The files read first are those the same parse opened through the guard
 * and the headers of the precompiled prelude it loads (clang reads those
 * from the PCH, not the file): session.c and pch.c say when a parse
 * starts and which those are. Each copy taken is remembered: the
 * depfile lists it (an edit makes it another file) and a prelude built
 * while one was taken is not kept (its stamps would not cover the copy).
 *
 * Like fileguard.c it runs inside the opens of libclang and of every other
 * caller, so it uses the C library alone (nothing of ours that opens files
 * may sit under it): where memory runs out it takes no copy and remembers
 * no file, so the file is read as itself.
 */
#include "front/fileguard.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct seen_file {
    dev_t dev;
    ino_t ino;
    off_t size;
    time_t mtime;               /* seconds, as gcc compares them */
    char *path;                 /* as opened (absolute or from the working directory) */
    unsigned parse;             /* the parse that read it (ks_fileguard_parse_begin) */
    struct seen_file *next;     /* in its bucket */
} seen_file;

typedef struct copy {
    char *path;
    unsigned parse;
} copy;

static pthread_mutex_t copies_lock = PTHREAD_MUTEX_INITIALIZER;
static seen_file **buckets;
static size_t nbuckets, nseen;
static copy *copies;            /* the copies taken for a file read first */
static size_t ncopies;
static unsigned parse_now, nparses;  /* a file read in one parse is no other's */

static size_t bucket_of(off_t size, time_t mtime, size_t n)
{
    uint64_t h = (uint64_t)size * 0x9e3779b97f4a7c15u ^ (uint64_t)mtime * 0xc2b2ae3d27d4eb4fu;
    return (size_t)(h ^ (h >> 29)) & (n - 1);
}

static int grow(void)
{
    size_t n = nbuckets ? 2 * nbuckets : 256;
    seen_file **b = calloc(n, sizeof *b);
    if (b == NULL)
        return -1;
    for (size_t i = 0; i < nbuckets; i++)
        for (seen_file *f = buckets[i], *next; f; f = next) {
            next = f->next;
            size_t k = bucket_of(f->size, f->mtime, n);
            f->next = b[k];
            b[k] = f;
        }
    free(buckets);
    buckets = b;
    nbuckets = n;
    return 0;
}

/* Called with copies_lock held. */
static seen_file *find_same_id(const struct stat *st)
{
    if (!nbuckets)
        return NULL;
    for (seen_file *f = buckets[bucket_of(st->st_size, st->st_mtim.tv_sec, nbuckets)]; f; f = f->next)
        if (f->parse == parse_now && f->dev == st->st_dev && f->ino == st->st_ino)
            return f;
    return NULL;
}

static void remember(const char *path, const struct stat *st)
{
    if (find_same_id(st))
        return;
    if (nseen + 1 > nbuckets && grow() != 0)
        return;
    seen_file *f = malloc(sizeof *f);
    char *name = strdup(path);
    if (f == NULL || name == NULL) {
        free(f);
        free(name);
        return;
    }
    f->dev = st->st_dev;
    f->ino = st->st_ino;
    f->size = st->st_size;
    f->mtime = st->st_mtim.tv_sec;
    f->path = name;
    f->parse = parse_now;
    size_t k = bucket_of(f->size, f->mtime, nbuckets);
    f->next = buckets[k];
    buckets[k] = f;
    nseen++;
}

static size_t blanks(const char *t, size_t i, size_t n)
{
    while (i < n && (t[i] == ' ' || t[i] == '\t'))
        i++;
    return i;
}

static int word_at(const char *t, size_t i, size_t n, const char *w)
{
    size_t k = strlen(w);
    return i + k <= n && memcmp(t + i, w, k) == 0;
}

/* Whether some line of t is "#pragma once" (or "%:pragma once"), or
 * t holds _Pragma("once"): only such a copy is taken for the file read
 * first. It is the gate, not the reading: whether the pragma is live
 * (an #if around it) stays clang's answer, and a copy entered again under
 * the first one's identity reads the same bytes (only the name clang
 * reports for it would be the first one's, hence the gate). */
static int holds_pragma_once(const char *t, size_t n)
{
    if (memmem(t, n, "_Pragma", 7) && memmem(t, n, "\"once\"", 6))
        return 1;
    for (size_t i = 0; i < n;) {
        size_t j = blanks(t, i, n);
        if (word_at(t, j, n, "#") || word_at(t, j, n, "%:")) {
            j = blanks(t, j + (t[j] == '#' ? 1 : 2), n);
            if (word_at(t, j, n, "pragma")) {
                size_t k = blanks(t, j + 6, n);
                if (k > j + 6 && word_at(t, k, n, "once")) {
                    k = blanks(t, k + 4, n);
                    if (k == n || t[k] == '\n' || t[k] == '\r' || t[k] == '/')
                        return 1;
                }
            }
        }
        const char *nl = memchr(t + i, '\n', n - i);
        i = nl ? (size_t)(nl - t) + 1 : n;
    }
    return 0;
}

/* Whether the n bytes of fds a and b are the same and hold #pragma once. */
static int same_bytes(int a, int b, size_t n)
{
    if (n == 0)
        return 0;
    void *ma = mmap(NULL, n, PROT_READ, MAP_PRIVATE, a, 0);
    if (ma == MAP_FAILED)
        return 0;
    void *mb = mmap(NULL, n, PROT_READ, MAP_PRIVATE, b, 0);
    int same = mb != MAP_FAILED && memcmp(ma, mb, n) == 0 && holds_pragma_once(ma, n);
    if (mb != MAP_FAILED)
        munmap(mb, n);
    munmap(ma, n);
    return same;
}

int ks__fileguard_copy_of(int fd, const char *path, int dirfd, const struct stat *st,
                          int (*reopen)(const char *path, void *data), void *data)
{
    if (!S_ISREG(st->st_mode))
        return fd;
    pthread_mutex_lock(&copies_lock);
    if (find_same_id(st)) {
        pthread_mutex_unlock(&copies_lock);
        return fd;
    }
    for (seen_file *f = nbuckets ? buckets[bucket_of(st->st_size, st->st_mtim.tv_sec, nbuckets)] : NULL; f;
         f = f->next) {
        if (f->parse != parse_now || f->size != st->st_size || f->mtime != st->st_mtim.tv_sec)
            continue;
        int first = reopen(f->path, data);
        struct stat fst;
        if (first < 0)
            continue;
        if (fstat(first, &fst) != 0 || fst.st_dev != f->dev || fst.st_ino != f->ino || fst.st_size != st->st_size || fst.st_mtim.tv_sec != st->st_mtim.tv_sec ||
            !same_bytes(first, fd, (size_t)st->st_size)) {
            close(first);
            continue;
        }
        copy *more = realloc(copies, (ncopies + 1) * sizeof *copies);
        char *name = more ? strdup(path) : NULL;
        if (more)
            copies = more;
        if (name == NULL) {     /* a copy taken is remembered, or not taken */
            close(first);
            break;
        }
        copies[ncopies].path = name;
        copies[ncopies++].parse = parse_now;
        pthread_mutex_unlock(&copies_lock);
        close(fd);
        return first;
    }
    if (dirfd == AT_FDCWD)
        remember(path, st);
    pthread_mutex_unlock(&copies_lock);
    return fd;
}

unsigned ks_fileguard_parse_begin(char *const *known, size_t nknown)
{
    pthread_mutex_lock(&copies_lock);
    unsigned before = parse_now;
    parse_now = ++nparses;
    for (size_t i = 0; i < nknown; i++) {
        struct stat st;
        if (stat(known[i], &st) == 0 && S_ISREG(st.st_mode))
            remember(known[i], &st);
    }
    pthread_mutex_unlock(&copies_lock);
    return before;
}

void ks_fileguard_parse_resume(unsigned parse)
{
    pthread_mutex_lock(&copies_lock);
    parse_now = parse;
    pthread_mutex_unlock(&copies_lock);
}

size_t ks_fileguard_ncopies(void)
{
    size_t n = 0;
    pthread_mutex_lock(&copies_lock);
    for (size_t i = 0; i < ncopies; i++)
        n += copies[i].parse == parse_now;
    pthread_mutex_unlock(&copies_lock);
    return n;
}

void ks_fileguard_each_copy(void (*fn)(const char *path, void *data), void *data)
{
    pthread_mutex_lock(&copies_lock);
    size_t n = ncopies;
    unsigned now = parse_now;
    pthread_mutex_unlock(&copies_lock);
    for (size_t i = 0; i < n; i++)        /* called between parses, when nothing opens */
        if (copies[i].parse == now)
            fn(copies[i].path, data);
}
