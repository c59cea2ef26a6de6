/*
 * safefile.h — opening files and directories safely (safefile.c), and
 * reading the environment as a set-uid program must: shared by libkstub and
 * the generator (common/, linked into both).
 */
#ifndef KS_SAFEFILE_H
#define KS_SAFEFILE_H

#include <stddef.h>
#include <stdlib.h>

struct stat;

/* What ks__open_regular returns for something that is not a regular file. */
#define KS__NOT_REGULAR (-2)

/*
 * Open \p path (relative to \p dirfd, or AT_FDCWD) for reading, only if it is
 * a regular file (never blocking on a FIFO); with \p nofollow a final symlink
 * is refused. The fd; -1 (errno set); or KS__NOT_REGULAR. *st when non-NULL.
 */
int ks__open_regular(int dirfd, const char *path, int nofollow, struct stat *st);

/*
 * Open \p path to append to, created (mode 0644) when missing, as every
 * output of libkstub is opened: no final symlink followed, regular files
 * only (a FIFO or a device is refused without blocking), O_CLOEXEC. The fd;
 * -1 (errno set: ELOOP for a symlink); or KS__NOT_REGULAR.
 */
int ks__open_append(const char *path);

/* The same, opened to read and write, not appending (the trace, which it maps). */
int ks__open_update(const char *path);

/*
 * Open the directory \p path (created with mode 0700 when \p create) if only
 * this user can change what is in it: the fd, or -1 with the reason in \p why.
 */
int ks__dir_open_trusted(const char *path, int create, char *why, size_t cap);

/*
 * The environment, as a set-uid or set-gid program must read it: NULL there
 * (secure_getenv), so a caller cannot choose the libraries or paths it loads.
 */
static inline const char *ks__getenv(const char *name)
{
    return secure_getenv(name);
}

#endif /* KS_SAFEFILE_H */
