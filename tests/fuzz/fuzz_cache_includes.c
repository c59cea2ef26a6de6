/*
 * fuzz_cache_includes.c — libFuzzer target for the #include scanner that
 * feeds the NVRTC cache key (runtime/includes.c). The input is split at the
 * first NUL into a source and a header, the header is written as "h.h" in
 * a scratch include directory, and the source is keyed twice: the key must
 * be deterministic, and the scan must not crash, leak or hang whatever the
 * text (unterminated comments and names, splices, deep or cyclic includes).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "sha256.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (dir[0] == '\0') {
        snprintf(dir, sizeof dir, "/tmp/kstub-fuzz-inc-XXXXXX");
        if (mkdtemp(dir) == NULL || chdir(dir) != 0)
            abort();
    }
    const uint8_t *nul = memchr(data, 0, size);
    size_t srclen = nul ? (size_t)(nul - data) : size;
    char *src = malloc(srclen + 1);
    if (src == NULL)
        return 0;
    memcpy(src, data, srclen);
    src[srclen] = '\0';
    FILE *f = fopen("h.h", "wb");
    if (f == NULL)
        abort();
    if (nul)
        fwrite(nul + 1, 1, size - srclen - 1, f);
    fclose(f);

    char opt[80];
    snprintf(opt, sizeof opt, "-I%s", dir);
    char *opts[] = {opt};
    unsigned char k1[32], k2[32];
    ks__sha256_ctx s;
    ks__sha256_init(&s);
    int r1 = ks__includes_hash(&s, src, opts, 1);
    ks__sha256_final(&s, k1);
    ks__sha256_init(&s);
    int r2 = ks__includes_hash(&s, src, opts, 1);
    ks__sha256_final(&s, k2);
    if (r1 != r2 || (r1 == 0 && memcmp(k1, k2, 32) != 0))
        abort();
    free(src);
    return 0;
}
