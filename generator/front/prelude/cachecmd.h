/*
 * cachecmd.h — the cache directory (where it is, opened and checked), its
 * size cap with least-recently-used eviction, and what the `kstub cache`
 * command (cli/cache_cmd.c) reads (cachecmd.c). pch.c opens the directory
 * here and calls the two hooks; nothing here calls pch.c.
 */
#ifndef KSTUB_CACHECMD_H
#define KSTUB_CACHECMD_H

/* "500M", "2G", "1048576" (K, M, G: powers of 1024; 0: no cap). 0, or -1. */
int ks_cache_parse_size(const char *s, unsigned long long *out);

/* KSTUB_CACHE_SIZE, else the default; *origin says which (may be NULL). */
unsigned long long ks_cache_cap(const char **origin);

#include <stddef.h>

/* The cache directory (dir when set and not empty, else the rule of
 * common/cache_entry.c), opened and checked (common/safefile.c): the fd,
 * or -1 with the reason in why when it is off (no_cache, KSTUB_CACHE=0),
 * unset or unsafe. */
int ks_cache_dir_open(const char *dir, int no_cache, char *why, size_t cap);

/* Marks the entry file NAME (relative to dirfd) used now. */
void ks_cache_touch(int dirfd, const char *name);

/* Removes least recently used entries, never the one of keep_hex (64 hex
 * digits), until the cache is under its cap. Returns how many it removed,
 * with *freed their bytes and *cap the cap. */
size_t ks_cache_trim(int dirfd, const char *keep_hex, unsigned long long *freed,
                     unsigned long long *cap);

/* Counts one prelude lookup (hit: found; else built, in build_ms
 * milliseconds; 0 keeps the last build's time: a layer's) of a base
 * prelude or (layer) a layer in the directory's counters, which
 * `kstub cache --stats` shows and --clear resets. */
void ks_cache_count(int dirfd, int hit, int layer, unsigned long long build_ms);
/* The counters, and the last build's milliseconds (0: none yet) when
 * build_ms is not NULL. */
void ks_cache_counts(int dirfd, unsigned long long *hits, unsigned long long *misses,
                     unsigned long long *build_ms);
/* The counters per kind: base hits, base misses, layer hits, layer misses,
 * result hits, result misses. */
void ks_cache_kind_counts(int dirfd, unsigned long long kinds[6]);
/* Counts one lookup of the result cache (cli/result_cache.c). */
void ks_cache_count_result(int dirfd, int hit);

/* The cache's record of which lists of leading includes which inputs
 * started with (prelude_seen.c); --clear removes it. */
#define KS_PRELUDE_SEEN_NAME "prelude-seen"

/* Whether the prelude entry of unit name (KEY.…) is a layer on a base
 * prelude (its payload names one: pch.c's "base NAME SIZE MTIME"). */
int ks_cache_is_layer(int dirfd, const char *name);
/* Marks each prelude unit of the listing that is a layer (eviction takes
 * those first). */
struct ks__cache_listing;
void ks_cache_mark_layers(int dirfd, struct ks__cache_listing *l);
/* Resets the hit and miss counters and the record of leading includes
 * seen (kstub cache --clear). */
void ks_cache_counts_reset(int dirfd);

#endif
