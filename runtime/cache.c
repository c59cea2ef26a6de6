/*
 * cache.c — the NVRTC disk cache: one file per compiled image, named by the
 * hex SHA-256 key of everything that decides the output (see nvrtc.c).
 *
 * An entry is a header and the payload:
 *     "KSTUBNV1"  key[32]  payload length (8 bytes, little-endian)  SHA-256(payload)[32]  payload
 * It is written to a temporary file in the same directory and renamed, so a
 * reader sees a whole entry or none; still, every entry is checked (magic,
 * key, length, hash) before use, and one that fails is ignored and rewritten
 * (a crash, a full disk, a copied file, bit rot). The hash is an integrity
 * check, not an authenticator: what keeps other users' code out is the
 * directory, which is used only when no one else can write to it or to any
 * of its parents (safefile.c), and whose entries are then opened relative to
 * its descriptor, never by path again. The cache is an optimisation:
 * failing to read or write it is never an error; ks_cache_check() says why
 * it is not used.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "sha256.h"

#define KS__CACHE_DIR_ENV "KSTUB_CACHE_DIR"
#define KS__CACHE_ENV "KSTUB_CACHE"
#define KS__MAGIC "KSTUBNV1"
#define KS__MAX_ENTRY_BYTES ((size_t)1 << 30)

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static char *api_dir;               /* ks_cache_set_dir's, or NULL */
static int api_disabled;            /* ks_cache_enable(0) */

KS__API ks_status ks_cache_set_dir(const char *dir)
{
    char *copy = NULL;
    if (dir != NULL && dir[0] == '\0')
        return ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_cache_set_dir: empty directory name");
    if (dir != NULL && strlen(dir) >= PATH_MAX)
        return ks__error(KS_ERR_INVALID_VALUE, NULL,
                         "ks_cache_set_dir: the directory name is %zu bytes long, more than PATH_MAX (%d)",
                         strlen(dir), PATH_MAX);
    if (dir != NULL && (copy = strdup(dir)) == NULL)
        return ks__error(KS_ERR_NO_MEMORY, NULL, "ks_cache_set_dir: out of memory");
    pthread_mutex_lock(&cache_lock);
    free(api_dir);
    api_dir = copy;
    pthread_mutex_unlock(&cache_lock);
    return KS_OK;
}

KS__API void ks_cache_enable(int enabled)
{
    __atomic_store_n(&api_disabled, !enabled, __ATOMIC_RELAXED);
}

ks_status ks__cache_open(int *dirfd, char *why, size_t cap)
{
    *dirfd = -1;
    const char *off = ks__getenv(KS__CACHE_ENV);
    if (__atomic_load_n(&api_disabled, __ATOMIC_RELAXED) || (off != NULL && strcmp(off, "0") == 0)) {
        snprintf(why, cap, "the NVRTC cache is turned off (%s)",
                 off != NULL && strcmp(off, "0") == 0 ? "KSTUB_CACHE=0" : "ks_cache_enable(0)");
        return KS_ERR_UNSUPPORTED;
    }

    /* A name too long for PATH_MAX is refused, never cut short. */
    char path[PATH_MAX + 16];
    const char *origin = "ks_cache_set_dir";
    int len = -1;
    pthread_mutex_lock(&cache_lock);
    if (api_dir != NULL)
        len = snprintf(path, sizeof path, "%s", api_dir);
    pthread_mutex_unlock(&cache_lock);
    if (len < 0) {
        const char *env = ks__getenv(KS__CACHE_DIR_ENV);
        const char *xdg = ks__getenv("XDG_CACHE_HOME");
        const char *home = ks__getenv("HOME");
        if (env && env[0]) {
            origin = KS__CACHE_DIR_ENV;
            len = snprintf(path, sizeof path, "%s", env);
        } else if (xdg && xdg[0] == '/') {   /* the XDG spec: relative values are ignored */
            origin = "XDG_CACHE_HOME";
            len = snprintf(path, sizeof path, "%s/kstub", xdg);
        } else if (home && home[0]) {
            origin = "HOME";
            len = snprintf(path, sizeof path, "%s/.cache/kstub", home);
        } else {
            snprintf(why, cap, "no cache directory: none of KSTUB_CACHE_DIR, XDG_CACHE_HOME (absolute) "
                               "or HOME is set");
            return KS_ERR_INVALID_VALUE;
        }
    }
    if ((size_t)len >= PATH_MAX) {
        snprintf(why, cap, "the cache directory from %s is %d bytes long, more than PATH_MAX (%d): "
                           "not used", origin, len, PATH_MAX);
        return KS_ERR_INVALID_VALUE;
    }
    char detail[PATH_MAX + 256];
    int fd = ks__dir_open_trusted(path, 1, detail, sizeof detail);
    if (fd < 0) {
        /* An unsafe directory is told apart from one that cannot be made. */
        int untrusted = strstr(detail, "belongs to") != NULL || strstr(detail, "writable by") != NULL;
        snprintf(why, cap, "the cache directory '%.*s' (from %s) is not used: %s", PATH_MAX, path, origin,
                 detail);
        return untrusted ? KS_ERR_UNTRUSTED : KS_ERR_IO;
    }
    *dirfd = fd;
    return KS_OK;
}

KS__API ks_status ks_cache_check(void)
{
    char why[2 * PATH_MAX + 512];
    int fd;
    ks_status st = ks__cache_open(&fd, why, sizeof why);
    if (st != KS_OK)
        return ks__error(st, NULL, "%s", why);
    close(fd);
    return KS_OK;
}

static void entry_name(char *out, size_t cap, const unsigned char key[32], const char *suffix)
{
    char hex[65];
    ks__sha256_hex(key, hex);
    snprintf(out, cap, "%s%s", hex, suffix);
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

long long ks__cache_entry_check(const unsigned char *buf, size_t size, const unsigned char key[32])
{
    if (size < KS__CACHE_HEADER_BYTES || size > KS__MAX_ENTRY_BYTES)
        return -1;
    uint64_t len = get_u64(buf + 40);
    if (memcmp(buf, KS__MAGIC, 8) != 0 || memcmp(buf + 8, key, 32) != 0 ||
        len != size - KS__CACHE_HEADER_BYTES)
        return -1;
    unsigned char digest[32];
    ks__sha256(buf + KS__CACHE_HEADER_BYTES, (size_t)len, digest);
    return memcmp(digest, buf + 48, 32) == 0 ? (long long)len : -1;
}

int ks__cache_get(int dirfd, const unsigned char key[32], void **data, size_t *n)
{
    char name[80];
    entry_name(name, sizeof name, key, ".nvrtc");
    struct stat sb;
    /* Not a regular file of ours (a FIFO, a link, someone else's): no entry. */
    int fd = ks__open_regular(dirfd, name, 1, &sb);
    if (fd < 0)
        return 0;
    unsigned char *buf = NULL;
    size_t size = 0;
    int ok = sb.st_uid == geteuid() && sb.st_size >= KS__CACHE_HEADER_BYTES &&
             (size_t)sb.st_size <= KS__MAX_ENTRY_BYTES;
    if (ok) {
        size = (size_t)sb.st_size;
        buf = malloc(size);
        size_t got = 0;
        while (buf != NULL && got < size) {
            ssize_t r = read(fd, buf + got, size - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        ok = buf != NULL && got == size;
    }
    close(fd);
    long long len = ok ? ks__cache_entry_check(buf, size, key) : -1;
    if (len < 0) {
        free(buf);
        return 0;
    }
    *n = (size_t)len;
    memmove(buf, buf + KS__CACHE_HEADER_BYTES, *n);
    *data = buf;
    return 1;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w, n -= (size_t)w;
    }
    return 0;
}

void ks__cache_put(int dirfd, const unsigned char key[32], const void *data, size_t n)
{
    static unsigned counter;
    char name[80], tmp[128];
    entry_name(name, sizeof name, key, ".nvrtc");
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 8; attempt++) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        snprintf(tmp, sizeof tmp, ".%.16s.%ld.%u.%lx", name, (long)getpid(),
                 __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED), (unsigned long)ts.tv_nsec);
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            return;
    }
    if (fd < 0)
        return;
    unsigned char header[KS__CACHE_HEADER_BYTES];
    memcpy(header, KS__MAGIC, 8);
    memcpy(header + 8, key, 32);
    put_u64(header + 40, n);
    ks__sha256(data, n, header + 48);
    int ok = write_all(fd, header, sizeof header) == 0 && write_all(fd, data, n) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || renameat(dirfd, tmp, dirfd, name) != 0)
        unlinkat(dirfd, tmp, 0);
}
