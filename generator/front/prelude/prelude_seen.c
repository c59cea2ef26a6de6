/*
 * prelude_seen.c — a layer only where it pays.
 *
 * A layer (prelude_layer.c) costs more to build than the parse of its
 * headers saves when no second file starts with the same leading includes
 * (docs/performance.md: most files of real code bases start with their
 * own). So a file whose list no other input has started with is parsed on
 * the base prelude, its leading includes read as ordinary includes; once a
 * second input starts with the same list, both use a layer. The record of
 * who started with what is the cache directory's KS_PRELUDE_SEEN_NAME:
 * lines "KEY16 INPUT16\n" (16 hex digits of the list's key, 16 of the
 * SHA-256 of the input's real path), changed under an flock, so make -j's
 * concurrent runs lose nothing and never see half a line; past
 * SEEN_MAX bytes its older half goes. Not an entry (its name is not a
 * key's): eviction leaves it, --clear removes it. The record is a hint:
 * output is the same either way (make check-pch), only the time differs.
 *
 * KSTUB_LAYERS picks the rule, for measuring (bench/project.py): "seen"
 * (the default, above), "always" (a layer for every list, as before issue
 * 38) or "never" (every file on the base prelude).
 */
#include "front/prelude/prelude_seen.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "front/prelude/cachecmd.h"
#include "sha256.h"

#define SEEN_LINE 34            /* 16 hex, a space, 16 hex, a newline */
#define SEEN_MAX (256 * 1024)   /* about 7,700 lists */

static void hex16(const unsigned char *b, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 8; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[16] = '\0';
}

int ks_prelude_layer_pays(int dirfd, const unsigned char *key, const char *input)
{
    const char *rule = getenv("KSTUB_LAYERS");
    if (rule && strcmp(rule, "always") == 0)
        return 1;
    int never = rule && strcmp(rule, "never") == 0;

    char k[17], who[17], real[PATH_MAX];
    hex16(key, k);
    unsigned char h[32];
    const char *path = realpath(input, real) ? real : input;
    ks__sha256((const unsigned char *)path, strlen(path), h);
    hex16(h, who);

    int fd = openat(dirfd, KS_PRELUDE_SEEN_NAME, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return !never;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() || flock(fd, LOCK_EX) != 0 ||
        fstat(fd, &sb) != 0) {
        close(fd);
        return !never;
    }
    size_t size = sb.st_size > 2 * SEEN_MAX ? 2 * SEEN_MAX : (size_t)sb.st_size;
    char *b = malloc(size + SEEN_LINE + 1);
    ssize_t n = b ? pread(fd, b, size, 0) : -1;
    if (n < 0) {
        free(b);
        close(fd);
        return !never;
    }
    size = (size_t)n - (size_t)n % SEEN_LINE;     /* whole lines only */
    int mine = 0, other = 0;
    for (size_t at = 0; at < size; at += SEEN_LINE)
        if (memcmp(b + at, k, 16) == 0)
            *(memcmp(b + at + 17, who, 16) == 0 ? &mine : &other) = 1;
    if (!mine) {
        /* Recorded once per input; the older half goes when it is full. */
        size_t from = size + SEEN_LINE > SEEN_MAX ? (size / 2) - (size / 2) % SEEN_LINE : 0;
        snprintf(b + size, SEEN_LINE + 1, "%s %s\n", k, who);
        size += SEEN_LINE;
        int wrote;
        if (from) {
            wrote = pwrite(fd, b + from, size - from, 0) == (ssize_t)(size - from);
            if (wrote)
                (void)ftruncate(fd, (off_t)(size - from));
        } else {
            wrote = pwrite(fd, b + size - SEEN_LINE, SEEN_LINE, (off_t)(size - SEEN_LINE)) == SEEN_LINE;
            if (wrote)
                (void)ftruncate(fd, (off_t)size);
        }
        /* A full disk (or a file size limit): leave no empty record behind. */
        if (!wrote && size == SEEN_LINE)
            unlinkat(dirfd, KS_PRELUDE_SEEN_NAME, 0);
    }
    free(b);
    close(fd);
    return other && !never;
}
