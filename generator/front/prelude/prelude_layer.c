/*
 * prelude_layer.c — layers: a PCH of what a file's leading includes add,
 * chained on the base prelude (pch.c's helper).
 *
 * A file's leading includes make a layer, not a whole prelude: a PCH
 * chained on the base prelude (the one without leading includes, which a
 * file with none uses as it is), holding only what those headers add. The
 * CUDA headers are then precompiled once for a project, however many lists
 * of leading headers its files start with: a layer takes 0.2-0.3 s to
 * build where a whole prelude takes 1.5 s (docs/performance.md).
 *
 * clang records the base in the layer by the path it was loaded from and
 * opens it by that path again when the layer is used. That path is
 * "/proc/self/fd/1000/NAME": the verified cache directory's descriptor,
 * pinned at 1000 in the process that builds the layer and in each that
 * uses it, so the name is looked up in the directory that was checked (as
 * every entry is), never through its path again. Where 1000 is taken by
 * something else, or beyond the process's limit, files get whole preludes
 * as before. The layer's entry names its base's PCH and that file's size and
 * modification time: a base rebuilt or replaced since makes the layer a
 * miss, and it is built again on the base now in place. Its file list is
 * the base's followed by its own, so depfiles and the names an -I or -D is
 * checked against cover both; it stamps only its own headers (the base,
 * looked up first, checks the stamps of its).
 */
#include "base/util.h"
#include "front/prelude/prelude.h"
#include "front/prelude/prelude_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The cache directory at KS__PRELUDE_BASE_DIR_FD: 0, or -1 when that descriptor is
 * another file's or cannot be had. */
int ks__prelude_pin_dir(int dirfd)
{
    struct stat a, b;
    if (fstat(dirfd, &a) != 0)
        return -1;
    if (fcntl(KS__PRELUDE_BASE_DIR_FD, F_GETFD) != -1)
        return fstat(KS__PRELUDE_BASE_DIR_FD, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino ? 0 : -1;
    if (errno != EBADF)
        return -1;
    return dup3(dirfd, KS__PRELUDE_BASE_DIR_FD, O_CLOEXEC) == KS__PRELUDE_BASE_DIR_FD ? 0 : -1;
}

/* The open base PCH's stamp as clang checks an imported PCH: its size and
 * modification time (its bytes are the checksum its name holds, verified
 * when the base is looked up). A copy that keeps times (cp -a, a restored
 * CI cache) keeps its layers. */
static int fd_stamp(int fd, char *out, size_t cap)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return -1;
    snprintf(out, cap, "%lld %lld.%09ld", (long long)sb.st_size, (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec);
    return 0;
}

/* The line a layer's entry records its base by: "base NAME STAMP". */
char *ks__prelude_base_line(const ks_prelude *p)
{
    char st[160];
    if (!p->base || !p->base->pch_name || fd_stamp(p->base->fd, st, sizeof st) != 0)
        return NULL;
    return ks_xasprintf("base %s %s", p->base->pch_name, st);
}

/* The entry's base, if any, is p's base as it is now: 0, or -1 with *why. */
int ks__prelude_check_base(const ks_prelude *p, const char *payload, const char **why)
{
    const char *at = strstr(payload, "\nbase ");
    if (!p->base) {
        if (at)
            *why = "the entry is a layer where a whole prelude is wanted";
        return at ? -1 : 0;
    }
    char *want = ks__prelude_base_line(p);
    size_t n = want ? strlen(want) : 0;
    int ok = want && at && strncmp(at + 1, want, n) == 0 && at[1 + n] == '\n';
    free(want);
    if (!ok)
        *why = "the base prelude the layer was built on has been replaced";
    return ok ? 0 : -1;
}
