/*
 * image_kind.h — what a buffer of kernel-image bytes is, told by its content:
 * the one place that knows the fatbin and ELF magic numbers and what PTX
 * text looks like. Used by the runtime (file.c, image.c) and by the
 * generator (image/image_entries.c), both from common/, so it needs nothing but the C
 * standard library and declares nothing with external linkage.
 *
 * Compiles as C99, C11 and C++ under -Wpedantic.
 */
#ifndef KS_IMAGE_KIND_H
#define KS_IMAGE_KIND_H

#include <stddef.h>

/* What ks__image_kind() found. */
typedef enum ks__bytes_kind {
    KS__BYTES_EMPTY = 0,   /* no bytes at all */
    KS__BYTES_FATBIN,      /* starts with the fatbin magic 0xBA55ED50 (bytes 50 ED 55 BA) */
    KS__BYTES_CUBIN,       /* starts with the ELF magic 7F 'E' 'L' 'F' */
    KS__BYTES_PTX,         /* text (no NUL byte) with ".entry" and ".version" or ".target" */
    KS__BYTES_TEXT,        /* other text (no NUL byte): CUDA source, or PTX without an entry */
    KS__BYTES_BINARY       /* anything else: not an image */
} ks__bytes_kind;

/* Whether the \p n bytes at \p p contain the string \p s (bounded: \p p need not be NUL-terminated). */
static inline int ks__bytes_contain(const unsigned char *p, size_t n, const char *s)
{
    size_t m = 0;
    while (s[m] != '\0')
        m++;
    for (size_t i = 0; m <= n && i <= n - m; i++) {
        size_t j = 0;
        while (j < m && p[i + j] == (unsigned char)s[j])
            j++;
        if (j == m)
            return 1;
    }
    return 0;
}

/*
 * The kind of the \p n bytes at \p p (p may be NULL when n is 0). Magic
 * numbers win; then text is any run of bytes without a NUL (pass n without
 * a closing NUL), and PTX is text that has an ".entry" and a ".version" or
 * ".target" directive. Telling CUDA source from PTX without an entry is the
 * caller's business (the runtime goes by the file name).
 */
static inline ks__bytes_kind ks__image_kind(const void *bytes, size_t n)
{
    const unsigned char *p = (const unsigned char *)bytes;
    if (p == NULL || n == 0)
        return KS__BYTES_EMPTY;
    if (n >= 4 && p[0] == 0x50 && p[1] == 0xED && p[2] == 0x55 && p[3] == 0xBA)
        return KS__BYTES_FATBIN;
    if (n >= 4 && p[0] == 0x7F && p[1] == 'E' && p[2] == 'L' && p[3] == 'F')
        return KS__BYTES_CUBIN;
    for (size_t i = 0; i < n; i++)
        if (p[i] == '\0')
            return KS__BYTES_BINARY;
    if (ks__bytes_contain(p, n, ".entry") &&
        (ks__bytes_contain(p, n, ".version") || ks__bytes_contain(p, n, ".target")))
        return KS__BYTES_PTX;
    return KS__BYTES_TEXT;
}

#endif /* KS_IMAGE_KIND_H */
