/*
 * fuzz_gen_image.c — libFuzzer target for the reader of an --embed image's
 * kernel entries and variables (generator/image_entries.c): a fatbin's
 * header and members, LZ4 blocks, a cubin's ELF section, symbol and string
 * tables, PTX .entry lines and .global/.const declarations. On an exact-size copy (ASan sees a read one byte too far),
 * it must list entries or mark members unreadable or corrupt, never crash,
 * leak or read outside the bytes; a member marked corrupt must say why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "image/image.h"
#include "base/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *bytes = malloc(size ? size : 1);
    if (!bytes)
        return 0;
    memcpy(bytes, data, size);
    ks_image_entries e;
    ks_image_entries_read(bytes, size, &e);
    for (size_t i = 0; i < e.nmembers; i++) {
        const ks_image_member *m = &e.members[i];
        if (!m->what || (!m->readable && !m->why) || (m->corrupt && m->readable))
            abort();
        for (size_t k = 0; k < m->nentries; k++)
            if (!m->entries[k] || !m->entries[k][0])
                abort();
        for (size_t k = 0; k < m->nvars; k++)
            if (!m->vars[k].name || !m->vars[k].name[0] || m->vars[k].size < -1)
                abort();
    }
    ks_image_entries_free(&e);
    free(bytes);
    return 0;
}
