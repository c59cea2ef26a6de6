/*
 * fuzz_gen_depfile.c — libFuzzer target for the depfile writer's quoting
 * (generator/depfile.c): the input is split at NUL bytes into paths (first a
 * target, then the input and its headers); ks_make_quote and ks_depfile_text
 * must never crash, and a quoted path must read back, through make's rules,
 * as the path it came from.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/depfile.h"
#include "base/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Undoes make's quoting of a word in a rule (the inverse of ks_make_quote for
 * what it accepts): "$$" is '$'; backslashes before a blank, '#' or ':' are
 * halved and the last escapes it; other backslashes are literal. */
static char *unquote(const char *q)
{
    ks_buf b = {0};
    ks_buf_put(&b, "", 0);
    for (const char *p = q; *p; p++) {
        if (p[0] == '$' && p[1] == '$') {
            ks_buf_put(&b, p++, 1);
        } else if (*p == '\\') {
            const char *e = p;
            while (*e == '\\')
                e++;
            size_t n = (size_t)(e - p);
            if (*e == ' ' || *e == '\t' || *e == '#' || *e == ':') {
                for (size_t i = 0; i < n / 2; i++)
                    ks_buf_puts(&b, "\\");
                ks_buf_put(&b, e, 1);
                p = e;
            } else {
                ks_buf_put(&b, p, n);
                p = e - 1;
            }
        } else {
            ks_buf_put(&b, p, 1);
        }
    }
    return ks_buf_take(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    ks_deps d;
    memset(&d, 0, sizeof d);
    const char *target = "out.kstub.c";
    size_t start = 0;
    for (size_t i = 0; i <= size; i++) {
        if (i < size && text[i])
            continue;
        const char *path = text + start;
        if (*path) {
            char *q = ks_make_quote(path);
            if (q) {
                /* Same path back, and no raw newline in the rule. */
                char *back = unquote(q);
                if (strcmp(back, path) != 0 || strchr(q, '\n'))
                    abort();
                free(back);
                free(q);
                if (start == 0)
                    target = path;
                else
                    ks_deps_add(&d, path);
            }
        }
        start = i + 1;
    }
    const char *sys[] = {"/usr/include", "/usr/local/cuda/include/"};
    char *t = ks_make_quote(target);
    const char *targets[] = {t ? t : "out.kstub.c"};
    for (int skip = 0; skip < 2; skip++)
        free(ks_depfile_text(&d, targets, 1, skip, sys, 2));
    free(t);
    ks_deps_free(&d);
    free(text);
    return 0;
}
