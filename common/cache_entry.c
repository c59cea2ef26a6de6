/*
 * cache_entry.c — an entry file of a kstub cache, read, checked and written
 * (cache_entry.h), and the rule that picks the cache directory. libkstub's
 * NVRTC cache (runtime/cache.c) and the generator's prelude cache
 * (generator/front/prelude/pch.c) both link it from common/, so the two caches in one
 * directory follow one set of rules from one copy of the code.
 *
 * Nothing here reports an error or allocates with anything but malloc: a
 * cache is an optimisation, and each caller decides what a miss means.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache_entry.h"
#include "safefile.h"
#include "sha256.h"

int ks__cache_dir_path(const char *explicit_dir, const char *explicit_origin, char *path, size_t cap,
                       const char **origin)
{
    const char *env = ks__getenv("KSTUB_CACHE_DIR");
    const char *xdg = ks__getenv("XDG_CACHE_HOME");
    const char *home = ks__getenv("HOME");
    if (explicit_dir && explicit_dir[0]) {
        *origin = explicit_origin;
        return snprintf(path, cap, "%s", explicit_dir);
    }
    if (env && env[0]) {
        *origin = "KSTUB_CACHE_DIR";
        return snprintf(path, cap, "%s", env);
    }
    if (xdg && xdg[0] == '/') {       /* the XDG spec: relative values are ignored */
        *origin = "XDG_CACHE_HOME";
        return snprintf(path, cap, "%s/kstub", xdg);
    }
    if (home && home[0]) {
        *origin = "HOME";
        return snprintf(path, cap, "%s/.cache/kstub", home);
    }
    *origin = NULL;
    return -1;
}

int ks__cache_env_off(void)
{
    const char *off = ks__getenv("KSTUB_CACHE");
    return off != NULL && strcmp(off, "0") == 0;
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

long long ks__entry_check(const unsigned char *buf, size_t size, const char *magic,
                          const unsigned char key[32])
{
    if (size < KS__ENTRY_HEADER_BYTES)
        return -1;
    uint64_t len = get_u64(buf + 40);
    if (memcmp(buf, magic, 8) != 0 || memcmp(buf + 8, key, 32) != 0 ||
        len != size - KS__ENTRY_HEADER_BYTES)
        return -1;
    unsigned char digest[32];
    ks__sha256(buf + KS__ENTRY_HEADER_BYTES, (size_t)len, digest);
    return memcmp(digest, buf + 48, 32) == 0 ? (long long)len : -1;
}

void *ks__entry_read(int dirfd, const char *name, const char *magic, const unsigned char key[32],
                     size_t max, size_t *n, const char **why)
{
    struct stat sb;
    /* Not a regular file of ours (a FIFO, a link, someone else's): no entry. */
    int fd = ks__open_regular(dirfd, name, 1, &sb);
    if (fd < 0) {
        *why = fd == KS__NOT_REGULAR ? "the entry is not a regular file" : "no entry";
        return NULL;
    }
    unsigned char *buf = NULL;
    size_t size = 0, got = 0;
    if (sb.st_uid == geteuid() && (sb.st_mode & (S_IWGRP | S_IWOTH)) == 0 &&
        sb.st_size >= KS__ENTRY_HEADER_BYTES && (unsigned long long)sb.st_size <= max) {
        size = (size_t)sb.st_size;
        buf = malloc(size + 1);
        while (buf != NULL && got < size) {
            ssize_t r = read(fd, buf + got, size - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            got += (size_t)r;
        }
    }
    close(fd);
    if (buf == NULL || got != size) {
        free(buf);
        *why = "the entry is not this user's alone, has an impossible size, or cannot be read";
        return NULL;
    }
    long long len = ks__entry_check(buf, size, magic, key);
    if (len < 0) {
        free(buf);
        *why = "the entry is corrupt or foreign (magic, key, length or SHA-256)";
        return NULL;
    }
    memmove(buf, buf + KS__ENTRY_HEADER_BYTES, (size_t)len);
    buf[len] = '\0';
    *n = (size_t)len;
    return buf;
}

int ks__write_all(int fd, const void *data, size_t n)
{
    const char *c = data;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

void ks__entry_tmp_name(const char *name, const char *suffix, char *tmp, size_t cap)
{
    static unsigned counter;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    snprintf(tmp, cap, ".%.16s.%ld.%u.%lx%s", name, (long)getpid(),
             __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED), (unsigned long)ts.tv_nsec, suffix);
}

int ks__entry_tmp_open(int dirfd, const char *name, const char *suffix, char *tmp, size_t cap)
{
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 8; attempt++) {
        ks__entry_tmp_name(name, suffix, tmp, cap);
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            return -1;
    }
    return fd;
}

int ks__entry_write(int dirfd, const char *name, const char *magic, const unsigned char key[32],
                    const void *payload, size_t n)
{
    char tmp[128];
    int fd = ks__entry_tmp_open(dirfd, name, ".tmp", tmp, sizeof tmp);
    if (fd < 0)
        return -1;
    unsigned char header[KS__ENTRY_HEADER_BYTES];
    memcpy(header, magic, 8);
    memcpy(header + 8, key, 32);
    put_u64(header + 40, n);
    ks__sha256(payload, n, header + 48);
    int ok = ks__write_all(fd, header, sizeof header) == 0 && ks__write_all(fd, payload, n) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || renameat(dirfd, tmp, dirfd, name) != 0) {
        unlinkat(dirfd, tmp, 0);
        return -1;
    }
    return 0;
}

/* ---- the directory: entries, leftovers, the cap, least-recently-used trimming ---- */

static int is_lower_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* KEY.anything: 64 lower-case hex digits and a dot. */
static int is_key_name(const char *name)
{
    size_t i = 0;
    while (i < 64 && is_lower_hex(name[i]))
        i++;
    return i == 64 && name[64] == '.';
}

/* Whether s (the part of a temporary's name after its pid) ends its name as
 * a temporary does: in ".tmp", or in ".tmp.temp-stream-" and letters and
 * digits, the name LLVM's writer gives its own temporary beside the file
 * it is asked to write (clang_saveTranslationUnit to "….pch.tmp" writes
 * "….pch.tmp.temp-stream-XXXXXX" and renames it; a kill leaves it). */
static int tmp_tail_ok(const char *s)
{
    size_t n = strlen(s);
    if (n >= 4 && strcmp(s + n - 4, ".tmp") == 0)
        return 1;
    const char *t = strstr(s, ".tmp.temp-stream-");
    if (!t)
        return 0;
    t += strlen(".tmp.temp-stream-");
    if (!*t)
        return 0;
    for (; *t; t++)
        if (!((*t >= '0' && *t <= '9') || (*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z')))
            return 0;
    return 1;
}

/* ks__entry_tmp_name's ".<16 hex>.<pid>.<n>.<ns><suffix>" with a suffix
 * ending in ".tmp" (or LLVM's temporary of such a name, above): the
 * writer's pid, else 0. */
static long tmp_name_pid(const char *name)
{
    if (name[0] != '.')
        return 0;
    size_t i = 1;
    while (i < 17 && is_lower_hex(name[i]))
        i++;
    if (i != 17 || name[17] != '.' || name[18] < '1' || name[18] > '9')
        return 0;
    char *end;
    long pid = strtol(name + 18, &end, 10);
    if (*end != '.' || pid <= 0 || strlen(name) < 22 || !tmp_tail_ok(end))
        return 0;
    return pid;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int later(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec != b->tv_sec ? a->tv_sec > b->tv_sec : a->tv_nsec > b->tv_nsec;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const ks__cache_file *)a)->name, ((const ks__cache_file *)b)->name);
}

void ks__cache_listing_free(ks__cache_listing *l)
{
    for (size_t i = 0; i < l->nfiles; i++)
        free(l->files[i].name);
    free(l->files);
    free(l->units);
    memset(l, 0, sizeof *l);
}

static int is_index(const char *name)
{
    return ends_with(name, ".prelude") || ends_with(name, ".nvrtc") || ends_with(name, ".result") ||
           ends_with(name, ".trial");
}

/* Whether a process with this pid runs here (one of another user's too). */
static int pid_alive(long pid)
{
    return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* ---- whose directory: CACHEDIR.TAG ---- */

static const char cachedir_tag[] =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by kstub (prelude and NVRTC caches).\n"
    "# For information about cache directory tags, see https://bford.info/cachedir/\n";

/* A name kstub's caches write: an entry's file, a temporary, the counts,
 * the tag. */
static int name_is_ours(const char *name)
{
    return is_key_name(name) || tmp_name_pid(name) != 0 || strcmp(name, "prelude-counts") == 0 ||
           strcmp(name, "prelude-seen") == 0 ||
           strcmp(name, KS__CACHE_TAG_NAME) == 0;
}

/* Whether the directory holds the tag: a regular file starting with the
 * signature the cache directory tag convention gives. */
static int has_tag(int dirfd)
{
    int fd = openat(dirfd, KS__CACHE_TAG_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char b[44];
    struct stat sb;
    int ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && pread(fd, b, sizeof b, 0) == (ssize_t)sizeof b &&
             memcmp(b, cachedir_tag, sizeof b) == 0;
    close(fd);
    return ok;
}

int ks__cache_dir_claim(int dirfd, char *why, size_t cap)
{
    if (has_tag(dirfd))
        return 0;
    int fd = dup(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        snprintf(why, cap, "it cannot be listed: %s", strerror(errno));
        return -1;
    }
    rewinddir(d);
    struct dirent *de;
    int foreign = 0;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 || name_is_ours(de->d_name))
            continue;
        snprintf(why, cap, "it holds '%.*s', which no kstub cache writes, and no %s: it is not kstub's "
                 "(name a new or empty directory)", 255, de->d_name, KS__CACHE_TAG_NAME);
        foreign = 1;
        break;
    }
    closedir(d);
    if (foreign)
        return -1;
    /* Empty, or only what a kstub cache writes (one made before the tag):
     * kstub's. The tag written to say so; a directory that cannot be
     * written is still read. */
    char tmp[128];
    int tfd = ks__entry_tmp_open(dirfd, "0000000000000000", ".tag.tmp", tmp, sizeof tmp);
    if (tfd >= 0) {
        int ok = ks__write_all(tfd, cachedir_tag, sizeof cachedir_tag - 1) == 0;
        ok = close(tfd) == 0 && ok;
        if (!ok || renameat(dirfd, tmp, dirfd, KS__CACHE_TAG_NAME) != 0)
            unlinkat(dirfd, tmp, 0);
    }
    return 0;
}

int ks__cache_list(int dirfd, ks__cache_listing *l)
{
    memset(l, 0, sizeof *l);
    int fd = dup(dirfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    rewinddir(d);
    size_t cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!is_key_name(de->d_name) && tmp_name_pid(de->d_name) == 0)
            continue;
        struct stat sb;
        if (fstatat(dirfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(sb.st_mode))
            continue;
        if (l->nfiles == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            ks__cache_file *f = realloc(l->files, ncap * sizeof *f);
            if (!f)
                goto fail;
            l->files = f, cap = ncap;
        }
        ks__cache_file *f = &l->files[l->nfiles];
        if ((f->name = strdup(de->d_name)) == NULL)
            goto fail;
        f->bytes = (unsigned long long)sb.st_size;
        f->mtime = sb.st_mtim;
        f->gone = 0;
        l->nfiles++;
    }
    closedir(d);
    d = NULL;

    /* Sorted by name, an entry's files lie together (KEY. begins each). */
    if (l->nfiles > 1)          /* an empty directory: files is NULL, which qsort may not take */
        qsort(l->files, l->nfiles, sizeof *l->files, by_name);
    l->units = malloc((l->nfiles ? l->nfiles : 1) * sizeof *l->units);
    if (!l->units)
        goto fail;
    time_t now = time(NULL);
    for (size_t i = 0; i < l->nfiles;) {
        ks__cache_unit *u = &l->units[l->n++];
        memset(u, 0, sizeof *u);
        u->first = i;
        const char *name = u->name = l->files[i].name;
        if (!is_key_name(name)) {
            /* A temporary: a unit of its own. */
            u->tmp = 1;
            u->nfiles = 1;
            u->bytes = l->files[i].bytes;
            u->used = l->files[i].mtime;
            /* Its age either way: a time in the future (a clock set back,
             * a copied directory) is no sign of a live writer, which keeps
             * its temporary's time near now. */
            long long age = (long long)now - (long long)u->used.tv_sec;
            u->leftover = (age >= KS__TMP_AGE_S || -age >= KS__TMP_AGE_S) && !pid_alive(tmp_name_pid(name));
            l->total += u->bytes;
            i++;
            continue;
        }
        int has_index = 0, young = 0;
        for (; i < l->nfiles && is_key_name(l->files[i].name) &&
               memcmp(l->files[i].name, name, 64) == 0; i++) {
            const ks__cache_file *f = &l->files[i];
            u->nfiles++;
            u->bytes += f->bytes;
            if (is_index(f->name)) {
                u->nprelude += ends_with(f->name, ".prelude");
                u->nnvrtc += ends_with(f->name, ".nvrtc");
                u->nresult += ends_with(f->name, ".result") || ends_with(f->name, ".trial");
                if (!has_index || later(&f->mtime, &u->used))
                    u->used = f->mtime;
                has_index = 1;
            } else {
                if (!has_index && later(&f->mtime, &u->used))
                    u->used = f->mtime;
                if (now - f->mtime.tv_sec < KS__ORPHAN_AGE_S)
                    young = 1;
            }
        }
        u->leftover = !has_index && !young;
        l->total += u->bytes;
    }
    return 0;
fail:
    if (d)
        closedir(d);
    ks__cache_listing_free(l);
    errno = ENOMEM;
    return -1;
}

int ks__cache_unit_remove(int dirfd, ks__cache_listing *l, ks__cache_unit *u)
{
    if (u->nfiles == 0)
        return 0;
    int err = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = u->first; i < u->first + u->nfiles; i++) {
            ks__cache_file *f = &l->files[i];
            if (f->gone || is_index(f->name) != (pass == 0))
                continue;
            if (unlinkat(dirfd, f->name, 0) == 0 || errno == ENOENT) {
                f->gone = 1;
                l->total -= f->bytes;
                u->bytes -= f->bytes;
            } else if (!err) {
                err = errno;
            }
        }
    if (err) {
        l->failed++;
        if (!l->fail_errno)
            l->fail_errno = err;
        errno = err;
        return -1;
    }
    u->bytes = 0;
    u->nfiles = 0;
    return 0;
}

/* Layers first (a layer is rebuilt on its base in a fraction of the base's
 * time), then oldest first; the same time by name, so the order is the same
 * every run. */
static int by_use(const void *a, const void *b)
{
    const ks__cache_unit *x = a, *y = b;
    if (x->layer != y->layer)
        return x->layer ? -1 : 1;
    if (later(&x->used, &y->used) || later(&y->used, &x->used))
        return later(&x->used, &y->used) ? 1 : -1;
    return strcmp(x->name, y->name);
}

size_t ks__cache_evict(int dirfd, ks__cache_listing *l, unsigned long long cap, const char *keep_hex,
                       unsigned long long *freed)
{
    size_t removed = 0;
    unsigned long long before = l->total;
    for (size_t i = 0; i < l->n; i++)
        if (l->units[i].leftover && l->units[i].nfiles && ks__cache_unit_remove(dirfd, l, &l->units[i]) == 0)
            removed++;
    if (cap != 0 && l->total > cap) {
        qsort(l->units, l->n, sizeof *l->units, by_use);
        for (size_t i = 0; i < l->n && l->total > cap; i++) {
            ks__cache_unit *u = &l->units[i];
            if (u->nfiles == 0 || u->tmp ||
                (keep_hex && memcmp(u->name, keep_hex, 64) == 0))
                continue;
            if (ks__cache_unit_remove(dirfd, l, u) == 0)
                removed++;
        }
    }
    *freed = before - l->total;
    return removed;
}

size_t ks__cache_trim(int dirfd, unsigned long long cap, const char *keep_hex, unsigned long long *freed)
{
    *freed = 0;
    ks__cache_listing l;
    if (cap == 0 || ks__cache_list(dirfd, &l) != 0)
        return 0;
    size_t n = l.total > cap ? ks__cache_evict(dirfd, &l, cap, keep_hex, freed) : 0;
    ks__cache_listing_free(&l);
    return n;
}

int ks__cache_parse_size(const char *s, unsigned long long *out)
{
    if (!s || !(*s >= '0' && *s <= '9'))
        return -1;
    unsigned long long v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (~0ULL - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    unsigned shift = 0;
    switch (*s) {
    case '\0': break;
    case 'K': shift = 10, s++; break;
    case 'M': shift = 20, s++; break;
    case 'G': shift = 30, s++; break;
    default: return -1;
    }
    if (*s != '\0' || (shift && v > (~0ULL >> shift)))
        return -1;
    *out = v << shift;
    return 0;
}

unsigned long long ks__cache_cap_env(const char **bad)
{
    const char *env = ks__getenv("KSTUB_CACHE_SIZE");
    unsigned long long v;
    *bad = NULL;
    if (env && *env) {
        if (ks__cache_parse_size(env, &v) == 0)
            return v;
        *bad = env;
    }
    return KS__CACHE_DEFAULT_CAP;
}
