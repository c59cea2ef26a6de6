/*
 * fault_inject.c — fault injection for tests/generator/base/check_base.c: an LD_PRELOAD
 * library that makes one file-system call of the process fail, so the test
 * can check what kstub leaves behind when that call fails.
 *
 *   KSTUB_FAULT=CALL:N    the Nth call (1-based) of CALL fails with EIO;
 *                         CALL is mkdir, mkstemp, fclose, chmod, link or rename
 *   KSTUB_FAULT_DIR=DIR   only calls on paths under DIR count (what libclang
 *                         and the loader do elsewhere is left alone)
 *   KSTUB_FAULT_FIRED=F   created when the fault fires, so the test knows
 *                         that N was within the calls made
 *
 * Only the chosen call fails, once: whatever kstub does to recover (putting
 * back a replaced output, removing a temporary file) runs normally.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int mkdir(const char *path, mode_t mode);
int mkstemp(char *tmpl);
int fclose(FILE *f);
int chmod(const char *path, mode_t mode);
int link(const char *from, const char *to);
int rename(const char *from, const char *to);

/* 1 when this call of `call` on `path` is the one to fail. */
static int should_fail(const char *call, const char *path)
{
    static int seen;   /* calls of the chosen kind counted so far */
    const char *spec = getenv("KSTUB_FAULT");
    const char *dir = getenv("KSTUB_FAULT_DIR");
    size_t len = strlen(call);
    if (!spec || !dir || !path || strncmp(spec, call, len) != 0 || spec[len] != ':')
        return 0;
    /* relative paths: kstub runs in DIR (the test's cd) */
    if (path[0] == '/' && strncmp(path, dir, strlen(dir)) != 0)
        return 0;
    if (++seen != atoi(spec + len + 1))
        return 0;
    const char *fired = getenv("KSTUB_FAULT_FIRED");
    if (fired) {
        int saved = errno;
        int fd = open(fired, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0)
            close(fd);
        errno = saved;
    }
    errno = EIO;
    return 1;
}

/* The next definition of name (libc's) in real, through memcpy: ISO C has
 * no cast from dlsym's object pointer to a function pointer. */
#define NEXT(real, name)                                                                  \
    do {                                                                                  \
        void *sym_ = dlsym(RTLD_NEXT, #name);                                             \
        memcpy(&(real), &sym_, sizeof(real));                                             \
    } while (0)

int mkdir(const char *path, mode_t mode)
{
    int (*real)(const char *, mode_t);
    NEXT(real, mkdir);
    return should_fail("mkdir", path) ? -1 : real(path, mode);
}

int mkstemp(char *tmpl)
{
    int (*real)(char *);
    NEXT(real, mkstemp);
    return should_fail("mkstemp", tmpl) ? -1 : real(tmpl);
}

/* A failed fclose still closes the stream (as a failed write-back does). */
int fclose(FILE *f)
{
    char link_path[64], path[4096];
    ssize_t n = -1;
    if (f) {
        snprintf(link_path, sizeof link_path, "/proc/self/fd/%d", fileno(f));
        n = readlink(link_path, path, sizeof path - 1);
    }
    int fail = 0;
    /* only streams that write: a failed close of a read is nothing to recover from */
    if (n > 0 && (fcntl(fileno(f), F_GETFL) & O_ACCMODE) != O_RDONLY) {
        path[n] = '\0';
        fail = should_fail("fclose", path);
    }
    int (*real)(FILE *);
    NEXT(real, fclose);
    int rc = real(f);
    if (fail) {
        errno = EIO;
        return EOF;
    }
    return rc;
}

int chmod(const char *path, mode_t mode)
{
    int (*real)(const char *, mode_t);
    NEXT(real, chmod);
    return should_fail("chmod", path) ? -1 : real(path, mode);
}

int link(const char *from, const char *to)
{
    int (*real)(const char *, const char *);
    NEXT(real, link);
    return should_fail("link", to) ? -1 : real(from, to);
}

int rename(const char *from, const char *to)
{
    int (*real)(const char *, const char *);
    NEXT(real, rename);
    return should_fail("rename", to) ? -1 : real(from, to);
}
