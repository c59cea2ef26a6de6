/*
 * cachecmd.c — the cache's size: a cap with least-recently-used eviction,
 * and what the `kstub cache` command (cli/cache_cmd.c) reports, prunes and
 * clears by.
 *
 * The cache directory (ks_cache_dir_open; ~/.cache/kstub by default, by
 * the rule both caches share, common/cache_entry.c) holds entries named
 * by a 64-hex-digit key: the generator's prelude (KEY.prelude, its PCH
 * KEY.SUM.pch, KEY.lock for concurrent builders) and libkstub's NVRTC images
 * (KEY.nvrtc). One entry is every file of one key; its size the sum of its
 * files', its last use the modification time of its KEY.prelude or
 * KEY.nvrtc (pch.c touches KEY.prelude on every hit: ks_cache_touch).
 * Nothing else in the directory is counted, touched or removed.
 *
 * The cap: KSTUB_CACHE_SIZE (bytes, or with a K, M or G suffix, powers of
 * 1024; 0 means no cap), else 2 GiB, room for about two hundred base
 * preludes (10-12 MiB each) or a thousand layers. After pch.c writes an
 * entry it calls ks_cache_trim, which removes layers (least recently used
 * first), then other entries least recently used first, until the total
 * is under the cap, never the entry just written: a layer is rebuilt on
 * its base in a fraction of the base's time. The idea is ccache's
 * (max_size, LRU cleanup); the numbers are kstub's.
 *
 * Eviction removes KEY.prelude first: a concurrent reader then misses and
 * rebuilds, and one that already holds the PCH open keeps reading it.
 * Leftovers count towards the total: a PCH whose KEY.prelude is gone, once
 * a minute old (a builder writes the PCH before its entry), and a temporary
 * file of either cache (".<16 hex>.<pid>.….tmp", a write interrupted by a
 * kill or a crash), once ten minutes old and its writer's pid gone. Every
 * operation (--stats, --prune, --clear, the trim after a write) removes
 * them; none removes anything younger, so a live writer's temporary stays.
 * The listing and the rule are common/cache_entry.c's, which libkstub's
 * NVRTC cache trims by too; each operation reads the directory once and
 * sorts, whatever the number of entries.
 */
#include "front/prelude/cachecmd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache_entry.h"
#include "base/util.h"

#define KS__COUNTS_NAME "prelude-counts"

/* ---- the cap ------------------------------------------------------------------------------------ */

int ks_cache_parse_size(const char *s, unsigned long long *out)
{
    return ks__cache_parse_size(s, out);
}

unsigned long long ks_cache_cap(const char **origin)
{
    const char *bad, *env = getenv("KSTUB_CACHE_SIZE");
    unsigned long long v = ks__cache_cap_env(&bad);
    if (bad) {
        char *e = ks_escape_controls(bad);
        fprintf(stderr, "kstub: warning: KSTUB_CACHE_SIZE='%s' is not a size (digits, then K, M, G "
                        "or nothing, like 500M or 2G); using the default\n", e);
        free(e);
    }
    if (origin)
        *origin = env && *env && !bad ? "KSTUB_CACHE_SIZE" : "default";
    return v;
}

/* ---- the directory ---------------------------------------------------------------------------- */

int ks_cache_dir_open(const char *dir, int no_cache, char *why, size_t cap)
{
    if (no_cache || ks__cache_env_off()) {
        snprintf(why, cap, "turned off (%s)", no_cache ? "--no-cache" : "KSTUB_CACHE=0");
        return -1;
    }
    char path[PATH_MAX + 16];
    const char *origin;
    int len = ks__cache_dir_path(dir, "--cache-dir", path, sizeof path, &origin);
    if (len < 0) {
        snprintf(why, cap, "no directory: none of --cache-dir, KSTUB_CACHE_DIR, XDG_CACHE_HOME "
                           "(absolute) or HOME is set");
        return -1;
    }
    if ((size_t)len >= PATH_MAX) {
        snprintf(why, cap, "the directory name is longer than PATH_MAX");
        return -1;
    }
    char detail[PATH_MAX + 256];
    int fd = ks__dir_open_trusted(path, 1, detail, sizeof detail);
    if (fd >= 0 && ks__cache_dir_claim(fd, detail, sizeof detail) != 0) {
        close(fd);
        fd = -1;
    }
    if (fd < 0)
        snprintf(why, cap, "the cache directory '%.*s' cannot be used: %.*s", PATH_MAX, path, PATH_MAX, detail);
    return fd;
}

void ks_cache_touch(int dirfd, const char *name)
{
    /* The cache is an optimisation: a failure here changes nothing. */
    (void)utimensat(dirfd, name, NULL, AT_SYMLINK_NOFOLLOW);
}

size_t ks_cache_trim(int dirfd, const char *keep_hex, unsigned long long *freed,
                     unsigned long long *cap)
{
    *cap = ks_cache_cap(NULL);
    *freed = 0;
    ks__cache_listing l;
    if (*cap == 0 || ks__cache_list(dirfd, &l) != 0)
        return 0;
    size_t n = 0;
    if (l.total > *cap) {
        ks_cache_mark_layers(dirfd, &l);
        n = ks__cache_evict(dirfd, &l, *cap, keep_hex, freed);
    }
    ks__cache_listing_free(&l);
    return n;
}

/* ---- what the command reads ---------------------------------------------------------------- */

/* Whether the prelude entry of unit name (KEY.…) is a layer: its payload
 * names a base prelude ("base NAME SIZE MTIME", pch.c), in the lines
 * before its file list. */
int ks_cache_is_layer(int dirfd, const char *name)
{
    char entry[80], b[4096];
    snprintf(entry, sizeof entry, "%.64s.prelude", name);
    int fd = openat(dirfd, entry, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    ssize_t n = pread(fd, b, sizeof b - 1, 0);
    close(fd);
    b[n > 80 ? (size_t)n : 0] = '\0';
    const char *base = n > 80 ? strstr(b + 80, "\nbase ") : NULL;
    const char *files = n > 80 ? strstr(b + 80, "\nf ") : NULL;
    return base && (!files || base < files);
}

/* Marks each prelude unit that is a layer, which eviction takes first. */
void ks_cache_mark_layers(int dirfd, ks__cache_listing *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->units[i].nprelude)
            l->units[i].layer = ks_cache_is_layer(dirfd, l->units[i].name);
}

void ks_cache_counts_reset(int dirfd)
{
    unlinkat(dirfd, KS__COUNTS_NAME, 0);
    unlinkat(dirfd, KS_PRELUDE_SEEN_NAME, 0);
}

/* ---- hits and misses ------------------------------------------------------------------------- */

/*
 * KS__COUNTS_NAME holds two decimal counters and the last build's time,
 * "hits H\nmisses M\nbuild-ms T\n", then the same two per kind of prelude,
 * "base H M\nlayer H M\n", then the result cache's, "result H M\n" (a
 * file without them reads as zeros), changed
 * under an flock of the file (written in place, then truncated), so
 * concurrent runs (make -j) lose no count. Not an entry (its name is not a
 * key's), so eviction leaves it; --clear removes it. Counting is best
 * effort: a failure loses one count.
 */
static int counts_open(int dirfd)
{
    int fd = openat(dirfd, KS__COUNTS_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() || flock(fd, LOCK_EX) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* kinds: base hits, base misses, layer hits, layer misses, result hits,
 * result misses. */
static void counts_read(int fd, unsigned long long *hits, unsigned long long *misses, unsigned long long *ms,
                        unsigned long long kinds[6])
{
    char b[320];
    ssize_t n = pread(fd, b, sizeof b - 1, 0);
    b[n > 0 ? (size_t)n : 0] = '\0';
    *ms = 0;
    for (int i = 0; i < 6; i++)
        kinds[i] = 0;
    int got = sscanf(b, "hits %llu\nmisses %llu\nbuild-ms %llu\nbase %llu %llu\nlayer %llu %llu\nresult %llu %llu\n",
                     hits, misses, ms, &kinds[0], &kinds[1], &kinds[2], &kinds[3], &kinds[4], &kinds[5]);
    if (got < 2)
        *hits = *misses = *ms = 0;
    if (got < 7)
        kinds[0] = kinds[1] = kinds[2] = kinds[3] = 0;
    if (got < 9)
        kinds[4] = kinds[5] = 0;
}

/* kind: 0 a base prelude, 1 a layer, 2 a result (which leaves the
 * prelude's totals and build time alone). */
static void count(int dirfd, int hit, int kind, unsigned long long build_ms)
{
    int fd = counts_open(dirfd);
    if (fd < 0)
        return;
    unsigned long long h, m, ms, k[6];
    counts_read(fd, &h, &m, &ms, k);
    if (kind != 2) {
        h += hit != 0;
        m += hit == 0;
    }
    k[2 * kind + (hit == 0)]++;
    if (!hit && build_ms)               /* 0: a layer's build, whose time is never quoted */
        ms = build_ms;
    char b[320];
    int n = snprintf(b, sizeof b, "hits %llu\nmisses %llu\nbuild-ms %llu\nbase %llu %llu\nlayer %llu %llu\n"
                     "result %llu %llu\n", h, m, ms, k[0], k[1], k[2], k[3], k[4], k[5]);
    if (pwrite(fd, b, (size_t)n, 0) == n)
        (void)ftruncate(fd, n);
    close(fd);
}

void ks_cache_count(int dirfd, int hit, int layer, unsigned long long build_ms)
{
    count(dirfd, hit, layer ? 1 : 0, build_ms);
}

void ks_cache_count_result(int dirfd, int hit)
{
    count(dirfd, hit, 2, 0);
}

void ks_cache_counts(int dirfd, unsigned long long *hits, unsigned long long *misses,
                     unsigned long long *build_ms)
{
    unsigned long long ms = 0, kinds[6];
    *hits = *misses = 0;
    int fd = counts_open(dirfd);
    if (fd >= 0) {
        counts_read(fd, hits, misses, &ms, kinds);
        close(fd);
    }
    if (build_ms)
        *build_ms = ms;
}

void ks_cache_kind_counts(int dirfd, unsigned long long kinds[6])
{
    unsigned long long h = 0, m = 0, ms = 0;
    for (int i = 0; i < 6; i++)
        kinds[i] = 0;
    int fd = counts_open(dirfd);
    if (fd >= 0) {
        counts_read(fd, &h, &m, &ms, kinds);
        close(fd);
    }
}
