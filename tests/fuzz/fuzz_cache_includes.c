/*
 * fuzz_cache_includes.c — libFuzzer target for the #include scanner that
 * feeds the NVRTC cache key (runtime/includes.c). The input is split at the
 * first NUL into a source and a header, the header is written as "h.h" in
 * a scratch include directory, and the source is keyed twice: the key must
 * be deterministic, and the scan must not crash, leak or hang whatever the
 * text (unterminated comments and names, splices, deep or cyclic includes).
 *
 * And a metamorphic check (issue 19 #2): when the source's key follows
 * h.h (a changed h.h changes it), the same source after white space that
 * NVRTC skips before a directive (a comment, one spanning lines, a form
 * feed, a vertical tab) must follow h.h too, or be uncacheable. The old
 * scanner missed '/ * c * / #include "h.h"' and served a stale binary.
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

static void write_header(const uint8_t *text, size_t n, const char *extra)
{
    FILE *f = fopen("h.h", "wb");
    if (f == NULL)
        abort();
    fwrite(text, 1, n, f);
    fputs(extra, f);
    fclose(f);
}

static int key(const char *src, unsigned char k[32])
{
    char opt[80];
    snprintf(opt, sizeof opt, "-I%s", dir);
    char *opts[] = {opt};
    ks__sha256_ctx s;
    ks__sha256_init(&s);
    int r = ks__includes_hash(&s, src, opts, 1);
    ks__sha256_final(&s, k);
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (dir[0] == '\0') {
        snprintf(dir, sizeof dir, "/tmp/kstub-fuzz-inc-XXXXXX");
        if (mkdtemp(dir) == NULL || chdir(dir) != 0)
            abort();
    }
    const uint8_t *nul = memchr(data, 0, size);
    size_t srclen = nul ? (size_t)(nul - data) : size;
    const uint8_t *hdr = nul ? nul + 1 : data + size;
    size_t hdrlen = nul ? size - srclen - 1 : 0;
    static const char *const blanks[] = {"/* c */ ", "/* a\n b */ ", "\f", "\v"};
    enum { PRE = 16 };
    char *src = malloc(PRE + srclen + 1);
    if (src == NULL)
        return 0;
    memcpy(src + PRE, data, srclen);
    src[PRE + srclen] = '\0';

    unsigned char k1[32], k2[32], kb[32];
    write_header(hdr, hdrlen, "");
    int r1 = key(src + PRE, k1), r2 = key(src + PRE, k2);
    if (r1 != r2 || (r1 == 0 && memcmp(k1, k2, 32) != 0))
        abort();
    write_header(hdr, hdrlen, "\n#define KSTUB_FUZZ_CHANGED 1\n");
    int rb = key(src + PRE, kb);
    if (r1 == 0 && rb == 0 && memcmp(k1, kb, 32) != 0) {       /* the source follows h.h */
        for (size_t i = 0; i < sizeof blanks / sizeof *blanks; i++) {
            size_t n = strlen(blanks[i]);
            char *s = src + PRE - n;
            memcpy(s, blanks[i], n);
            unsigned char ka[32], kc[32];
            write_header(hdr, hdrlen, "");
            int ra = key(s, ka);
            write_header(hdr, hdrlen, "\n#define KSTUB_FUZZ_CHANGED 1\n");
            int rc = key(s, kc);
            if (ra == 0 && rc == 0 && memcmp(ka, kc, 32) == 0) {
                fprintf(stderr, "after %s: h.h is no longer followed\n", i < 2 ? "a comment" : "a blank");
                abort();
            }
        }
    }
    free(src);
    return 0;
}
