/*
 * cachecmd.h — the cache's size cap with least-recently-used eviction, and
 * the `kstub cache` command (cachecmd.c). pch.c calls the two hooks.
 */
#ifndef KSTUB_CACHECMD_H
#define KSTUB_CACHECMD_H

/* `kstub cache [--stats|--prune|--clear] ...`; argv[0] is "cache". */
int ks_cache_main(int argc, char **argv);

/* "500M", "2G", "1048576" (K, M, G: powers of 1024; 0: no cap). 0, or -1. */
int ks_cache_parse_size(const char *s, unsigned long long *out);

/* KSTUB_CACHE_SIZE, else the default; *origin says which (may be NULL). */
unsigned long long ks_cache_cap(const char **origin);

/* Marks the entry file NAME (relative to dirfd) used now. */
void ks_cache_touch(int dirfd, const char *name);

/* Removes least recently used entries, never the one of keep_hex (64 hex
 * digits), until the cache is under its cap. */
void ks_cache_trim(int dirfd, const char *keep_hex);

#endif
