/*
 * fuzz_image_kind.c — libFuzzer target for the image-kind sniffing
 * (runtime/image_kind.h, shared by the runtime and the generator): it must
 * never read outside the buffer (the input is copied to an exact-size heap
 * block, so ASan sees one byte too far), and it must agree with a
 * deliberately naive reference written from the rules in the header.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "image_kind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int has(const unsigned char *p, size_t n, const char *s)
{
    size_t m = strlen(s);
    for (size_t i = 0; i + m <= n; i++)
        if (memcmp(p + i, s, m) == 0)
            return 1;
    return 0;
}

static ks__bytes_kind reference(const unsigned char *p, size_t n)
{
    if (n == 0)
        return KS__BYTES_EMPTY;
    if (n >= 4 && memcmp(p, "\x50\xed\x55\xba", 4) == 0)
        return KS__BYTES_FATBIN;
    if (n >= 4 && memcmp(p, "\x7f" "ELF", 4) == 0)
        return KS__BYTES_CUBIN;
    if (memchr(p, 0, n) != NULL)
        return KS__BYTES_BINARY;
    return has(p, n, ".entry") && (has(p, n, ".version") || has(p, n, ".target")) ? KS__BYTES_PTX
                                                                                   : KS__BYTES_TEXT;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *copy = malloc(size ? size : 1);
    if (copy == NULL)
        return 0;
    if (size)
        memcpy(copy, data, size);
    ks__bytes_kind got = ks__image_kind(size ? copy : NULL, size);
    if (got != reference(copy, size))
        abort();
    /* Every prefix too: the length, not a terminator, bounds the reads. */
    for (size_t n = size > 64 ? size - 64 : 0; n < size; n++)
        if (ks__image_kind(copy, n) != reference(copy, n))
            abort();
    free(copy);
    return 0;
}
