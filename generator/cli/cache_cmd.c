/*
 * cache_cmd.c — `kstub cache [--stats | --prune | --clear]`: its command
 * line and what it prints, over the cache's library (front/prelude/
 * cachecmd.c: the directory, the cap, the counters) and the listing and
 * eviction rule both caches share (common/cache_entry.c).
 */
#include "cli/cache_cmd.h"
#include "cli/warm.h"
#include "front/prelude/cachecmd.h"
#include "base/util.h"
#include "cache_entry.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- kstub cache ------------------------------------------------------------------------------------ */

static void cache_usage(FILE *f)
{
    fputs("usage: kstub cache [--stats | --clear | --prune [--max-size SIZE]] [--cache-dir DIR]\n"
          "       kstub cache --warm [generate options]\n"
          "  The cache of precompiled preludes and results (kstub) and NVRTC images\n"
          "  (libkstub).\n"
          "  --stats              entries, their size and the cap, and hits and misses\n"
          "                       per kind: base prelude, layer, result (the default)\n"
          "  --warm OPTIONS       build the base prelude for these options (-std, --arch,\n"
          "                       -D, --cuda-path, --cache-dir) ahead of the first file\n"
          "  --prune              remove least recently used entries until the cache is\n"
          "                       under the cap, and leftovers of interrupted builds\n"
          "  --clear              remove every entry\n"
          "  --max-size SIZE      with --prune only: the cap for it (like 500M or 2G; 0: none);\n"
          "                       default $KSTUB_CACHE_SIZE, else 2G. Generating keeps\n"
          "                       the cache under $KSTUB_CACHE_SIZE or 2G by itself,\n"
          "                       removing layers before base preludes\n"
          "  --cache-dir DIR      the cache directory (default $KSTUB_CACHE_DIR, else\n"
          "                       $XDG_CACHE_HOME/kstub or ~/.cache/kstub)\n"
          "  A cache directory that does not exist is reported or emptied as it is: none\n"
          "  is created.\n"
          "exit status: 0 done; 1 the cache directory cannot be used, or something could not\n"
          "  be removed (it says what); 2 usage error\n",
          f);
}

static void human(char *out, size_t cap, unsigned long long b)
{
    if (b >= (1ULL << 30))
        snprintf(out, cap, "%.1f GiB", (double)b / (double)(1ULL << 30));
    else if (b >= (1ULL << 20))
        snprintf(out, cap, "%.1f MiB", (double)b / (double)(1ULL << 20));
    else if (b >= (1ULL << 10))
        snprintf(out, cap, "%.1f KiB", (double)b / (double)(1ULL << 10));
    else
        snprintf(out, cap, "%llu bytes", b);
}

int ks_cache_main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--warm") == 0)
            return ks_cache_warm(argc, argv);
    enum { STATS, PRUNE, CLEAR } what = STATS;
    int actions = 0;
    const char *dir = NULL, *size = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--stats") == 0) {
            what = STATS, actions++;
        } else if (strcmp(a, "--prune") == 0) {
            what = PRUNE, actions++;
        } else if (strcmp(a, "--clear") == 0) {
            what = CLEAR, actions++;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            cache_usage(stdout);
            return 0;
        } else if ((strcmp(a, "--cache-dir") == 0 || strcmp(a, "--max-size") == 0) && i + 1 < argc) {
            *(a[2] == 'c' ? &dir : &size) = argv[++i];
        } else if (strncmp(a, "--cache-dir=", 12) == 0) {
            dir = a + 12;
        } else if (strncmp(a, "--max-size=", 11) == 0) {
            size = a + 11;
        } else {
            char *e = ks_escape_controls(a);
            fprintf(stderr, "kstub cache: unknown or incomplete option '%s'\n", e);
            free(e);
            cache_usage(stderr);
            return 2;
        }
    }
    if (actions > 1) {
        fputs("kstub cache: give one of --stats, --prune, --clear\n", stderr);
        return 2;
    }
    if (size && what != PRUNE) {
        /* A cap given alone must not quietly report instead of pruning. */
        fputs("kstub cache: --max-size is for --prune (kstub cache --prune --max-size SIZE)\n", stderr);
        return 2;
    }
    const char *origin = NULL;
    unsigned long long cap = ks_cache_cap(&origin);
    if (size) {
        if (ks_cache_parse_size(size, &cap) != 0) {
            char *e = ks_escape_controls(size);
            fprintf(stderr, "kstub cache: --max-size '%s' is not a size (digits, then K, M, G or "
                            "nothing, like 500M or 2G)\n", e);
            free(e);
            return 2;
        }
        origin = "--max-size";
    }
    /* Reporting or emptying a cache that is not there creates nothing. */
    char where[PATH_MAX + 16];
    const char *where_from;
    struct stat st;
    if (!ks__cache_env_off() && ks__cache_dir_path(dir, "--cache-dir", where, sizeof where, &where_from) >= 0 &&
        lstat(where, &st) != 0 && errno == ENOENT) {
        char *e = ks_escape_controls(where);
        if (what == STATS)
            printf("cache directory   %s (none yet: nothing cached)\n", e);
        else
            printf("kstub cache: %s does not exist; nothing to remove\n", e);
        free(e);
        return 0;
    }
    char why[2 * PATH_MAX + 512];
    int dirfd = ks_cache_dir_open(dir, 0, why, sizeof why);
    if (dirfd < 0) {
        char *e = ks_escape_controls(why);
        fprintf(stderr, "kstub cache: %s\n", e);
        free(e);
        return 1;
    }
    ks__cache_listing l;
    if (ks__cache_list(dirfd, &l) != 0) {
        fprintf(stderr, "kstub cache: cannot read the cache directory: %s\n", strerror(errno));
        close(dirfd);
        return 1;
    }
    char h1[32], h2[32];
    if (what == STATS) {
        unsigned long long pb = 0, nb = 0, ob = 0, rb = 0;
        size_t np = 0, nn = 0, no = 0, nl = 0, nr = 0;
        for (size_t i = 0; i < l.n; i++) {
            const ks__cache_unit *u = &l.units[i];
            if (u->nprelude)
                np++, pb += u->bytes, nl += ks_cache_is_layer(dirfd, u->name);
            else if (u->nnvrtc)
                nn++, nb += u->bytes;
            else if (u->nresult)
                nr++, rb += u->bytes;
            else
                no++, ob += u->bytes;
        }
        human(h1, sizeof h1, l.total);
        if (cap)
            human(h2, sizeof h2, cap);
        else
            snprintf(h2, sizeof h2, "none");
        char path[PATH_MAX + 16] = "";
        const char *from;
        ks__cache_dir_path(dir, "--cache-dir", path, sizeof path, &from);
        char *e = ks_escape_controls(path);
        printf("cache directory   %s\n", e);
        free(e);
        printf("preludes          %zu (%llu bytes", np, pb);
        if (nl)
            printf("; %zu of them %s of leading headers on a base prelude", nl, nl == 1 ? "a layer" : "layers");
        printf(")\n");
        printf("results           %zu (%llu bytes)\n", nr, rb);
        printf("NVRTC images      %zu (%llu bytes)\n", nn, nb);
        printf("leftovers         %zu (%llu bytes)\n", no, ob);
        unsigned long long hits = 0, misses = 0;
        unsigned long long kinds[6];
        ks_cache_counts(dirfd, &hits, &misses, NULL);
        ks_cache_kind_counts(dirfd, kinds);
        printf("prelude hits      %llu, misses %llu (since the last --clear)\n", hits, misses);
        printf("  base preludes   hits %llu, misses %llu\n", kinds[0], kinds[1]);
        printf("  layers          hits %llu, misses %llu\n", kinds[2], kinds[3]);
        printf("result hits       %llu, misses %llu (generated files replayed, not parsed)\n", kinds[4],
               kinds[5]);
        printf("total             %llu bytes (%s)\n", l.total, h1);
        printf("cap               %llu bytes (%s, %s)\n", cap, h2, origin);
    } else if (what == CLEAR) {
        /* Every entry, and every temporary but a live writer's. An entry
         * is a unit with its KEY.prelude, KEY.nvrtc or KEY.result; the rest (a lock, a
         * PCH whose entry is gone, a temporary) are leftovers. */
        unsigned long long before = l.total;
        size_t entries = 0, others = 0, kept = 0;
        for (size_t i = 0; i < l.n; i++) {
            ks__cache_unit *u = &l.units[i];
            if (u->tmp && !u->leftover) {
                kept++;
                continue;
            }
            int entry = u->nprelude || u->nnvrtc || u->nresult;
            if (ks__cache_unit_remove(dirfd, &l, u) == 0)
                *(entry ? &entries : &others) += 1;
        }
        ks_cache_counts_reset(dirfd);
        human(h1, sizeof h1, before - l.total);
        printf("kstub cache: removed %zu entr%s and %zu leftover%s (%s)", entries, entries == 1 ? "y" : "ies",
               others, others == 1 ? "" : "s", h1);
        if (kept)
            printf("; kept %zu temporary file%s of a writer that may still run (younger than %d "
                   "minutes)", kept, kept == 1 ? "" : "s", KS__TMP_AGE_S / 60);
        printf("\n");
    } else {
        unsigned long long before = l.total, evicted_bytes = 0;
        size_t left = 0;
        for (size_t i = 0; i < l.n; i++)
            if (l.units[i].leftover && ks__cache_unit_remove(dirfd, &l, &l.units[i]) == 0)
                left++;
        ks_cache_mark_layers(dirfd, &l);
        size_t evicted = ks__cache_evict(dirfd, &l, cap, NULL, &evicted_bytes);
        human(h1, sizeof h1, before - l.total);
        human(h2, sizeof h2, l.total);
        printf("kstub cache: removed %zu least recently used entr%s and %zu leftover%s (%s); "
               "%s left\n", evicted, evicted == 1 ? "y" : "ies", left, left == 1 ? "" : "s", h1, h2);
    }
    /* What could not be removed (a read-only directory): said, and the
     * command fails, since the cache is not what was asked for. */
    int rc = 0;
    if (l.failed) {
        fprintf(stderr, "kstub cache: could not remove %zu entr%s or leftover%s: %s\n", l.failed,
                l.failed == 1 ? "y" : "ies", l.failed == 1 ? "" : "s", strerror(l.fail_errno));
        rc = 1;
    }
    ks__cache_listing_free(&l);
    close(dirfd);
    return rc;
}

