/*
 * cache_entry.h — one entry of a kstub cache directory, for both caches:
 * libkstub's NVRTC images (cache.c, KEY.nvrtc) and the generator's
 * precompiled prelude (generator/front/prelude/pch.c, KEY.prelude); both link it
 * from common/. An entry file is a header and a payload:
 *
 *     magic[8]  key[32]  payload length[8, little-endian]  SHA-256(payload)[32]  payload
 *
 * Each cache has its own magic ("KSTUBNV1", "KSTUBPC1"), which it changes
 * when its payload's meaning does. An entry is written to a temporary file
 * in the same directory and renamed, so a reader sees a whole entry or none;
 * still, a reader checks every entry (a regular file of this user that no
 * one else can write, the magic, the key, the length, the hash) and treats
 * one that fails as absent. The directory is chosen by one rule (below) and
 * opened once as trusted (safefile.c); entries are opened relative to its
 * descriptor, never by path again.
 */
#ifndef KS_CACHE_ENTRY_H
#define KS_CACHE_ENTRY_H

#include <stddef.h>

/* Bytes before an entry's payload. */
#define KS__ENTRY_HEADER_BYTES (8 + 32 + 8 + 32)

/*
 * The cache directory's path: \p explicit_dir when set and not empty (the
 * caller's own setting, named \p explicit_origin), else $KSTUB_CACHE_DIR,
 * else $XDG_CACHE_HOME/kstub (absolute values only, as the XDG spec says),
 * else $HOME/.cache/kstub. Written into \p path; returns its length (>=
 * \p cap: too long, and cut short) with *origin naming where it came from,
 * or -1 when none of them is set.
 */
int ks__cache_dir_path(const char *explicit_dir, const char *explicit_origin, char *path, size_t cap,
                       const char **origin);

/* Whether KSTUB_CACHE=0 turns the caches off. */
int ks__cache_env_off(void);

/* The payload's length if the \p size bytes at \p buf are a whole, intact
 * entry with \p magic (8 bytes) for \p key, else -1. */
long long ks__entry_check(const unsigned char *buf, size_t size, const char *magic,
                          const unsigned char key[32]);

/*
 * Reads the entry \p name (relative to \p dirfd) and checks it as above, at
 * most \p max bytes in all. The payload (malloc'd, with a NUL after its
 * \p *n bytes), or NULL with *why (a constant string) saying why not.
 */
void *ks__entry_read(int dirfd, const char *name, const char *magic, const unsigned char key[32],
                     size_t max, size_t *n, const char **why);

/* Writes an entry under \p name: to a temporary file, renamed into place.
 * 0, or -1 with nothing left behind. */
int ks__entry_write(int dirfd, const char *name, const char *magic, const unsigned char key[32],
                    const void *payload, size_t n);

/*
 * A temporary name beside the entry \p name: ".<its first 16 characters>.
 * <pid>.<counter>.<ns><suffix>", so that `kstub cache` knows whose it is.
 * ks__entry_tmp_open also creates it (O_EXCL, O_NOFOLLOW, mode 0600, a few
 * tries): the fd, or -1 with errno.
 */
void ks__entry_tmp_name(const char *name, const char *suffix, char *tmp, size_t cap);
int ks__entry_tmp_open(int dirfd, const char *name, const char *suffix, char *tmp, size_t cap);

/* write(2) until all \p n bytes are written: 0, or -1 with errno. */
int ks__write_all(int fd, const void *data, size_t n);

/*
 * ---- the directory: entries, leftovers, the cap, least-recently-used trimming ----
 *
 * Both caches share one directory and one rule for its size. A unit is one
 * entry (every file named KEY.*: KEY.prelude, KEY.SUM.pch, KEY.lock,
 * KEY.nvrtc, KEY.result; its last use the mtime of its KEY.prelude,
 * KEY.nvrtc or KEY.result, which readers touch on every hit) or one temporary (ks__entry_tmp_name's
 * ".<16 hex>.<pid>.<n>.<ns>…tmp", or the "….tmp.temp-stream-XXXXXX" LLVM
 * writes beside it). Nothing else in the directory is counted,
 * touched or removed. Every operation reads the directory once, sorts, and
 * removes by the names it read: one pass plus a sort, whatever the count.
 *
 * Leftovers: an entry with no KEY.prelude or KEY.nvrtc whose files are all
 * KS__ORPHAN_AGE_S old (a builder writes the PCH a moment before its
 * entry), and a temporary last written KS__TMP_AGE_S ago (or dated as far
 * in the future) whose writer's pid is no running process here. Nothing younger is ever removed, so a live
 * writer's temporary survives every operation.
 */
#define KS__ORPHAN_AGE_S 60
#define KS__TMP_AGE_S 600

typedef struct ks__cache_file {
    char *name;                  /* malloc'd */
    unsigned long long bytes;
    struct timespec mtime;
    int gone;                    /* removed by ks__cache_unit_remove */
} ks__cache_file;

typedef struct ks__cache_unit {
    const char *name;            /* its first file's name: KEY.… (the key is its first 64
                                    characters) or the temporary's */
    size_t first, nfiles;        /* its files: files[first .. first + nfiles), sorted by name */
    unsigned long long bytes;    /* 0 (and nfiles 0) once removed */
    struct timespec used;        /* the index's mtime, else the newest file's */
    unsigned nprelude, nnvrtc;   /* index files: KEY.prelude, KEY.nvrtc */
    unsigned nresult;            /* KEY.result, KEY.trial: the generator's result and host trials' caches */
    int tmp;                     /* a temporary, not an entry */
    int leftover;                /* a leftover old enough to remove (above) */
    int layer;                   /* set by the caller before ks__cache_evict: a prelude
                                    layer, evicted before every other entry */
} ks__cache_unit;

typedef struct ks__cache_listing {
    ks__cache_file *files;
    size_t nfiles;
    ks__cache_unit *units;
    size_t n;
    unsigned long long total;    /* bytes of every unit still there */
    size_t failed;               /* units ks__cache_unit_remove could not remove whole */
    int fail_errno;              /* the first such failure's errno */
} ks__cache_listing;

/* Reads the directory once: 0, or -1 (errno) with nothing to free. */
int ks__cache_list(int dirfd, ks__cache_listing *l);
void ks__cache_listing_free(ks__cache_listing *l);

/* Removes every file of the unit, its index first (a concurrent reader then
 * misses; one that holds the PCH open keeps reading it). 0; or -1 with
 * errno when a file could not be removed (a read-only directory): the
 * files that went are subtracted from the totals, l->failed counts the
 * unit and l->fail_errno keeps the first errno. */
int ks__cache_unit_remove(int dirfd, ks__cache_listing *l, ks__cache_unit *u);

/* Removes leftovers, then least recently used entries until total <= cap
 * (every unit marked layer before any other, each kind oldest first),
 * never the entry \p keep_hex (64 hex digits, or NULL) nor a temporary that is
 * no leftover. Sorts the units by use. How many units were removed; *freed
 * their bytes. */
size_t ks__cache_evict(int dirfd, ks__cache_listing *l, unsigned long long cap, const char *keep_hex,
                       unsigned long long *freed);

/* ks__cache_evict over a fresh listing when the total is over \p cap (0: no cap). */
size_t ks__cache_trim(int dirfd, unsigned long long cap, const char *keep_hex, unsigned long long *freed);

/*
 * A size: digits, then K, M or G (powers of 1024) or nothing; anything else
 * (a sign, a space, another suffix, a value past 2^64 - 1) is -1.
 */
int ks__cache_parse_size(const char *s, unsigned long long *out);

/* The default cap when KSTUB_CACHE_SIZE is unset or not a size. */
/* 2 GiB: all five public code bases of docs/performance.md's measurement
 * needed 46 preludes in 253 MiB (entries 0.03-23 MiB), which 256 MiB held
 * only by evicting one directory's prelude for another's; 2 GiB holds eight
 * times that. */
#define KS__CACHE_DEFAULT_CAP (2048ULL << 20)

/*
 * The cap: KSTUB_CACHE_SIZE (0 means none), else the default. *bad is set to
 * the variable's value when it is set but not a size (the caller reports it;
 * libkstub does not print), else to NULL.
 */
unsigned long long ks__cache_cap_env(const char **bad);

/*
 * Whose directory: kstub uses a cache directory that is its own, one that
 * holds KS__CACHE_TAG_NAME (the cache directory tag convention's file,
 * which backup tools also read) or one that holds nothing but what a kstub
 * cache writes (empty, new, or made by a kstub from before the tag), to
 * which it then adds the tag. Anything else (KSTUB_CACHE_DIR=/ or ~) is
 * refused: 0, or -1 with *why saying which file is not kstub's.
 */
#define KS__CACHE_TAG_NAME "CACHEDIR.TAG"
int ks__cache_dir_claim(int dirfd, char *why, size_t cap);

#endif /* KS_CACHE_ENTRY_H */
