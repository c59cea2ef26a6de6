/*
 * cache.c — the NVRTC disk cache: one file per compiled image, named by the
 * hex SHA-256 key of everything that decides the output (see nvrtc.c).
 *
 * An entry is cache_entry.c's (the generator's prelude cache writes the same
 * kind): a header with the magic "KSTUBNV1", the key, the payload's length
 * and SHA-256, then the payload, written to a temporary file and renamed.
 * Every entry is checked before use, and one that fails is ignored and
 * rewritten (a crash, a full disk, a copied file, bit rot). The hash is an integrity
 * check, not an authenticator: what keeps other users' code out is the
 * directory, which is used only when no one else can write to it or to any
 * of its parents (safefile.c), and whose entries are then opened relative to
 * its descriptor, never by path again. The cache is an optimisation:
 * failing to read or write it is never an error; ks_cache_check() says why
 * it is not used.
 *
 * The directory's size follows the prelude cache's rule (cache_entry.c, one
 * copy of the code): a hit touches its entry (its mtime is its last use), and
 * after writing an entry the thread that wrote it trims the directory under
 * KSTUB_CACHE_SIZE (default 2 GiB; a value that is not a size means the
 * default, unreported, as the library prints nothing), least recently used
 * first, never the entry just written nor a temporary younger than ten
 * minutes. Only a miss trims, after NVRTC has compiled: one pass over the
 * directory and a sort, a small part of the compile the launch has already
 * waited for (docs/performance.md: about 25 us per entry, against 16-52 ms
 * of NVRTC), and a thread that finds another trimming skips it rather than
 * wait. A hit never lists the directory.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache_entry.h"
#include "internal.h"
#include "sha256.h"

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
    int env_off = ks__cache_env_off();
    if (__atomic_load_n(&api_disabled, __ATOMIC_RELAXED) || env_off) {
        snprintf(why, cap, "the NVRTC cache is turned off (%s)", env_off ? "KSTUB_CACHE=0" : "ks_cache_enable(0)");
        return KS_ERR_UNSUPPORTED;
    }

    /* A name too long for PATH_MAX is refused, never cut short. */
    char path[PATH_MAX + 16], set[PATH_MAX + 16] = "";
    const char *origin;
    pthread_mutex_lock(&cache_lock);
    if (api_dir != NULL)
        snprintf(set, sizeof set, "%s", api_dir);
    pthread_mutex_unlock(&cache_lock);
    int len = ks__cache_dir_path(set, "ks_cache_set_dir", path, sizeof path, &origin);
    if (len < 0) {
        snprintf(why, cap, "no cache directory: none of KSTUB_CACHE_DIR, XDG_CACHE_HOME (absolute) "
                           "or HOME is set");
        return KS_ERR_INVALID_VALUE;
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
    /* Only kstub's own directory (KSTUB_CACHE_DIR=/ is not), as kstub's. */
    if (ks__cache_dir_claim(fd, detail, sizeof detail) != 0) {
        close(fd);
        snprintf(why, cap, "the cache directory '%.*s' (from %s) is not used: %s", PATH_MAX, path, origin,
                 detail);
        return KS_ERR_UNTRUSTED;
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

long long ks__cache_entry_check(const unsigned char *buf, size_t size, const unsigned char key[32])
{
    return size > KS__MAX_ENTRY_BYTES ? -1 : ks__entry_check(buf, size, KS__MAGIC, key);
}

int ks__cache_get(int dirfd, const unsigned char key[32], void **data, size_t *n)
{
    char name[80];
    const char *why;
    entry_name(name, sizeof name, key, ".nvrtc");
    *data = ks__entry_read(dirfd, name, KS__MAGIC, key, KS__MAX_ENTRY_BYTES, n, &why);
    if (*data == NULL)
        return 0;
    /* A hit is a use: trimming goes by last use, not by write. */
    (void)utimensat(dirfd, name, NULL, AT_SYMLINK_NOFOLLOW);
    return 1;
}

/* Set while a thread of this process trims; the others skip. */
static int trimming;

void ks__cache_put(int dirfd, const unsigned char key[32], const void *data, size_t n)
{
    char name[80];
    entry_name(name, sizeof name, key, ".nvrtc");
    if (ks__entry_write(dirfd, name, KS__MAGIC, key, data, n) != 0)
        return;
    if (__atomic_exchange_n(&trimming, 1, __ATOMIC_ACQUIRE))
        return;
    const char *bad;
    unsigned long long freed, cap = ks__cache_cap_env(&bad);
    ks__cache_trim(dirfd, cap, name, &freed);
    __atomic_store_n(&trimming, 0, __ATOMIC_RELEASE);
}
