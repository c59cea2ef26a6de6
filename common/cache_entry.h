/*
 * cache_entry.h — one entry of a kstub cache directory, for both caches:
 * libkstub's NVRTC images (cache.c, KEY.nvrtc) and the generator's
 * precompiled prelude (generator/pch.c, KEY.prelude; compiled into kstub
 * linked from common/). An entry file is a header and a payload:
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

#endif /* KS_CACHE_ENTRY_H */
