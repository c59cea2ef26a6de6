/*
 * safefile.c — opening files and directories the runtime reads code from
 * without being fooled or stalled:
 *
 *  - ks__open_regular: a regular file only. It opens with O_NONBLOCK, so a
 *    FIFO (or a device) under an image's or a cache entry's name returns at
 *    once instead of blocking the process (and the load lock) forever, and
 *    is refused after fstat.
 *  - ks__dir_open_trusted: a directory whose content only the user can
 *    change, checked by descriptor: every parent is owned by root or the
 *    user and is not group/other-writable unless sticky (as OpenSSH checks
 *    the directories above its key files), and the directory itself is the
 *    user's and writable by nobody else. It is walked component by
 *    component with O_NOFOLLOW from "/", so a parent renamed or replaced by
 *    a symlink after the check cannot redirect later opens: the caller
 *    opens entries relative to the returned descriptor (openat).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safefile.h"

/* The fd opened O_NONBLOCK, kept only if it is a regular file (and then
 * blocking again: I/O on a regular file never blocks anyway); else closed.
 * The fd; -1 (errno set); or KS__NOT_REGULAR. *st when non-NULL. */
static int keep_regular(int fd, struct stat *st)
{
    if (fd < 0)
        return -1;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return KS__NOT_REGULAR;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    if (st != NULL)
        *st = sb;
    return fd;
}

int ks__open_regular(int dirfd, const char *path, int nofollow, struct stat *st)
{
    return keep_regular(openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0)),
                        st);
}

int ks__open_append(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0 && errno == ENXIO)   /* a FIFO no one reads (or a device without one) */
        return KS__NOT_REGULAR;
    return keep_regular(fd, NULL);
}

int ks__open_update(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0 && errno == ENXIO)
        return KS__NOT_REGULAR;
    return keep_regular(fd, NULL);
}

static int refuse(char *why, size_t cap, int fd, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int refuse(char *why, size_t cap, int fd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    if (fd >= 0)
        close(fd);
    return -1;
}

/* mkdir -p with mode 0700 for what it creates (by path: what it made is checked after). */
static void make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        mkdir(path, 0700);
        *p = '/';
    }
    mkdir(path, 0700);
}

int ks__dir_open_trusted(const char *path, int create, char *why, size_t cap)
{
    size_t len = strlen(path);
    char abs[PATH_MAX], real[PATH_MAX];
    if (len == 0)
        return refuse(why, cap, -1, "the directory name is empty");
    if (len >= PATH_MAX)
        return refuse(why, cap, -1, "the directory name is %zu bytes long, more than PATH_MAX (%d)",
                      len, PATH_MAX);
    if (path[0] == '/') {
        memcpy(abs, path, len + 1);
    } else {
        if (getcwd(abs, sizeof abs) == NULL)
            return refuse(why, cap, -1, "cannot tell the working directory for '%s': %s", path, strerror(errno));
        size_t cwd = strlen(abs);
        if (cwd + 1 + len >= sizeof abs)
            return refuse(why, cap, -1, "the directory '%s' in '%s' is longer than PATH_MAX (%d)",
                          path, abs, PATH_MAX);
        abs[cwd] = '/';
        memcpy(abs + cwd + 1, path, len + 1);
    }
    if (create)
        make_dirs(abs);
    if (realpath(abs, real) == NULL)
        return refuse(why, cap, -1, "cannot open the directory '%s': %s", abs, strerror(errno));

    uid_t me = geteuid();
    int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return refuse(why, cap, -1, "cannot open '/': %s", strerror(errno));
    char *p = real;
    size_t done = 0;             /* bytes of real checked so far, for messages */
    for (;;) {
        while (*p == '/')
            p++;
        if (*p == '\0')
            break;
        /* fd is a parent of what comes next: it must keep others out. */
        struct stat sb;
        if (fstat(fd, &sb) != 0)
            return refuse(why, cap, fd, "cannot check '%.*s': %s", (int)(done ? done : 1), real,
                          strerror(errno));
        if (sb.st_uid != 0 && sb.st_uid != me)
            return refuse(why, cap, fd, "its parent '%.*s' belongs to uid %u, neither root nor you (uid %u)",
                          (int)(done ? done : 1), real, (unsigned)sb.st_uid, (unsigned)me);
        if ((sb.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (sb.st_mode & S_ISVTX) == 0)
            return refuse(why, cap, fd,
                          "its parent '%.*s' (mode %04o) is writable by others and not sticky: "
                          "they could replace what is below it",
                          (int)(done ? done : 1), real, (unsigned)(sb.st_mode & 07777));
        char *end = strchr(p, '/');
        if (end != NULL)
            *end = '\0';
        int next = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        if (end != NULL)
            *end = '/';
        done = (size_t)((end ? end : p + strlen(p)) - real);
        close(fd);
        if (next < 0)
            return refuse(why, cap, -1, "cannot open '%.*s' without following links: %s", (int)done, real,
                          strerror(e));
        fd = next;
        if (end == NULL)
            break;
        p = end;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return refuse(why, cap, fd, "cannot check '%s': %s", real, strerror(errno));
    if (sb.st_uid != me)
        return refuse(why, cap, fd, "'%s' belongs to uid %u, not to you (uid %u)", real,
                      (unsigned)sb.st_uid, (unsigned)me);
    if ((sb.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        return refuse(why, cap, fd, "'%s' (mode %04o) is writable by others", real,
                      (unsigned)(sb.st_mode & 07777));
    return fd;
}
