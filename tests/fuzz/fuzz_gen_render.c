/*
 * fuzz_gen_render.c — libFuzzer target for the template engine (ks_render in
 * generator/render.c): a fuzzed template over a small fixed tree of values
 * (strings, flags, a list of two items with a nested list) must render or be
 * refused with an error, never crash, leak or recurse without bound.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emit/render.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ks_tnode *tree(void)
{
    ks_tnode *root = ks_tn_new(NULL);
    ks_tn_set(root, "name", "%s", "vec_add");
    ks_tn_set(root, "source", "%s", "a */ \"b\\\n.cu");
    ks_tn_flag(root, "yes", 1);
    ks_tn_flag(root, "no", 0);
    ks_tval *list = ks_tn_list(root, "params");
    for (int i = 0; i < 2; i++) {
        ks_tnode *p = ks_tn_push(list, root);
        ks_tn_set(p, "param", "p%d", i);
        ks_tn_flag(p, "last", i == 1);
        ks_tval *inner = ks_tn_list(p, "dims");
        ks_tn_set(ks_tn_push(inner, p), "dim", "%d", i);
    }
    ks_tn_list(root, "empty");
    return root;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ks_tnode *root;
    if (!root)
        root = tree();
    /* An exact-size copy, no terminator: the engine must respect len. */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    ks_buf out = {0};
    (void)ks_render("fuzz.in", text, size, NULL, root, &out);
    free(ks_buf_take(&out));
    free(text);
    return 0;
}
