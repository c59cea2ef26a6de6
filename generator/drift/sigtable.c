/*
 * sigtable.c — the hash table of manifest kernels (sigtable.h): lookups in
 * constant time, so reading a manifest and diffing two take time linear in
 * their kernels.
 */
#include "drift/sigtable.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void ks_sigtable_init(ks_sigtable *t, size_t entries, int by_pair)
{
    size_t n = 16;
    while (n < 2 * entries)
        n *= 2;
    t->v = ks_xmalloc(n * sizeof *t->v);
    memset(t->v, 0, n * sizeof *t->v);
    t->mask = n - 1;
    t->by_pair = by_pair;
}

void ks_sigtable_free(ks_sigtable *t)
{
    free(t->v);
    t->v = NULL;
}

/* FNV-1a over the name, then (pair tables) a 0xff byte, which UTF-8 never
 * holds, and the symbol. */
static uint32_t key_hash(const char *name, const char *symbol)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (const unsigned char *s = (const unsigned char *)name; *s; s++)
        h = (h ^ *s) * 0x100000001b3u;
    if (symbol) {
        h = (h ^ 0xff) * 0x100000001b3u;
        for (const unsigned char *s = (const unsigned char *)symbol; *s; s++)
            h = (h ^ *s) * 0x100000001b3u;
    }
    return (uint32_t)(h ^ h >> 32);
}

ks_sigslot *ks_sigtable_slot(const ks_sigtable *t, const ks_sig_kern *k, int insert)
{
    const char *symbol = t->by_pair ? k->symbol : NULL;
    uint32_t h = key_hash(k->name, symbol);
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        ks_sigslot *s = &t->v[i];
        if (!s->k) {
            if (!insert)
                return NULL;
            s->k = k;
            s->hash = h;
            s->idx = -1;
            return s;
        }
        if (s->hash == h && strcmp(s->k->name, k->name) == 0 &&
            (!symbol || strcmp(s->k->symbol, symbol) == 0))
            return s;
    }
}
