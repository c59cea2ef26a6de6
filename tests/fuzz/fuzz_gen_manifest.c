/*
 * fuzz_gen_manifest.c — libFuzzer target for the manifest reader
 * (ks_manifest_parse in generator/manifest.c, through jansson): any text must either parse or be
 * refused with an error, never crash or leak; what parsed is freed again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "drift/manifest.h"
#include "base/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    ks_sigs sigs;
    memset(&sigs, 0, sizeof sigs);
    if (ks_manifest_parse(text, "fuzz.json", &sigs) == 0)
        ks_sigs_free(&sigs);
    free(text);
    return 0;
}
