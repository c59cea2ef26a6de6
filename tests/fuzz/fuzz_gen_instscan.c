/*
 * fuzz_gen_instscan.c — libFuzzer target for the bytes-only test of whether
 * a header may write an explicit instantiation (ks_text_may_instantiate in
 * generator/base/instscan.c): any text, of any length, no terminator
 * (comments, literals and raw strings left open, splices at the end), must
 * be answered 0 or 1, never read out of bounds or leak. What the answers
 * are is check-front's text_scan_finds_what_may_instantiate.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/instscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An exact-size copy, no terminator: the scan must respect n. */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    int may = ks_text_may_instantiate(text, size);
    if (may != 0 && may != 1)
        abort();
    free(text);
    return 0;
}
