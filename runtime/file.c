/*
 * file.c — finding and reading an image file at run time.
 *
 * The rule (also in kstub.h): a name with a '/' is opened as given; a bare
 * name is looked for in each directory of KSTUB_IMAGE_PATH (colon-separated),
 * then in the directory of the running executable. An image with no data
 * and no file set is looked for as <stem>.fatbin, <stem>.cubin, <stem>.ptx,
 * stem being its source's base name without ".cu". The kind is told by the
 * content's magic, else by the name (".cu"/".cuh": source; other: PTX).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image_kind.h"
#include "internal.h"

#define KS__IMAGE_PATH_ENV "KSTUB_IMAGE_PATH"
#define KS__MAX_IMAGE_BYTES ((size_t)1 << 31)

/* Read all of \p path; ENOENT leaves the error unset so the search goes on.
 * Only a regular file is read: a FIFO under an image's name must not block
 * the process (and the load lock) forever (*err = KS__NOT_REGULAR). */
static int read_all(const char *path, void **bytes, size_t *n, int *err)
{
    int fd = ks__open_regular(AT_FDCWD, path, 0, NULL);
    if (fd < 0) {
        *err = fd == KS__NOT_REGULAR ? KS__NOT_REGULAR : errno;
        return 0;
    }
    FILE *f = fdopen(fd, "rb");
    if (f == NULL) {
        *err = errno;
        close(fd);
        return 0;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1);
    while (buf != NULL) {
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap)
            break;
        if (cap >= KS__MAX_IMAGE_BYTES) {
            free(buf);
            buf = NULL;
            errno = EFBIG;
            break;
        }
        char *bigger = realloc(buf, 2 * cap + 1);
        if (bigger == NULL) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int bad = buf == NULL || ferror(f);
    *err = buf == NULL ? (errno ? errno : ENOMEM) : EIO;
    fclose(f);
    if (bad) {
        free(buf);
        return 0;
    }
    buf[len] = '\0';            /* PTX and source are handed on as C strings */
    *bytes = buf;
    *n = len;
    return 1;
}

static const char *why(int err)
{
    return err == KS__NOT_REGULAR ? "not a regular file" : strerror(err);
}

static ks_image_kind kind_of(const unsigned char *p, size_t n, const char *path)
{
    switch (ks__image_kind(p, n)) {
    case KS__BYTES_CUBIN:
        return KS_IMAGE_CUBIN;
    case KS__BYTES_FATBIN:
        return KS_IMAGE_FATBIN;
    default:
        break;
    }
    const char *dot = strrchr(path, '.');
    if (dot && (strcmp(dot, ".cu") == 0 || strcmp(dot, ".cuh") == 0))
        return KS_IMAGE_SOURCE;
    return KS_IMAGE_PTX;
}

/* The running executable's directory, or "" when /proc does not say. */
static void exe_dir(char *dir, size_t cap)
{
    ssize_t len = readlink("/proc/self/exe", dir, cap - 1);
    dir[len > 0 ? len : 0] = '\0';
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        dir[0] = '\0';
}

ks_status ks__file_read(const ks_image *img, const char *name, const char *kernel,
                        void **bytes, size_t *n, char **path_out, ks_image_kind *kind)
{
    const char *src = img->source ? img->source : "(unnamed)";
    char tried[512] = "";
    size_t tried_len = 0;
    int err = ENOENT;
    char path[PATH_MAX];

    if (name != NULL && strchr(name, '/') != NULL) {
        if (!read_all(name, bytes, n, &err))
            return ks__error(KS_ERR_IO, kernel, "cannot read the image file '%s' of '%s': %s",
                             name, src, why(err));
        snprintf(path, sizeof path, "%s", name);
        goto found;
    }

    /* The candidate names: the one given, or the source's stem with each extension. */
    char stem[256];
    const char *names[3];
    char buf[3][300];
    unsigned nnames = 0;
    if (name != NULL) {
        names[nnames++] = name;
    } else {
        const char *base = strrchr(src, '/');
        base = base ? base + 1 : src;
        snprintf(stem, sizeof stem, "%s", base);
        size_t len = strlen(stem);
        if (len > 3 && strcmp(stem + len - 3, ".cu") == 0)
            stem[len - 3] = '\0';
        static const char *const ext[] = {".fatbin", ".cubin", ".ptx"};
        for (unsigned i = 0; i < 3; i++) {
            snprintf(buf[i], sizeof buf[i], "%s%s", stem, ext[i]);
            names[nnames++] = buf[i];
        }
    }

    const char *env = ks__getenv(KS__IMAGE_PATH_ENV);
    char exe[PATH_MAX];
    exe_dir(exe, sizeof exe);
    /* Each directory of the search path, then the executable's. */
    const char *dirs = env ? env : "";
    for (int pass = 0; pass < 2; pass++) {
        const char *p = pass == 0 ? dirs : exe;
        while (pass == 1 ? p != NULL : *p != '\0') {
            size_t len = pass == 1 ? strlen(p) : strcspn(p, ":");
            if (len > 0) {
                for (unsigned i = 0; i < nnames; i++) {
                    snprintf(path, sizeof path, "%.*s/%s", (int)len, p, names[i]);
                    if (read_all(path, bytes, n, &err))
                        goto found;
                    if (err != ENOENT)
                        return ks__error(KS_ERR_IO, kernel, "cannot read the image file '%s' of '%s': %s",
                                         path, src, why(err));
                    if (tried_len < sizeof tried)
                        tried_len += (size_t)snprintf(tried + tried_len, sizeof tried - tried_len,
                                                      "%s%s", tried_len ? ", " : "", path);
                }
            }
            if (pass == 1)
                p = NULL;
            else
                p += len + (p[len] == ':');
        }
    }
    if (name == NULL)
        return ks__error(KS_ERR_INVALID_IMAGE, kernel,
                         "the image of '%s' has no embedded data and no file was found "
                         "(set KSTUB_IMAGE_PATH or call ks_image_set_file); tried: %s",
                         src, tried_len ? tried : "nothing (no directory to search)");
    return ks__error(KS_ERR_IO, kernel, "the image file '%s' of '%s' was not found; tried: %s",
                     name, src, tried_len ? tried : "nothing (no directory to search)");

found:
    *kind = kind_of(*bytes, *n, path);
    if (*kind == KS_IMAGE_PTX || *kind == KS_IMAGE_SOURCE) {
        ks__bytes_kind text = ks__image_kind(*bytes, *n);
        if (text != KS__BYTES_PTX && text != KS__BYTES_TEXT) {
            free(*bytes);
            *bytes = NULL;
            return ks__error(KS_ERR_INVALID_IMAGE, kernel,
                             "the image file '%s' of '%s' is neither a cubin, a fatbin nor text",
                             path, src);
        }
        (*n)++;                 /* count the NUL, as embedded PTX does */
    }
    *path_out = strdup(path);
    if (*path_out == NULL) {
        free(*bytes);
        *bytes = NULL;
        return ks__error(KS_ERR_NO_MEMORY, kernel, "out of memory reading '%s'", path);
    }
    return KS_OK;
}
