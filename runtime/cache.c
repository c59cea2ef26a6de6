/*
 * cache.c — the NVRTC disk cache: one file per compiled image, named by the
 * hex SHA-256 key of everything that decides the output (see nvrtc.c).
 *
 * An entry is a header and the payload:
 *     "KSTUBNV1"  key[32]  payload length (8 bytes, little-endian)  SHA-256(payload)[32]  payload
 * It is written to a temporary file in the same directory and renamed, so a
 * reader sees a whole entry or none; still, every entry is checked (magic,
 * key, length, hash) before use, and one that fails is ignored and rewritten
 * (a crash, a full disk, a copied file, bit rot). The cache is an
 * optimisation: failing to read or write it is never an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "sha256.h"

#define KS__CACHE_DIR_ENV "KSTUB_CACHE_DIR"
#define KS__CACHE_ENV "KSTUB_CACHE"
#define KS__MAGIC "KSTUBNV1"
#define KS__HEADER_BYTES (8 + 32 + 8 + 32)
#define KS__MAX_ENTRY_BYTES ((size_t)1 << 30)

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static char *api_dir;               /* ks_cache_set_dir's, or NULL */
static int api_disabled;            /* ks_cache_enable(0) */

KS__API ks_status ks_cache_set_dir(const char *dir)
{
    char *copy = NULL;
    if (dir != NULL && (dir[0] == '\0' || (copy = strdup(dir)) == NULL))
        return dir[0] == '\0' ? ks__error(KS_ERR_INVALID_VALUE, NULL, "ks_cache_set_dir: empty directory name")
                              : ks__error(KS_ERR_NO_MEMORY, NULL, "ks_cache_set_dir: out of memory");
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

/* mkdir -p with mode 0700 for what it creates. */
static int make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int r = mkdir(path, 0700);
        *p = '/';
        if (r != 0 && errno != EEXIST)
            return -1;
    }
    return mkdir(path, 0700) == 0 || errno == EEXIST ? 0 : -1;
}

char *ks__cache_dir(void)
{
    if (__atomic_load_n(&api_disabled, __ATOMIC_RELAXED))
        return NULL;
    const char *off = getenv(KS__CACHE_ENV);
    if (off != NULL && strcmp(off, "0") == 0)
        return NULL;

    char path[PATH_MAX];
    pthread_mutex_lock(&cache_lock);
    int have = api_dir != NULL;
    if (have)
        snprintf(path, sizeof path, "%s", api_dir);
    pthread_mutex_unlock(&cache_lock);
    if (!have) {
        const char *env = getenv(KS__CACHE_DIR_ENV);
        const char *xdg = getenv("XDG_CACHE_HOME");
        const char *home = getenv("HOME");
        if (env && env[0])
            snprintf(path, sizeof path, "%s", env);
        else if (xdg && xdg[0] == '/')   /* the XDG spec: relative values are ignored */
            snprintf(path, sizeof path, "%s/kstub", xdg);
        else if (home && home[0])
            snprintf(path, sizeof path, "%s/.cache/kstub", home);
        else
            return NULL;
    }
    if (make_dirs(path) != 0)
        return NULL;
    /* Entries are loaded as code: use only a directory that is ours and that
     * nobody else may write into. */
    struct stat sb;
    if (lstat(path, &sb) != 0 || !S_ISDIR(sb.st_mode) || sb.st_uid != geteuid() ||
        (sb.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        return NULL;
    return strdup(path);
}

static void entry_path(char *out, size_t cap, const char *dir, const unsigned char key[32])
{
    char hex[65];
    ks__sha256_hex(key, hex);
    snprintf(out, cap, "%s/%s.nvrtc", dir, hex);
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

int ks__cache_get(const char *dir, const unsigned char key[32], void **data, size_t *n)
{
    char path[PATH_MAX];
    entry_path(path, sizeof path, dir, key);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat sb;
    unsigned char *buf = NULL;
    size_t size = 0;
    int ok = fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size >= KS__HEADER_BYTES &&
             (size_t)sb.st_size <= KS__MAX_ENTRY_BYTES;
    if (ok) {
        size = (size_t)sb.st_size;
        buf = malloc(size);
        size_t got = 0;
        while (buf != NULL && got < size) {
            ssize_t r = read(fd, buf + got, size - got);
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        ok = buf != NULL && got == size;
    }
    close(fd);
    if (ok) {
        unsigned char digest[32];
        uint64_t len = get_u64(buf + 40);
        ok = memcmp(buf, KS__MAGIC, 8) == 0 && memcmp(buf + 8, key, 32) == 0 &&
             len == size - KS__HEADER_BYTES;
        if (ok) {
            ks__sha256(buf + KS__HEADER_BYTES, (size_t)len, digest);
            ok = memcmp(digest, buf + 48, 32) == 0;
        }
    }
    if (!ok) {
        free(buf);
        return 0;
    }
    *n = size - KS__HEADER_BYTES;
    memmove(buf, buf + KS__HEADER_BYTES, *n);
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

void ks__cache_put(const char *dir, const unsigned char key[32], const void *data, size_t n)
{
    char path[PATH_MAX], tmp[PATH_MAX];
    entry_path(path, sizeof path, dir, key);
    char hex[65];
    ks__sha256_hex(key, hex);
    if (snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", dir, hex) >= (int)sizeof tmp)
        return;
    int fd = mkostemp(tmp, O_CLOEXEC);   /* mode 0600 */
    if (fd < 0)
        return;
    unsigned char header[KS__HEADER_BYTES];
    memcpy(header, KS__MAGIC, 8);
    memcpy(header + 8, key, 32);
    put_u64(header + 40, n);
    ks__sha256(data, n, header + 48);
    int ok = write_all(fd, header, sizeof header) == 0 && write_all(fd, data, n) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0)
        unlink(tmp);
}
