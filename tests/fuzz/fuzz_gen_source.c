/*
 * fuzz_gen_source.c — libFuzzer target for the raw .cu scanner
 * (generator/source.c): scan, list explicit instantiations and kstub:
 * directives, map offsets to positions, ask whether a body follows at
 * every token and read the leading #include lines (the prelude cache's), on an exact-size copy of the input (no terminator), so ASan
 * sees any read one byte too far.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <clang-c/Index.h>

#include "front.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int any_name(const char *name, size_t n)
{
    return n > 0 && name[0] != 'x';   /* a stop now and then */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    ks_source src;
    memset(&src, 0, sizeof src);
    ks_source_scan(&src, text, size);
    for (size_t i = 0; i < src.ntoks; i++) {
        if (src.toks[i].start > src.toks[i].end || src.toks[i].end > size)
            abort();
        if (i < 64)
            (void)ks_source_body_follows(text, size, src.toks[i].start);
    }
    (void)ks_source_body_follows(text, size, size);
    unsigned line, col;
    ks_source_position(&src, size, &line, &col);
    ks_explicit_inst *in = NULL;
    size_t n = ks_source_instantiations(&src, &in);
    ks_explicit_inst_free(in, n);
    ks_class_inst *ci = NULL;
    n = ks_source_class_instantiations(&src, &ci);
    for (size_t i = 0; i < n; i++)
        if (ci[i].start > ci[i].end || ci[i].end > size)
            abort();
    ks_class_inst_free(ci, n);
    ks_directive *d = NULL;
    n = ks_source_directives(&src, &d);
    ks_directive_free(d, n);
    char **names = NULL;
    n = ks_source_leading_includes(text, size, any_name, &names);
    for (size_t i = 0; i < n; i++) {
        if (!names[i] || strlen(names[i]) >= size)
            abort();
        free(names[i]);
    }
    free(names);
    ks_source_free(&src);
    free(text);
    return 0;
}
